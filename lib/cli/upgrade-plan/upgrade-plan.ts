/**
 * `cdk8s-operator diff --all`: the upgrade plan. With the operators module of the NEXT release and a
 * cluster running the current one, for every live CR of the module's operators (all namespaces, or
 * `-n`), what deploying the new release would do, writing nothing (every request through the
 * dry-run-only client):
 * - per CR: its children as `run` would decide them, `create`, `update` (with the unified diff),
 *   `adopt`, `prune` or `unchanged` (custom-resource-plan.ts: the runtime's reconciler, writes as dry runs), rendered by
 *   the new release from the live CR converted to its hub version; and the fields of the CR the new
 *   schema refuses (cr-validity.ts). A CR the new schema refuses is not rendered: the runtime would
 *   stall it (RenderFailed) and apply nothing;
 * - per operator: the new CRD beside the installed one (crd-comparison.ts), the new webhook
 *   configurations beside the installed ones, and the permissions the new roles grant that the
 *   installed ones lack (rbac-comparison.ts).
 *
 * Which version the CRs are read in: the installed CRD's storage version when the new release still
 * has it, then converted by the NEW release's conversion functions (`Operator.convertToHub`); else the
 * new hub version when the cluster serves it (the installed conversion); else the CRs cannot be read
 * in a version the new release knows, which is reported per operator.
 *
 * Requests: one GET of each CRD, webhook configuration and role; one LIST of the CRs per operator; per
 * CR what custom-resource-plan.ts sends; at most `concurrency` CRs planned at once.
 *
 * Exit codes: 3 something failed against the cluster (a read, a dry-run apply refused, a render that
 * failed); else 2 bad input found on the way (a CRD not installed, CRs that cannot be converted); else 1
 * something would change (a child, a CR invalid under the new schema, the CRD, a webhook configuration,
 * a missing permission); else 0. The plan of everything else is printed in every case.
 */
import { ConversionError } from '../../operator/versions/conversion.js';
import { asCustomResource } from '../../operator/object-shape.js';
import { CustomResourceValidationError } from '../../operator/errors.js';
import { type ResolvedKind, resolveKind } from '../../operator/kinds.js';
import { ObjectRef } from '../../operator/object-ref.js';
import type { Operator } from '../../operator/operator.js';
import { type KubeClient, type KubeObject, serverMessageOf } from '../../runtime/client/kube-client.js';
import { ResourceClient } from '../../runtime/client/resource-client.js';
import { withTypeMeta } from '../../runtime/client/type-meta.js';
import { mapConcurrently } from '../../runtime/reconcile/map-concurrently.js';
import type { Manifest } from '../deploy-plan.js';
import { type CrdComparison, compareCrd, crdChanges, crdName } from './crd-comparison.js';
import { type CustomResourceViolation, customResourceViolations } from './cr-validity.js';
import { firstLineOf } from '../../error-text.js';
import { type ChildAction, ChildLists, type ChildPlan, planCustomResource } from './custom-resource-plan.js';
import { type PolicyRule, type RoleComparison, compareRole } from './rbac-comparison.js';
import { type WebhookComparison, compareWebhooks } from './webhook-comparison.js';

/** CRs planned at once. @default 8 */
export const DEFAULT_PLAN_CONCURRENCY = 8;

/** Exit codes (the `diff` command's). */
const EXIT = { none: 0, changes: 1, usage: 2, failed: 3 } as const;

/** One operator of the new release and what it synthesizes. */
export interface PlannedOperator {
  readonly operator: Operator;
  /** Its synthesized objects (lib/cli/operator-manifests.ts). */
  readonly objects: readonly Manifest[];
}

/** The options of {@link runUpgradePlan}. */
export interface UpgradePlanOptions {
  readonly operators: readonly PlannedOperator[];
  /** The dry-run-only client. */
  readonly client: KubeClient;
  /** Only this namespace's CRs. @default all namespaces */
  readonly namespace?: string;
  /** `text` (summary table, details on request) or `json` (the whole plan). @default 'text' */
  readonly output?: 'text' | 'json';
  /** Text output: each CR's children and diffs, and each invalid field. @default false: the summary */
  readonly details?: boolean;
  /** CRs planned at once. @default {@link DEFAULT_PLAN_CONCURRENCY} */
  readonly concurrency?: number;
  writeStdout(text: string): void;
  /** Progress, `error:` and `note:` lines. */
  writeStderr(text: string): void;
}

/** One CR of the plan (JSON: an entry of `customResources`). */
export interface CustomResourceEntry {
  readonly operator: string;
  readonly kind: string;
  readonly namespace?: string;
  readonly name: string;
  readonly children: readonly ChildPlan[];
  /** The fields of the CR the new CRD refuses. */
  readonly invalid: readonly CustomResourceViolation[];
  /** What failed for this CR (a read, a refusal, a render, a conversion). */
  readonly errors: readonly string[];
  readonly notes: readonly string[];
}

