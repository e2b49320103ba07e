/**
 * The `Operator` construct: a Kubernetes operator written as a cdk8s chart.
 *
 * At synth time it emits, as its child constructs, in this order (lib/operator/manifests/; the chart has no
 * namespace, so cluster-scoped objects never get one stamped; namespaced objects set `metadata.namespace`
 * explicitly):
 * 1. `Namespace` ({@link OperatorNamespace}): the operator's Namespace (unless `deployment.createNamespace`
 *    is false), labelled `pod-security.kubernetes.io/enforce: restricted`;
 * 2. `CustomResourceDefinition` ({@link OperatorCrd}; schema from the zod spec, see structural-schema.ts);
 * 3. `Rbac` ({@link OperatorRbac}): a ServiceAccount, a ClusterRole + ClusterRoleBinding (or Role +
 *    RoleBinding in `deployment.watchNamespace`) with rules derived from the kind and child kinds (rbac.ts),
 *    Roles for related kinds scoped to namespaces, and a leader-election Role + RoleBinding for leases in
 *    the operator's namespace;
 * 4. `Deployment` ({@link OperatorDeployment}): the operator's Deployment;
 * 5. `Webhooks` ({@link OperatorWebhooks}), when it serves conversion or admission webhooks;
 * 6. `Metrics` ({@link OperatorMetrics}), for its secure `/metrics`: a metrics Service, a
 *    `<operator>-metrics-auth` ClusterRole + binding (create TokenReviews and SubjectAccessReviews), a
 *    `<operator>-metrics-reader` ClusterRole for scrapers, and, with `deployment.networkPolicies`,
 *    NetworkPolicies (metrics-objects.ts).
 * Every object has an explicit name, so construct ids name no object.
 *
 * At run time the runtime calls {@link Operator.parseCustomResource} and {@link Operator.render} (through
 * `renderChildren`) for each CR.
 *
 * Child kinds for RBAC are computed lazily at synth time (render() of a subclass may use fields the
 * subclass constructor sets after `super()`): the union of the kinds rendered for every example, plus
 * `owns`.
 *
 * @example
 * class Memcached extends Operator<typeof Spec> {
 *   constructor(scope: Construct) {
 *     super(scope, 'memcached-operator', { group: 'cache.example.com', version: 'v1alpha1', kind: 'Memcached', spec: Spec });
 *   }
 *   render(cr: CustomResource<z.output<typeof Spec>>, scope: Construct) { new kplus.Deployment(scope, 'deployment', …); }
 * }
 */
import { ApiObject, Chart, Lazy } from 'cdk8s';
import type { Construct } from 'constructs';
import { z } from 'zod';
import type { PrinterColumn } from './schema/crd.js';
import { crNameSchema, type CrNameRule } from './schema/cr-name-rule.js';
import type { CustomResource, CustomResourceMetadata } from './custom-resource.js';
import { OperatorConfigError } from './errors.js';
import { exampleRelatedLookup } from './render/example-related.js';
import { compareKinds, kindKey, resolveKind, type ChildKind, type ResolvedKind } from './kinds.js';
import { STAND_IN_UID } from './render/stand-in-uid.js';
import { operatorLabels } from './render/labels.js';
import { OperatorDeployment, type OperatorDeploymentProps } from './manifests/operator-deployment.js';
import { resolveOperatorProps } from './operator-props.js';
import { deriveOperatorRules } from './manifests/rbac.js';
import { OperatorCrd } from './manifests/operator-crd.js';
import { OperatorMetrics } from './manifests/operator-metrics.js';
import { OperatorNamespace } from './manifests/operator-namespace.js';
import { OperatorRbac } from './manifests/operator-rbac.js';
import { WEBHOOK_PORT } from './manifests/webhook-configurations.js';
import { renderChildren, type Manifest } from './render/render-children.js';
import { assertCustomResourceAccepted } from '../validator/assert-custom-resource-accepted.js';
import { assertChildrenAccepted } from '../validator/validate-built-in-objects.js';
import type { RelatedDeclaration } from './render/related.js';
import type { KubeResource, RenderContext } from './render/render-context.js';
import type { RenderResult } from './render/render-result.js';
import { validateCustomResource } from './schema/validate.js';
import { brandClass } from './brand.js';
import type { AdmissionContext, FieldViolation } from './admission.js';
import { convertCustomResource, type ConversionOptions } from './versions/conversion.js';
import { crdConversionFields, OperatorWebhooks, type ResolvedWebhook } from './manifests/operator-webhooks.js';
import type { ResolvedVersion, SpokeVersion } from './versions/versions.js';
import { migratesStoredVersions, SYNTH_WARNING_METADATA } from './versions/storage-version-migration.js';
import type { WebhookProps } from './manifests/webhook-configurations.js';

