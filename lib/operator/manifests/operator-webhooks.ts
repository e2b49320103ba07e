/**
 * The webhook side of an Operator at synth time: which webhooks it has (conversion when it declares
 * several versions, validating / mutating when it implements the admission hooks), and the objects they
 * need, added to the operator's chart (see webhook-configurations.ts for what each object holds).
 */
import { ApiObject, JsonPatch } from 'cdk8s';
import { Construct } from 'constructs';
import { resolveKind, type ResolvedKind } from '../kinds.js';
import {
  CONVERSION_PATH,
  INJECT_CA_FROM_ANNOTATION,
  WEBHOOK_PORT,
  admissionPath,
  admissionWebhookConfiguration,
  certManagerObjects,
  conversionSpec,
  serviceClientConfig,
  webhookNames,
  webhookRules,
  webhookService,
  type WebhookCertificates,
  type WebhookProps,
} from './webhook-configurations.js';
import { roleWithBinding } from './operator-rbac.js';

/** An operator's webhooks, resolved from its props and hooks. */
export interface ResolvedWebhook {
  readonly certificates: WebhookCertificates;
  readonly failurePolicy: 'Fail' | 'Ignore';
  readonly timeoutSeconds: number;
  /** Serves `/convert` (the kind has several versions). */
  readonly conversion: boolean;
  /** Path of the validating hook, when the operator implements `validateAdmission`. */
  readonly validatePath?: string;
  /** Path of the mutating hook, when the operator implements `mutateAdmission`. */
  readonly mutatePath?: string;
  /** Kinds the admission hooks read. */
  readonly reads: readonly ResolvedKind[];
  /** Service, Secret and configuration names. */
  readonly names: ReturnType<typeof webhookNames>;
  /** Namespace of the Service and Secret: the operator's. */
  readonly namespace: string;
}

/**
 * Resolves the webhooks, or returns undefined when the operator has none.
 * @returns problems (each naming the prop) instead of throwing, for the Operator to report
 */
export function resolveWebhook(options: {
  readonly props?: WebhookProps;
  readonly crd: ResolvedKind;
  readonly operatorName: string;
  readonly namespace: string;
  readonly conversion: boolean;
  readonly validate: boolean;
  readonly mutate: boolean;
}): { webhook?: ResolvedWebhook; problems: string[] } {
  const problems: string[] = [];
  const props = options.props ?? {};
  const timeoutSeconds = props.timeoutSeconds ?? 10;
  if (!Number.isInteger(timeoutSeconds) || timeoutSeconds < 1 || timeoutSeconds > 30) problems.push(`webhook.timeoutSeconds must be an integer from 1 to 30, got ${timeoutSeconds}`);
  if (props.certificates !== undefined && props.certificates !== 'self-managed' && props.certificates !== 'cert-manager') {
    problems.push(`webhook.certificates must be 'self-managed' or 'cert-manager', got ${JSON.stringify(props.certificates)}`);
  }
  if (props.failurePolicy !== undefined && props.failurePolicy !== 'Fail' && props.failurePolicy !== 'Ignore') {
    problems.push(`webhook.failurePolicy must be 'Fail' or 'Ignore', got ${JSON.stringify(props.failurePolicy)}`);
  }
  const reads: ResolvedKind[] = [];
  (props.reads ?? []).forEach((kind, i) => {
    try {
      reads.push(resolveKind(kind));
    } catch (cause) {
      problems.push(`webhook.reads[${i}]: ${(cause as Error).message}`);
    }
  });
  if (!options.conversion && !options.validate && !options.mutate) {
    if (options.props !== undefined) problems.push('webhook is set, but the operator has neither several versions nor validateAdmission / mutateAdmission');
    return { problems };
  }
  return {
    problems,
    webhook: {
      certificates: props.certificates ?? 'self-managed',
      failurePolicy: props.failurePolicy ?? 'Fail',
      timeoutSeconds,
      conversion: options.conversion,
      validatePath: options.validate ? admissionPath('validate', options.crd) : undefined,
      mutatePath: options.mutate ? admissionPath('mutate', options.crd) : undefined,
      reads,
      names: webhookNames(options.operatorName),
      namespace: options.namespace,
    },
  };
}

