/**
 * `cdk8s-operator package helm` on the example operators (operators/), checked with Helm itself
 * (helm.sh/helm/v4, built by tools/helm/build.sh) and a control plane of this file's own (the chart's
 * CRDs and ClusterRoles are the examples', which other files install in the shared one):
 * - `helm lint` passes;
 * - `helm template --include-crds -n memcached-operator-system`, with the other two operators' namespaces
 *   and `createNamespace: true` set, equals `cdk8s synth` (synth/main.ts), object by object, but the
 *   Namespaces' `helm.sh/resource-policy: keep`; at the default values each operator goes into the
 *   release namespace, and the memcached operator (namespace fixed by its webhooks) fails naming it;
 * - changed values (image, replicas, resources; watchNamespace, logLevel, labels, scheduling) change
 *   exactly the fields they name;
 * - a values file that breaks values.schema.json fails `helm template` and `helm install`, naming the field;
 * - `helm install` creates every synthesized object as synthesized, and the operators' Deployments
 *   become Available (kwok runs their pods); `helm upgrade` with another image, replicas and resources
 *   changes the live Deployment;
 * - a chart of one operator: `helm install -n team-x --create-namespace --set image.repository=… --set
 *   image.tag=…` puts every namespaced object and RBAC subject into team-x with that image, and `helm
 *   uninstall` leaves the namespace; uninstalling the examples chart leaves the Namespaces it templated.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { runPackageHelm } from '../../lib/cli/package-helm-command.js';
import { resolveKind } from '../../lib/operator/kinds.js';
import { ApiClient } from '../../lib/runtime/client/api-client.js';
import { resourcePath } from '../../lib/runtime/client/resource-path.js';
import { startControlPlane, type ControlPlane } from '../../lib/testing/control-plane.js';
import { synthesize } from '../../synth/main.js';
import { eventually } from '../support/eventually.js';
import { helm } from '../support/helm.js';
import { REPO_ROOT } from '../support/sdk-tarball.js';

type Manifest = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> }; [key: string]: any };

const MEMCACHED = 'memcached-operator';
const APP = 'app-operator';

let dir: string;
let chart: string;
let synthesized: Manifest[];
let synthValues: string;
/** `-n` and the values under which the examples chart renders the synthesized objects. */
const SYNTH_NAMESPACE = `memcached-operator-system`;

const keyOf = (o: Manifest): string => `${o.apiVersion} ${o.kind} ${o.metadata.namespace ?? ''}/${o.metadata.name}`;
const byKey = (objects: readonly Manifest[]): Map<string, Manifest> => new Map(objects.map((o) => [keyOf(o), o]));
const parseStream = (text: string): Manifest[] => parseAllDocuments(text).map((doc) => doc.toJS() as Manifest | null).filter((o): o is Manifest => o !== null);

async function helmOk(args: string[]): Promise<string> {
  const result = await helm(args, { cwd: dir, home: join(dir, 'helm-home') });
  if (result.code !== 0) throw new Error(`helm ${args.join(' ')} exited ${result.code}\nstdout:\n${result.stdout}\nstderr:\n${result.stderr}`);
  return result.stdout;
}

async function template(valuesYaml?: string): Promise<Manifest[]> {
  const args = ['template', 'ops', chart, '--include-crds', '-n', SYNTH_NAMESPACE, '-f', synthValues];
  if (valuesYaml !== undefined) {
    const file = join(dir, `values-${Math.random().toString(36).slice(2)}.yaml`);
    await writeFile(file, valuesYaml);
    args.push('-f', file);
  }
  return parseStream(await helmOk(args));
}

/** The synthesized objects with `edit` applied to a copy of the one at `key`. */
function synthesizedWith(edits: Record<string, (o: Manifest) => void>): Manifest[] {
  return synthesized.map((o) => {
    const edit = edits[keyOf(o)];
    if (edit === undefined) return o;
    const copy = structuredClone(o);
    edit(copy);
    return copy;
  });
}

