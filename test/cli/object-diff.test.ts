// The pure half of `cdk8s-operator diff` (lib/cli/object-diff.ts): noise stripping and the unified diff
// of one object, live vs. as it would be.
import { parse } from 'yaml';
import { NOISE_METADATA_FIELDS, objectText, unifiedObjectDiff, withoutNoise } from '../../lib/cli/object-diff.js';

const live = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: {
    name: 'web',
    namespace: 'default',
    uid: '1111',
    resourceVersion: '42',
    generation: 3,
    creationTimestamp: '2026-01-01T00:00:00Z',
    managedFields: [{ manager: 'app-operator', operation: 'Apply' }],
    labels: { 'app.kubernetes.io/managed-by': 'app-operator' },
    annotations: { 'operator.cdk8s.io/desired-hash': 'aaaa' },
  },
  spec: { replicas: 1, template: { spec: { containers: [{ name: 'web', image: 'nginx:1' }] } } },
};

test('GIVEN an object with server-set metadata WHEN stripped THEN managedFields, resourceVersion, generation, creationTimestamp and uid are gone, the rest (labels, the desired-hash annotation) stays, and the input is unchanged', () => {
  const stripped = withoutNoise(live) as typeof live;
  for (const field of NOISE_METADATA_FIELDS) expect(stripped.metadata).not.toHaveProperty(field);
  expect(stripped.metadata).toEqual({
    name: 'web',
    namespace: 'default',
    labels: { 'app.kubernetes.io/managed-by': 'app-operator' },
    annotations: { 'operator.cdk8s.io/desired-hash': 'aaaa' },
  });
  expect(stripped.spec).toBe(live.spec);
  expect(live.metadata.uid).toBe('1111');
});

test('GIVEN the same object with only server-set fields changed WHEN diffed THEN the diff is empty', () => {
  const after = { ...live, metadata: { ...live.metadata, resourceVersion: '43', generation: 4, managedFields: [] } };
  expect(unifiedObjectDiff({ name: 'Deployment default/web', live, after })).toBe('');
});

test('GIVEN a changed field WHEN diffed THEN a unified diff with Kind ns/name live / after apply headers shows the old and the new line, with context', () => {
  const after = { ...live, spec: { ...live.spec, replicas: 3 } };
  const diff = unifiedObjectDiff({ name: 'Deployment default/web', live, after });
  const lines = diff.split('\n');
  expect(lines[0]).toBe('--- Deployment default/web (live)');
  expect(lines[1]).toBe('+++ Deployment default/web (after apply)');
  expect(lines[2]).toMatch(/^@@ -\d+,\d+ \+\d+,\d+ @@$/);
  expect(lines.filter((line) => line.startsWith('-') && !line.startsWith('---'))).toEqual(['-  replicas: 1']);
  expect(lines.filter((line) => line.startsWith('+') && !line.startsWith('+++'))).toEqual(['+  replicas: 3']);
  expect(lines.filter((line) => line.startsWith(' ')).length).toBeGreaterThan(0);
  expect(diff.endsWith('\n')).toBe(true);
});

test('GIVEN a changed desired-hash annotation WHEN diffed THEN the diff shows it (the runtime writes it)', () => {
  const after = { ...live, metadata: { ...live.metadata, annotations: { 'operator.cdk8s.io/desired-hash': 'bbbb' } } };
  const diff = unifiedObjectDiff({ name: 'Deployment default/web', live, after });
  expect(diff).toContain('-    operator.cdk8s.io/desired-hash: aaaa');
  expect(diff).toContain('+    operator.cdk8s.io/desired-hash: bbbb');
});

test('GIVEN no live object WHEN diffed THEN the whole object is added under an (absent) old side, without server-set fields', () => {
  const diff = unifiedObjectDiff({ name: 'Deployment default/web', live: undefined, after: live });
  const lines = diff.trimEnd().split('\n');
  expect(lines[0]).toBe('--- Deployment default/web (absent)');
  expect(lines[1]).toBe('+++ Deployment default/web (after apply)');
  const body = lines.slice(3);
  expect(body.every((line) => line.startsWith('+'))).toBe(true);
  expect(parse(body.map((line) => line.slice(1)).join('\n'))).toEqual(withoutNoise(live));
});

test('GIVEN an object to prune WHEN diffed THEN every line is removed under a (pruned) new side', () => {
  const diff = unifiedObjectDiff({ name: 'Deployment default/web', live, after: undefined });
  const lines = diff.trimEnd().split('\n');
  expect(lines[1]).toBe('+++ Deployment default/web (pruned)');
  expect(lines.slice(3).every((line) => line.startsWith('-'))).toBe(true);
  expect(lines).toContain('-  name: web');
});

test('GIVEN a long string value WHEN printed THEN it stays on one line (no folding that would make a one-word change a many-line diff)', () => {
  const long = 'x'.repeat(300);
  expect(objectText({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { k: long } }).split('\n')).toContain(`  k: ${long}`);
  expect(objectText(undefined)).toBe('');
});
