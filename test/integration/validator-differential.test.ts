/**
 * The offline validator of built-in kinds (lib/validator: Kubernetes' own code compiled to WebAssembly)
 * against the real API server: the same objects, handpicked and generated (fast-check), go to
 * validateBuiltInObjects and to a server-side dry-run create, and the verdicts (accepted or refused)
 * and the refusal's causes (field path and message) must agree. Includes issue 23's case: a cdk8s-plus
 * StatefulSet with two unnamed container ports, whose headless Service the server refuses.
 */
import fc from 'fast-check';
import { App } from 'cdk8s';
import { lookupBuiltInKind } from '../../lib/operator/kinds.js';
import { ApiClient } from '../../lib/runtime/client/api-client.js';
import { renderForSnapshot } from '../../lib/testing/render-snapshot.js';
import { validateBuiltInObjects } from '../../lib/validator/validate-built-in-objects.js';
import { createTestNamespace, testKubeConfig } from '../support/cluster.js';
import { DbOperator } from '../cli/fixtures/refused-children-operator.js';

type Json = Record<string, any>;

const kubeConfig = testKubeConfig();
let namespace: string;

beforeAll(async () => {
  namespace = await createTestNamespace('validator-diff', new ApiClient({ kubeConfig }));
}, 60_000);

/** Accepted, or the sorted causes `field: message` of the refusal (a refusal without causes: its message). */
interface Verdict {
  readonly accepted: boolean;
  readonly causes: readonly string[];
}

function inNamespace(obj: Json): Json {
  const kind = lookupBuiltInKind(obj.apiVersion, obj.kind)!;
  return kind.namespaced ? { ...obj, metadata: { ...obj.metadata, namespace } } : obj;
}

async function serverVerdict(obj: Json): Promise<Verdict> {
  const kind = lookupBuiltInKind(obj.apiVersion, obj.kind)!;
  const collection = `${kind.group === '' ? '/api' : `/apis/${kind.group}`}/${kind.version}${kind.namespaced ? `/namespaces/${namespace}` : ''}/${kind.plural}`;
  const res = await ApiClient.sendOnce({ kubeConfig }, 'POST', `${collection}?dryRun=All`, { body: obj, timeoutMs: 30_000 });
  if (res.statusCode < 300) return { accepted: true, causes: [] };
  const status = JSON.parse(res.body) as { code?: number; message?: string; details?: { causes?: { field?: string; message?: string }[] } };
  if (status.code !== 422 && status.code !== 400) throw new Error(`unexpected answer ${res.statusCode}: ${res.body.slice(0, 500)}`);
  const causes = status.details?.causes ?? [];
  return { accepted: false, causes: causes.length > 0 ? causes.map((c) => `${c.field ?? ''}: ${c.message ?? ''}`).sort() : [status.message ?? ''] };
}

function offlineVerdicts(objects: readonly Json[]): Verdict[] {
  return validateBuiltInObjects(objects).map((v) => {
    expect(v.verdict).not.toBe('unchecked');
    if (v.verdict === 'valid') return { accepted: true, causes: [] };
    return { accepted: false, causes: v.errors.length > 0 ? v.errors.map((e) => `${e.field}: ${e.message}`).sort() : [v.reason ?? ''] };
  });
}

/** Counts what the server decided, so a test shows its inputs reached both verdicts. */
class Tally {
  accepted = 0;
  refused = 0;
  add(verdict: Verdict): void {
    if (verdict.accepted) this.accepted++;
    else this.refused++;
  }
  expectBoth(): void {
    expect({ accepted: this.accepted > 0, refused: this.refused > 0 }).toEqual({ accepted: true, refused: true });
  }
}

/**
 * A node port the server allocated, in a cause, is random (offline: a stand-in from 30000 up); the
 * comparison keeps the field and the reason and drops the number.
 */
const allocated = (verdict: Verdict): Verdict => ({ ...verdict, causes: verdict.causes.map((c) => c.replace(/^(spec\.ports\[\d+\]\.nodePort: Duplicate value: )\d+$/, '$1<allocated>')) });

/** Feeds `objects` to both sides; expects the same verdict and causes for each. */
async function expectAgreement(objects: readonly Json[], tally = new Tally()): Promise<Tally> {
  const placed = objects.map(inNamespace);
  const offline = offlineVerdicts(placed);
  for (const [i, obj] of placed.entries()) {
    const server = await serverVerdict(obj);
    tally.add(server);
    const who = `${obj.kind} ${obj.metadata.name}`;
    expect({ who, ...allocated(offline[i]) }).toEqual({ who, ...allocated(server) });
  }
  return tally;
}

