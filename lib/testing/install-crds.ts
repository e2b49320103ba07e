/**
 * Installs CustomResourceDefinitions from YAML files into a cluster and waits until they can be used.
 */
import { readFile } from 'node:fs/promises';
import type { KubeConfigSource } from '../runtime/client/kube-config-source.js';
import { parseAllDocuments } from 'yaml';
import { waitUntil } from './health-probe.js';
import { ApiClient } from '../runtime/client/api-client.js';
import { ApiResources } from '../runtime/client/api-resources.js';
import { CUSTOM_RESOURCE_DEFINITIONS, MUTATING_WEBHOOK_CONFIGURATIONS, VALIDATING_WEBHOOK_CONFIGURATIONS } from '../runtime/client/builtin-resources.js';
import type { KubeObject } from '../runtime/client/kube-client.js';
import { ResourceClient } from '../runtime/client/resource-client.js';
import { messageOf } from '../error-text.js';

/** Field manager of the server-side apply that installs CRDs (and, with `webhook`, webhook configurations). */
export const INSTALL_CRDS_FIELD_MANAGER = 'cdk8s-operator-sdk-testing';

interface CrdDocument extends Record<string, unknown> {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  spec: { group: string; names: { plural: string; kind: string }; versions: { name: string; served: boolean }[] };
}

/**
 * Where the API server reaches webhooks served by this machine (envtest's `WebhookInstallOptions`):
 * every Service clientConfig is rewritten to `url: <url><service path>` with this `caBundle`.
 */
export interface LocalWebhookOptions {
  /** Base URL of the in-process webhook server, e.g. `https://127.0.0.1:43211`. */
  readonly url: string;
  /** PEM of the CA that signed the server's certificate. */
  readonly caPem: string;
}

/** Options of {@link installCRDs}. */
export interface InstallCrdsOptions {
  /**
   * Rewrites the CRDs' conversion webhook clientConfig, and applies (rewritten the same way) every
   * Validating/MutatingWebhookConfiguration in the files too.
   * @default none: CRDs are applied as written, webhook configurations are ignored
   */
  readonly webhook?: LocalWebhookOptions;
}

const WEBHOOK_CONFIGURATION_KINDS = ['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration'];

/**
 * A webhook `clientConfig` pointing at `local` instead of a Service: `{ url: <local.url><service.path
 * or '/'>, caBundle: <base64 of local.caPem> }`; a url clientConfig keeps its url and gets the CA.
 */
export function localClientConfig(clientConfig: { service?: { path?: string }; url?: string } | undefined, local: LocalWebhookOptions): Record<string, unknown> {
  const url = clientConfig?.url ?? `${local.url.replace(/\/$/, '')}${clientConfig?.service?.path ?? '/'}`;
  return { url, caBundle: Buffer.from(local.caPem).toString('base64') };
}

function withLocalWebhooks<T extends Record<string, unknown>>(doc: T, local: LocalWebhookOptions): T {
  const copy = structuredClone(doc) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  if (copy.kind === 'CustomResourceDefinition') {
    const webhook = copy.spec?.conversion?.webhook;
    if (webhook) webhook.clientConfig = localClientConfig(webhook.clientConfig, local);
  } else {
    for (const webhook of copy.webhooks ?? []) webhook.clientConfig = localClientConfig(webhook.clientConfig, local);
  }
  return copy as T; // structuredClone keeps the shape
}

function isCrd(doc: unknown): doc is CrdDocument & Record<string, unknown> {
  const d = doc as Partial<CrdDocument> | null;
  return typeof d === 'object' && d !== null && d.kind === 'CustomResourceDefinition' && typeof d.metadata?.name === 'string';
}

/**
 * Applies every `CustomResourceDefinition` document (apiextensions.k8s.io/v1) found in `files` (YAML,
 * multi-document) with server-side apply (field manager {@link INSTALL_CRDS_FIELD_MANAGER}, forced),
 * then waits until each is `Established` and each served version lists the resource in discovery
 * (`GET /apis/<group>/<version>`), as envtest does. Documents of other kinds are ignored.
 *
 * With `options.webhook`, conversion webhooks and the webhook configurations in the files are pointed
 * at a webhook server on this machine (see {@link InstallCrdsOptions}), as envtest does.
 *
 * @param kubeConfig the cluster (its current context), with rights to apply CRDs
 * @param files paths of YAML files, each with one or more documents
 * @param timeoutMs budget for the wait, in milliseconds, shared by all CRDs; default 30000: a CRD is
 *   normally Established and in discovery within seconds, the rest is room for a loaded machine
 * @param options default `{}`: no webhooks rewritten or installed
 * @throws Error on a YAML parse error (file named), a rejected apply (status and server message), or
 *   a CRD not ready in time (its name and what was missing).
 */
