/**
 * What `cdk8s synth` emits for an operator's webhooks (conversion between versions, admission):
 * - the CRD's `spec.conversion` (`strategy: Webhook`, `conversionReviewVersions: [v1]`, clientConfig
 *   pointing at the webhook Service, path `/convert`);
 * - a ValidatingWebhookConfiguration and/or MutatingWebhookConfiguration for the CR's kind (hub version,
 *   `matchPolicy: Equivalent`, so requests in every version reach the hook converted to the hub),
 *   `sideEffects: None`, `admissionReviewVersions: [v1]`, CREATE and UPDATE, a timeout and
 *   `failurePolicy` (default `Fail`);
 * - the Service `<operator>-webhook` (443 → the operator pods' 9443);
 * - certificates: `self-managed` (default) adds RBAC for the operator to keep its CA and serving
 *   certificate in the Secret `<operator>-webhook-tls` and to patch `caBundle` into exactly its CRD and
 *   webhook configurations; `cert-manager` adds a self-signed Issuer and a Certificate writing that Secret,
 *   and the `cert-manager.io/inject-ca-from` annotation on the CRD and webhook configurations.
 *
 * @see https://kubernetes.io/docs/reference/access-authn-authz/extensible-admission-controllers/
 * @see https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definition-versioning/#configure-customresourcedefinition-to-use-conversion-webhooks
 * @see https://cert-manager.io/docs/concepts/ca-injector/
 */
import type { ResolvedKind } from '../kinds.js';

/** Port the webhook server listens on in the operator's pods: controller-runtime's default. */
export const WEBHOOK_PORT = 9443;
/** Path of the conversion webhook (controller-runtime's). */
export const CONVERSION_PATH = '/convert';
/** Annotation cert-manager's CA injector reads: `<namespace>/<Certificate name>`. */
export const INJECT_CA_FROM_ANNOTATION = 'cert-manager.io/inject-ca-from';

/** How the webhook server gets its certificate. */
export type WebhookCertificates = 'self-managed' | 'cert-manager';

/** Webhook options of an Operator (`webhook` prop). */
export interface WebhookProps {
  /**
   * `self-managed`: the operator creates a CA and serving certificate in the Secret `<operator>-webhook-tls`,
   * patches `caBundle` into its CRD and webhook configurations and renews the certificate before it expires.
   * `cert-manager`: cert-manager issues it (Issuer + Certificate are synthesized) and injects the CA.
   * @default 'self-managed': no dependency
   */
  readonly certificates?: WebhookCertificates;
  /**
   * What the API server does when the admission webhook can't be reached or errs: `Fail` refuses the
   * request, `Ignore` lets it through unchecked.
   * @default 'Fail', as the API server's own default for admissionregistration.k8s.io/v1: a CR the
   *   hooks did not see never gets in
   */
  readonly failurePolicy?: 'Fail' | 'Ignore';
  /**
   * Admission webhook timeout, 1–30 seconds. The operator's hooks (reads and function) answer within it
   * minus a margin of 1 s (at most a fifth), denying with a 504 `Timeout` naming the read in flight, so the
   * API server never gives up first. Change it here, not in the live configuration: the operator reads it
   * from its own props. @default 10, the API server's default
   */
  readonly timeoutSeconds?: number;
  /**
   * Kinds the admission hooks read with `context.get` (RBAC `get` on them is derived), e.g.
   * `[{ apiVersion: 'v1', kind: 'ConfigMap' }]`. @default none
   */
  readonly reads?: readonly { readonly apiVersion: string; readonly kind: string; readonly plural?: string; readonly namespaced?: boolean }[];
}

/** Names of the objects behind an operator's webhooks. */
export interface WebhookNames {
  /** Service in the operator's namespace. */
  readonly service: string;
  /** Secret with `tls.crt`, `tls.key`, `ca.crt` (and, self-managed, `ca.key`). */
  readonly secret: string;
  /** Validating/MutatingWebhookConfiguration name, cert-manager Certificate and Issuer name. */
  readonly configuration: string;
}