const meta = (name: string, labels?: Json) => ({ name, ...(labels ? { labels } : {}) });
const podSpec = (containers: Json[], extra: Json = {}) => ({ containers, ...extra });
const template = (containers: Json[], extra: Json = {}) => ({ metadata: { labels: { app: 'x' } }, spec: podSpec(containers, extra) });
const container = (extra: Json = {}) => ({ name: 'main', image: 'nginx:1', ...extra });
const deployment = (name: string, spec: Json) => ({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: meta(name), spec: { selector: { matchLabels: { app: 'x' } }, template: template([container()]), ...spec } });

/** Handpicked objects of every kind the validator covers, valid and invalid. */
const handpicked: Json[] = [
  deployment('d-valid', {}),
  deployment('d-replicas', { replicas: -1 }),
  deployment('d-selector', { selector: { matchLabels: { app: 'y' } } }),
  deployment('d-container-name', { template: template([container({ name: 'Main_1' })]) }),
  deployment('d-duplicate-containers', { template: template([container(), container()]) }),
  deployment('d-no-image', { template: template([container({ image: '' })]) }),
  deployment('d-env', { template: template([container({ env: [{ name: '' }, { name: 'A', value: 'x', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }] })]) }),
  deployment('d-resources', { template: template([container({ resources: { requests: { cpu: '2' }, limits: { cpu: '1' } } })]) }),
  deployment('d-probe', { template: template([container({ livenessProbe: { httpGet: { port: 0 }, periodSeconds: -1 } })]) }),
  deployment('d-mount', { template: template([container({ volumeMounts: [{ name: 'data', mountPath: '/data' }] })]) }),
  deployment('d-volume', { template: template([container()], { volumes: [{ name: 'data', emptyDir: {}, configMap: { name: 'c' } }] }) }),
  deployment('d-restart', { template: template([container()], { restartPolicy: 'Never' }) }),
  deployment('d-strategy', { strategy: { type: 'Recreate', rollingUpdate: { maxSurge: 1 } } }),
  { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: meta('sts-valid'), spec: { serviceName: 'sts', selector: { matchLabels: { app: 'x' } }, template: template([container()]) } },
  { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: meta('sts-policy'), spec: { podManagementPolicy: 'Sometimes', selector: { matchLabels: { app: 'x' } }, template: template([container()]), volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'] } }] } },
  { apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: meta('ds-valid'), spec: { selector: { matchLabels: { app: 'x' } }, template: template([container()]) } },
  { apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: meta('ds-update'), spec: { selector: { matchLabels: { app: 'x' } }, template: template([container()]), updateStrategy: { type: 'Sometimes' } } },
  { apiVersion: 'batch/v1', kind: 'Job', metadata: meta('job-valid'), spec: { template: { spec: podSpec([container()], { restartPolicy: 'Never' }) } } },
  { apiVersion: 'batch/v1', kind: 'Job', metadata: meta('job-restart'), spec: { completions: -1, template: { spec: podSpec([container()], { restartPolicy: 'Always' }) } } },
  { apiVersion: 'batch/v1', kind: 'CronJob', metadata: meta('cj-valid'), spec: { schedule: '*/5 * * * *', timeZone: 'Europe/Berlin', jobTemplate: { spec: { template: { spec: podSpec([container()], { restartPolicy: 'OnFailure' }) } } } } },
  { apiVersion: 'batch/v1', kind: 'CronJob', metadata: meta('cj-zone'), spec: { schedule: '0 0 * * *', timeZone: 'Mars/Olympus', jobTemplate: { spec: { template: { spec: podSpec([container()], { restartPolicy: 'OnFailure' }) } } } } },
  { apiVersion: 'v1', kind: 'Service', metadata: meta('svc-valid'), spec: { selector: { app: 'x' }, ports: [{ name: 'http', port: 80, targetPort: 'http' }] } },
  { apiVersion: 'v1', kind: 'Service', metadata: meta('svc-headless'), spec: { clusterIP: 'None', selector: { app: 'x' }, ports: [{ port: 80 }, { port: 81 }] } },
  { apiVersion: 'v1', kind: 'Service', metadata: meta('svc-port'), spec: { type: 'NodePort', ports: [{ name: 'a', port: 0, nodePort: 80 }, { name: 'a', port: 70000, protocol: 'HTTP' }] } },
  { apiVersion: 'v1', kind: 'Service', metadata: meta('svc-external'), spec: { type: 'ExternalName', externalName: 'Not A Host' } },
  { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: meta('ing-valid'), spec: { rules: [{ host: 'a.example.com', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 's', port: { number: 80 } } } }] } }] } },
  { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: meta('ing-path'), spec: { rules: [{ host: 'Bad_Host', http: { paths: [{ path: 'no-slash', pathType: 'Exact', backend: { service: { name: 's', port: { number: 0 } } } }] } }] } },
  { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: meta('np-valid'), spec: { podSelector: {}, ingress: [{ ports: [{ port: 80 }] }] } },
  { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: meta('np-cidr'), spec: { podSelector: {}, ingress: [{ from: [{ ipBlock: { cidr: '10.0.0.0/33' } }], ports: [{ port: 0 }] }] } },
  { apiVersion: 'v1', kind: 'ConfigMap', metadata: meta('cm-valid'), data: { 'a.b': 'x' } },
  { apiVersion: 'v1', kind: 'ConfigMap', metadata: meta('cm-key'), data: { 'bad key': 'x', a: 'y' }, binaryData: { a: 'eA==' } },
  { apiVersion: 'v1', kind: 'ConfigMap', metadata: meta('cm-label', { 'bad key': 'v', ok: 'x'.repeat(64) }) },
  { apiVersion: 'v1', kind: 'Secret', metadata: meta('secret-valid'), stringData: { password: 'x' } },
  { apiVersion: 'v1', kind: 'Secret', metadata: meta('secret-tls'), type: 'kubernetes.io/tls', data: {} },
  { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta('sa-valid') },
  { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta('Bad_SA') },
  { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: meta('pvc-valid'), spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
  { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: meta('pvc-empty'), spec: { resources: { requests: { storage: '-1Gi' } } } },
  { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: meta('pdb-valid'), spec: { minAvailable: 1, selector: { matchLabels: { app: 'x' } } } },
  { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: meta('pdb-both'), spec: { minAvailable: 1, maxUnavailable: '150%' } },
  { apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: meta('hpa-valid'), spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'd' }, minReplicas: 1, maxReplicas: 3 } },
  { apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: meta('hpa-bounds'), spec: { scaleTargetRef: { kind: '', name: 'd' }, minReplicas: 5, maxReplicas: 3, metrics: [{ type: 'Resource' }] } },
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: meta('role-valid'), rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }] },
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: meta('role-empty'), rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: [] }] },
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: meta('validator-diff-cr-valid'), rules: [{ nonResourceURLs: ['/healthz'], verbs: ['get'] }] },
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: meta('validator-diff-cr-bad'), rules: [{ nonResourceURLs: ['/healthz'], resources: ['pods'], apiGroups: [''], verbs: ['get'] }] },
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: meta('rb-valid'), roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'r' }, subjects: [{ kind: 'ServiceAccount', name: 'sa' }] },
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: meta('rb-ref'), roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Pod', name: '' }, subjects: [{ kind: 'Robot', name: 'x' }] },
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: meta('validator-diff-crb-valid'), roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' }, subjects: [{ kind: 'Group', name: 'g', apiGroup: 'rbac.authorization.k8s.io' }] },
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: meta('validator-diff-crb-bad'), roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'r' } },
];

