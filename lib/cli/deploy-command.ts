/**
 * `cdk8s-operator deploy`: synthesizes the operators in-process (what `cdk8s synth` writes: CRD,
 * Namespace, RBAC, Deployment, Services, webhook objects) and server-side applies them to a cluster, in
 * dependency order, then waits until the operator is ready.
 *
 * ```
 * cdk8s-operator deploy [--dry-run] [--kubeconfig PATH] [--context NAME] [--module PATH]
 *                       [--operators a,b] [--timeout DURATION]
 * ```
 *
 * 1. **Where:** the kubeconfig's current context, or `--context`; `deploy to context C, cluster K (SERVER)`
 *    is printed on stderr before anything else is sent.
 * 2. **What:** every object each operator synthesizes, labelled `operator.cdk8s.io/deployed-by: <operator>`
 *    (but a Namespace that existed before without that label: it holds more than the operator, so it is
 *    applied unlabelled, and `undeploy` leaves it), each kind's REST resource read from discovery (a kind the server does not serve, e.g. cert-manager's
 *    Certificate without cert-manager, stops the deploy before any write). Each object is read (GET) to
 *    know whether it is created or changed.
 * 3. **Permissions:** one SelfSubjectAccessReview per verb the deploy needs (`create` for absent objects,
 *    `patch` for present ones, `delete` for prunes, `list pods` for the readiness wait); any missing one
 *    (or a read answered 403) stops the deploy before its first write, exit 1, listing every one
 *    (lib/cli/access-check.ts says what a review cannot see).
 * 4. **Apply**, stage by stage (lib/cli/deploy-plan.ts): CRDs, waited for until Established; Namespaces;
 *    RBAC; webhook certificates (cert-manager's Issuer and Certificate; self-managed ones are made by the
 *    operator); Services and the rest; the Deployment; then the wait (5); then the webhook configurations.
 *    Server-side apply, field manager `cdk8s-operator-deploy`, `force` (the synthesized objects are the
 *    desired state; the operator's own writes, e.g. `caBundle`, are fields `deploy` does not set). One
 *    line per object: `applied Kind ns/name (created|changed|unchanged)`; a second deploy of the same
 *    objects changes nothing (no resourceVersion moves).
 * 5. **Wait** for each Deployment's rollout (observedGeneration current, every replica updated and
 *    available, `Available=True`), for its Pods' `Ready` condition, and for `/readyz`: read through the
 *    API server's pod proxy (`pods/NAME:PORT/proxy/readyz`, the readiness probe's path and port). Where
 *    the proxy cannot reach the Pod (kwok's Pods run no process; a network the API server cannot dial),
 *    a `note:` says so and the Pod's Ready condition, which the kubelet sets from that same probe, is
 *    what is reported.
 * 6. **Prune:** objects an earlier deploy of the same operator labelled and that are no longer
 *    synthesized are deleted (`pruned Kind ns/name`), last. CRDs are never pruned (deleting one deletes
 *    its custom resources): a `note:` names them. Found in the namespaces the synthesized objects use
 *    and cluster-wide (deploy-target.ts).
 *
 * `--dry-run`: steps 1–3 (reads, reviews and `dryRun=All` applies only: no write reaches the server) and
 * the plan on stdout: per operator, its stages in order, each object `create|change|unchanged`, and the
 * prunes (see `formatPlan`). Missing permissions are listed, exit 1, as for a deploy.
 *
 * Exit codes: 0 deployed (or planned); 1 anything failed (with `error: …` on stderr): operators not
 * loadable or not synthesizable, kubeconfig or context unusable, permissions missing, a write refused,
 * a wait past `--timeout`.
 *
 * @see https://kubernetes.io/docs/reference/using-api/server-side-apply/
 * @see https://kubernetes.io/docs/concepts/workloads/controllers/deployment/#deployment-status
 * @see https://kubernetes.io/docs/tasks/extend-kubernetes/http-proxy-access-api/
 */
