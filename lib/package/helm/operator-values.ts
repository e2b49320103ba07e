/**
 * The knobs of a generated Helm chart, defined once: a zod schema per operator, from which
 * `values.schema.json` is generated (zod's own `z.toJSONSchema`), and the defaults, read from what
 * `cdk8s synth` produced for the operator (its Deployment), so the chart at its default values renders
 * exactly the synthesized objects.
 *
 * Values of one operator, under `operators.<operatorName>` (Helm's conventional spellings):
 * ```yaml
 * image: { repository: registry.example.com/team/op, tag: "1.4.0", digest: "", pullPolicy: IfNotPresent }
 * replicas: 1
 * resources: { requests: { cpu: 100m, memory: 128Mi }, limits: { cpu: 500m, memory: 256Mi } }
 * namespace: ""             # the operator's own namespace; "" = the release's (helm install -n)
 * createNamespace: false    # template the Namespace (kept by helm uninstall); else --create-namespace
 * watchNamespace: ""        # "" = all namespaces (ClusterRole); a name = that one (Role, --namespace)
 * leaderElection: auto      # auto = on when replicas > 1 (as synth); true | false force it
 * logLevel: info
 * metrics: { port: 8443 }
 * probes: { port: 8081 }
 * webhook: { certificates: self-managed }   # operators with webhooks only, fixed (see below)
 * nodeSelector: {}
 * tolerations: []
 * affinity: {}
 * labels: {}                # added to every object's labels (never to selectors)
 * annotations: {}           # added to every object's annotations
 * ```
 *
 * A chart of one operator also has a top-level `image: { repository, tag, digest, pullPolicy }`, all ""
 * by default; a key set there wins over `operators.<name>.image`, so `--set image.repository=… --set
 * image.tag=…` works as in other Helm charts.
 *
 * Fixed by the operator's code (the runtime reads them from the operator's props in the image, not from
 * flags), so the schema allows only the synthesized value: `webhook.certificates`, and `namespace` of an
 * operator with webhooks (the webhook Secret and Service live there: "" or that name, and the templates
 * fail naming it when the release's namespace is another). `watchNamespace` is fixed to "" for a
 * cluster-scoped kind.
 *
 * @see https://helm.sh/docs/topics/charts/#schema-files
 * @see https://zod.dev/json-schema
 */
import { z } from 'zod';
import type { Operator } from '../../operator/operator.js';

/** A Kubernetes quantity (`100m`, `0.5`, `128Mi`, `1Gi`) or a plain number. */
const QUANTITY = z.union([z.string().regex(/^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+|[numkMGTPE]|[KMGTPE]i)?$/), z.number().nonnegative()])
  .describe('a Kubernetes quantity, e.g. 100m, 0.5, 128Mi, 1Gi');
const DNS_LABEL = z.string().max(63).regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/).describe('a DNS-1123 label');
const PORT = z.number().int().min(1).max(65535);
const STRING_MAP = z.record(z.string(), z.string());

/** Log levels `cdk8s-operator run --log-level` accepts (pino's). */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error'] as const;

/** What the chart of one operator may vary, besides the defaults (see the module doc). */
export interface OperatorValueLimits {
  /** The only namespace allowed, for an operator whose code fixes it (webhooks). @default any DNS label */
  readonly fixedNamespace?: string;
  /** Whether `watchNamespace` may name a namespace (the CR's kind is namespaced). */
  readonly canWatchNamespace: boolean;
  /** The operator's webhook certificate mode, when it has webhooks. @default no `webhook` key */
  readonly webhookCertificates?: 'self-managed' | 'cert-manager';
}

