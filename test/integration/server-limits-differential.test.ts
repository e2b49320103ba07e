/**
 * Server limits, differentially: the same generated inputs (fast-check) go to our offline checks and to
 * the real API server, and the verdicts must agree. Covers every size and name limit the server
 * enforces on what we send: Event note (UTF-8 bytes) and name, object names per kind, label values,
 * the annotations' total size, the condition message (code points), and duplicate keys in the lists
 * server-side apply treats as maps or sets (whose table must equal the live server's OpenAPI v3; when it
 * does not, the failure names a temp file holding the ready-to-commit lib/operator/schema/keyed-lists.generated.ts).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import fc from 'fast-check';
import { App } from 'cdk8s';
import { parseApiVersion } from '../../lib/operator/kinds.js';
import { BUILT_IN_KEYED_LISTS, keyedListProblems } from '../../lib/operator/schema/keyed-lists.js';
import { toLabelValue } from '../../lib/operator/render/labels.js';
import { annotationsSizeProblem, labelValueProblem } from '../../lib/operator/schema/metadata-limits.js';
import { nameProblem, nameRuleFor } from '../../lib/operator/schema/names.js';
import { renderChildren } from '../../lib/operator/render/render-children.js';
import { ApiClient, type RawResponse } from '../../lib/runtime/client/api-client.js';
import { capMessage } from '../../lib/runtime/reconcile/conditions.js';
import { EventRecorder, eventName, eventNote } from '../../lib/runtime/events/events.js';
import { codePointLength, utf8ByteLength, wellFormed } from '../../lib/runtime/reconcile/text-limit.js';
import { createTestNamespace, testKubeConfig } from '../support/cluster.js';
import { GENERATE_KEYED_LISTS_COMMAND, KEYED_LISTS_FILE, liveKeyedListsFile } from '../../tools/keyed-lists/keyed-lists-file.js';
import { rawObject, ScriptedOperator } from '../operator/fixtures/test-operators.js';

type Json = Record<string, any>;

const kubeConfig = testKubeConfig();
const client = new ApiClient({ kubeConfig });
let namespace: string;

beforeAll(async () => {
  namespace = await createTestNamespace('server-limits', client);
}, 60_000);

/** Creates `obj` under `collection` with dryRun=All: the server validates it fully and stores nothing. */
function dryRunCreate(collection: string, obj: Json): Promise<RawResponse> {
  return ApiClient.sendOnce({ kubeConfig }, 'POST', `${collection}?dryRun=All`, { body: obj, timeoutMs: 30_000 });
}

/** Server-side apply of `obj` at `item` with dryRun=All. */
function dryRunApply(item: string, obj: Json): Promise<RawResponse> {
  return ApiClient.sendOnce({ kubeConfig }, 'PATCH', `${item}?dryRun=All&fieldManager=server-limits-test&force=true`, { body: obj, contentType: 'application/apply-patch+yaml', timeoutMs: 30_000 });
}

/** Whether the server accepted; any answer other than 2xx or 422 Invalid is a broken test. */
function accepted(res: RawResponse): boolean {
  if (res.statusCode < 300) return true;
  if (res.statusCode === 422 || ((res.statusCode === 500 || res.statusCode === 400) && /duplicate entries|omits key/.test(res.body))) return false;
  throw new Error(`unexpected answer ${res.statusCode}: ${res.body.slice(0, 500)}`);
}

/** Counts the server's verdicts, so a test can check that its inputs reached both sides of the limit. */
class Verdicts {
  accepted = 0;
  rejected = 0;
  add(ok: boolean): boolean {
    if (ok) this.accepted++;
    else this.rejected++;
    return ok;
  }
  expectBoth(): void {
    expect({ accepted: this.accepted > 0, rejected: this.rejected > 0 }).toEqual({ accepted: true, rejected: true });
  }
}

/** Text mixing 1-, 2-, 3- and 4-byte characters and lone surrogates, up to about 3300 bytes. */
const text = fc
  .tuple(fc.constantFrom('a', 'é', '€', '😀', '\uD800'), fc.integer({ min: 0, max: 1100 }), fc.string({ unit: 'binary', maxLength: 20 }))
  .map(([unit, n, tail]) => unit.repeat(n) + tail);

function eventBody(name: string, note: string): Json {
  return {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: { name, namespace },
    eventTime: new Date().toISOString().replace(/Z$/, '000Z'),
    reportingController: 'cdk8s.io/limits-operator',
    reportingInstance: 'limits-operator-1',
    action: 'Apply',
    reason: 'ApplyFailed',
    type: 'Warning',
    note,
    regarding: { apiVersion: 'v1', kind: 'ConfigMap', name: 'x', namespace },
  };
}