import type { Command } from 'commander';
import type { Operator } from '../operator/operator.js';
import { webhookNames } from '../operator/manifests/webhook-configurations.js';
import { ApiClient, type RequestRecord } from '../runtime/client/api-client.js';
import { PODS } from '../runtime/client/builtin-resources.js';
import type { KubeClient, KubeObject } from '../runtime/client/kube-client.js';
import { isApiError } from '../runtime/client/kube-client.js';
import { ResourceClient } from '../runtime/client/resource-client.js';
import { type ResourceRef, resourcePath } from '../runtime/client/resource-path.js';
import { sleep } from '../runtime/queue/backoff.js';
import { type ObservedCondition, conditionSummary, conditionsOf, findCondition, hasTrueCondition } from '../runtime/reconcile/conditions.js';
import { accessLabel, missingAccess, type AccessRequest } from './access-check.js';
import { ApiResources } from '../runtime/client/api-resources.js';
import {
  DEPLOYED_BY_LABEL,
  DEPLOY_FIELD_MANAGER,
  type DeployStage,
  type Manifest,
  type OperatorPlan,
  type PlannedAction,
  deployStage,
  formatPlan,
  objectLabel,
  orderForDeploy,
  orderForUndeploy,
} from './deploy-plan.js';
import { PROTECTED_NAMESPACES, PermissiveReader, type TargetOptions, closeQuietly, deployedObjects, loadSynthesized, loadTarget, namespacesOf } from './deploy-target.js';
import { DryRunOnlyClient } from './dry-run-client.js';
import { durationOption } from './duration-flag.js';
import { contextOption, kubeconfigOption, moduleOption, operatorsOption } from './shared-flags.js';
import { PROCESS_OUTPUT } from './command-output.js';

/** The user agent of `deploy`'s and `undeploy`'s requests, so an audit log tells them apart. */
export const DEPLOY_USER_AGENT = 'cdk8s-operator-sdk/deploy';

/** The flags of `cdk8s-operator deploy`. */
export interface DeployOptions extends TargetOptions {
  /** Print the plan, write nothing (`--dry-run`). @default false */
  readonly dryRun?: boolean;
  /**
   * How long each wait may take (a CRD Established, a Deployment's rollout and Pods Ready, `/readyz`), in ms (`--timeout`).
   * @default 300000 ms: an image pull and a first start on a busy node
   */
  readonly timeoutMs?: number;
}

/** Where `deploy` reads and writes (tests run it in-process). */
export interface DeployIo {
  /** Directory `--module` is resolved against. @default process.cwd() */
  readonly cwd?: string;
  /** The plan (`--dry-run`). */
  writeStdout(text: string): void;
  /** Progress lines, `note:` and `error: …`. */
  writeStderr(text: string): void;
  /** Read for `KUBECONFIG`. @default process.env */
  readonly env?: NodeJS.ProcessEnv;
  /** Called after every API request (tests count them). @default none */
  readonly onRequest?: (record: RequestRecord) => void;
}

/** A synthesized object to apply, with where it goes and what is there now. */
interface Target {
  readonly operatorName: string;
  readonly object: Manifest;
  readonly ref: ResourceRef;
  readonly path: string;
  readonly live?: KubeObject;
  readonly stage: DeployStage;
}

