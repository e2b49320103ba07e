/**
 * A webhook configuration (Validating/MutatingWebhookConfiguration) of the new release beside the
 * installed one of the same name: its `webhooks` must be contained in the installed ones (the API
 * server's defaults and other fields the installed object has beyond them ignored, lists of objects
 * matched in order, as the reconciler's `firstDifference` compares), each `clientConfig.caBundle` left
 * out (the running operator writes it). Pure: the caller reads the installed object.
 *
 * @see https://kubernetes.io/docs/reference/access-authn-authz/extensible-admission-controllers/
 */
import type { KubeObject } from '../../runtime/client/kube-client.js';
import { firstDifference } from '../../runtime/reconcile/child-diff.js';
import type { Manifest } from '../deploy-plan.js';

/** A webhook configuration of the new release beside the installed one. */
export interface WebhookComparison {
  readonly kind: string;
  readonly name: string;
  /** `create`: not installed; `update`: its webhooks differ (the CA bundle left out); `unchanged`. */
  readonly action: 'create' | 'update' | 'unchanged';
  /** For `update`: the first path that differs, dotted: the first webhook not found among the installed ones, e.g. `webhooks.0`. */
  readonly path?: string;
}

/** The new webhook configuration beside the installed one: its `webhooks` contained in the installed ones, CA bundles left out. */
export function compareWebhooks(next: Manifest, installed: KubeObject | undefined): WebhookComparison {
  const base = { kind: next.kind, name: next.metadata.name };
  if (installed === undefined) return { ...base, action: 'create' };
  const withoutCa = (webhooks: unknown) => (Array.isArray(webhooks) ? webhooks : []).map((w: { clientConfig?: Record<string, unknown> }) => {
    const { caBundle: _, ...clientConfig } = w.clientConfig ?? {};
    return { ...w, clientConfig };
  });
  const path = firstDifference(withoutCa(next.webhooks), withoutCa(installed.webhooks), ['webhooks'], undefined);
  return path === undefined ? { ...base, action: 'unchanged' } : { ...base, action: 'update', path: path.join('.') };
}