/** The whole plan (`--output json`). */
export interface UpgradePlan {
  readonly customResources: readonly CustomResourceEntry[];
  readonly crd: { readonly customResourceDefinitions: readonly CrdComparison[]; readonly webhookConfigurations: readonly WebhookComparison[] };
  readonly rbac: { readonly roles: readonly RoleComparison[] };
  readonly summary: PlanSummary;
  /** Failures and bad input that concern no single CR (a CRD missing, a LIST refused). */
  readonly errors: readonly string[];
}

/** The counts of the summary table. */
export interface PlanSummary {
  readonly customResources: number;
  /** CRs with at least one child that is not `unchanged`. */
  readonly changed: number;
  readonly invalid: number;
  readonly failed: number;
  readonly children: Readonly<Record<ChildAction, number>>;
}

const kindOf = (apiVersion: string, kind: string): ResolvedKind => resolveKind({ apiVersion, kind });

/** Plans the upgrade, prints it; returns the exit code (see the module doc). Never throws for the cluster's answers. */
export async function runUpgradePlan(options: UpgradePlanOptions): Promise<number> {
  const { client } = options;
  const resources = new ResourceClient(client);
  const errors: string[] = [];
  let badInput = false;
  let failed = false;
  const crds: CrdComparison[] = [];
  const webhooks: WebhookComparison[] = [];
  const roles: RoleComparison[] = [];
  const targets: { operator: Operator; live: KubeObject; read: () => ReadTarget }[] = [];

  for (const { operator, objects } of options.operators) {
    const read = async <T>(what: string, fn: () => Promise<T>): Promise<T | undefined> => {
      try {
        return await fn();
      } catch (error) {
        errors.push(`${what}: ${serverMessageOf(error)}`);
        failed = true;
        return undefined;
      }
    };
    // The CRD.
    const crdManifest: Record<string, unknown> | undefined = objects.find((o) => o.kind === 'CustomResourceDefinition');
    if (crdManifest === undefined) {
      errors.push(`${operator.operatorName}: synthesizes no CustomResourceDefinition`);
      badInput = true;
      continue;
    }
    const crdKind = kindOf('apiextensions.k8s.io/v1', 'CustomResourceDefinition');
    const errorsBefore = errors.length;
    const installed = await read(`CustomResourceDefinition ${crdName(crdManifest)}`, () => resources.getIfExists(crdKind, undefined, crdName(crdManifest)));
    const crdUnread = errors.length > errorsBefore;
    const comparison = compareCrd(crdManifest, installed);
    crds.push(comparison);
    // Webhook configurations and roles.
    for (const object of objects.filter((o) => o.kind === 'ValidatingWebhookConfiguration' || o.kind === 'MutatingWebhookConfiguration')) {
      const live = await read(`${object.kind} ${object.metadata.name}`, () => resources.getIfExists(kindOf(object.apiVersion, object.kind), undefined, object.metadata.name));
      webhooks.push(compareWebhooks(object, live));
    }
    for (const object of objects.filter((o) => o.kind === 'ClusterRole' || o.kind === 'Role')) {
      const live = await read(`${object.kind} ${object.metadata.namespace ? `${object.metadata.namespace}/` : ''}${object.metadata.name}`, () =>
        resources.getIfExists<{ rules?: PolicyRule[] }>(kindOf(object.apiVersion, object.kind), object.metadata.namespace, object.metadata.name));
      roles.push(compareRole(object, live));
    }
    if (installed === undefined) {
      if (!crdUnread) {
        errors.push(`CustomResourceDefinition ${comparison.name}: not installed in this cluster: no ${operator.crd.kind} to plan (deploy creates the CRD)`);
        badInput = true;
      }
      continue;
    }
    // The CRs, in a version the new release can convert from.
    const listVersion = versionToRead(operator, installed);
    if (typeof listVersion !== 'string') {
      errors.push(`${operator.crd.kind} (${comparison.name}): ${listVersion.problem}`);
      badInput = true;
      continue;
    }
    const listed: ResolvedKind = { ...operator.crd, version: listVersion, apiVersion: `${operator.crd.group}/${listVersion}` };
    const list = await read(`cannot list ${operator.crd.kind} (${listed.apiVersion})`, () => resources.list(listed, options.namespace));
    for (const item of list?.items ?? []) {
      const live = withTypeMeta(item, listed.apiVersion, operator.crd.kind);
      targets.push({ operator, live, read: () => toHub(operator, live) });
    }
  }

  // The CRs, `concurrency` at once, in the order listed.
  const children = new ChildLists(client);
  let done = 0;
  const every = Math.max(1, Math.ceil(targets.length / 20));
  const entries = await mapConcurrently(targets, options.concurrency ?? DEFAULT_PLAN_CONCURRENCY, async ({ operator, live, read }) => {
    const hub = read();
    let entry: CustomResourceEntry;
    try {
      entry = await planOne(client, children, operator, live, hub);
    } catch (error) { // a bug of ours or of the operator's code outside render: named, and the rest planned
      const ref = ObjectRef.of(live);
      entry = { operator: operator.operatorName, kind: operator.crd.kind, ...(ref.namespace ? { namespace: ref.namespace } : {}), name: ref.name, children: [], invalid: [], errors: [`cannot plan: ${error instanceof Error ? error.stack ?? error.message : String(error)}`], notes: [] };
    }
    done += 1;
    if (done % every === 0 || done === targets.length) options.writeStderr(`planned ${done}/${targets.length} custom resources\n`);
    return { entry, unconverted: hub.hub === undefined };
  });
  for (const { entry, unconverted } of entries) {
    if (unconverted) badInput = true;
    else if (entry.errors.length > 0) failed = true;
  }

  const customResources = entries.map(({ entry }) => entry);
  const plan: UpgradePlan = { customResources, crd: { customResourceDefinitions: crds, webhookConfigurations: webhooks }, rbac: { roles }, summary: summarize(customResources), errors };
  for (const error of errors) options.writeStderr(`error: ${error}\n`);
  for (const entry of customResources) {
    for (const error of entry.errors) options.writeStderr(`error: ${crLabel(entry)}: ${error}\n`);
  }
  options.writeStdout(options.output === 'json' ? `${JSON.stringify(plan, null, 2)}\n` : formatPlan(plan, options.details === true));

  const changes = plan.summary.changed + plan.summary.invalid > 0 || crds.some((c) => c.installed && crdChanges(c))
    || webhooks.some((w) => w.action !== 'unchanged') || roles.some((r) => r.missing.length > 0);
  return failed ? EXIT.failed : badInput ? EXIT.usage : changes ? EXIT.changes : EXIT.none;
}