describe('Event limits', () => {
  test('GIVEN generated notes THEN the server accepts a note iff it has at most 1024 UTF-8 bytes, and always accepts eventNote()', async () => {
    let n = 0;
    const verdicts = new Verdicts();
    await fc.assert(
      fc.asyncProperty(text, async (note) => {
        const collection = `/apis/events.k8s.io/v1/namespaces/${namespace}/events`;
        const raw = verdicts.add(accepted(await dryRunCreate(collection, eventBody(`note-${++n}`, note))));
        expect({ bytes: utf8ByteLength(note), accepted: raw }).toEqual({ bytes: utf8ByteLength(note), accepted: utf8ByteLength(note) <= 1024 });
        expect(accepted(await dryRunCreate(collection, eventBody(`note-${++n}`, eventNote(note))))).toBe(true);
      }),
      { numRuns: 60 },
    );
    verdicts.expectBoth();
  }, 120_000);

  test('GIVEN generated object names THEN the server accepts every eventName()', async () => {
    const anyName = fc.oneof(
      fc.string({ unit: fc.constantFrom('a', 'z', '0', '-', '.', 'A', ':', '_'), minLength: 1, maxLength: 300 }),
      fc.integer({ min: 200, max: 253 }).map((n) => 'a'.repeat(n)),
    );
    await fc.assert(
      fc.asyncProperty(anyName, fc.bigInt({ min: 0n, max: 1n << 60n }), async (name, time) => {
        const event = eventName(name, time.toString(16));
        const res = await dryRunCreate(`/apis/events.k8s.io/v1/namespaces/${namespace}/events`, eventBody(event, 'x'));
        expect({ event, accepted: accepted(res) }).toEqual({ event, accepted: true });
      }),
      { numRuns: 80 },
    );
  }, 120_000);

  test('GIVEN the issue\'s cases WHEN recorded by EventRecorder THEN each Event is created on the server', async () => {
    const recorder = new EventRecorder({ client, reportingController: 'cdk8s.io/limits-operator' });
    const regarding = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, uid: `uid-${name.length}` } });
    expect(await recorder.warning(regarding('short'), 'ApplyFailed', 'Apply', 'x'.repeat(3000))).toBe('created');
    expect(await recorder.warning(regarding('short'), 'ApplyFailed', 'Apply', 'é'.repeat(600))).toBe('created');
    expect(await recorder.warning(regarding('a'.repeat(240)), 'ApplyFailed', 'Apply', 'long name')).toBe('created');
    const list = (await client.request('GET', `/apis/events.k8s.io/v1/namespaces/${namespace}/events`)) as { items: Json[] };
    const notes = list.items.filter((e) => e.reportingController === 'cdk8s.io/limits-operator').map((e) => Buffer.byteLength(e.note as string));
    expect(notes.sort((a, b) => a - b)).toEqual([9, 1023, 1024]);
  }, 60_000);
});

/** A minimal valid object of each kind whose name rule we state, and where it is created. */
const KINDS: { apiVersion: string; kind: string; collection: () => string; body: (name: string) => Json }[] = [
  { apiVersion: 'v1', kind: 'ConfigMap', collection: () => `/api/v1/namespaces/${namespace}/configmaps`, body: () => ({}) },
  { apiVersion: 'v1', kind: 'Service', collection: () => `/api/v1/namespaces/${namespace}/services`, body: () => ({ spec: { ports: [{ port: 80 }] } }) },
  { apiVersion: 'v1', kind: 'Namespace', collection: () => '/api/v1/namespaces', body: () => ({}) },
  { apiVersion: 'apps/v1', kind: 'StatefulSet', collection: () => `/apis/apps/v1/namespaces/${namespace}/statefulsets`, body: () => ({ spec: { selector: { matchLabels: { a: 'b' } }, template: podTemplate() } }) },
  { apiVersion: 'apps/v1', kind: 'Deployment', collection: () => `/apis/apps/v1/namespaces/${namespace}/deployments`, body: () => ({ spec: { selector: { matchLabels: { a: 'b' } }, template: podTemplate() } }) },
  { apiVersion: 'batch/v1', kind: 'Job', collection: () => `/apis/batch/v1/namespaces/${namespace}/jobs`, body: () => ({ spec: { template: podTemplate('Never', false) } }) },
  { apiVersion: 'batch/v1', kind: 'CronJob', collection: () => `/apis/batch/v1/namespaces/${namespace}/cronjobs`, body: () => ({ spec: { schedule: '* * * * *', jobTemplate: { spec: { template: podTemplate('Never', false) } } } }) },
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', collection: () => `/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/roles`, body: () => ({ rules: [] }) },
];

