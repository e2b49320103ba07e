/**
 * An operator's synthesized objects as an OLM bundle (registry+v1): the ClusterServiceVersion and the
 * other manifests beside it. Pure mapping, no I/O (bundle-files.ts writes it, olm-validator.ts checks it).
 *
 * What each synthesized object becomes:
 * - the Deployment → `spec.install.spec.deployments[]` (without its namespace: OLM installs into the
 *   namespace the user picks). With a watch namespace, its `--namespace=<ns>` arg becomes
 *   `--namespace=$(WATCH_NAMESPACE)`, an env var read from the pod's `olm.targetNamespaces` annotation,
 *   so it watches the namespace the OperatorGroup targets;
 * - Role + RoleBinding to the operator's ServiceAccount → `spec.install.spec.permissions[]`;
 *   ClusterRole + ClusterRoleBinding to it → `clusterPermissions[]` (both `{serviceAccountName, rules}`);
 *   OLM creates the ServiceAccount, the roles and the bindings, so those objects are not shipped;
 * - the CustomResourceDefinition → a file of its own in `manifests/` and `spec.customresourcedefinitions.owned[]`,
 *   one entry per served version, with `specDescriptors` / `statusDescriptors` from the schema's
 *   `description`s (the zod `.describe()` texts, see lib/operator/schema/structural-schema.ts);
 * - the operator's examples → the `alm-examples` annotation (JSON array), each in every served version
 *   (converted with the operator's own conversion);
 * - Validating/MutatingWebhookConfiguration and the CRD's conversion webhook →
 *   `spec.webhookdefinitions[]` (one per webhook: `generateName` the webhook's name, `webhookPath` its
 *   path, `containerPort` 443 → `targetPort` 9443, the pod's `webhook-server` port, rules, sideEffects,
 *   failurePolicy, matchPolicy, timeoutSeconds, admissionReviewVersions as synthesized; `conversionCRDs`
 *   for the conversion webhook). OLM then creates the Service `<deployment>-service`, a CA and a serving
 *   certificate in the Secret `<deployment>-service-cert`, mounted in the pod at
 *   `/tmp/k8s-webhook-server/serving-certs/tls.{crt,key}`, and the configurations (named
 *   `<generateName>-<random>`) and the CRD's conversion with that CA as `caBundle`. So the Deployment's
 *   `run` gets `--webhook-cert-dir=/tmp/k8s-webhook-server/serving-certs`: it serves that certificate,
 *   reloaded when OLM renews it, and neither keeps a Secret of its own nor patches caBundles; the webhook
 *   Service, the cert-manager Issuer/Certificate, the `cert-manager.io/inject-ca-from` annotations and
 *   the permissions only the operator's own certificate needs (its Secret, patching the caBundles) are
 *   dropped;
 * - the Namespace is dropped (OLM's install namespace replaces it); other kinds a bundle may carry
 *   (Service, ClusterRole not bound to the operator, ConfigMap, Secret, NetworkPolicy …) are shipped as
 *   manifests without their namespace; any other kind is an error.
 * - `spec.installModes`: all namespaces (`AllNamespaces`) without a watch namespace; with one,
 *   `OwnNamespace` and `SingleNamespace` (the operator watches exactly one namespace). OLM installs a
 *   conversion webhook only with `AllNamespaces`, so a conversion webhook with a watch namespace is an error.
 *
 * @see https://olm.operatorframework.io/docs/concepts/crds/clusterserviceversion/
 * @see https://olm.operatorframework.io/docs/advanced-tasks/adding-admission-and-conversion-webhooks/
 * @see https://github.com/operator-framework/operator-registry/blob/master/docs/design/operator-bundle.md
 */
import { isDeepStrictEqual } from 'node:util';
import type { Operator } from '../../operator/operator.js';
import { WEBHOOK_PORT as WEBHOOK_TARGET_PORT, webhookRules } from '../../operator/manifests/webhook-configurations.js';
import { DEFAULT_WEBHOOK_CERT_DIR } from '../../runtime/webhook/certificate-directory.js';

/** A Kubernetes object as plain JSON. */
export type Manifest = Record<string, unknown> & { apiVersion: string; kind: string; metadata?: Record<string, unknown> };