export type { CustomResource, CustomResourceMetadata } from './custom-resource.js';
export type { ChildKind, ResolvedKind } from './kinds.js';
export type { PrinterColumn } from './schema/crd.js';
export type { OperatorDeploymentProps } from './manifests/operator-deployment.js';
export type { RelatedDeclaration } from './render/related.js';
export type { RenderContext } from './render/render-context.js';
export type { RenderResult } from './render/render-result.js';
export type { AdmissionContext, FieldViolation } from './admission.js';
export type { WebhookProps } from './manifests/webhook-configurations.js';
export { kebabCase, pluralize } from './operator-props.js';

/** Props of an {@link Operator}. */
export interface OperatorProps<Spec extends z.ZodType, Status extends z.ZodType = z.ZodType> {
  /** API group, a DNS subdomain with at least one dot, e.g. `cache.example.com`. */
  readonly group: string;
  /** API version, e.g. `v1alpha1`. */
  readonly version: string;
  /** CamelCase kind, e.g. `Memcached`. */
  readonly kind: string;
  /**
   * REST resource name (`spec.names.plural` of the CRD, the `<plural>.<group>` in its name), a lowercase
   * DNS-1123 label.
   * @default lowercased kind + English plural rules (`Memcached` → `memcacheds`, `Policy` → `policies`,
   *   `Ingress` → `ingresses`); set it for irregular plurals
   */
  readonly plural?: string;
  /** `spec.names.singular` of the CRD (`kubectl get <singular>`), a lowercase DNS-1123 label. @default lowercased kind, the API server's own default */
  readonly singular?: string;
  /** kubectl short names, e.g. `['mc']`. @default none */
  readonly shortNames?: string[];
  /** kubectl categories, e.g. `['all']`. @default none */
  readonly categories?: string[];
  /** Whether CRs live in a namespace (`spec.scope` of the CRD). @default 'Namespaced': most operators manage per-namespace workloads */
  readonly scope?: 'Namespaced' | 'Cluster';
  /** zod v4 schema of `spec`: the TS type of `cr.spec`, the CRD schema and offline validation. */
  readonly spec: Spec;
  /** zod object schema of extra status fields, beyond observedGeneration/conditions/children. @default none */
  readonly status?: Status;
  /** Extra printer columns; Ready and Age are always added (unless overridden by name). @default Ready + Age */
  readonly printerColumns?: PrinterColumn[];
  /** The operator's own Deployment. @default see OperatorDeploymentProps */
  readonly deployment?: OperatorDeploymentProps;
  /**
   * Sample CRs (docs, tests, `dev`, and RBAC derivation: the kinds render() emits for them), and beside
   * them the related objects they need (a ConfigMap a CR references): every object that is not of this
   * operator's kind must be of a kind declared in {@link related}. Synth renders the CRs against those
   * objects; a named related object that is not among them is handed to render as a stand-in with only
   * apiVersion, kind and metadata, and a render that fails on one names it. `dev` applies the related
   * objects before the CRs.
   * @default none
   */
  readonly examples?: (CustomResource<z.input<Spec>> | KubeResource)[];
  /** Child kinds beyond those rendered for the examples; required for kinds not in the built-in table. @default none */
  readonly owns?: ChildKind[];
  /**
   * Operator name: field manager, ServiceAccount/Deployment name, label value; a DNS-1123 label.
   * @default kebab-case(kind) + '-operator' (`MemcachedCluster` → `memcached-cluster-operator`): distinct
   *   per kind, so operators of different kinds never share a field manager
   */
  readonly name?: string;
  /**
   * The names a CR of this kind may have. The CRD refuses other names at creation (its schema restricts
   * `metadata.name`) and offline validation (`render -f`, snapshots) refuses the same ones, so a CR whose
   * name its children could not carry never reaches the runtime.
   * @default { format: 'dns1035-label', maxLength: 63 }: what a Service named after the CR needs;
   *   `{ format: 'dns1123-subdomain', maxLength: 253 }` is the API server's own rule (no restriction)
   */
  readonly crNameRule?: CrNameRule;
  /**
   * Child kinds an earlier version of this operator rendered and this one no longer renders or owns, e.g.
   * `[{ apiVersion: 'v1', kind: 'ConfigMap' }]`. The runtime prunes the objects of these kinds that a CR's
   * inventory (`status.children`) still lists, by a direct get + delete (they are not watched), so the
   * derived RBAC keeps `get` and `delete` on them. Keep an entry until every CR has been reconciled by
   * this version. Without it, such a prune is forbidden and the CR reports `Stalled=True Forbidden`
   * naming the missing entry. Kinds outside the built-in table need `plural` and `namespaced`.
   * @default none
   */
  readonly retiredKinds?: ChildKind[];
  /**
   * Objects the operator reads but does not own, by a key of your choice: `render` finds them in
   * `context.related[key]`, the runtime watches their kind and reconciles exactly the CRs that reference
   * a changed object (after an update, only when it changed a field render reads), and the derived RBAC
   * grants get/list/watch on the kind. See {@link RelatedDeclaration} for how a CR names them (a field
   * path or a function), for what happens when one is missing, and for `changeMatters`.
   * @example { config: { apiVersion: 'v1', kind: 'ConfigMap', references: 'spec.configMapRef.name' } }
   * @default none
   */
  readonly related?: Record<string, RelatedDeclaration<CustomResource<z.output<Spec>>>>;
  /**
   * Versions besides the hub (`version`, `spec`, `status`, which `render` works on), each with its own
   * schemas and conversion to and from the hub; declare them with `spokeVersion({...})`. The CRD lists
   * them all with `conversion.strategy: Webhook`; the operator serves `/convert`. See versions.ts.
   * @default none: one version, no conversion
   */
  readonly versions?: readonly SpokeVersion[];
  /**
   * Versions an earlier release served and this one no longer declares, e.g. `['v1alpha1']`. Synth warns
   * for each (the API server refuses this CRD while the cluster's CRD still lists the version in
   * `status.storedVersions`) and names the check; a retired version that is still declared is an error.
   * The safe order: release N keeps the old version (served or `served: false`) with storage on the new
   * one, and its runtime migrates stored objects and trims `status.storedVersions`; release N+1 drops it
   * and lists it here (storage-version-migration.ts).
   * @default none
   */
  readonly retiredVersions?: readonly string[];
  /** Webhook options (certificates, failurePolicy, timeout, kinds the admission hooks read). @default see WebhookProps */
  readonly webhook?: WebhookProps;
  /**
   * What the runtime does when a child's name is already taken by an object this CR did not make (no
   * ownerReference to the CR, no `operator.cdk8s.io/owner-uid` label): `'refuse'` leaves it untouched and
   * sets the CR `Stalled=True` reason `AdoptionRefused` naming it (with a Warning Event), retried with
   * backoff until the object is deleted or may be adopted; `'adopt'` takes it over, and it ends exactly
   * as rendered (fields other managers set by create or update are taken over first, as kubectl's
   * client-side to server-side apply migration does, so the apply removes those render does not set).
   * One object opts in whatever this says by the annotation `operator.cdk8s.io/adopt: <operator name>`.
   * An object controlled by another owner is never adopted.
   * @see https://kubernetes.io/docs/reference/using-api/server-side-apply/#upgrading-from-client-side-apply-to-server-side-apply
   * @default 'refuse': taking over an object someone else made, with its leftovers, must be asked for
   */
  readonly adoption?: AdoptionPolicy;
  /**
   * Whether the runtime may skip render when the inputs render read are unchanged since the CR's last
   * successful reconcile: the CR (its status only when render read it), the related objects its
   * references resolve to (the fields render read of them) and, when render read `context.observed`,
   * the observed children. The last render's children are then reused; diff, apply, prune and status
   * still run, so a child's drift is still repaired. A render that returned `requeueAfter` is always run.
   * Set `false` when render reads anything else (clock, randomness, environment, files, network).
   * What {@link Operator.status} reads does not count: computing status fields there instead of in render
   * lets a Pod or a child's status moving cost a status() call and no render.
   * Counted in `cdk8s_operator_renders_skipped_total`.
   * @default true: render is a pure function of its inputs (see `renderCustomResource`), and a child's
   *   status change would otherwise render again for nothing
   */
  readonly renderSkip?: boolean;
}