function podTemplate(restartPolicy = 'Always', labels = true): Json {
  return { ...(labels ? { metadata: { labels: { a: 'b' } } } : {}), spec: { restartPolicy, containers: [{ name: 'c', image: 'busybox' }] } };
}

/**
 * Where we are deliberately stricter than the server (see `nameRuleFor`): the server accepts such a
 * name but the object would not work. Among names meeting this extra condition we must agree with the
 * server exactly; names failing it we reject.
 */
const STRICTER: Record<string, (name: string) => boolean> = {
  // pods get the label controller-revision-hash: <name>-<10 characters>, at most 63
  StatefulSet: (name) => name.length <= 52,
  // an Indexed Job's pods get the hostname <name>-<index>, a DNS label
  Job: (name) => !name.includes('.'),
  // the server sets no length limit on RBAC names; we keep the usual 253
  Role: (name) => name.length <= 253,
  // kube-apiserver 1.37 accepts a Service name that starts with a digit (relaxed Service name
  // validation, KEP-5311); 1.35 refused it (RFC 1035 label), so we keep the rule every supported server takes
  Service: (name) => /^[a-z]/.test(name),
};

describe('Object names', () => {
  const anyName = fc.oneof(
    fc.string({ unit: fc.constantFrom('a', 'z', '0', '9', '-', '.', 'A', '_', ':', '%'), minLength: 0, maxLength: 70 }),
    fc.tuple(fc.constantFrom('a', '0'), fc.integer({ min: 45, max: 70 }), fc.constantFrom('', '.b', '-', '9')).map(([first, n, end]) => first + 'x'.repeat(n) + end),
    fc.tuple(fc.integer({ min: 245, max: 260 }), fc.constantFrom('a', '.')).map(([n, sep]) => `a${sep}`.repeat(n).slice(0, n).replace(/\.$/, 'b')),
  );

  test.each(KINDS.map((k) => [k.kind, k] as const))('GIVEN generated names of a %s THEN nameProblem agrees with the server', async (_kind, k) => {
    const rule = nameRuleFor({ group: parseApiVersion(k.apiVersion).group, kind: k.kind });
    const verdicts = new Verdicts();
    await fc.assert(
      fc.asyncProperty(anyName, async (name) => {
        const server = verdicts.add(accepted(await dryRunCreate(k.collection(), { apiVersion: k.apiVersion, kind: k.kind, metadata: { name }, ...k.body(name) })));
        const ours = nameProblem(name, rule) === undefined;
        const expected = STRICTER[k.kind] && !STRICTER[k.kind](name) ? false : server;
        expect({ name, ours }).toEqual({ name, ours: expected });
      }),
      // The examples make sure both sides of every kind's rule are reached, whatever the seed.
      { numRuns: 50, examples: [['web'], ['web-1.example'], ['0web'], ['Web'], ['a'.repeat(64)], ['']] },
    );
    verdicts.expectBoth();
  }, 180_000);

  test('GIVEN generated CR names (valid, some starting with a digit) WHEN children are rendered THEN the server accepts every generated name', async () => {
    const label = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,30}[a-z0-9])?$/);
    const crName = fc.array(label, { minLength: 1, maxLength: 10 }).map((parts) => parts.join('.')).filter((n) => n.length <= 253);
    // The API server's own rule for CR names (crNameRule): the property is about every valid CR name.
    const anyName = { format: 'dns1123-subdomain', maxLength: 253 } as const;
    const operator = new ScriptedOperator(new App(), 'names-operator', { crNameRule: anyName, owns: KINDS.filter((k) => k.kind !== 'Namespace').map(({ apiVersion, kind }) => ({ apiVersion, kind })) }, (_cr, scope) => {
      for (const k of KINDS) if (k.kind !== 'Namespace') rawObject(scope, `Server${k.kind}`, k.apiVersion, k.kind, {}, k.body(''));
    });
    await fc.assert(
      fc.asyncProperty(crName, async (name) => {
        const children = renderChildren(operator, { apiVersion: 'demo.example.com/v1alpha1', kind: 'Web', metadata: { name, namespace, uid: '11111111-2222-4333-8444-555555555555' }, spec: { image: 'x' } } as never);
        for (const child of children) {
          const k = KINDS.find((x) => x.kind === child.kind)!;
          const res = await dryRunCreate(k.collection(), { ...child, metadata: { ...child.metadata, ownerReferences: undefined } });
          expect({ child: `${child.kind} ${child.metadata.name}`, accepted: accepted(res) }).toEqual({ child: `${child.kind} ${child.metadata.name}`, accepted: true });
        }
      }),
      { numRuns: 25 },
    );
  }, 180_000);
});

