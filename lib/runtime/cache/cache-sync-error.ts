/**
 * The error of the cache-sync step: the informers whose first list had not landed when the manager
 * stopped waiting for them.
 */
import { brandClass } from '../../operator/brand.js';
import { RuntimeError } from '../runtime-error.js';
import type { Informer } from './informer.js';
import { messageOf } from '../../error-text.js';

/**
 * Why the caches did not sync:
 * - `CacheSyncTimeout`: some informer's first list had not landed within the manager's
 *   `cacheSyncTimeoutMs` (controller-runtime's CacheSyncTimeout, 2 min): typically its LIST keeps failing
 *   (403: the service account lacks `list`; 404: the CRD is not installed; a conversion webhook that cannot
 *   be reached), and each informer's last error says which;
 * - `InformerStopped`: an informer was stopped before its first list;
 * - `Aborted`: the start was cancelled (SIGTERM while waiting); not a failure of the caches.
 */
export type CacheSyncFailureReason = 'CacheSyncTimeout' | 'InformerStopped' | 'Aborted';

/** One informer that had not synced: what it caches (`plural[.group][ in namespace][ with selector]`) and its last list error. */
export interface UnsyncedInformer {
  readonly resource: string;
  /** The last list or watch error's message (with the HTTP status when the API server answered), if any. */
  readonly lastError?: string;
}

/**
 * The manager's caches did not sync, so no controller can start: thrown by `Manager.start()`;
 * `runOperators` logs it at error and rejects with it, webhooks or not, as controller-runtime's manager
 * returns "failed to wait for caches to sync" (`cdk8s-operator run` then exits 1).
 *
 * The message leads with the reason and names every informer not synced with its last error, e.g.
 * `caches did not sync within 120000 ms (CacheSyncTimeout): memcacheds.cache.example.com (list failed: 404 …)`.
 * `cause` is what ended the wait (the timeout's or the stop's error). Step `cache-sync`; branded.
 */
export class CacheSyncError extends RuntimeError {
  static {
    brandClass(this, 'CacheSyncError');
  }

  override readonly step = 'cache-sync';

  constructor(
    override readonly reason: CacheSyncFailureReason,
    /** The informers not synced, each with its last list error. */
    readonly informers: readonly UnsyncedInformer[],
    timeoutMs: number,
    options?: { cause?: unknown },
  ) {
    const names = informers.map((i) => (i.lastError ? `${i.resource} (${i.lastError})` : `${i.resource} (no list answered yet)`));
    const lead =
      reason === 'CacheSyncTimeout' ? `caches did not sync within ${timeoutMs} ms` : reason === 'Aborted' ? 'caches did not sync: start cancelled' : 'caches did not sync: an informer stopped first';
    super(`${lead} (${reason}): ${names.join('; ') || 'none pending'}`, options);
    this.name = 'CacheSyncError';
  }

  /** The error for the informers among `informers` that have not synced. */
  static of(reason: CacheSyncFailureReason, informers: readonly Informer[], timeoutMs: number, cause: unknown): CacheSyncError {
    const pending = informers.filter((i) => !i.hasSynced()).map((i): UnsyncedInformer => ({ resource: i.describe(), lastError: describeFailure(i.lastError()) }));
    return new CacheSyncError(reason, pending, timeoutMs, { cause });
  }
}

function describeFailure(err: unknown): string | undefined {
  if (err === undefined) return undefined;
  // An ApiError's message carries method, path, HTTP status, Status reason and the server's message.
  return `list failed: ${messageOf(err).trim()}`;
}