/** The CSV's descriptive fields (OperatorHub's listing). */
export interface CsvMetadata {
  /** OLM package name (`operators.operatorframework.io.bundle.package.v1`). */
  readonly packageName: string;
  /** Semantic version of this bundle, e.g. `0.1.0`; the CSV is named `<packageName>.v<version>`. */
  readonly version: string;
  /** Channels this bundle is in, e.g. `['alpha']`. */
  readonly channels: readonly string[];
  /** @default none: OLM takes the only channel, or the package's earlier default */
  readonly defaultChannel?: string;
  /** @default the package name */
  readonly displayName?: string;
  /** Long description (Markdown). @default a sentence naming the kinds the operator manages */
  readonly description?: string;
  /** `spec.provider.name`. OperatorHub's validator refuses a bundle without one. @default none */
  readonly provider?: string;
  /** `spec.maintainers`. @default none */
  readonly maintainers?: readonly { readonly name: string; readonly email: string }[];
  /** `spec.links`. @default none */
  readonly links?: readonly { readonly name: string; readonly url: string }[];
  /** `spec.keywords`. @default none */
  readonly keywords?: readonly string[];
  /** `spec.maturity`. @default the first channel */
  readonly maturity?: string;
  /** `spec.minKubeVersion`, e.g. `1.30.0`. @default none */
  readonly minKubeVersion?: string;
  /** `spec.replaces`: the CSV this one upgrades. @default none */
  readonly replaces?: string;
  /** The `capabilities` annotation (operator capability level). @default 'Basic Install' */
  readonly capabilities?: string;
}

/** A bundle, ready to write: file name (under `manifests/`) → object. */
export interface OlmBundle {
  readonly csv: Manifest;
  /** File name → manifest, the CSV included (`<package>.clusterserviceversion.yaml`). */
  readonly manifests: ReadonlyMap<string, Manifest>;
  /** The `metadata/annotations.yaml` annotations, also the bundle image's labels. */
  readonly annotations: Readonly<Record<string, string>>;
}

/** An object the bundle cannot carry, or an operator that cannot be bundled; names the object and why. */
export class OlmBundleError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OlmBundleError';
  }
}

/** Kinds OLM installs from a bundle's manifests besides CSVs and CRDs (operator-registry's list). */
const SHIPPABLE_KINDS = new Set([
  'Service', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding', 'ConfigMap', 'Secret', 'ServiceAccount',
  'PodDisruptionBudget', 'PriorityClass', 'VerticalPodAutoscaler', 'PrometheusRule', 'ServiceMonitor', 'NetworkPolicy',
]);

/** Env var the Deployment gets with a watch namespace: the pod's `olm.targetNamespaces` annotation. */
export const WATCH_NAMESPACE_ENV = 'WATCH_NAMESPACE';

/** The webhook Service's port (OLM's `containerPort`) and the pod's webhook port (`targetPort`). */
const WEBHOOK_SERVICE_PORT = 443;

/**
 * Where OLM mounts the serving certificate it issues for webhookdefinitions (controller-runtime's
 * CertDir), passed to `run` as `--webhook-cert-dir`.
 * @see https://olm.operatorframework.io/docs/advanced-tasks/adding-admission-and-conversion-webhooks/#certificate-authority-requirements
 */
export const OLM_WEBHOOK_CERT_DIR = DEFAULT_WEBHOOK_CERT_DIR;

/**
 * Builds the bundle of one operator from the objects it synthesized (`chart.toJson()` of the operator
 * and the charts under it).
 * @throws OlmBundleError for an object a bundle cannot carry, or a synthesis without a Deployment
 */