/** The CRD's `spec.conversion` and annotations for a webhook (none without conversion). */
export function crdConversionFields(webhook: ResolvedWebhook | undefined, operatorName: string): { conversion?: Record<string, unknown>; annotations?: Record<string, string> } {
  if (!webhook?.conversion) return {};
  return {
    conversion: conversionSpec(serviceClientConfig(webhook.namespace, operatorName, CONVERSION_PATH)),
    annotations: injectCaAnnotation(webhook),
  };
}

function injectCaAnnotation(webhook: ResolvedWebhook): Record<string, string> | undefined {
  return webhook.certificates === 'cert-manager' ? { [INJECT_CA_FROM_ANNOTATION]: `${webhook.namespace}/${webhook.names.configuration}` } : undefined;
}

/** Props of an {@link OperatorWebhooks}. */
export interface OperatorWebhooksProps {
  /** The webhooks, resolved ({@link resolveWebhook}). */
  readonly webhook: ResolvedWebhook;
  /** The operator's kind. */
  readonly crd: ResolvedKind;
  /** The operator's name (object names are `<operator>-webhook…`). */
  readonly operatorName: string;
  /** The operator's ServiceAccount, bound to the webhook roles. */
  readonly serviceAccountName: string;
  /** The operator's labels (labels.ts `operatorLabels`). */
  readonly labels: Record<string, string>;
  /** The operator's Deployment: its container gets port 9443 and `--webhook-bind-address`. */
  readonly deployment: ApiObject;
  /** The labels of the operator's pods (the webhook Service's selector). */
  readonly podLabels: Record<string, string>;
}

/**
 * The webhook objects as a child construct of the `Operator` chart: Service, webhook configurations,
 * cert-manager objects or self-managed RBAC, and the container port 9443 of the operator Deployment.
 */
export class OperatorWebhooks extends Construct {
  constructor(scope: Construct, id: string, options: OperatorWebhooksProps) {
    super(scope, id);
    addWebhookObjects(this, options);
  }
}

/** The objects of {@link OperatorWebhooks}, under `scope`. */
function addWebhookObjects(scope: Construct, options: OperatorWebhooksProps): void {
  const { webhook, crd, operatorName, labels } = options;
  const namespace = webhook.namespace;
  new ApiObject(scope, 'WebhookService', webhookService(namespace, operatorName, options.podLabels, labels) as { apiVersion: string; kind: string });
  options.deployment.addJsonPatch(JsonPatch.add('/spec/template/spec/containers/0/ports/-', { name: 'webhook-server', containerPort: WEBHOOK_PORT, protocol: 'TCP' }));
  options.deployment.addJsonPatch(JsonPatch.add('/spec/template/spec/containers/0/args/-', `--webhook-bind-address=:${WEBHOOK_PORT}`));
  const configurations: ('validate' | 'mutate')[] = [];
  for (const [type, path] of [['validate', webhook.validatePath], ['mutate', webhook.mutatePath]] as const) {
    if (path === undefined) continue;
    configurations.push(type);
    new ApiObject(scope, type === 'validate' ? 'ValidatingWebhookConfiguration' : 'MutatingWebhookConfiguration', admissionWebhookConfiguration({
      type,
      crd,
      name: webhook.names.configuration,
      clientConfig: serviceClientConfig(namespace, operatorName, path),
      failurePolicy: webhook.failurePolicy,
      timeoutSeconds: webhook.timeoutSeconds,
      labels,
      annotations: injectCaAnnotation(webhook),
    }) as { apiVersion: string; kind: string });
  }
  if (webhook.certificates === 'cert-manager') {
    certManagerObjects(namespace, operatorName, labels).forEach((obj, i) => new ApiObject(scope, i === 0 ? 'WebhookIssuer' : 'WebhookCertificate', obj as { apiVersion: string; kind: string }));
  }
  const rules = webhookRules({
    certificates: webhook.certificates,
    operatorName,
    crdName: `${crd.plural}.${crd.group}`,
    configurations,
    reads: webhook.reads,
    conversion: webhook.conversion,
  });
  const subjects = [{ kind: 'ServiceAccount', name: options.serviceAccountName, namespace }];
  const name = `${operatorName}-webhook`;
  roleWithBinding(scope, 'WebhookRole', 'WebhookRoleBinding', { name, namespace, labels, rules: rules.namespaced, subjects });
  if (rules.cluster.length > 0) roleWithBinding(scope, 'WebhookClusterRole', 'WebhookClusterRoleBinding', { name, labels, rules: rules.cluster, subjects });
}