describe('validator against the API server', () => {
  test('GIVEN issue 23\'s cdk8s-plus StatefulSet with two unnamed container ports WHEN its children are checked THEN both refuse the headless Service with spec.ports[1].name: Required value', async () => {
    const children = renderForSnapshot(new DbOperator(new App()), { apiVersion: 'refused.example.com/v1', kind: 'Db', metadata: { name: 'db', namespace: 'default' }, spec: {} } as never, { validateChildren: false });
    const objects = children.map((c) => { const { ownerReferences: _, ...metadata } = c.metadata as Json; return { ...c, metadata }; });
    const tally = await expectAgreement(objects);
    expect(offlineVerdicts(objects.map(inNamespace)).find((v) => !v.accepted)?.causes).toContain('spec.ports[1].name: Required value');
    tally.expectBoth();
  }, 120_000);

  test('GIVEN valid and invalid objects of every covered kind WHEN checked THEN the verdicts and causes agree', async () => {
    (await expectAgreement(handpicked)).expectBoth();
  }, 300_000);

  test('GIVEN generated Services (ports, names, protocols, types) THEN the verdicts and causes agree', async () => {
    const tally = new Tally();
    // Each field valid 4 times in 5: with every value equally likely, 3.6 % of the Services were valid and
    // 6 of 200 seeds drew none in 100 runs (the tally failed in a loaded .ci/run, 2026-12-05); now 19 %, 0 of 200. The two
    // examples reach both verdicts whatever the seed.
    const mostly = <T>(valid: fc.Arbitrary<T>, invalid: fc.Arbitrary<T>) => fc.oneof({ arbitrary: valid, weight: 4 }, { arbitrary: invalid, weight: 1 });
    const port = fc.record({
      name: fc.option(mostly(fc.constantFrom('http', 'a', 'metrics'), fc.constantFrom('HTTP', 'metrics-port-long', 'web_1')), { nil: undefined }),
      port: mostly(fc.constantFrom(80, 443, 65535), fc.constantFrom(0, 65536)),
      targetPort: fc.option(mostly(fc.constantFrom<number | string>(8080, 'web'), fc.constantFrom<number | string>('Bad_Name', 0)), { nil: undefined }),
      protocol: fc.option(mostly(fc.constantFrom('TCP', 'UDP', 'SCTP'), fc.constant('HTTP')), { nil: undefined }),
    }, { requiredKeys: ['port'] });
    const selectorValue = mostly(fc.constant('x'), fc.constantFrom('Bad Value', 'a'.repeat(64)));
    let n = 0;
    await fc.assert(fc.asyncProperty(fc.array(port, { minLength: 1, maxLength: 3 }), fc.constantFrom('ClusterIP', 'NodePort', 'Headless'), selectorValue, async (ports, type, label) => {
      const spec: Json = { selector: { app: label }, ports: ports.map((p) => Object.fromEntries(Object.entries(p).filter(([, v]) => v !== undefined))) };
      if (type === 'Headless') spec.clusterIP = 'None';
      else spec.type = type;
      await expectAgreement([{ apiVersion: 'v1', kind: 'Service', metadata: meta(`gen-svc-${++n}`), spec }], tally);
    }), { numRuns: 100, examples: [[[{ port: 80 }], 'ClusterIP', 'x'], [[{ port: 0 }], 'ClusterIP', 'x']] });
    tally.expectBoth();
  }, 300_000);

  test('GIVEN generated pod templates (names, env, resources, probes, volumes) and CronJob schedules THEN the verdicts and causes agree', async () => {
    const tally = new Tally();
    /** Mostly `valid`, sometimes one of `invalid`: most objects then have zero or one problem. */
    const mostly = <T>(valid: T, ...invalid: T[]) => fc.oneof({ arbitrary: fc.constant(valid), weight: 6 }, { arbitrary: fc.constantFrom(...invalid), weight: 1 });
    const generatedContainer = fc.record({
      name: fc.oneof(fc.constantFrom('main', 'sidecar'), mostly('main', 'Main', 'a'.repeat(64))),
      image: mostly('nginx:1', '', ' nginx'),
      env: fc.array(fc.record({ name: mostly('A_B', '1A', 'a.b', '', 'A=B'), value: fc.constantFrom('x', '') }), { maxLength: 2 }),
      resources: fc.record({ requests: fc.record({ cpu: mostly('100m', '2', '-1', '1.5.2') }), limits: fc.record({ cpu: mostly('1', '50m') }) }),
      readinessProbe: mostly<Json | undefined>(undefined, { tcpSocket: { port: 80 } }, { httpGet: { port: 'http', path: '/' }, periodSeconds: 0 }, { exec: { command: ['true'] }, tcpSocket: { port: 1 } }),
      volumeMounts: mostly<Json[]>([], [{ name: 'data', mountPath: '/data' }], [{ name: 'data', mountPath: 'relative' }]),
    });
    let n = 0;
    await fc.assert(fc.asyncProperty(fc.array(generatedContainer, { minLength: 1, maxLength: 2 }), fc.boolean(), fc.oneof(fc.constantFrom('*/5 * * * *', '@hourly'), fc.constantFrom('every minute', '60 * * * *', 'TZ=UTC 0 * * * *')), async (containers, withVolume, schedule) => {
      const cleaned = containers.map((c) => Object.fromEntries(Object.entries(c).filter(([, v]) => v !== undefined)));
      const volumes = withVolume ? [{ name: 'data', emptyDir: {} }] : [];
      const i = ++n;
      await expectAgreement([
        deployment(`gen-d-${i}`, { template: template(cleaned, { volumes }) }),
        { apiVersion: 'batch/v1', kind: 'CronJob', metadata: meta(`gen-cj-${i}`), spec: { schedule, jobTemplate: { spec: { template: { spec: podSpec(cleaned, { volumes, restartPolicy: 'Never' }) } } } } },
      ], tally);
    }), { numRuns: 60 });
    tally.expectBoth();
  }, 300_000);
});