describe('Label values and annotations', () => {
  const collection = () => `/api/v1/namespaces/${namespace}/configmaps`;
  let n = 0;

  test('GIVEN generated label values THEN labelValueProblem agrees with the server, and the server accepts toLabelValue() of any string', async () => {
    const value = fc.oneof(
      fc.string({ unit: fc.constantFrom('a', 'Z', '0', '-', '_', '.', ' ', '/', 'é'), maxLength: 70 }),
      fc.integer({ min: 60, max: 66 }).map((len) => 'v'.repeat(len)),
      fc.string({ unit: 'binary', maxLength: 300 }),
    );
    const verdicts = new Verdicts();
    await fc.assert(
      fc.asyncProperty(value, async (v) => {
        const server = verdicts.add(accepted(await dryRunCreate(collection(), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `label-${++n}`, labels: { k: v } } })));
        expect({ v, ours: labelValueProblem(v) === undefined }).toEqual({ v, ours: server });
        const made = toLabelValue(v);
        expect(accepted(await dryRunCreate(collection(), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `label-${++n}`, labels: { k: made } } }))).toBe(true);
      }),
      { numRuns: 80 },
    );
    verdicts.expectBoth();
  }, 120_000);

  test('GIVEN annotations around 256 KiB in total THEN annotationsSizeProblem agrees with the server (UTF-8 bytes of keys and values)', async () => {
    const limit = 256 * 1024;
    const annotations = fc
      .tuple(fc.integer({ min: -8, max: 8 }), fc.constantFrom('a', 'é', '😀'), fc.integer({ min: 1, max: 3 }))
      .map(([delta, unit, count]) => {
        const keys = Array.from({ length: count }, (_, i) => `example.com/k${i}`);
        const keyBytes = keys.reduce((s, k) => s + k.length, 0);
        const valueBytes = limit + delta - keyBytes;
        const unitBytes = Buffer.byteLength(unit);
        const values = keys.map((_, i) => {
          const share = Math.floor(valueBytes / count) + (i === 0 ? valueBytes % count : 0);
          return unit.repeat(Math.floor(share / unitBytes)) + 'a'.repeat(share % unitBytes);
        });
        return Object.fromEntries(keys.map((k, i) => [k, values[i]]));
      });
    const verdicts = new Verdicts();
    await fc.assert(
      fc.asyncProperty(annotations, async (a) => {
        const server = verdicts.add(accepted(await dryRunCreate(collection(), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `annotations-${++n}`, annotations: a } })));
        expect(annotationsSizeProblem(a) === undefined).toBe(server);
      }),
      { numRuns: 40 },
    );
    verdicts.expectBoth();
  }, 120_000);
});