/** Runs `deploy`; returns the exit code (see the module doc). Failures end as 1 with `error: …` on stderr, never thrown. */
export async function runDeploy(options: DeployOptions, io: DeployIo): Promise<number> {
  const stderr = (line: string) => io.writeStderr(line + '\n');
  const timeoutMs = options.timeoutMs ?? 300_000;
  let api: ApiClient | undefined;
  let probeApi: ApiClient | undefined;
  try {
    const synthesized = await loadSynthesized(options, io.cwd ?? process.cwd());
    const { kubeConfig, where } = await loadTarget(options, io.env ?? process.env);
    stderr(`${options.dryRun ? 'plan for' : 'deploy to'} ${where}: ${synthesized.map((s) => s.operator.operatorName).join(', ')}`);
    api = new ApiClient({ kubeConfig, userAgent: DEPLOY_USER_AGENT, onRequest: io.onRequest });
    const client: KubeClient = options.dryRun ? new DryRunOnlyClient(api, { command: 'deploy --dry-run', allowReviews: true }) : api;
    const resources = new ApiResources(client);
    const reader = new PermissiveReader(client);

    // 2. what is there now
    const targets: Target[] = [];
    const prunes: { operatorName: string; path: string; ref: ResourceRef; object: Manifest }[] = [];
    const keptCrds = new Map<string, string[]>();
    for (const { operator, objects } of synthesized) {
      const namespaces = namespacesOf(objects);
      const paths = new Set<string>();
      for (const synthesizedObject of objects) {
        const ref = await resources.resourceOf(synthesizedObject.apiVersion, synthesizedObject.kind);
        const namespace = ref.namespaced ? synthesizedObject.metadata.namespace : undefined;
        if (ref.namespaced && !namespace) throw new Error(`${objectLabel(synthesizedObject)} (of ${operator.operatorName}) is namespaced and has no metadata.namespace`);
        const path = resourcePath(ref, namespace, synthesizedObject.metadata.name);
        paths.add(path);
        const live = await reader.get(ref, namespace, synthesizedObject.metadata.name, { verb: 'get', group: ref.group, resource: ref.plural, namespace, name: synthesizedObject.metadata.name });
        // A Namespace that was there before any deploy (it has no deploy label) is not labelled: it holds
        // more than the operator, and undeploy must not delete it.
        const foreignNamespace = synthesizedObject.kind === 'Namespace' && live !== undefined && live.metadata?.labels?.[DEPLOYED_BY_LABEL] === undefined;
        if (foreignNamespace) stderr(`note: ${objectLabel(synthesizedObject)} existed before: applied without the ${DEPLOYED_BY_LABEL} label, so undeploy leaves it`);
        const object = foreignNamespace ? synthesizedObject : withDeployLabel(synthesizedObject, operator.operatorName);
        targets.push({ operatorName: operator.operatorName, object, ref, path, live, stage: deployStage(object) });
      }
      const kinds = objects.map((o) => ({ apiVersion: o.apiVersion, kind: o.kind }));
      for (const found of await deployedObjects(reader, resources, operator, namespaces, kinds)) {
        if (paths.has(found.path)) continue;
        if (found.object.kind === 'CustomResourceDefinition') {
          keptCrds.set(operator.operatorName, [...(keptCrds.get(operator.operatorName) ?? []), objectLabel(found.object)]);
        } else if (!(found.object.kind === 'Namespace' && PROTECTED_NAMESPACES.includes(found.object.metadata.name))) {
          prunes.push({ operatorName: operator.operatorName, ...found });
        }
      }
    }

    // 3. permissions, before the first write
    const needed: AccessRequest[] = [];
    for (const t of targets) {
      const namespace = t.ref.namespaced ? t.object.metadata.namespace : undefined;
      needed.push(t.live ? { verb: 'patch', group: t.ref.group, resource: t.ref.plural, namespace, name: t.object.metadata.name } : { verb: 'create', group: t.ref.group, resource: t.ref.plural, namespace });
      if (t.stage === 'workloads') needed.push({ verb: 'list', group: '', resource: 'pods', namespace });
    }
    for (const p of prunes) needed.push({ verb: 'delete', group: p.ref.group, resource: p.ref.plural, namespace: p.ref.namespaced ? p.object.metadata.namespace : undefined, name: p.object.metadata.name });
    const missing = [...reader.forbidden, ...(await missingAccess(client, needed))];
    if (missing.length > 0) {
      const user = kubeConfig.getCurrentUser()?.name ?? 'unknown';
      stderr(`error: the user ${user} of ${where} lacks ${missing.length} permission(s) this deploy needs; nothing was written:`);
      for (const request of [...new Map(missing.map((m) => [accessLabel(m), m])).keys()]) stderr(`  ${request}`);
      return 1;
    }

    // --dry-run: the plan
    if (options.dryRun) {
      const plans: OperatorPlan[] = [];
      for (const { operator } of synthesized) {
        const mine = targets.filter((t) => t.operatorName === operator.operatorName);
        const stages = [];
        for (const { stage, objects } of orderForDeploy(mine.map((t) => ({ ...t, apiVersion: t.object.apiVersion, kind: t.object.kind })))) {
          const planned: { label: string; action: PlannedAction }[] = [];
          for (const t of objects) planned.push({ label: objectLabel(t.object), action: await plannedAction(client, t) });
          stages.push({ stage, objects: planned });
        }
        const prune = orderForUndeploy(prunes.filter((p) => p.operatorName === operator.operatorName).map((p) => p.object)).map(objectLabel);
        const note = certificatesNote(operator);
        plans.push({ operatorName: operator.operatorName, stages, prune, keptCrds: keptCrds.get(operator.operatorName) ?? [], notes: note ? [note] : [] });
      }
      io.writeStdout(formatPlan(plans));
      stderr('dry run: nothing was written');
      return 0;
    }

    // 4–5. apply, stage by stage, every operator together
    const started = Date.now();
    probeApi = new ApiClient({ kubeConfig, userAgent: DEPLOY_USER_AGENT, onRequest: io.onRequest, requestTimeoutMs: 5_000 });
    for (const { stage, objects } of orderForDeploy(targets.map((t) => ({ ...t, apiVersion: t.object.apiVersion, kind: t.object.kind })))) {
      if (stage === 'workloads') {
        for (const { operator } of synthesized) {
          const note = certificatesNote(operator);
          if (note) stderr(`note: ${operator.operatorName}: ${note}`);
        }
      }
      for (const t of objects) await applyTarget(api, t, stderr);
      if (stage === 'crds') {
        for (const t of objects) await waitEstablished(api, t, timeoutMs, stderr);
        resources.forget();
      }
      if (stage === 'workloads') {
        for (const t of objects) await waitReady(api, probeApi, t, timeoutMs, stderr);
      }
    }

    // 6. prune
    for (const p of orderForUndeploy(prunes.map((p) => ({ ...p, apiVersion: p.object.apiVersion, kind: p.object.kind })))) {
      await new ResourceClient(api).delete(p.ref, p.object.metadata.namespace, p.object.metadata.name).catch((err: unknown) => (isApiError(err, 404) ? undefined : Promise.reject(err)));
      stderr(`pruned ${objectLabel(p.object)} (no longer synthesized)`);
    }
    for (const [operatorName, crds] of keptCrds) {
      for (const crd of crds) stderr(`note: ${crd} (deployed for ${operatorName}) is no longer synthesized; kept, as deleting it deletes its custom resources`);
    }
    stderr(`deployed ${synthesized.map((s) => s.operator.operatorName).join(', ')} in ${((Date.now() - started) / 1000).toFixed(1)}s`);
    return 0;
  } catch (err) {
    stderr(`error: ${(err as Error).message}`);
    return 1;
  } finally {
    closeQuietly(api);
    closeQuietly(probeApi);
  }
}