/** The zod schema of `operators.<name>` for an operator with these limits. */
export function operatorValuesSchema(limits: OperatorValueLimits) {
  const namespace = limits.fixedNamespace === undefined
    ? z.union([z.literal(''), DNS_LABEL]).describe("the operator's namespace (Deployment, ServiceAccount, Services, leader-election Role, RBAC subjects); \"\" = the release's (helm install -n)")
    : z.union([z.literal(''), z.literal(limits.fixedNamespace)]).describe(`the operator's namespace: fixed to ${limits.fixedNamespace}, its webhook Secret and Service live there and the operator's code names it; "" = the release's, which must then be ${limits.fixedNamespace}`);
  const watchNamespace = limits.canWatchNamespace
    ? z.union([z.literal(''), DNS_LABEL]).describe('"" watches all namespaces (ClusterRole); a name watches only that one (Role there, --namespace)')
    : z.literal('').describe('"": the kind is cluster-scoped, so the operator watches the whole cluster');
  const quantities = z.strictObject({ cpu: QUANTITY.optional(), memory: QUANTITY.optional() });
  return z.strictObject({
    image: z.strictObject({
      repository: z.string().min(1).describe('image repository, e.g. registry.example.com/team/memcached-operator'),
      tag: z.string().describe('image tag ("" for none); a string: quote numbers such as "1.0"'),
      digest: z.union([z.literal(''), z.string().regex(/^sha256:[a-f0-9]{64}$/)]).describe('image digest, sha256:<64 hex>, or ""'),
      pullPolicy: z.enum(['Always', 'IfNotPresent', 'Never']),
    }),
    replicas: z.number().int().min(1).describe('operator pods; more than 1 turns leader election on (leaderElection: auto)'),
    resources: z.strictObject({ requests: quantities.optional(), limits: quantities.optional() }).describe('requests and limits of the operator container'),
    namespace,
    createNamespace: z.boolean().describe('emit the Namespace object, annotated helm.sh/resource-policy: keep (helm uninstall leaves it); false: use helm install --create-namespace'),
    watchNamespace,
    leaderElection: z.union([z.literal('auto'), z.boolean()]).describe('auto: on when replicas > 1; true or false force it (--leader-elect)'),
    logLevel: z.enum(LOG_LEVELS).describe('--log-level of cdk8s-operator run'),
    metrics: z.strictObject({ port: PORT.describe('container port of the HTTPS /metrics (--metrics-bind-address)') }),
    probes: z.strictObject({ port: PORT.describe('container port of /healthz and /readyz (--health-probe-bind-address)') }),
    ...(limits.webhookCertificates === undefined ? {} : {
      webhook: z.strictObject({
        certificates: z.literal(limits.webhookCertificates).describe("the webhook certificate mode: fixed by the operator's code (WebhookProps.certificates)"),
      }),
    }),
    nodeSelector: STRING_MAP.describe('pod nodeSelector'),
    tolerations: z.array(z.record(z.string(), z.unknown())).describe('pod tolerations'),
    affinity: z.record(z.string(), z.unknown()).describe('pod affinity'),
    labels: z.record(z.string(), z.string()).describe("labels added to every object (selectors keep the operator's own)"),
    annotations: STRING_MAP.describe('annotations added to every object'),
  });
}

/** Values of one operator (`operators.<name>`), as {@link operatorValuesSchema} reads them. */
export type OperatorValues = z.infer<ReturnType<typeof operatorValuesSchema>>;

/** The top-level `image` of a chart of one operator: each key, when not "", wins over `operators.<name>.image`. */
const TOP_LEVEL_IMAGE = z.strictObject({
  repository: z.string().describe('image repository; "" = operators.<name>.image.repository'),
  tag: z.string().describe('image tag; "" = operators.<name>.image.tag (a string: quote numbers such as "1.0")'),
  digest: z.union([z.literal(''), z.string().regex(/^sha256:[a-f0-9]{64}$/)]).describe('image digest, sha256:<64 hex>; "" = operators.<name>.image.digest'),
  pullPolicy: z.enum(['', 'Always', 'IfNotPresent', 'Never']).describe('"" = operators.<name>.image.pullPolicy'),
}).partial();

/** The top-level `image` values of a chart of one operator (all "": the operator's own apply). */
export const TOP_LEVEL_IMAGE_DEFAULTS = { repository: '', tag: '', digest: '', pullPolicy: '' } as const;

/**
 * The schema of the whole values file: `operators.<name>` for each operator, nothing else required; a
 * chart of one operator also takes a top-level `image` (see the module doc).
 */
