/**
 * What `dev` created in a cluster the user named (`--kubeconfig` / `--context`), and its removal when
 * `dev` ends (unless `--keep`): only objects that did not exist before `dev` wrote them (a CRD, webhook
 * configuration, namespace, sample CR or sample related object that was already there is left as it
 * is, even though `dev` applied to it). Removed in the reverse order of creation, so the sample CRs go
 * first, while their operators still run to finalize them and the garbage collector removes their
 * children through their ownerReferences; each CR is waited for until it is gone (or `waitMs`).
 */
import type { KubeClient } from '../runtime/client/kube-client.js';
import { isApiError } from '../runtime/client/kube-client.js';
import { ResourceClient } from '../runtime/client/resource-client.js';
import type { ObjectLocation } from '../runtime/client/resource-path.js';
import { sleep } from '../runtime/queue/backoff.js';

/** One object `dev` created. */
interface Created extends ObjectLocation {
  /** `Kind namespace/name`, as the lines name it. */
  readonly label: string;
  /** Wait until it is gone before removing the next (a CR whose operator finalizes it). */
  readonly waitGone: boolean;
}

/** The objects `dev` created, in order. */
export class DevInstalled {
  private readonly created: Created[] = [];

  /**
   * Whether the object `at` exists now (call before writing it); when it does not, it is recorded as
   * created by `dev`.
   * @throws what the GET throws but a 404
   */
  async recordIfAbsent(client: KubeClient, at: ObjectLocation, label: string, options: { waitGone?: boolean } = {}): Promise<boolean> {
    const exists = (await new ResourceClient(client).getIfExists(at.ref, at.namespace, at.name)) !== undefined;
    if (!exists) this.created.push({ ...at, label, waitGone: options.waitGone ?? false });
    return !exists;
  }

  /** Records an object `dev` just created (e.g. a namespace its POST made). */
  record(at: ObjectLocation, label: string): void {
    this.created.push({ ...at, label, waitGone: false });
  }

  /** What was created, in creation order (`Kind namespace/name`). */
  get labels(): readonly string[] {
    return this.created.map((c) => c.label);
  }

  /**
   * Deletes every recorded object, last created first, logging `removed LABEL` (or why not); never
   * throws. A recorded CR is waited for until it is gone, at most `waitMs` each.
   * @param waitMs @default 60000: a finalizer that takes longer is left to finish on its own, and said so
   */
  async removeAll(client: KubeClient, log: (line: string) => void, waitMs = 60_000): Promise<void> {
    const resources = new ResourceClient(client);
    for (const object of [...this.created].reverse()) {
      try {
        await resources.delete(object.ref, object.namespace, object.name).catch((err: unknown) => (isApiError(err, 404) ? undefined : Promise.reject(err)));
        if (object.waitGone && !(await gone(resources, object, waitMs))) {
          log(`${object.label} is still there after ${Math.round(waitMs / 1000)} s (a finalizer?); leaving it to finish`);
          continue;
        }
        log(`removed ${object.label}`);
      } catch (err) {
        log(`could not remove ${object.label}: ${(err as Error).message}`);
      }
    }
    this.created.length = 0;
  }
}

/** Polls until the object `at` answers 404; false after `waitMs`. */
async function gone(resources: ResourceClient, at: ObjectLocation, waitMs: number): Promise<boolean> {
  const deadline = Date.now() + waitMs;
  while (Date.now() < deadline) {
    if ((await resources.getIfExists(at.ref, at.namespace, at.name)) === undefined) return true;
    await sleep(250);
  }
  return false;
}
