/**
 * Which members of a ring are live, judged as client-go judges a leader-election Lease
 * (k8s.io/client-go/tools/leaderelection): remote clocks are never trusted. A member's Lease counts as
 * expired only once this replica has observed its content unchanged for the Lease's own
 * `leaseDurationSeconds`, measured on the local monotonic clock; any change (a renewal changes
 * `renewTime`) restarts the count. A Lease with no holder, or gone, is not a member.
 *
 * Pure bookkeeping: the caller feeds each read of the ring's Leases with the local time of the read.
 */

/** One member's Lease as read: its name, holder, duration and opaque content (compared as a whole). */
export interface ObservedLease {
  readonly member: string;
  readonly holderIdentity: string;
  readonly leaseDurationSeconds: number;
  /** Anything that changes on each renewal (the spec and annotations serialized): compared, never parsed. */
  readonly content: string;
}

/** Tracks when each member's Lease content was first seen in its current form. */
export class LeaseObserver {
  private readonly seen = new Map<string, { content: string; since: number; durationMs: number; holder: string }>();

  /**
   * Records one complete read of the ring's Leases, made at local time `nowMs`; members absent from it are forgotten.
   * @returns the members whose Lease changed since the previous read (renewed while observed: live)
   */
  observe(leases: readonly ObservedLease[], nowMs: number): string[] {
    const present = new Set<string>();
    const changed: string[] = [];
    for (const lease of leases) {
      present.add(lease.member);
      const previous = this.seen.get(lease.member);
      if (previous && previous.content === lease.content) continue;
      if (previous) changed.push(lease.member);
      this.seen.set(lease.member, { content: lease.content, since: nowMs, durationMs: lease.leaseDurationSeconds * 1000, holder: lease.holderIdentity });
    }
    for (const member of [...this.seen.keys()]) if (!present.has(member)) this.seen.delete(member);
    return changed;
  }

  /** True when `member`'s Lease has a holder and was seen changing less than its lease duration before `nowMs`. */
  isLive(member: string, nowMs: number): boolean {
    const entry = this.seen.get(member);
    return entry !== undefined && entry.holder !== '' && nowMs < entry.since + entry.durationMs;
  }

  /** How long `member`'s Lease has been expired at `nowMs` (0 while live or unknown). */
  expiredForMs(member: string, nowMs: number): number {
    const entry = this.seen.get(member);
    return entry === undefined ? 0 : Math.max(0, nowMs - (entry.since + entry.durationMs));
  }

  /** The live members at `nowMs`, sorted. */
  liveMembers(nowMs: number): string[] {
    return [...this.seen.keys()].filter((m) => this.isLive(m, nowMs)).sort();
  }
}
