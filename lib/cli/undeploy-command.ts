/**
 * `cdk8s-operator undeploy`: removes what `deploy` applied for the operators, found by its label
 * (`operator.cdk8s.io/deployed-by: <operator>`), so an object `deploy` did not apply is never touched.
 *
 * ```
 * cdk8s-operator undeploy [--include-crds] [--delete-custom-resources] [--kubeconfig PATH] [--context NAME]
 *                         [--module PATH] [--operators a,b] [--timeout DURATION]
 * ```
 *
 * 1. **Where:** as `deploy`: `undeploy from context C, cluster K (SERVER)` on stderr before anything is sent.
 * 2. **What:** the labelled objects of every kind an operator synthesizes, cluster-wide and in the
 *    namespaces its synthesized objects use (the operators are loaded and synthesized for that, as
 *    `deploy` does). The namespaces `default` and `kube-*` are never deleted.
 * 3. **CRDs** are kept unless `--include-crds`; a `note:` names each kept one and how many custom
 *    resources it holds. With `--include-crds`, before anything is deleted, one line per CRD says what
 *    deleting it deletes: `deleting CustomResourceDefinition X deletes its N Kind object(s): ns/a, …`
 *    (and, through their ownerReferences, the children their operator made). Those custom resources are
 *    deleted first, while the operator still runs to finalize them, and waited for; the CRD last.
 * 4. **Custom resources with finalizers** (the API server's rule: an object with
 *    `metadata.finalizers` is only removed once each finalizer is taken off, and the operator is what
 *    takes its own off): while any custom resource of the operators' kinds carries a finalizer, nothing
 *    the operator needs (its Deployment, RBAC, namespace) is deleted. Without `--include-crds` or
 *    `--delete-custom-resources`, undeploy refuses (exit 1, nothing deleted), listing those objects and
 *    what to do. With `--delete-custom-resources`, every custom resource of the operators' kinds is
 *    deleted first, while the operator still runs, and waited for (a `waiting for …` line every 10 s,
 *    up to `--timeout`); the CRDs are kept unless `--include-crds`.
 *    @see https://kubernetes.io/docs/concepts/overview/working-with-objects/finalizers/
 * 5. **Permissions:** a SelfSubjectAccessReview per delete; any missing one stops before the first delete,
 *    exit 1, listing every one.
 * 6. **Delete** in the reverse of deploy's order (webhook configurations, Deployment, Services,
 *    certificates, RBAC, Namespaces, CRDs), one `removed Kind ns/name` line each, then wait until every one
 *    is gone (a Namespace's contents are deleted by the namespace controller first), up to `--timeout`.
 *
 * Exit codes: 0 removed (or nothing to remove); 1 anything failed, with `error: …` on stderr.
 */
import type { Command } from 'commander';
import { ApiClient } from '../runtime/client/api-client.js';
import { type KubeObject, isApiError } from '../runtime/client/kube-client.js';
import { ResourceClient } from '../runtime/client/resource-client.js';
import { type ObjectLocation, type ResourceRef, resourcePath } from '../runtime/client/resource-path.js';
import { sleep } from '../runtime/queue/backoff.js';
import { accessLabel, missingAccess, type AccessRequest } from './access-check.js';
import { ApiResources } from '../runtime/client/api-resources.js';
import { objectLabel, orderForUndeploy } from './deploy-plan.js';
import { DEPLOY_USER_AGENT, type DeployIo } from './deploy-command.js';
import { type LiveObject, PROTECTED_NAMESPACES, PermissiveReader, type TargetOptions, closeQuietly, deployedObjects, loadSynthesized, loadTarget, namespacesOf } from './deploy-target.js';
import { durationOption } from './duration-flag.js';
import { contextOption, kubeconfigOption, moduleOption, operatorsOption } from './shared-flags.js';
import { PROCESS_OUTPUT } from './command-output.js';

/** The flags of `cdk8s-operator undeploy`. */
export interface UndeployOptions extends TargetOptions {
  /** Delete the CRDs too, and with them every custom resource of their kinds (`--include-crds`). @default false: kept */
  readonly includeCrds?: boolean;
  /**
   * Delete every custom resource of the operators' kinds first, while the operator still runs to
   * finalize them, and wait until they are gone; the CRDs stay unless {@link includeCrds}
   * (`--delete-custom-resources`). @default false: refuse while one carries a finalizer
   */
  readonly deleteCustomResources?: boolean;
  /** How long to wait for the deleted objects (and custom resources) to be gone, in ms (`--timeout`). @default 300000 ms */
  readonly timeoutMs?: number;
}

interface CrdShape {
  spec?: { group?: string; names?: { plural?: string; kind?: string }; scope?: string; versions?: { name: string; storage?: boolean }[] };
}