/** How the operator's webhook certificates are made when the operator makes them itself (nothing to apply), else undefined. */
function certificatesNote(operator: Operator): string | undefined {
  if (operator.webhook?.certificates !== 'self-managed') return undefined;
  const secret = webhookNames(operator.operatorName).secret;
  return `webhook certificates are self-managed: the operator creates its CA and serving certificate in Secret ${operator.webhook.namespace}/${secret} and writes caBundle into its CRD and webhook configurations; nothing to apply`;
}

/** The object with the deploy label added (the synthesized labels kept). */
function withDeployLabel(object: Manifest, operatorName: string): Manifest {
  return { ...object, metadata: { ...object.metadata, labels: { ...object.metadata.labels, [DEPLOYED_BY_LABEL]: operatorName } } };
}

/** `create` when absent; else `change` or `unchanged` by a dry-run apply (does the resourceVersion move?). */
async function plannedAction(client: KubeClient, target: Target): Promise<PlannedAction> {
  if (!target.live) return 'create';
  const after = await new ResourceClient(client).apply(target.ref, target.object, { fieldManager: DEPLOY_FIELD_MANAGER, force: true, dryRun: true });
  return after.metadata?.resourceVersion === target.live.metadata?.resourceVersion ? 'unchanged' : 'change';
}

/** Server-side applies one object; logs `applied Kind ns/name (created|changed|unchanged)`. */
async function applyTarget(client: KubeClient, target: Target, log: (line: string) => void): Promise<void> {
  let after: KubeObject;
  try {
    after = await new ResourceClient(client).apply(target.ref, target.object, { fieldManager: DEPLOY_FIELD_MANAGER, force: true });
  } catch (err) {
    throw new Error(`${objectLabel(target.object)}: ${(err as Error).message}`, { cause: err });
  }
  const how = !target.live ? 'created' : after.metadata?.resourceVersion === target.live.metadata?.resourceVersion ? 'unchanged' : 'changed';
  log(`applied ${objectLabel(target.object)} (${how})`);
}

const describe = (c: ObservedCondition | undefined, type: string) => (c ? `${type}=${conditionSummary(c)}` : `no ${type} condition yet`);

/**
 * Polls until `check` returns undefined (done), else a description of what is awaited; throws at the
 * deadline with the last description.
 */
async function waitFor(what: string, timeoutMs: number, check: () => Promise<string | undefined>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'not checked yet';
  for (;;) {
    const pending = await check();
    if (pending === undefined) return;
    last = pending;
    if (Date.now() > deadline) throw new Error(`${what} not ready within ${Math.round(timeoutMs / 1000)}s: ${last}`);
    await sleep(500);
  }
}

/** Waits until the CRD is Established (its kind served). */
async function waitEstablished(client: KubeClient, target: Target, timeoutMs: number, log: (line: string) => void): Promise<void> {
  await waitFor(objectLabel(target.object), timeoutMs, async () => {
    const crd = await new ResourceClient(client).get(target.ref, target.object.metadata.namespace, target.object.metadata.name);
    const established = findCondition(conditionsOf(crd), 'Established');
    return established?.status === 'True' ? undefined : describe(established, 'Established');
  });
  log(`${objectLabel(target.object)}: Established`);
}