/** The live CR in the new hub version, with the fields of its own version the new release refuses. */
interface ReadTarget {
  readonly hub?: Record<string, unknown>;
  readonly invalid: readonly CustomResourceViolation[];
  readonly error?: string;
}

/**
 * Converts with the new release's functions (a spoke is validated against the new release's schema of
 * that version first; what it refuses is reported, and the CR converted best effort).
 */
function toHub(operator: Operator, live: KubeObject): ReadTarget {
  const object: Record<string, unknown> = live;
  try {
    return { hub: operator.convertToHub(object), invalid: [] };
  } catch (error) {
    if (error instanceof CustomResourceValidationError) {
      const invalid = error.fields.map((f) => ({ field: f.path, message: `${String(object.apiVersion)}: ${f.reason}` }));
      try {
        return { hub: operator.convert(object, operator.crd.apiVersion), invalid };
      } catch (again) {
        return { invalid, error: `cannot convert from ${String(object.apiVersion)} to ${operator.crd.apiVersion}: ${firstLineOf(again)}` };
      }
    }
    if (error instanceof ConversionError) return { invalid: [], error: `cannot convert from ${String(object.apiVersion)} to ${operator.crd.apiVersion}: ${firstLineOf(error)}` };
    return { invalid: [], error: `cannot convert from ${String(object.apiVersion)} to ${operator.crd.apiVersion}: ${error instanceof Error ? error.stack ?? error.message : String(error)}` };
  }
}

async function planOne(client: KubeClient, children: ChildLists, operator: Operator, live: KubeObject, read: ReadTarget): Promise<CustomResourceEntry> {
  const ref = ObjectRef.of(live);
  const base = { operator: operator.operatorName, kind: operator.crd.kind, ...(ref.namespace ? { namespace: ref.namespace } : {}), name: ref.name };
  if (read.hub === undefined) return { ...base, children: [], invalid: read.invalid, errors: [read.error ?? 'cannot convert'], notes: [] };
  const hub = { ...read.hub, metadata: { ...(read.hub.metadata as object), uid: live.metadata?.uid }, ...(live.status === undefined ? {} : { status: live.status }) };
  const invalid = [...read.invalid, ...customResourceViolations({ operator, object: hub })];
  if (invalid.length > 0) {
    return { ...base, children: [], invalid, errors: [], notes: ['not rendered: the new schema refuses it; the runtime would set Stalled=True (RenderFailed) and apply or prune nothing'] };
  }
  const plan = await planCustomResource(client, { operator, cr: asCustomResource(hub), live }, children);
  return { ...base, children: plan.children, invalid, errors: [...plan.errors], notes: [...plan.notes] };
}