/** Runs `undeploy`; returns the exit code (see the module doc). Failures end as 1 with `error: …` on stderr. */
export async function runUndeploy(options: UndeployOptions, io: DeployIo): Promise<number> {
  const stderr = (line: string) => io.writeStderr(line + '\n');
  const timeoutMs = options.timeoutMs ?? 300_000;
  let api: ApiClient | undefined;
  try {
    const synthesized = await loadSynthesized(options, io.cwd ?? process.cwd());
    const { kubeConfig, where } = await loadTarget(options, io.env ?? process.env);
    stderr(`undeploy from ${where}: ${synthesized.map((s) => s.operator.operatorName).join(', ')}`);
    api = new ApiClient({ kubeConfig, userAgent: DEPLOY_USER_AGENT, onRequest: io.onRequest });
    const resources = new ApiResources(api);
    const reader = new PermissiveReader(api);

    const found: LiveObject[] = [];
    for (const { operator, objects } of synthesized) {
      const kinds = objects.map((o) => ({ apiVersion: o.apiVersion, kind: o.kind }));
      found.push(...(await deployedObjects(reader, resources, operator, namespacesOf(objects), kinds)));
    }
    const unique = [...new Map(found.map((f) => [f.path, f])).values()].filter(
      (f) => !(f.object.kind === 'Namespace' && PROTECTED_NAMESPACES.includes(f.object.metadata.name)),
    );
    const crds = unique.filter((f) => f.object.kind === 'CustomResourceDefinition');
    const others = unique.filter((f) => f.object.kind !== 'CustomResourceDefinition');

    // What deleting a CRD deletes: its custom resources, listed (or counted, when kept).
    const crsOf = new Map<string, { ref: ResourceRef; items: KubeObject[] }>();
    for (const crd of crds) {
      const spec = (crd.object as CrdShape).spec ?? {};
      const version = spec.versions?.find((v) => v.storage)?.name ?? spec.versions?.[0]?.name ?? '';
      const ref: ResourceRef = { group: spec.group ?? '', version, plural: spec.names?.plural ?? '', namespaced: spec.scope !== 'Cluster' };
      const items = await reader.list(resourcePath(ref), {}, { verb: 'list', group: ref.group, resource: ref.plural });
      crsOf.set(crd.path, { ref, items });
    }

    const deleteCrs = options.includeCrds === true || options.deleteCustomResources === true;
    // The operator removes its own finalizers: deleting what it needs first leaves them (and a namespace
    // holding one) Terminating for ever.
    if (!deleteCrs && others.length > 0) {
      const finalizing = [...crsOf.values()].flatMap(({ ref, items }) => items
        .filter((cr) => (cr.metadata?.finalizers ?? []).length > 0)
        .map((cr) => ({ ref, cr })));
      if (finalizing.length > 0) {
        stderr(`error: ${finalizing.length} custom resource(s) of ${synthesized.map((s) => s.operator.operatorName).join(', ')} still carry finalizers, which only the running operator removes; deleting its Deployment, RBAC and namespace now would leave them (and a namespace holding one) stuck Terminating. Nothing was deleted:`);
        for (const { ref, cr } of finalizing) {
          stderr(`  ${cr.kind ?? ref.plural} ${cr.metadata?.namespace ? cr.metadata.namespace + '/' : ''}${cr.metadata?.name} (finalizers: ${(cr.metadata?.finalizers ?? []).join(', ')})`);
        }
        stderr('delete them first while the operator runs (kubectl delete <kind> <name> -n <namespace>), or rerun with --delete-custom-resources (deletes every custom resource of these kinds and waits until the operator has finalized them; the CRDs stay) or --include-crds (the CRDs go too)');
        return 1;
      }
    }

    const deletes = [...others, ...(options.includeCrds ? crds : [])];
    const needed: AccessRequest[] = deletes.map((d) => ({ verb: 'delete', group: d.ref.group, resource: d.ref.plural, namespace: d.ref.namespaced ? d.object.metadata.namespace : undefined, name: d.object.metadata.name }));
    if (deleteCrs) {
      for (const { ref, items } of crsOf.values()) {
        for (const cr of items) needed.push({ verb: 'delete', group: ref.group, resource: ref.plural, namespace: ref.namespaced ? cr.metadata?.namespace : undefined, name: cr.metadata?.name });
      }
    }
    const missing = [...reader.forbidden, ...(await missingAccess(api, needed))];
    if (missing.length > 0) {
      stderr(`error: the user ${kubeConfig.getCurrentUser()?.name ?? 'unknown'} of ${where} lacks ${missing.length} permission(s) this undeploy needs; nothing was deleted:`);
      for (const request of [...new Map(missing.map((m) => [accessLabel(m), m])).keys()]) stderr(`  ${request}`);
      return 1;
    }

    if (unique.length === 0) {
      stderr('nothing to remove: no object carries the label deploy puts on what it applies');
      return 0;
    }

    for (const crd of crds) {
      const { items } = crsOf.get(crd.path)!;
      const kind = (crd.object as CrdShape).spec?.names?.kind ?? 'custom resource';
      const names = items.map((i) => `${i.metadata?.namespace ? i.metadata.namespace + '/' : ''}${i.metadata?.name}`);
      if (options.includeCrds) {
        stderr(`deleting ${objectLabel(crd.object)} deletes its ${items.length} ${kind} object(s)${names.length ? ': ' + names.join(', ') : ''}${items.length ? ', and through their ownerReferences the children their operator made' : ''}`);
      } else if (options.deleteCustomResources) {
        stderr(`note: kept ${objectLabel(crd.object)}; deleting its ${items.length} ${kind} object(s) first${names.length ? ': ' + names.join(', ') : ''}, while the operator runs to finalize them`);
      } else {
        stderr(`note: kept ${objectLabel(crd.object)} and its ${items.length} ${kind} object(s); --include-crds deletes them`);
      }
    }

    const deadline = Date.now() + timeoutMs;
    const writer = new ResourceClient(api!);
    const del = (ref: ResourceRef, namespace: string | undefined, name: string | undefined) =>
      writer.delete(ref, ref.namespaced ? namespace : undefined, name ?? '').catch((err: unknown) => (isApiError(err, 404) ? undefined : Promise.reject(err)));
    // Custom resources first, while their operator still runs to finalize them.
    if (deleteCrs) {
      const deletedCrs: ObjectLocation[] = [];
      for (const { ref, items } of crsOf.values()) {
        for (const cr of items) {
          await del(ref, cr.metadata?.namespace, cr.metadata?.name);
          deletedCrs.push({ ref, namespace: ref.namespaced ? cr.metadata?.namespace : undefined, name: cr.metadata?.name ?? '' });
        }
      }
      await waitGone(api, deletedCrs, deadline, 'custom resources', stderr);
      if (deletedCrs.length > 0) stderr(`removed ${deletedCrs.length} custom resource(s)`);
    }
    const ordered = orderForUndeploy(deletes.map((d) => ({ ...d, apiVersion: d.object.apiVersion, kind: d.object.kind })));
    for (const d of ordered) {
      await del(d.ref, d.object.metadata.namespace, d.object.metadata.name);
      stderr(`removed ${objectLabel(d.object)}`);
    }
    await waitGone(api, ordered.map((d) => ({ ref: d.ref, namespace: d.ref.namespaced ? d.object.metadata.namespace : undefined, name: d.object.metadata.name })), deadline, 'deleted objects');
    stderr(`undeployed ${synthesized.map((s) => s.operator.operatorName).join(', ')}: ${ordered.length} object(s) removed and gone`);
    return 0;
  } catch (err) {
    stderr(`error: ${(err as Error).message}`);
    return 1;
  } finally {
    closeQuietly(api);
  }
}