export function buildOlmBundle(operator: Operator, objects: readonly Manifest[], meta: CsvMetadata): OlmBundle {
  const serviceAccount = String(((operator.deployment.toJson() as Manifest).spec as any)?.template?.spec?.serviceAccountName ?? operator.operatorName);
  const byKind = (kind: string) => objects.filter((o) => o.kind === kind);
  const name = (o: Manifest) => String(o.metadata?.name ?? '');
  const boundToOperator = (bindingKind: string, roleKind: string) => new Set(byKind(bindingKind)
    .filter((b) => (b.subjects as any[] | undefined)?.some((s) => s.kind === 'ServiceAccount' && s.name === serviceAccount))
    .filter((b) => (b.roleRef as any)?.kind === roleKind)
    .map((b) => `${String(b.metadata?.namespace ?? '')}/${String((b.roleRef as any).name)}`));
  const boundRoles = boundToOperator('RoleBinding', 'Role');
  const boundClusterRoles = boundToOperator('ClusterRoleBinding', 'ClusterRole');
  const webhookServiceName = operator.webhook?.names.service;
  const certificateRules = ownCertificateRules(operator);

  const deployments: Record<string, unknown>[] = [];
  const permissions: Record<string, unknown>[] = [];
  const clusterPermissions: Record<string, unknown>[] = [];
  const webhookdefinitions: Record<string, unknown>[] = [];
  const crds: Manifest[] = [];
  const shipped: Manifest[] = [];

  for (const object of objects) {
    const where = `${object.kind} ${object.metadata?.namespace ? `${String(object.metadata.namespace)}/` : ''}${name(object)}`;
    switch (object.kind) {
      case 'Namespace':
      case 'ServiceAccount':
        if (object.kind === 'ServiceAccount' && name(object) !== serviceAccount) shipped.push(withoutNamespace(object));
        continue;
      case 'Deployment':
        deployments.push({ name: name(object), label: object.metadata?.labels, spec: olmDeploymentSpec(object, operator.watchNamespace, operator.webhook !== undefined) });
        continue;
      case 'CustomResourceDefinition':
        crds.push(bundleCrd(object));
        continue;
      case 'Role':
        if (boundRoles.has(`${String(object.metadata?.namespace ?? '')}/${name(object)}`)) {
          const rules = withoutRules(object.rules, certificateRules.namespaced);
          if (rules.length > 0) permissions.push({ serviceAccountName: serviceAccount, rules });
        } else shipped.push(withoutNamespace(object));
        continue;
      case 'ClusterRole':
        if (boundClusterRoles.has(`/${name(object)}`)) {
          const rules = withoutRules(object.rules, certificateRules.cluster);
          if (rules.length > 0) clusterPermissions.push({ serviceAccountName: serviceAccount, rules });
        } else shipped.push(withoutNamespace(object));
        continue;
      case 'RoleBinding':
      case 'ClusterRoleBinding': {
        const roleKey = `${object.kind === 'RoleBinding' ? String(object.metadata?.namespace ?? '') : ''}/${String((object.roleRef as any)?.name)}`;
        if (!(object.kind === 'RoleBinding' ? boundRoles : boundClusterRoles).has(roleKey)) shipped.push(withoutNamespace(object));
        continue;
      }
      case 'ValidatingWebhookConfiguration':
      case 'MutatingWebhookConfiguration':
        for (const hook of (object.webhooks as Record<string, any>[] | undefined) ?? []) webhookdefinitions.push(admissionDefinition(object.kind, hook, operator));
        continue;
      case 'Service':
        if (name(object) !== webhookServiceName) shipped.push(withoutNamespace(object));
        continue;
      case 'Issuer':
      case 'Certificate':
        if (String(object.apiVersion).startsWith('cert-manager.io/')) continue;
        break;
      default:
        break;
    }
    if (!SHIPPABLE_KINDS.has(object.kind)) {
      throw new OlmBundleError(`${where} (${object.apiVersion}): an OLM bundle cannot carry this kind; OLM installs only a ClusterServiceVersion, CRDs and ${[...SHIPPABLE_KINDS].join(', ')}`);
    }
    shipped.push(withoutNamespace(object));
  }
  if (deployments.length === 0) throw new OlmBundleError(`${operator.node.path}: the synthesized objects hold no Deployment`);

  for (const crd of crds) {
    const conversion = (crd.spec as any)?.conversion;
    if (conversion?.strategy === 'Webhook') {
      if (operator.watchNamespace !== undefined) {
        throw new OlmBundleError(`CustomResourceDefinition ${name(crd)}: OLM installs a conversion webhook only for an operator that supports the AllNamespaces install mode, and ${operator.operatorName} watches one namespace (deployment.watchNamespace ${operator.watchNamespace})`);
      }
      webhookdefinitions.push({
        type: 'ConversionWebhook',
        generateName: `c${name(crd)}`.slice(0, 253),
        deploymentName: operator.operatorName,
        containerPort: WEBHOOK_SERVICE_PORT,
        targetPort: WEBHOOK_TARGET_PORT,
        sideEffects: 'None',
        admissionReviewVersions: conversion.webhook?.conversionReviewVersions ?? ['v1'],
        webhookPath: conversion.webhook?.clientConfig?.service?.path ?? '/convert',
        conversionCRDs: [name(crd)],
      });
    }
  }

  const csvName = `${meta.packageName}.v${meta.version}`;
  const examples = almExamples(operator);
  const image = ((operator.deployment.toJson() as any).spec?.template?.spec?.containers?.[0]?.image as string | undefined);
  const annotations: Record<string, string> = {
    'alm-examples': JSON.stringify(examples, null, 2),
    capabilities: meta.capabilities ?? 'Basic Install',
    'operators.operatorframework.io/suggested-namespace': operator.operatorNamespace,
  };
  if (image) annotations.containerImage = image;
  if (meta.description) annotations.description = firstLine(meta.description);

  const kinds = crds.map((crd) => String((crd.spec as any)?.names?.kind));
  const csvSpec: Record<string, unknown> = {
    displayName: meta.displayName ?? meta.packageName,
    description: meta.description ?? `${meta.displayName ?? meta.packageName} manages ${kinds.join(', ')} custom resources.`,
    version: meta.version,
    maturity: meta.maturity ?? meta.channels[0],
    installModes: installModes(operator.watchNamespace),
    install: {
      strategy: 'deployment',
      spec: { deployments, ...(permissions.length ? { permissions } : {}), ...(clusterPermissions.length ? { clusterPermissions } : {}) },
    },
    customresourcedefinitions: { owned: crds.flatMap(ownedEntries) },
  };
  if (meta.provider) csvSpec.provider = { name: meta.provider };
  if (meta.maintainers?.length) csvSpec.maintainers = meta.maintainers.map((m) => ({ name: m.name, email: m.email }));
  if (meta.links?.length) csvSpec.links = meta.links.map((l) => ({ name: l.name, url: l.url }));
  if (meta.keywords?.length) csvSpec.keywords = [...meta.keywords];
  if (meta.minKubeVersion) csvSpec.minKubeVersion = meta.minKubeVersion;
  if (meta.replaces) csvSpec.replaces = meta.replaces;
  if (webhookdefinitions.length) csvSpec.webhookdefinitions = webhookdefinitions.map(dropUndefined);

  const csv: Manifest = {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'ClusterServiceVersion',
    metadata: { name: csvName, annotations },
    spec: csvSpec,
  };
  const manifests = new Map<string, Manifest>([[`${meta.packageName}.clusterserviceversion.yaml`, csv]]);
  for (const crd of crds) manifests.set(`${String((crd.spec as any).group)}_${String((crd.spec as any).names.plural)}.yaml`, crd);
  for (const object of shipped) {
    const file = `${name(object)}_${object.apiVersion.includes('/') ? `${object.apiVersion.split('/')[0]}_` : ''}${object.apiVersion.split('/').pop()}_${object.kind.toLowerCase()}.yaml`;
    if (manifests.has(file)) throw new OlmBundleError(`${object.kind} ${name(object)}: two objects would be written to manifests/${file}`);
    manifests.set(file, object);
  }

  const bundleAnnotations: Record<string, string> = {
    'operators.operatorframework.io.bundle.mediatype.v1': 'registry+v1',
    'operators.operatorframework.io.bundle.manifests.v1': 'manifests/',
    'operators.operatorframework.io.bundle.metadata.v1': 'metadata/',
    'operators.operatorframework.io.bundle.package.v1': meta.packageName,
    'operators.operatorframework.io.bundle.channels.v1': meta.channels.join(','),
  };
  if (meta.defaultChannel) bundleAnnotations['operators.operatorframework.io.bundle.channel.default.v1'] = meta.defaultChannel;
  return { csv, manifests, annotations: bundleAnnotations };
}