/** The names of {@link WebhookNames}, derived from the operator's name (`<operator>-webhook`, `<operator>-webhook-tls`). */
export function webhookNames(operatorName: string): WebhookNames {
  return { service: `${operatorName}-webhook`, secret: `${operatorName}-webhook-tls`, configuration: `${operatorName}-webhook` };
}

/** Path of an admission hook: `/validate-cache-example-com-v1beta1-memcached` (kubebuilder's form). */
export function admissionPath(type: 'validate' | 'mutate', crd: ResolvedKind): string {
  return `/${type}-${crd.group.replace(/\./g, '-')}-${crd.version}-${crd.kind.toLowerCase()}`;
}

/** Webhook name in a configuration: `validate.memcacheds.cache.example.com` (must be fully qualified). */
export function admissionWebhookName(type: 'validate' | 'mutate', crd: ResolvedKind): string {
  return `${type}.${crd.plural}.${crd.group}`;
}

/** A webhook clientConfig: a Service in a cluster, or a URL (local development and tests). */
export type WebhookClientConfig =
  | { service: { namespace: string; name: string; path: string; port: number }; caBundle?: string }
  | { url: string; caBundle?: string };

/** The clientConfig pointing at `path` of the operator's webhook Service. */
export function serviceClientConfig(namespace: string, operatorName: string, path: string): WebhookClientConfig {
  return { service: { namespace, name: webhookNames(operatorName).service, path, port: 443 } };
}

/** The CRD's `spec.conversion`. */
export function conversionSpec(clientConfig: WebhookClientConfig): Record<string, unknown> {
  return { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig } };
}

/** Options of {@link admissionWebhookConfiguration}. */
export interface AdmissionConfigurationOptions {
  /** `validate` makes a ValidatingWebhookConfiguration, `mutate` a MutatingWebhookConfiguration. */
  readonly type: 'validate' | 'mutate';
  /** The CR's kind, hub version: the webhook's one rule (CREATE and UPDATE). */
  readonly crd: ResolvedKind;
  /** The configuration's `metadata.name`. */
  readonly name: string;
  /** Where the API server sends the AdmissionReview. */
  readonly clientConfig: WebhookClientConfig;
  /** See {@link WebhookProps.failurePolicy}. */
  readonly failurePolicy: 'Fail' | 'Ignore';
  /** See {@link WebhookProps.timeoutSeconds}; seconds, 1–30. */
  readonly timeoutSeconds: number;
  /** Labels of the configuration. @default none */
  readonly labels?: Record<string, string>;
  /** Annotations of the configuration, e.g. cert-manager's `cert-manager.io/inject-ca-from`. @default none */
  readonly annotations?: Record<string, string>;
}

/**
 * A Validating- or MutatingWebhookConfiguration (admissionregistration.k8s.io/v1, plain JSON) with one
 * webhook for the CR's kind: `matchPolicy: Equivalent`, `sideEffects: None`, and for a mutating one
 * `reinvocationPolicy: Never`.
 */
export function admissionWebhookConfiguration(options: AdmissionConfigurationOptions): Record<string, unknown> {
  const { crd } = options;
  const metadata: Record<string, unknown> = { name: options.name };
  if (options.labels) metadata.labels = { ...options.labels };
  if (options.annotations && Object.keys(options.annotations).length > 0) metadata.annotations = { ...options.annotations };
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: options.type === 'validate' ? 'ValidatingWebhookConfiguration' : 'MutatingWebhookConfiguration',
    metadata,
    webhooks: [
      {
        name: admissionWebhookName(options.type, crd),
        admissionReviewVersions: ['v1'],
        clientConfig: options.clientConfig,
        rules: [{ apiGroups: [crd.group], apiVersions: [crd.version], operations: ['CREATE', 'UPDATE'], resources: [crd.plural], scope: crd.namespaced ? 'Namespaced' : 'Cluster' }],
        matchPolicy: 'Equivalent',
        sideEffects: 'None',
        failurePolicy: options.failurePolicy,
        timeoutSeconds: options.timeoutSeconds,
        ...(options.type === 'mutate' ? { reinvocationPolicy: 'Never' } : {}),
      },
    ],
  };
}