/** How often {@link waitGone} says what it still waits for, in ms. */
const PROGRESS_EVERY_MS = 10_000;

/**
 * Polls until every object answers 404; throws at the deadline naming (by API path) those still there.
 * With `progress`, says every {@link PROGRESS_EVERY_MS} what is still there.
 */
async function waitGone(client: ApiClient, objects: readonly ObjectLocation[], deadline: number, what: string, progress?: (line: string) => void): Promise<void> {
  const resources = new ResourceClient(client);
  let left = [...objects];
  let nextProgress = Date.now() + PROGRESS_EVERY_MS;
  const paths = () => left.map((o) => resourcePath(o.ref, o.namespace, o.name)).join(', ');
  for (;;) {
    const still: ObjectLocation[] = [];
    for (const o of left) {
      if ((await resources.getIfExists(o.ref, o.namespace, o.name)) !== undefined) still.push(o);
    }
    left = still;
    if (left.length === 0) return;
    if (Date.now() > deadline) throw new Error(`${what} still there at the deadline (a finalizer? is the operator running?): ${paths()}`);
    if (progress !== undefined && Date.now() >= nextProgress) {
      progress(`waiting for ${left.length} ${what} to be gone (${Math.max(0, Math.round((deadline - Date.now()) / 1000))} s left): ${paths()}`);
      nextProgress = Date.now() + PROGRESS_EVERY_MS;
    }
    await sleep(500);
  }
}

/** Adds `undeploy` to the `cdk8s-operator` program. */
export function registerUndeployCommand(program: Command): void {
  program
    .command('undeploy')
    .description('remove what deploy applied for the operators (found by its label); the CRDs only with --include-crds')
    .option('--include-crds', 'delete the CRDs too, and with them every custom resource of their kinds (said before anything is deleted)', false)
    .option('--delete-custom-resources', 'delete every custom resource of the operators\' kinds first, while the operator runs to finalize them, and wait until they are gone; the CRDs stay (without it, undeploy refuses while one carries a finalizer)', false)
    .addOption(kubeconfigOption())
    .addOption(contextOption())
    .addOption(moduleOption())
    .addOption(operatorsOption())
    .addOption(durationOption('--timeout <duration>', 'how long the deleted objects may take to be gone', 300_000, '300s'))
    .action(async (opts: UndeployOptions & { timeout: number }) => {
      process.exitCode = await runUndeploy(
        { ...opts, timeoutMs: opts.timeout },
        PROCESS_OUTPUT,
      );
    });
}