describe('Condition message', () => {
  const operator = new ScriptedOperator(new App(), 'limits-operator', { group: 'limits.example.com', kind: 'Limit' }, () => undefined);
  const crd = (operator.toJson() as Json[]).find((o) => o.kind === 'CustomResourceDefinition')!;
  const maxLength = crd.spec.versions[0].schema.openAPIV3Schema.properties.status.properties.conditions.items.properties.message.maxLength as number;
  const base = `/apis/limits.example.com/v1alpha1/namespaces`;

  beforeAll(async () => {
    await client.request('PATCH', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}?fieldManager=server-limits-test&force=true`, { body: crd, contentType: 'application/apply-patch+yaml' });
    const deadline = Date.now() + 60_000;
    for (;;) {
      const res = await ApiClient.sendOnce({ kubeConfig }, 'POST', `${base}/${namespace}/limits`, { body: { apiVersion: 'limits.example.com/v1alpha1', kind: 'Limit', metadata: { name: 'cr' }, spec: { image: 'x' } } });
      if (res.statusCode === 201) break;
      if (Date.now() > deadline) throw new Error(`Limit not served: ${res.statusCode} ${res.body}`);
      await new Promise((r) => setTimeout(r, 250)); // polling until the CRD is served
    }
  }, 90_000);

  test('GIVEN generated messages around the schema\'s maxLength THEN the server counts code points, as capMessage does', async () => {
    expect(maxLength).toBe(32768);
    const message = fc
      .tuple(fc.constantFrom('a', 'é', '😀', '\uD800'), fc.integer({ min: -3, max: 3 }))
      .map(([unit, delta]) => unit.repeat(maxLength + delta));
    const verdicts = new Verdicts();
    await fc.assert(
      fc.asyncProperty(message, async (m) => {
        const status = (msg: string) => ({
          apiVersion: 'limits.example.com/v1alpha1',
          kind: 'Limit',
          metadata: { name: 'cr', namespace },
          status: { conditions: [{ type: 'Ready', status: 'False', reason: 'Test', message: msg, lastTransitionTime: '2026-01-01T00:00:00Z' }] },
        });
        // A lone surrogate can't even be decoded from an apply body (YAML rejects the escape): send it as
        // U+FFFD, as capMessage does, and compare the counting.
        const server = verdicts.add(accepted(await dryRunApply(`${base}/${namespace}/limits/cr/status`, status(wellFormed(m)))));
        expect({ codePoints: codePointLength(m), server }).toEqual({ codePoints: codePointLength(m), server: codePointLength(m) <= maxLength });
        expect(accepted(await dryRunApply(`${base}/${namespace}/limits/cr/status`, status(capMessage(m, maxLength))))).toBe(true);
      }),
      { numRuns: 30 },
    );
    verdicts.expectBoth();
  }, 180_000);
});

describe('Keyed lists', () => {
  test('GIVEN the live server\'s OpenAPI v3 THEN the built-in keyed-list table equals it (else the failure names the regenerated file)', async () => {
    // The same function as `npm run generate:keyed-lists`: the table, and the file it writes.
    const live = await liveKeyedListsFile(kubeConfig);
    try {
      expect(BUILT_IN_KEYED_LISTS).toEqual(live.schema);
    } catch (err) {
      const path = join(mkdtempSync(join(tmpdir(), 'keyed-lists-')), basename(KEYED_LISTS_FILE));
      writeFileSync(path, live.text);
      throw new Error(
        `${KEYED_LISTS_FILE} differs from kube-apiserver ${live.kubernetesVersion}'s OpenAPI v3 (the difference is the cause below). ` +
          `The ready-to-commit file is ${path}: run \`${GENERATE_KEYED_LISTS_COMMAND}\` (the pinned control plane), or copy it over ${KEYED_LISTS_FILE}.`,
        { cause: err },
      );
    }
  }, 120_000);

  test('GIVEN generated pod specs with and without duplicate keys THEN keyedListProblems agrees with server-side apply', async () => {
    const env = fc.array(fc.record({ name: fc.constantFrom('LOG_LEVEL', 'PORT', 'MODE'), value: fc.constantFrom('a', 'b') }), { maxLength: 4 });
    const ports = fc.array(
      fc.record({ containerPort: fc.constantFrom(80, 443), protocol: fc.constantFrom(undefined, 'TCP', 'UDP') }).map((p) => (p.protocol === undefined ? { containerPort: p.containerPort } : p)),
      { maxLength: 3 },
    );
    const container = fc.record({ name: fc.constantFrom('app', 'sidecar', 'proxy'), env, ports, mounts: fc.array(fc.constantFrom('/a', '/b', '/c'), { maxLength: 3 }) });
    const podSpec = fc.record({
      containers: fc.array(container, { minLength: 1, maxLength: 3 }),
      volumes: fc.array(fc.constantFrom('v0', 'v1'), { minLength: 1, maxLength: 3 }),
    });
    let n = 0;
    const verdicts = new Verdicts();
    await fc.assert(
      fc.asyncProperty(podSpec, async (spec) => {
        const name = `keys-${++n}`;
        const deployment = {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name, namespace },
          spec: {
            selector: { matchLabels: { a: 'b' } },
            template: {
              metadata: { labels: { a: 'b' } },
              spec: {
                containers: spec.containers.map((c) => ({
                  name: c.name,
                  image: 'busybox',
                  env: c.env,
                  ports: c.ports,
                  volumeMounts: c.mounts.map((mountPath) => ({ name: spec.volumes[0], mountPath })),
                })),
                volumes: spec.volumes.map((v) => ({ name: v, emptyDir: {} })),
              },
            },
          },
        };
        const problems = keyedListProblems(deployment, 'apps/v1', 'Deployment');
        const server = verdicts.add(accepted(await dryRunApply(`/apis/apps/v1/namespaces/${namespace}/deployments/${name}`, deployment)));
        expect({ problems, server }).toEqual({ problems, server: problems.length === 0 });
      }),
      { numRuns: 100 },
    );
    verdicts.expectBoth();
  }, 180_000);
});