/** See {@link OperatorProps.adoption}. */
export type AdoptionPolicy = 'refuse' | 'adopt';

/** What the runtime passes to {@link Operator.finalize} besides the CR. */
export interface FinalizeContext {
  /** Aborted when the process must stop writing at once (lost lease, graceful-shutdown deadline). */
  readonly signal: AbortSignal;
}

/**
 * Base class of every operator. Subclasses implement {@link Operator.render}.
 *
 * @throws OperatorConfigError on inconsistent props, or a spec/status that is not a zod 4 schema (zod is a
 *   peer dependency, `^4`); StructuralSchemaError when the spec/status schema
 *   has no structural form (both at construction, so `cdk8s synth` fails)
 */
export abstract class Operator<Spec extends z.ZodType = z.ZodType, Status extends z.ZodType = z.ZodType> extends Chart {
  static {
    // `instanceof Operator` holds for operators made by another copy of the SDK (see brand.ts).
    brandClass(this, 'Operator');
  }

  /** Field manager, `app.kubernetes.io/managed-by` value, ServiceAccount and Deployment name. */
  readonly operatorName: string;
  /** The CR's own kind (apiVersion, plural, namespaced …). */
  readonly crd: ResolvedKind;
  readonly examples: CustomResource<z.input<Spec>>[];
  /**
   * The objects of {@link OperatorProps.examples} that are not of this operator's kind: related objects
   * the examples need, each of a declared related kind; namespaced ones without a namespace get `default`.
   */
  readonly exampleRelated: KubeResource[];
  /** Declared extra child kinds (as given). */
  readonly owns: ChildKind[];
  /** Kinds earlier versions rendered and this one prunes only (see {@link OperatorProps.retiredKinds}), resolved. */
  readonly retiredKinds: ResolvedKind[];
  /** The spec schema. */
  readonly specSchema: Spec;
  /** The names a CR may have (see {@link OperatorProps.crNameRule}). */
  readonly crNameRule: CrNameRule;
  /** The extra status schema, if any. */
  readonly statusSchema?: Status;
  /** Related-object declarations, by key (see {@link OperatorProps.related}). */
  readonly related: Readonly<Record<string, RelatedDeclaration<never>>>;
  /** Their kinds, resolved, by the same keys. */
  readonly relatedKinds: Readonly<Record<string, ResolvedKind>>;
  /** Namespace the operator runs in. */
  readonly operatorNamespace: string;
  /** The single namespace it watches, or undefined for all namespaces. */
  readonly watchNamespace?: string;
  /** Whether the Deployment runs with `--leader-elect` (replicas > 1, without `deployment.sharding`). */
  readonly leaderElection: boolean;
  /** Whether the Deployment runs with `--sharding` (`deployment.sharding`, whatever the replicas). */
  readonly sharding: boolean;
  /** The CustomResourceDefinition object. */
  readonly customResourceDefinition: ApiObject;
  /** The operator's Deployment object. */
  readonly deployment: ApiObject;
  /** Every version of the kind, the hub (`crd.version`) first. */
  readonly versions: readonly ResolvedVersion[];
  /** Versions earlier releases served (see {@link OperatorProps.retiredVersions}). */
  readonly retiredVersions: readonly string[];
  /** The webhooks (conversion, admission) the operator serves, or undefined when it has none. */
  readonly webhook?: ResolvedWebhook;
  /** See {@link OperatorProps.adoption}. */
  readonly adoption: AdoptionPolicy;
  /** See {@link OperatorProps.renderSkip}. */
  readonly renderSkip: boolean;

