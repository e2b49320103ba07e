/**
 * What `/readyz` of `cdk8s-operator run` checks, and why conversion webhooks change it.
 *
 * - `informers`: every cache synced. Part of readiness unless the process serves a CRD conversion
 *   webhook (see below).
 * - `webhooks`: the HTTPS webhook server listens with a certificate (when `--webhook-bind-address` is
 *   set; otherwise it always passes).
 *
 * Why not the caches with a conversion webhook (controller-runtime#2321, knative/eventing#4876,
 * hypershift#9387): when objects are stored in a version other than the one the operator watches, the
 * operator's own LIST needs `/convert`. The API server reaches `/convert` through the webhook Service,
 * whose endpoints are the Ready pods only. Readiness that waited for the caches would wait for itself:
 * the pod never becomes Ready, the Service has no endpoint, the LIST never succeeds. So a process that
 * serves conversion is Ready once its webhook server listens, as kubebuilder projects do with
 * `mgr.GetWebhookServer().StartedChecker()` as their readyz check. The caches are still bounded: when
 * they have not synced within the cache-sync timeout the run fails and exits 1 (`CacheSyncError`).
 *
 * Why not `publishNotReadyAddresses: true` on the Service instead: it sends traffic to pods whose server
 * does not listen yet (a new pod of a rollout) and to terminating pods, so conversions and admissions
 * fail at every rollout; readiness that means "the webhook answers" keeps the Service exact.
 *
 * @see https://kubernetes.io/docs/concepts/services-networking/service/#publishnotreadyaddresses
 * @see https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definition-versioning/#webhook-conversion
 */
import type { ProbeCheck } from './probes-server.js';

export interface ReadinessChecksOptions {
  /** True once every cache synced. */
  readonly informersSynced: () => boolean;
  /** The webhook server's check, or undefined while it is not started. */
  readonly webhooksReady: () => boolean | undefined;
  /** Webhooks are served by this process (`--webhook-bind-address` is not `0`). */
  readonly servesWebhooks: boolean;
  /** One of the served operators has a CRD conversion webhook (its `/convert` may be needed to list). */
  readonly servesConversion: boolean;
}

/** The `/readyz` checks by name; see the module doc. */
export function readinessChecks(options: ReadinessChecksOptions): Record<string, ProbeCheck> {
  const webhooks: ProbeCheck = () => {
    if (!options.servesWebhooks) return true;
    if (options.webhooksReady() !== true) throw new Error('webhook server not listening yet');
    return true;
  };
  if (options.servesWebhooks && options.servesConversion) return { webhooks };
  return {
    informers: () => {
      if (!options.informersSynced()) throw new Error('caches not synced yet');
      return true;
    },
    webhooks,
  };
}