/**
 * `spec.installModes`: an operator without a watch namespace watches all of them (ClusterRole);
 * with one it watches exactly the OperatorGroup's single target namespace.
 */
export function installModes(watchNamespace: string | undefined): { type: string; supported: boolean }[] {
  const single = watchNamespace !== undefined;
  return [
    { type: 'OwnNamespace', supported: single },
    { type: 'SingleNamespace', supported: single },
    { type: 'MultiNamespace', supported: false },
    { type: 'AllNamespaces', supported: !single },
  ];
}

/**
 * The CSV's descriptors of one schema (`spec` or `status`): one per property that has a
 * `description`, depth first, with OLM's dotted path (`cache.memoryMiB`; array items as `items[0].x`).
 */
export function schemaDescriptors(schema: Record<string, any> | undefined, prefix = ''): { path: string; displayName: string; description: string }[] {
  const out: { path: string; displayName: string; description: string }[] = [];
  for (const [key, child] of Object.entries<Record<string, any>>(schema?.properties ?? {})) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (typeof child.description === 'string' && child.description !== '') out.push({ path, displayName: displayName(key), description: child.description });
    if (child.properties) out.push(...schemaDescriptors(child, path));
    else if (child.items?.properties) out.push(...schemaDescriptors(child.items, `${path}[0]`));
  }
  return out;
}