  private childKindsCache?: ResolvedKind[];
  private exampleChildrenCache?: Manifest[];

  constructor(scope: Construct, id: string, props: OperatorProps<Spec, Status>) {
    super(scope, id);
    const resolved = resolveOperatorProps(props, {
      path: this.node.path,
      validateAdmission: typeof this.validateAdmission === 'function',
      mutateAdmission: typeof this.mutateAdmission === 'function',
      onWarning: (warning) => {
        this.node.addMetadata(SYNTH_WARNING_METADATA, warning);
        console.warn(`${this.node.path}: warning: ${warning}`);
      },
    });
    ({ operatorName: this.operatorName, crd: this.crd, examples: this.examples, exampleRelated: this.exampleRelated, owns: this.owns } = resolved);
    ({ retiredKinds: this.retiredKinds, specSchema: this.specSchema, crNameRule: this.crNameRule, statusSchema: this.statusSchema } = resolved);
    ({ related: this.related, relatedKinds: this.relatedKinds, operatorNamespace: this.operatorNamespace, watchNamespace: this.watchNamespace } = resolved);
    ({ leaderElection: this.leaderElection, sharding: this.sharding, versions: this.versions, retiredVersions: this.retiredVersions } = resolved);
    ({ webhook: this.webhook, adoption: this.adoption, renderSkip: this.renderSkip } = resolved);

    const { operatorName: name, operatorNamespace: namespace, deploymentProps } = resolved;
    const labels = operatorLabels(name);
    const subject = { operatorName: name, namespace, serviceAccountName: name, labels };
    if (deploymentProps.createNamespace ?? true) new OperatorNamespace(this, 'Namespace', { name: namespace, labels });
    this.customResourceDefinition = new OperatorCrd(this, 'CustomResourceDefinition', {
      group: props.group, version: props.version, names: resolved.names, scope: resolved.scope,
      spec: props.spec, status: props.status, printerColumns: props.printerColumns, labels,
      versions: this.versions.length > 1 ? this.versions : undefined,
      metadataSchema: crNameSchema(this.crNameRule),
      ...crdConversionFields(this.webhook, name),
    });
    const rules = Lazy.any({ produce: () => this.operatorRules() });
    new OperatorRbac(this, 'Rbac', { ...subject, rules, watchNamespace: this.watchNamespace, related: this.related, relatedKinds: this.relatedKinds, sharding: this.sharding });
    const deployment = new OperatorDeployment(this, 'Deployment', { ...subject, constructPath: this.node.path, props: deploymentProps });
    this.deployment = deployment;
    const podLabels = deployment.podLabels;
    if (this.webhook) new OperatorWebhooks(this, 'Webhooks', { ...subject, webhook: this.webhook, crd: this.crd, deployment, podLabels });
    new OperatorMetrics(this, 'Metrics', { ...subject, podLabels, networkPolicies: deploymentProps.networkPolicies, webhookPort: this.webhook ? WEBHOOK_PORT : undefined });
  }