/** The version to LIST the CRs in (see the module doc), or why there is none. */
function versionToRead(operator: Operator, installed: Record<string, unknown>): string | { problem: string } {
  const versions = ((installed.spec as { versions?: { name: string; served?: boolean; storage?: boolean }[] }).versions ?? []);
  const storage = versions.find((v) => v.storage === true);
  if (storage !== undefined && storage.served !== false && operator.versions.some((v) => v.name === storage.name)) return storage.name;
  if (versions.some((v) => v.name === operator.crd.version && v.served !== false)) return operator.crd.version;
  return { problem: `cannot convert: the CRs are stored in ${storage?.name ?? 'an unknown version'}, which the new release does not define, and the cluster does not serve its hub ${operator.crd.version}; deploy a release that serves both first` };
}

function summarize(entries: readonly CustomResourceEntry[]): PlanSummary {
  const children: Record<ChildAction, number> = { create: 0, update: 0, adopt: 0, prune: 0, unchanged: 0 };
  for (const entry of entries) for (const child of entry.children) children[child.action] += 1;
  return {
    customResources: entries.length,
    changed: entries.filter((e) => e.children.some((c) => c.action !== 'unchanged')).length,
    invalid: entries.filter((e) => e.invalid.length > 0).length,
    failed: entries.filter((e) => e.errors.length > 0).length,
    children,
  };
}

const crLabel = (entry: CustomResourceEntry) => `${entry.kind} ${entry.namespace ? `${entry.namespace}/` : ''}${entry.name}`;

/** The text form: the summary table, the CRD, webhook and RBAC findings, then (with details) each CR. */
export function formatPlan(plan: UpgradePlan, details: boolean): string {
  const s = plan.summary;
  const rows = [
    ['custom resources', s.customResources], ['changed', s.changed], ['invalid under the new schema', s.invalid], ['failed', s.failed],
    ['children to create', s.children.create], ['children to update', s.children.update], ['children to adopt', s.children.adopt],
    ['children to prune', s.children.prune], ['children unchanged', s.children.unchanged],
  ] as const;
  const width = Math.max(...rows.map(([label]) => label.length));
  const out: string[] = ['Upgrade plan', ...rows.map(([label, count]) => `  ${label.padEnd(width)}  ${count}`), ''];
  for (const crd of plan.crd.customResourceDefinitions) {
    if (!crd.installed) {
      out.push(`CustomResourceDefinition ${crd.name}: not installed`);
      continue;
    }
    const parts = [
      ...crd.versionsDropped.map((v) => `drops ${v.name}${v.stillStored ? ' (still in status.storedVersions: refused until migrated)' : ''}`),
      ...(crd.servedAdded.length ? [`serves ${crd.servedAdded.join(', ')}`] : []),
      ...(crd.servedRemoved.length ? [`stops serving ${crd.servedRemoved.join(', ')}`] : []),
      ...(crd.storageVersion ? [`storage ${crd.storageVersion.from} -> ${crd.storageVersion.to}`] : []),
      ...(crd.schemaChanged.length ? [`schema of ${crd.schemaChanged.join(', ')} changes`] : []),
    ];
    out.push(`CustomResourceDefinition ${crd.name}: ${parts.length ? parts.join('; ') : 'unchanged'}`);
    if (crd.migration) out.push(`  ${crd.migration}`);
  }
  for (const webhook of plan.crd.webhookConfigurations) out.push(`${webhook.kind} ${webhook.name}: ${webhook.action}${webhook.path ? ` (${webhook.path})` : ''}`);
  for (const role of plan.rbac.roles) {
    if (role.missing.length === 0) continue;
    out.push(`${role.kind} ${role.namespace ? `${role.namespace}/` : ''}${role.name}: ${role.installed ? 'lacks' : 'not installed; needs'}`);
    for (const m of role.missing) out.push(`  ${m.verb} ${m.apiGroup === '' ? '' : `${m.apiGroup}/`}${m.resource}${m.resourceNames ? ` (${m.resourceNames.join(', ')})` : ''}`);
  }
  if (!details && s.changed + s.invalid > 0) out.push('(--details lists each changed or invalid custom resource with its diffs; --output json the whole plan)');
  for (const entry of plan.customResources) {
    const changed = entry.children.filter((c) => c.action !== 'unchanged');
    if (changed.length + entry.invalid.length === 0) continue;
    if (!details) continue;
    out.push(`${crLabel(entry)}:`);
    for (const violation of entry.invalid) out.push(`  invalid ${violation.field || '(object)'}: ${violation.message}`);
    for (const note of entry.notes) out.push(`  note: ${note}`);
    for (const child of changed) out.push(`  ${child.action} ${child.kind} ${child.namespace ? `${child.namespace}/` : ''}${child.name}`);
    for (const child of changed) if (child.diff) out.push(child.diff.trimEnd());
  }
  return `${out.join('\n')}\n`;
}