export function chartValuesSchema(operators: readonly { readonly name: string; readonly limits: OperatorValueLimits }[]) {
  const shape = Object.fromEntries(operators.map(({ name, limits }) => [name, operatorValuesSchema(limits)]));
  const operatorsSchema = z.strictObject(shape).describe("each operator's knobs, by operator name");
  if (operators.length !== 1) return z.object({ operators: operatorsSchema });
  return z.object({
    image: TOP_LEVEL_IMAGE.optional().describe(`the image of ${operators[0].name}: each key set here wins over operators.${operators[0].name}.image (--set image.repository=… --set image.tag=…)`),
    operators: operatorsSchema,
  });
}

/** `values.schema.json` for these operators (JSON Schema draft 2020-12, from {@link chartValuesSchema}). */
export function chartValuesJsonSchema(operators: readonly { readonly name: string; readonly limits: OperatorValueLimits }[]): Record<string, unknown> {
  return z.toJSONSchema(chartValuesSchema(operators)) as Record<string, unknown>;
}

/** The limits of an operator's values, from the operator. */
export function operatorValueLimits(operator: Operator): OperatorValueLimits {
  return {
    fixedNamespace: operator.webhook === undefined ? undefined : operator.operatorNamespace,
    canWatchNamespace: operator.crd.namespaced,
    webhookCertificates: operator.webhook?.certificates,
  };
}

/** An image reference split as Helm charts spell it. */
export function splitImage(image: string): { repository: string; tag: string; digest: string } {
  const at = image.indexOf('@');
  const digest = at < 0 ? '' : image.slice(at + 1);
  const named = at < 0 ? image : image.slice(0, at);
  const colon = named.lastIndexOf(':');
  const tagged = colon > named.lastIndexOf('/');
  return { repository: tagged ? named.slice(0, colon) : named, tag: tagged ? named.slice(colon + 1) : '', digest };
}

/** The operator container of a synthesized Deployment. */
interface SynthesizedContainer {
  readonly image: string;
  readonly imagePullPolicy: 'Always' | 'IfNotPresent' | 'Never';
  readonly args: readonly string[];
  readonly resources: OperatorValues['resources'];
  readonly ports: readonly { readonly name?: string; readonly containerPort: number }[];
}

/**
 * The default values of an operator: what its synthesized objects say (the Deployment's image, pull
 * policy, replicas, resources and ports), but `namespace` "" (the release's) and `createNamespace` false
 * (Helm's `--create-namespace`): a chart is placed by `helm install -n`.
 * @throws Error when the synthesized Deployment lacks the operator container or one of its ports
 */
export function operatorValueDefaults(operator: Operator, objects: readonly Record<string, any>[]): OperatorValues {
  const deployment = objects.find((o) => o.kind === 'Deployment' && o.metadata?.name === operator.operatorName && o.metadata?.namespace === operator.operatorNamespace);
  const container: SynthesizedContainer | undefined = deployment?.spec?.template?.spec?.containers?.find((c: { name?: string }) => c.name === 'operator');
  if (container === undefined) throw new Error(`${operator.operatorName}: the synthesized objects hold no Deployment ${operator.operatorNamespace}/${operator.operatorName} with an "operator" container`);
  const port = (name: string): number => {
    const found = container.ports.find((p) => p.name === name);
    if (found === undefined) throw new Error(`${operator.operatorName}: the operator container has no port named ${name}`);
    return found.containerPort;
  };
  return {
    image: { ...splitImage(container.image), pullPolicy: container.imagePullPolicy },
    replicas: deployment!.spec.replicas,
    resources: structuredClone(container.resources),
    namespace: '',
    createNamespace: false,
    watchNamespace: operator.watchNamespace ?? '',
    leaderElection: 'auto',
    logLevel: 'info',
    metrics: { port: port('metrics') },
    probes: { port: port('probes') },
    ...(operator.webhook === undefined ? {} : { webhook: { certificates: operator.webhook.certificates } }),
    nodeSelector: {},
    tolerations: [],
    affinity: {},
    labels: {},
    annotations: {},
  };
}