  /**
   * The rules of the operator's own (Cluster)Role (rbac.ts `deriveOperatorRules`), resolved when the chart
   * is synthesized. Synth only: the examples' children, and the examples themselves against this CRD (CEL
   * rules included), must be what the API server accepts, by its own validation (lib/validator).
   * @throws OperatorConfigError when retiredKinds lists a kind render still emits, or a namespaced Role
   *   would have to grant a cluster-scoped kind
   */
  private operatorRules(): unknown {
    const children = this.childKinds();
    assertChildrenAccepted(this.exampleChildren());
    for (const example of this.examples) assertCustomResourceAccepted(this, example as CustomResource<unknown>);
    const rendered = this.retiredKinds.filter((r) => children.some((c) => c.group === r.group && c.kind === r.kind));
    if (rendered.length > 0) {
      const kinds = rendered.map((kind) => `${kind.kind} (${kind.apiVersion})`).join(', ');
      throw new OperatorConfigError(this.node.path, `retiredKinds lists ${kinds}, which render() still emits for the examples; remove it from retiredKinds`);
    }
    // A namespaced Role cannot grant access to cluster-scoped kinds: say so instead of granting nothing.
    const related = Object.values(this.relatedKinds);
    const clusterScoped = this.watchNamespace === undefined ? [] : [...children, ...this.retiredKinds, ...related].filter((kind) => !kind.namespaced);
    if (clusterScoped.length > 0) {
      const kinds = clusterScoped.map((kind) => `${kind.kind} (${kind.apiVersion})`).join(', ');
      throw new OperatorConfigError(this.node.path, `watchNamespace ${this.watchNamespace} gives a namespaced Role, which cannot grant the cluster-scoped child or related kinds ${kinds}`);
    }
    // Related kinds cached in declared namespaces are granted there (a Role each, OperatorRbac), not here;
    // in the watched namespace itself, here.
    const granted = Object.entries(this.relatedKinds)
      .filter(([key]) => {
        const namespaces = this.related[key].scope?.namespaces;
        return namespaces === undefined || (this.watchNamespace !== undefined && namespaces.includes(this.watchNamespace));
      })
      .map(([, kind]) => kind);
    return deriveOperatorRules(this.crd, children, this.retiredKinds, granted, { storageVersionMigration: migratesStoredVersions(this) });
  }