/** The Service in front of the operator pods' webhook port. */
export function webhookService(namespace: string, operatorName: string, selector: Record<string, string>, labels: Record<string, string>): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: webhookNames(operatorName).service, namespace, labels: { ...labels } },
    spec: { selector: { ...selector }, ports: [{ name: 'webhook', port: 443, targetPort: WEBHOOK_PORT, protocol: 'TCP' }] },
  };
}

/** DNS names the serving certificate must hold for the webhook Service. */
export function webhookDnsNames(namespace: string, operatorName: string): string[] {
  const service = webhookNames(operatorName).service;
  return [`${service}.${namespace}.svc`, `${service}.${namespace}.svc.cluster.local`];
}

/** cert-manager's self-signed Issuer and the serving Certificate (writing the webhook Secret). */
export function certManagerObjects(namespace: string, operatorName: string, labels: Record<string, string>): Record<string, unknown>[] {
  const names = webhookNames(operatorName);
  return [
    { apiVersion: 'cert-manager.io/v1', kind: 'Issuer', metadata: { name: names.configuration, namespace, labels: { ...labels } }, spec: { selfSigned: {} } },
    {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Certificate',
      metadata: { name: names.configuration, namespace, labels: { ...labels } },
      spec: {
        secretName: names.secret,
        dnsNames: webhookDnsNames(namespace, operatorName),
        issuerRef: { kind: 'Issuer', name: names.configuration },
        privateKey: { algorithm: 'RSA', size: 2048, rotationPolicy: 'Always' },
      },
    },
  ];
}

/** RBAC of the webhook side: namespaced rules (the Secret) and cluster rules (caBundle patches, reads). */
export function webhookRules(options: {
  readonly certificates: WebhookCertificates;
  readonly operatorName: string;
  readonly crdName: string;
  readonly configurations: readonly ('validate' | 'mutate')[];
  readonly reads: readonly ResolvedKind[];
  readonly conversion: boolean;
}): { namespaced: Record<string, unknown>[]; cluster: Record<string, unknown>[] } {
  const names = webhookNames(options.operatorName);
  const namespaced: Record<string, unknown>[] = [];
  const cluster: Record<string, unknown>[] = [];
  if (options.certificates === 'self-managed') {
    // `create` cannot be limited by resourceNames (the name is not known before the object exists).
    namespaced.push({ apiGroups: [''], resources: ['secrets'], verbs: ['create'] });
    namespaced.push({ apiGroups: [''], resources: ['secrets'], resourceNames: [names.secret], verbs: ['get', 'update'] });
    // list + watch by name (fieldSelector metadata.name, authorized against resourceNames): the caBundle is
    // written back whenever the object lacks it (lib/runtime/webhook/ca-bundle-injector.ts); patch writes it.
    if (options.conversion) cluster.push({ apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions'], resourceNames: [options.crdName], verbs: ['get', 'list', 'patch', 'watch'] });
    const kinds = options.configurations.map((c) => (c === 'validate' ? 'validatingwebhookconfigurations' : 'mutatingwebhookconfigurations'));
    if (kinds.length > 0) cluster.push({ apiGroups: ['admissionregistration.k8s.io'], resources: kinds, resourceNames: [names.configuration], verbs: ['get', 'list', 'patch', 'watch'] });
  } else {
    namespaced.push({ apiGroups: [''], resources: ['secrets'], resourceNames: [names.secret], verbs: ['get'] });
  }
  const byGroup = new Map<string, Set<string>>();
  for (const kind of options.reads) byGroup.set(kind.group, new Set([...(byGroup.get(kind.group) ?? []), kind.plural]));
  for (const [group, plurals] of [...byGroup].sort(([a], [b]) => a.localeCompare(b))) {
    cluster.push({ apiGroups: [group], resources: [...plurals].sort(), verbs: ['get'] });
  }
  return { namespaced, cluster };
}