function expectSameObjects(actual: readonly Manifest[], expected: readonly Manifest[]): void {
  const a = byKey(actual);
  const e = byKey(expected);
  expect([...a.keys()].sort()).toEqual([...e.keys()].sort());
  for (const [key, object] of e) expect({ key, object: a.get(key) }).toEqual({ key, object });
}

const deploymentKey = (name: string): string => `apps/v1 Deployment ${name}-system/${name}`;
const container = (deployment: Manifest): any => deployment.spec.template.spec.containers.find((c: { name: string }) => c.name === 'operator');

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'helm-chart-'));
  chart = join(dir, 'chart');
  const stderr: string[] = [];
  const code = await runPackageHelm({ out: chart }, { cwd: REPO_ROOT, stdout: () => {}, stderr: (text) => stderr.push(text) });
  if (code !== 0) throw new Error(`package helm exited ${code}: ${stderr.join('')}`);
  // The Namespaces as the chart templates them: kept by helm uninstall.
  synthesized = [...synthesize().values()].flatMap(parseStream).map((o) => (o.kind === 'Namespace'
    ? { ...o, metadata: { ...o.metadata, annotations: { ...o.metadata.annotations, 'helm.sh/resource-policy': 'keep' } } }
    : o));
  synthValues = join(dir, 'synth-values.yaml');
  await writeFile(synthValues, ['operators:', ...[MEMCACHED, APP, 'database-operator'].map((name) => `  ${name}: { namespace: ${name}-system, createNamespace: true }`)].join('\n'));
}, 30 * 60_000);

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('package helm on the example operators', () => {
  test('GIVEN the chart WHEN helm lint runs THEN it passes with no failure', async () => {
    const out = await helmOk(['lint', chart]);
    expect(out).toContain('1 chart(s) linted, 0 chart(s) failed');
  }, 30 * 60_000);

  test('GIVEN the default values and -n another namespace WHEN helm template runs THEN the memcached operator, whose code fixes its namespace, fails naming it', async () => {
    const result = await helm(['template', 'ops', chart, '-n', 'team-x'], { cwd: dir, home: join(dir, 'helm-home') });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`${MEMCACHED}: its namespace is fixed to ${MEMCACHED}-system by its code (its webhook Secret and Service live there), not team-x: install with -n ${MEMCACHED}-system`);
  });

  test('GIVEN the namespaces synth uses WHEN helm template --include-crds runs THEN every object equals what cdk8s synth produces', async () => {
    const rendered = await template();
    expect(rendered.length).toBeGreaterThan(40);
    expectSameObjects(rendered, synthesized);
  });

  test('GIVEN image, replicas and resources changed for one operator WHEN templated THEN exactly those fields change (and --leader-elect comes with replicas > 1)', async () => {
    const rendered = await template([
      'operators:',
      `  ${MEMCACHED}:`,
      '    image: { repository: registry.example.com/team/memcached-operator, tag: "2.0.1", pullPolicy: Always }',
      '    replicas: 3',
      '    resources: { requests: { cpu: 250m, memory: 200Mi }, limits: { cpu: "1", memory: 1Gi } }',
    ].join('\n'));
    const expected = synthesizedWith({
      [deploymentKey(MEMCACHED)]: (d) => {
        d.spec.replicas = 3;
        const c = container(d);
        c.image = 'registry.example.com/team/memcached-operator:2.0.1';
        c.imagePullPolicy = 'Always';
        c.resources = { requests: { cpu: '250m', memory: '200Mi' }, limits: { cpu: '1', memory: '1Gi' } };
        c.args.splice(c.args.indexOf('--health-probe-bind-address=:8081') + 1, 0, '--leader-elect');
      },
    });
    expectSameObjects(rendered, expected);
  });

  test('GIVEN watchNamespace, logLevel, ports, labels, annotations and scheduling WHEN templated THEN RBAC becomes a Role there and the fields land where they should', async () => {
    const rendered = await template([
      'operators:',
      `  ${APP}:`,
      '    watchNamespace: team-a',
      '    logLevel: debug',
      '    metrics: { port: 9443 }',
      '    probes: { port: 9081 }',
      '    labels: { team: a }',
      '    annotations: { owner: team-a@example.com }',
      '    nodeSelector: { kubernetes.io/os: linux }',
      '    tolerations: [{ key: dedicated, operator: Equal, value: operators, effect: NoSchedule }]',
    ].join('\n'));
    const own = (o: Manifest): boolean => o.metadata.labels?.['app.kubernetes.io/name'] === APP;
    const clusterRole = synthesized.find((o) => o.kind === 'ClusterRole' && o.metadata.name === APP)!;
    const addMetadata = (o: Manifest): void => {
      o.metadata.labels = { ...o.metadata.labels, team: 'a' };
      o.metadata.annotations = { ...o.metadata.annotations, owner: 'team-a@example.com' };
    };
    const expected = synthesized
      .filter((o) => !(o.metadata.name === APP && (o.kind === 'ClusterRole' || o.kind === 'ClusterRoleBinding')))
      .map((o) => {
        if (!own(o) || o.kind === 'CustomResourceDefinition') return o; // crds/ is not templated
        const copy = structuredClone(o);
        addMetadata(copy);
        if (keyOf(o) === deploymentKey(APP)) {
          const c = container(copy);
          c.args = c.args.map((arg: string) => arg.replace(':8443', ':9443').replace(':8081', ':9081'));
          c.args.splice(c.args.indexOf('--health-probe-bind-address=:9081') + 1, 0, '--namespace=team-a');
          c.args.push('--log-level=debug');
          c.ports = c.ports.map((p: { name: string }) => (p.name === 'metrics' ? { ...p, containerPort: 9443 } : p.name === 'probes' ? { ...p, containerPort: 9081 } : p));
          copy.spec.template.spec.nodeSelector = { 'kubernetes.io/os': 'linux' };
          copy.spec.template.spec.tolerations = [{ key: 'dedicated', operator: 'Equal', value: 'operators', effect: 'NoSchedule' }];
        }
        return copy;
      });
    const role: Manifest = { ...structuredClone(clusterRole), kind: 'Role', metadata: { ...clusterRole.metadata, namespace: 'team-a' } };
    addMetadata(role);
    const binding: Manifest = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: APP, namespace: 'team-a', labels: { ...clusterRole.metadata.labels, team: 'a' }, annotations: { owner: 'team-a@example.com' } },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: APP },
      subjects: [{ kind: 'ServiceAccount', name: APP, namespace: `${APP}-system` }],
    };
    expectSameObjects(rendered, [...expected, role, binding]);
  });

  test('GIVEN a values file that breaks the schema WHEN helm template runs THEN it fails naming the field', async () => {
    for (const [values, field] of [
      [`operators:\n  ${MEMCACHED}:\n    replicas: three\n`, `/operators/${MEMCACHED}/replicas`],
      [`operators:\n  ${APP}:\n    image: { pullPolicy: Sometimes }\n`, `/operators/${APP}/image/pullPolicy`],
      [`operators:\n  ${APP}:\n    replica: 2\n`, 'replica'],
      // Fixed by the operator's code: its webhooks live in its namespace.
      [`operators:\n  ${MEMCACHED}:\n    namespace: elsewhere\n`, `/operators/${MEMCACHED}/namespace`],
    ] as const) {
      const file = join(dir, 'bad-values.yaml');
      await writeFile(file, values);
      const result = await helm(['template', 'ops', chart, '-f', file], { cwd: dir, home: join(dir, 'helm-home') });
      expect({ values, code: result.code }).toEqual({ values, code: 1 });
      expect(result.stderr).toContain(field);
    }
  });
});