  /**
   * Optional validating admission hook (named so because constructs 10.0–10.3 call a construct's own
   * `validate()` at synth). Gets the CR being created or updated (hub version, defaults applied) and, on
   * UPDATE, the old one; returns every violation (empty: allowed). A denial reaches the client as the API
   * server's own 422 `Invalid` Status listing each field, so `kubectl apply` prints them like schema errors.
   * For what CEL in the CRD cannot check, e.g. rules that read other objects (`context.get`).
   *
   * Production rules (lib/runtime/webhook/admission-ratchet.ts):
   * - Not called for an UPDATE of a terminating object (`deletionTimestamp` set) nor for one that changes
   *   only `metadata` (labels, annotations, finalizers, ownerReferences): those are allowed, so a
   *   finalizer can always be removed. A rule on labels or annotations of existing objects is therefore
   *   not enforced here.
   * - Ratcheting, as the API server does for CRD schemas (KEP-4008): on UPDATE a violation denies only
   *   when the update introduced it, i.e. the value at its `path` differs between `oldCr` and `cr`, or the
   *   path is absent from `oldCr`, or the path cannot be parsed; a violation at an unchanged path is
   *   allowed and returned as a warning. Report each violation at the field that causes it.
   * - `oldCr` is parsed with today's schema when it passes; when a tightened schema rejects it, it comes as
   *   stored (with the CRD's defaults, which the API server applied), and is never validated itself.
   * - Bounded by the webhook's `timeoutSeconds` minus a margin (`context.get` included): past it, the
   *   request is denied (504 `Timeout`) naming the read in flight, before the API server gives up.
   * @see https://github.com/kubernetes/enhancements/tree/master/keps/sig-api-machinery/4008-crd-ratcheting
   * @see https://kubernetes.io/docs/reference/access-authn-authz/extensible-admission-controllers/
   */
  validateAdmission?(
    cr: CustomResource<z.output<Spec>>,
    oldCr: CustomResource<z.output<Spec>> | undefined,
    context: AdmissionContext,
  ): readonly FieldViolation[] | Promise<readonly FieldViolation[]>;

  /**
   * Optional mutating admission hook: gets the CR being created or updated (hub version, as sent, before
   * defaulting) and returns it changed; the runtime answers with the JSON Patch between the two. Only
   * labels, annotations, `spec` and other fields of the object may change, never apiVersion, kind, name
   * or namespace (the request is refused if they do). Not called for an UPDATE of a terminating object nor
   * for a metadata-only UPDATE (so it never turns a finalizer or label change into a spec change, and
   * never adds to an object on its way out); bounded by the webhook's timeout like `validateAdmission`.
   */
  mutateAdmission?(cr: CustomResource<z.input<Spec>>, context: AdmissionContext): CustomResource<z.input<Spec>> | Promise<CustomResource<z.input<Spec>>>;