function ownedEntries(crd: Manifest): Record<string, unknown>[] {
  const spec = crd.spec as Record<string, any>;
  return (spec.versions as Record<string, any>[]).filter((v) => v.served !== false).map((version) => {
    const schema = version.schema?.openAPIV3Schema as Record<string, any> | undefined;
    const description: string = typeof schema?.description === 'string' && schema.description !== ''
      ? schema.description
      : `${spec.names.kind} (${spec.group}/${version.name as string}).`;
    return dropUndefined({
      name: String(crd.metadata?.name),
      version: version.name,
      kind: spec.names.kind,
      displayName: displayName(spec.names.kind),
      description,
      specDescriptors: nonEmpty(schemaDescriptors(schema?.properties?.spec)),
      statusDescriptors: nonEmpty(schemaDescriptors(schema?.properties?.status)),
    });
  });
}

function bundleCrd(crd: Manifest): Manifest {
  const copy = structuredClone(crd);
  const annotations = copy.metadata?.annotations as Record<string, string> | undefined;
  if (annotations) {
    delete annotations['cert-manager.io/inject-ca-from'];
    if (Object.keys(annotations).length === 0) delete copy.metadata!.annotations;
  }
  return copy;
}

/**
 * The RBAC rules the operator needs only for a certificate of its own (`webhook.certificates`: its Secret,
 * and self-managed, patching the caBundles), which under OLM it does not keep.
 */
function ownCertificateRules(operator: Operator): { namespaced: readonly unknown[]; cluster: readonly unknown[] } {
  const webhook = operator.webhook;
  if (!webhook) return { namespaced: [], cluster: [] };
  const options = {
    certificates: webhook.certificates,
    operatorName: operator.operatorName,
    crdName: `${operator.crd.plural}.${operator.crd.group}`,
    configurations: [...(webhook.validatePath ? ['validate' as const] : []), ...(webhook.mutatePath ? ['mutate' as const] : [])],
    conversion: webhook.conversion,
  };
  return webhookRules({ ...options, reads: [] }); // no kinds read: those rules are the hooks', kept
}

/** `rules` without those equal to one of `drop`. */
function withoutRules(rules: unknown, drop: readonly unknown[]): unknown[] {
  return ((rules as unknown[] | undefined) ?? []).filter((rule) => !drop.some((d) => isDeepStrictEqual(d, rule)));
}

/**
 * The Deployment's spec in the CSV: with a watch namespace, `--namespace=$(WATCH_NAMESPACE)`; with webhooks,
 * `--webhook-cert-dir` after the container's `--webhook-bind-address` (the certificate OLM mounts).
 */