export async function installCRDs(kubeConfig: KubeConfigSource, files: string[], timeoutMs = 30_000, options: InstallCrdsOptions = {}): Promise<void> {
  const crds: CrdDocument[] = [];
  const configurations: Record<string, unknown>[] = [];
  for (const file of files) {
    const text = await readFile(file, 'utf8');
    for (const doc of parseAllDocuments(text)) {
      if (doc.errors.length > 0) throw new Error(`installCRDs: ${file}: ${doc.errors[0]!.message}`);
      const value: unknown = doc.toJS();
      if (isCrd(value)) crds.push(options.webhook ? withLocalWebhooks(value, options.webhook) : value);
      else if (options.webhook && WEBHOOK_CONFIGURATION_KINDS.includes((value as { kind?: string } | null)?.kind ?? '')) {
        configurations.push(withLocalWebhooks(value as Record<string, unknown>, options.webhook));
      }
    }
  }

  // One-off requests: the 10 s deadline says a local API server is stuck; closed below.
  const client = new ApiClient({ kubeConfig, userAgent: 'cdk8s-operator-sdk/testing', requestTimeoutMs: 10_000 });
  try {
    await applyAndWait(client, crds, configurations, timeoutMs);
  } finally {
    client.close();
  }
}

/** The requests of {@link installCRDs}: apply the CRDs and configurations, wait for each CRD. */
async function applyAndWait(client: ApiClient, crds: readonly CrdDocument[], configurations: readonly Record<string, unknown>[], timeoutMs: number): Promise<void> {
  const resources = new ResourceClient(client);
  const apply = { fieldManager: INSTALL_CRDS_FIELD_MANAGER, force: true };
  for (const crd of crds) {
    await resources.apply(CUSTOM_RESOURCE_DEFINITIONS, crd as KubeObject, apply).catch((err: unknown) => {
      throw new Error(`installCRDs: applying CRD ${crd.metadata.name} failed: ${messageOf(err)}`, { cause: err });
    });
  }

  for (const configuration of configurations) {
    const kind = String(configuration.kind);
    const name = String((configuration.metadata as { name: string }).name);
    const ref = kind === 'MutatingWebhookConfiguration' ? MUTATING_WEBHOOK_CONFIGURATIONS : VALIDATING_WEBHOOK_CONFIGURATIONS;
    await resources.apply(ref, configuration as KubeObject, apply).catch((err: unknown) => {
      throw new Error(`installCRDs: applying ${kind} ${name} failed: ${messageOf(err)}`, { cause: err });
    });
  }

  const deadline = Date.now() + timeoutMs;
  for (const crd of crds) {
    const name = crd.metadata.name;
    await waitUntil(
      `CRD ${name}`,
      async () => {
        const status = await resources.getIfExists<{ status?: { conditions?: { type: string; status: string }[] } }>(CUSTOM_RESOURCE_DEFINITIONS, undefined, name);
        if (!status) return { ok: false, detail: 'GET CRD: not found' };
        const established = status.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
        if (!established) return { ok: false, detail: 'not Established' };
        const discovery = new ApiResources(client); // fresh each poll: discovery changes while the CRD settles
        for (const version of crd.spec.versions.filter((v) => v.served)) {
          const served = await discovery.find(`${crd.spec.group}/${version.name}`, crd.spec.names.kind);
          if (served?.plural !== crd.spec.names.plural) {
            return { ok: false, detail: `${crd.spec.names.plural} not yet in discovery of ${crd.spec.group}/${version.name}` };
          }
        }
        return { ok: true, detail: '' };
      },
      { timeoutMs: Math.max(0, deadline - Date.now()), intervalMs: 100 },
    );
  }
}