  /**
   * Converts a CR of any served version to `apiVersion` (`<group>/<version>`), through the hub, keeping
   * what the target lacks in the `operator.cdk8s.io/conversion-data` annotation (conversion.ts). Best
   * effort: a source that today's rules reject is converted anyway (`options.onBestEffort` hears of it).
   * @throws ConversionError naming the object when the apiVersion is not one of the kind's or a conversion function throws
   */
  convert(obj: Record<string, unknown>, apiVersion: string, options?: ConversionOptions): Record<string, unknown> {
    return convertCustomResource({ group: this.crd.group, kind: this.crd.kind, versions: this.versions }, obj, apiVersion, options);
  }

  /**
   * A CR of any served version as the hub version: a spoke's CR is validated offline against its own
   * version's schema, then converted; anything else (the hub's, or another kind) comes back as it is.
   * @throws CustomResourceValidationError listing the spoke's invalid fields, e.g. `spec.size: Too small …`
   */
  convertToHub(obj: Record<string, unknown>): Record<string, unknown> {
    const version = this.versions.find((v, i) => i > 0 && obj.apiVersion === `${this.crd.group}/${v.name}`);
    if (!version) return obj;
    validateCustomResource({ ...this.crd, apiVersion: `${this.crd.group}/${version.name}`, version: version.name }, version.spec, obj, this.crNameRule);
    return this.convert(obj, this.crd.apiVersion);
  }

  /**
   * Builds the desired children of one CR as cdk8s constructs under `scope` (a fresh chart whose id is the
   * CR name). Pure: no clock, randomness or network; read everything from `cr` and `context`:
   * - `context.observed`: this CR's children as they exist (`context.observed.of(construct)`);
   * - `context.related[key]`: the related objects the CR references (see {@link OperatorProps.related}).
   *
   * May return `{ status, requeueAfter }` ({@link RenderResult}): the operator's own status fields
   * (validated by the `status` schema) and a timed requeue. Order children with `dependsOn` and
   * `readyWhen` (child-ordering.ts).
   */
  abstract render(cr: CustomResource<z.output<Spec>>, scope: Construct, context: RenderContext): void | RenderResult<z.input<Status>>;

  /**
   * Optional: the operator's own status fields (the `status` schema's input type) computed from what
   * exists, apart from the desired state render builds (kubebuilder's habit): from `cr`, its observed
   * children (`context.observed`) and its related objects (`context.related`), the same
   * {@link RenderContext} render gets, without a construct scope. Return undefined to keep the fields
   * as they are. Pure, like render.
   *
   * When: on every reconcile, after the children are applied and pruned, also when render was skipped
   * (`renderSkip`), so `context.observed` is what the caches hold then. What it reads is not among
   * render's inputs: a Pod appearing, or a child's status changing, runs status() without rendering again.
   * Offline (`render`, `diff`, lib/testing's snapshot helpers) it runs right after render, with the same inputs.
   *
   * Merge: render's `status` fields first, then status()'s (a field both return is status()'s).
   *
   * Errors: a throw is `Stalled=True` reason `StatusFailed`, a result the `status` schema refuses (errors
   * name `status.<path>`; a runtime-owned field such as `conditions` is refused) `InvalidStatus`; either
   * way the children are still applied, a Warning Event is recorded, the error logged, the status fields
   * kept, and the reconcile retried with backoff (ReconcileError, step `status`).
   * @see https://book.kubebuilder.io/cronjob-tutorial/controller-implementation (status from what exists)
   */
  status?(cr: CustomResource<z.output<Spec>>, context: RenderContext): z.input<Status> | undefined;

  /**
   * Optional finalizer hook; when defined the runtime adds the finalizer `operator.cdk8s.io/<operator
   * name>` to every CR and calls this once the CR is being deleted, then removes it. `context.signal`
   * aborts when this process must stop writing at once (leadership lost, or the graceful-shutdown
   * deadline passed); the finalizer is then kept and the hook runs again later.
   *
   * Throwing keeps the finalizer (the CR stays, `Stalled=True` reason `FinalizeFailed`, a Warning Event)
   * and the hook is retried with backoff; a `TerminalError` (errors.ts; or one in the `cause` chain) is not
   * retried until the CR or one of its children changes. Make it idempotent: it may run again after a partial success.
   * @see https://kubernetes.io/docs/concepts/overview/working-with-objects/finalizers/
   */
  finalize?(cr: CustomResource<z.output<Spec>>, context: FinalizeContext): Promise<void>;