function olmDeploymentSpec(deployment: Manifest, watchNamespace: string | undefined, webhooks: boolean): Record<string, unknown> {
  const spec = structuredClone(deployment.spec) as Record<string, any>;
  if (webhooks) {
    for (const container of spec.template?.spec?.containers ?? []) {
      const args: string[] = container.args ?? [];
      const at = args.findIndex((arg) => arg.startsWith('--webhook-bind-address=') && arg !== '--webhook-bind-address=0');
      if (at < 0) continue;
      const kept = args.filter((arg) => !arg.startsWith('--webhook-cert-dir=') && !arg.startsWith('--webhook-cert-hosts='));
      kept.splice(kept.indexOf(args[at]!) + 1, 0, `--webhook-cert-dir=${OLM_WEBHOOK_CERT_DIR}`);
      container.args = kept;
    }
  }
  if (watchNamespace !== undefined) {
    for (const container of spec.template?.spec?.containers ?? []) {
      const args: string[] = container.args ?? [];
      const at = args.indexOf(`--namespace=${watchNamespace}`);
      if (at < 0) continue;
      args[at] = `--namespace=$(${WATCH_NAMESPACE_ENV})`;
      container.env = [
        ...(container.env ?? []).filter((e: { name: string }) => e.name !== WATCH_NAMESPACE_ENV),
        { name: WATCH_NAMESPACE_ENV, valueFrom: { fieldRef: { fieldPath: "metadata.annotations['olm.targetNamespaces']" } } },
      ];
    }
  }
  return spec;
}

function admissionDefinition(kind: string, hook: Record<string, any>, operator: Operator): Record<string, unknown> {
  return dropUndefined({
    type: kind === 'ValidatingWebhookConfiguration' ? 'ValidatingAdmissionWebhook' : 'MutatingAdmissionWebhook',
    generateName: hook.name,
    deploymentName: operator.operatorName,
    containerPort: WEBHOOK_SERVICE_PORT,
    targetPort: WEBHOOK_TARGET_PORT,
    admissionReviewVersions: hook.admissionReviewVersions,
    sideEffects: hook.sideEffects,
    failurePolicy: hook.failurePolicy,
    matchPolicy: hook.matchPolicy,
    objectSelector: hook.objectSelector,
    rules: hook.rules,
    timeoutSeconds: hook.timeoutSeconds,
    reinvocationPolicy: hook.reinvocationPolicy,
    webhookPath: hook.clientConfig?.service?.path,
  });
}

/**
 * The `alm-examples`: every example of the operator in every served version (converted from the hub
 * with the operator's own conversion), so each owned version has one, as the CSV validator asks.
 */
function almExamples(operator: Operator): Manifest[] {
  const served = operator.versions.filter((v) => v.served).map((v) => `${operator.crd.group}/${v.name}`);
  return operator.examples.flatMap((example) => {
    const source: Manifest = { ...example, metadata: { ...example.metadata } };
    return served.map((apiVersion) => stripExample(source.apiVersion === apiVersion ? source : operator.convert(source, apiVersion) as Manifest));
  });
}

function withoutNamespace(object: Manifest): Manifest {
  const copy = structuredClone(object);
  if (copy.metadata) delete copy.metadata.namespace;
  return copy;
}

function stripExample(example: Manifest): Manifest {
  const copy = structuredClone(example);
  const metadata = copy.metadata as Record<string, unknown> | undefined;
  if (metadata) for (const key of ['namespace', 'uid', 'resourceVersion', 'generation', 'creationTimestamp', 'managedFields']) delete metadata[key];
  delete copy.status;
  return copy;
}

/** `memoryMiB` → `Memory MiB`; `lastTransitionTime` → `Last Transition Time`; `replicas` → `Replicas`. */
function displayName(key: string): string {
  const spaced = key.replace(/(?<=[a-z0-9])(?=[A-Z][a-z])/g, ' ');
  return spaced.charAt(0).toUpperCase() + spaced.slice(1);
}

function firstLine(text: string): string {
  return text.split('\n', 1)[0]!;
}

function nonEmpty<T>(list: T[]): T[] | undefined {
  return list.length ? list : undefined;
}

function dropUndefined(record: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined));
}