interface DeploymentShape {
  metadata?: { generation?: number };
  spec?: {
    replicas?: number;
    selector?: { matchLabels?: Record<string, string> };
    template?: { spec?: { containers?: { ports?: { name?: string; containerPort: number }[]; readinessProbe?: { httpGet?: { path?: string; port?: number | string } } }[] } };
  };
  status?: { observedGeneration?: number; replicas?: number; updatedReplicas?: number; availableReplicas?: number; conditions?: ObservedCondition[] };
}

/** Waits for a Deployment's rollout, its Pods Ready, and `/readyz` where the pod proxy reaches it. */
async function waitReady(client: KubeClient, probeClient: KubeClient, target: Target, timeoutMs: number, log: (line: string) => void): Promise<void> {
  const label = objectLabel(target.object);
  const namespace = target.object.metadata.namespace!;
  let deployment: DeploymentShape = {};
  await waitFor(`${label} rollout`, timeoutMs, async () => {
    deployment = await new ResourceClient(client).get<DeploymentShape>(target.ref, target.object.metadata.namespace, target.object.metadata.name);
    const want = deployment.spec?.replicas ?? 1;
    const s = deployment.status ?? {};
    const available = findCondition(s.conditions, 'Available');
    if ((s.observedGeneration ?? 0) < (deployment.metadata?.generation ?? 1)) return 'the deployment controller has not observed the latest spec yet';
    if ((s.updatedReplicas ?? 0) < want) return `${s.updatedReplicas ?? 0} of ${want} replica(s) updated`;
    if ((s.replicas ?? 0) > want) return `${(s.replicas ?? 0) - want} old replica(s) still terminating`;
    if ((s.availableReplicas ?? 0) < want) return `${s.availableReplicas ?? 0} of ${want} replica(s) available; ${describe((s.conditions ?? []).find((c) => c.type === 'Progressing'), 'Progressing')}`;
    return available?.status === 'True' ? undefined : describe(available, 'Available');
  });
  log(`${label}: rolled out (Available, ${deployment.spec?.replicas ?? 1} updated replica(s))`);

  const selector = Object.entries(deployment.spec?.selector?.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`).join(',');
  let ready: KubeObject[] = [];
  await waitFor(`${label} Pods`, timeoutMs, async () => {
    const pods = await new ResourceClient(client).list(PODS, namespace, { labelSelector: selector });
    const running = pods.items.filter((p) => !p.metadata?.deletionTimestamp);
    ready = running.filter((p) => hasTrueCondition(p, 'Ready'));
    const want = deployment.spec?.replicas ?? 1;
    return ready.length >= want ? undefined : `${ready.length} of ${want} Pod(s) Ready`;
  });

  const container = deployment.spec?.template?.spec?.containers?.[0];
  const probe = container?.readinessProbe?.httpGet;
  const port = typeof probe?.port === 'number' ? probe.port : container?.ports?.find((p) => p.name === probe?.port)?.containerPort;
  for (const pod of ready) {
    const name = pod.metadata?.name ?? '';
    if (!probe?.path || port === undefined) {
      log(`Pod ${namespace}/${name}: Ready (no HTTP readiness probe to read)`);
      continue;
    }
    // The pod proxy answers the container's own body (not a Kubernetes object): a request, not a typed read.
    const proxy = `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}:${port}/proxy${probe.path}`;
    const answer = await probeClient.request('GET', proxy).then(
      () => 'ok',
      (err: unknown) => (err as Error).message.split('\n', 1)[0].slice(0, 200),
    );
    if (answer === 'ok') log(`Pod ${namespace}/${name}: Ready, ${probe.path} answered 200 (through the API server's pod proxy)`);
    else log(`note: Pod ${namespace}/${name}: Ready, but ${probe.path} is not reachable through the API server's pod proxy (${answer}); its Ready condition, which the kubelet sets from this same probe (kwok sets it without running the process), is the readiness reported`);
  }
}

/** Adds `deploy` to the `cdk8s-operator` program. */
export function registerDeployCommand(program: Command): void {
  program
    .command('deploy')
    .description("synthesize the operators and server-side apply them to a cluster in dependency order (CRDs, namespace, RBAC, certificates, Deployment, webhooks), then wait until they are ready")
    .option('--dry-run', 'print the plan (create|change|unchanged per object, prunes); write nothing', false)
    .addOption(kubeconfigOption())
    .addOption(contextOption())
    .addOption(moduleOption())
    .addOption(operatorsOption())
    .addOption(durationOption('--timeout <duration>', 'how long each wait may take (CRD Established, rollout, Pods Ready)', 300_000, '300s'))
    .action(async (opts: DeployOptions & { timeout: number }) => {
      process.exitCode = await runDeploy(
        { ...opts, timeoutMs: opts.timeout },
        PROCESS_OUTPUT,
      );
    });
}