  /**
   * Union of the kinds render() emits for every example, plus `owns`, resolved; sorted by group, kind,
   * version. Computed once (renders every example against the related objects beside it in `examples`;
   * a named related object that is not there is given to render as a stand-in with only apiVersion, kind
   * and metadata; selectors match only the objects given).
   *
   * @throws RenderError / CustomResourceValidationError when an example fails to render;
   *   OperatorConfigError naming the stand-ins when it fails after render was handed one
   */
  childKinds(): ResolvedKind[] {
    if (this.childKindsCache) return [...this.childKindsCache];
    const kinds = new Map<string, ResolvedKind>();
    const add = (kind: ResolvedKind) => kinds.set(kindKey(kind), kinds.get(kindKey(kind)) ?? kind);
    for (const manifest of this.exampleChildren()) add(resolveKind({ apiVersion: manifest.apiVersion, kind: manifest.kind }, this.owns));
    for (const owned of this.owns) add(resolveKind(owned));
    this.childKindsCache = [...kinds.values()].sort(compareKinds);
    return [...this.childKindsCache];
  }

  /** The children of every example, rendered once (as for childKinds). */
  private exampleChildren(): Manifest[] {
    this.exampleChildrenCache ??= this.examples.flatMap((example) => this.renderExample(example));
    return this.exampleChildrenCache;
  }

  /**
   * One example's children, rendered against the related objects beside it in `examples`; a named one
   * that is not there is a stand-in (example-related.ts).
   * @throws OperatorConfigError naming the stand-ins when render fails after it was handed one
   */
  private renderExample(example: CustomResource<z.input<Spec>>): Manifest[] {
    const withUid = { ...example, metadata: { ...example.metadata, uid: example.metadata.uid ?? STAND_IN_UID } };
    const { lookup, standIns } = exampleRelatedLookup(this.exampleRelated);
    try {
      return renderChildren(this, withUid, { related: lookup });
    } catch (cause) {
      if (standIns.length === 0) throw cause;
      const cr = `${this.crd.kind} ${example.metadata.namespace ? `${example.metadata.namespace}/` : ''}${example.metadata.name}`;
      throw new OperatorConfigError(
        this.node.path,
        `example ${cr} failed to render with a stand-in for ${standIns.join(', ')} (apiVersion, kind and metadata only): put the object itself beside the CR in examples (sample.yaml); ${(cause as Error).message}`,
        { cause },
      );
    }
  }

  /**
   * Offline validation with the API server's rules as far as zod expresses them; returns the CR with
   * defaults applied (spec parsed; a namespaced CR without namespace gets `default`).
   *
   * Not called `validate`: constructs 10.0–10.3 treat a construct's `validate()` method as the retired
   * validation hook and refuse to synthesize it.
   *
   * @throws CustomResourceValidationError listing field paths, e.g. `spec.size: Too small: expected number to be >=1`
   */
  parseCustomResource(obj: unknown): CustomResource<z.output<Spec>> {
    return validateCustomResource(this.crd, this.specSchema, obj, this.crNameRule);
  }

  /**
   * Adds a CR of this operator's kind to another cdk8s app (e.g. a platform chart). The spec is validated
   * offline now, and emitted as given (defaults are left to the API server).
   *
   * @throws CustomResourceValidationError when the spec or metadata is invalid
   */
  instance(scope: Construct, id: string, props: { metadata: CustomResourceMetadata; spec: z.input<Spec> }): ApiObject {
    const { apiVersion, kind } = this.crd;
    this.parseCustomResource({ apiVersion, kind, metadata: props.metadata, spec: props.spec });
    return new ApiObject(scope, id, { apiVersion, kind, metadata: { ...props.metadata }, spec: props.spec });
  }
}