describe('helm install of the examples chart', () => {
  let plane: ControlPlane;
  let admin: ApiClient;

  beforeAll(async () => {
    plane = await startControlPlane({ binDir: process.env.CDK8S_OPERATOR_TEST_BIN_DIR });
    admin = new ApiClient({ kubeConfig: plane.kubeConfig });
  }, 10 * 60_000);

  afterAll(async () => {
    admin?.close();
    await plane?.stop();
  }, 2 * 60_000);

  test('GIVEN a values file that breaks the schema WHEN helm install runs THEN it fails naming the field and installs no release and no templated object', async () => {
    const file = join(dir, 'bad-install.yaml');
    await writeFile(file, `operators:\n  ${MEMCACHED}:\n    resources: { limits: { memory: lots } }\n`);
    const result = await helm(['install', 'bad', chart, '--kubeconfig', plane.kubeconfigPath, '-f', file], { cwd: dir, home: join(dir, 'helm-home') });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`/operators/${MEMCACHED}/resources/limits/memory`);
    // Helm installs crds/ before it renders (and checks) the values; nothing templated is created.
    const namespaces = await admin.request('GET', '/api/v1/namespaces');
    expect((namespaces.items as Manifest[]).map((o) => o.metadata.name)).not.toContain(`${MEMCACHED}-system`);
    const status = await helm(['status', 'bad', '--kubeconfig', plane.kubeconfigPath], { cwd: dir, home: join(dir, 'helm-home') });
    expect({ code: status.code, stderr: status.stderr.trim() }).toEqual({ code: 1, stderr: 'Error: release: not found' });
  }, 5 * 60_000);

  test('GIVEN a chart of one operator WHEN helm install -n team-x --create-namespace --set image.* THEN every namespaced object and RBAC subject is in team-x with that image, and helm uninstall leaves the namespace', async () => {
    const single = join(dir, 'app-chart');
    const stderr: string[] = [];
    const code = await runPackageHelm({ out: single, operators: APP }, { cwd: REPO_ROOT, stdout: () => {}, stderr: (text) => stderr.push(text) });
    if (code !== 0) throw new Error(`package helm exited ${code}: ${stderr.join('')}`);
    await helmOk(['install', 'team', single, '--kubeconfig', plane.kubeconfigPath, '-n', 'team-x', '--create-namespace', '--set', 'image.repository=registry.example.com/team/app-operator', '--set', 'image.tag=3.1.0']);
    const deployment = await admin.request('GET', `/apis/apps/v1/namespaces/team-x/deployments/${APP}`) as unknown as Manifest;
    expect(container(deployment).image).toBe('registry.example.com/team/app-operator:3.1.0');
    await admin.request('GET', `/api/v1/namespaces/team-x/serviceaccounts/${APP}`);
    const binding = await admin.request('GET', `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${APP}`) as unknown as Manifest;
    expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: APP, namespace: 'team-x' }]);
    const rendered = parseStream(await helmOk(['get', 'manifest', 'team', '-n', 'team-x', '--kubeconfig', plane.kubeconfigPath]));
    const namespaced = rendered.filter((o) => o.metadata.namespace !== undefined);
    expect(namespaced.length).toBeGreaterThan(2);
    expect([...new Set(namespaced.map((o) => o.metadata.namespace))]).toEqual(['team-x']);
    const subjects = rendered.flatMap((o) => (o.subjects ?? []) as { namespace?: string }[]);
    expect([...new Set(subjects.map((s) => s.namespace))]).toEqual(['team-x']);
    const namespaces = await admin.request('GET', '/api/v1/namespaces');
    expect((namespaces.items as Manifest[]).map((o) => o.metadata.name)).not.toContain(`${APP}-system`);

    await helmOk(['uninstall', 'team', '-n', 'team-x', '--kubeconfig', plane.kubeconfigPath]);
    await eventually(`ClusterRoleBinding ${APP} gone`, () => admin.request('GET', `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${APP}`).then(() => false, () => true));
    expect((await admin.request('GET', '/api/v1/namespaces/team-x')).metadata?.deletionTimestamp).toBeUndefined();
  }, 10 * 60_000);

  test('GIVEN the namespaces synth uses WHEN helm install runs THEN the live objects are the synthesized ones and every operator Deployment becomes Available', async () => {
    // Helm makes the release namespace (--create-namespace), so the chart's own Namespace of it is off.
    await helmOk(['install', 'ops', chart, '--kubeconfig', plane.kubeconfigPath, '-n', SYNTH_NAMESPACE, '--create-namespace', '-f', synthValues, '--set', `operators.${MEMCACHED}.createNamespace=false`]);
    for (const object of synthesized) {
      if (object.kind === 'Namespace' && object.metadata.name === SYNTH_NAMESPACE) continue;
      const path = resourcePath(resolveKind(object), object.metadata.namespace, object.metadata.name);
      const live = await eventually(`${keyOf(object)} exists`, () => admin.request('GET', path));
      expect({ key: keyOf(object), live }).toMatchObject({ key: keyOf(object), live: object });
    }
    for (const name of [MEMCACHED, APP, 'database-operator']) {
      await eventually(`Deployment ${name} Available`, async () => {
        const deployment = await admin.request('GET', `/apis/apps/v1/namespaces/${name}-system/deployments/${name}`);
        const conditions = (deployment.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? [];
        return conditions.some((c) => c.type === 'Available' && c.status === 'True');
      }, { timeoutMs: 3 * 60_000 });
    }
  }, 10 * 60_000);

  test('GIVEN the installed chart WHEN helm upgrade changes image, replicas and resources THEN the live Deployment has them and its replicas become ready', async () => {
    const file = join(dir, 'upgrade.yaml');
    await writeFile(file, [
      'operators:',
      `  ${APP}:`,
      '    image: { repository: registry.example.com/team/app-operator, tag: "2.0.1" }',
      '    replicas: 2',
      '    resources: { limits: { memory: 384Mi } }',
    ].join('\n'));
    await helmOk(['upgrade', 'ops', chart, '--kubeconfig', plane.kubeconfigPath, '-n', SYNTH_NAMESPACE, '-f', synthValues, '--set', `operators.${MEMCACHED}.createNamespace=false`, '-f', file]);
    const live = await eventually(`Deployment ${APP} has 2 ready replicas`, async () => {
      const deployment = await admin.request('GET', `/apis/apps/v1/namespaces/${APP}-system/deployments/${APP}`);
      const status = deployment.status as { readyReplicas?: number; observedGeneration?: number } | undefined;
      return status?.readyReplicas === 2 && status.observedGeneration === deployment.metadata?.generation && deployment;
    }, { timeoutMs: 3 * 60_000 });
    const spec = (live as Manifest).spec;
    expect(spec.replicas).toBe(2);
    expect(container(live as Manifest)).toMatchObject({
      image: 'registry.example.com/team/app-operator:2.0.1',
      resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '500m', memory: '384Mi' } },
    });
    expect(container(live as Manifest).args).toContain('--leader-elect');
  }, 10 * 60_000);

  test('GIVEN the installed chart, its Namespaces templated WHEN helm uninstall runs THEN the operators go and each Namespace stays (helm.sh/resource-policy: keep)', async () => {
    await helmOk(['uninstall', 'ops', '-n', SYNTH_NAMESPACE, '--kubeconfig', plane.kubeconfigPath]);
    await eventually(`Deployment ${APP} gone`, () => admin.request('GET', `/apis/apps/v1/namespaces/${APP}-system/deployments/${APP}`).then(() => false, () => true));
    for (const name of [APP, 'database-operator']) {
      const namespace = await admin.request('GET', `/api/v1/namespaces/${name}-system`);
      expect({ name, deleting: namespace.metadata?.deletionTimestamp, keep: namespace.metadata?.annotations?.['helm.sh/resource-policy'] }).toEqual({ name, deleting: undefined, keep: 'keep' });
    }
  }, 5 * 60_000);
});
