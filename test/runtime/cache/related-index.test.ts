/**
 * RelatedIndex: from a related object to the keys of the CRs that reference it, by name or by label
 * selector, kept up to date as CRs change their references.
 */
import fc from 'fast-check';
import type { ResolvedKind } from '../../../lib/operator/kinds.js';
import { selectorMatches, type ResolvedReference } from '../../../lib/operator/render/related.js';
import type { KubeObject } from '../../../lib/runtime/client/kube-client.js';
import { RelatedIndex } from '../../../lib/runtime/cache/related-index.js';

const kind = (apiVersion: string, k: string, namespaced = true): ResolvedKind => {
  const group = apiVersion.includes('/') ? apiVersion.split('/')[0] : '';
  return { apiVersion, group, version: apiVersion.split('/').at(-1)!, kind: k, plural: `${k.toLowerCase()}s`, namespaced };
};
const CONFIG_MAP = kind('v1', 'ConfigMap');
const SECRET = kind('v1', 'Secret');
const POD = kind('v1', 'Pod');
const NODE = kind('v1', 'Node', false);
const OTHER_CONFIG_MAP = kind('other.example.com/v1', 'ConfigMap');

const byName = (k: ResolvedKind, name: string, namespace?: string): ResolvedReference => ({ related: 'r', kind: k, name, namespace, optional: false, source: 'spec.ref' });
const bySelector = (k: ResolvedKind, selector: Record<string, string>, namespace?: string): ResolvedReference => ({ related: 'r', kind: k, selector, namespace, optional: true, source: 'related.r[0]' });
const obj = (k: ResolvedKind, name: string, namespace?: string, labels?: Record<string, string>): KubeObject => ({
  apiVersion: k.apiVersion,
  kind: k.kind,
  metadata: { name, ...(namespace ? { namespace } : {}), ...(labels ? { labels } : {}) },
});

describe('RelatedIndex by name', () => {
  test('GIVEN CRs referencing a ConfigMap by name WHEN it changes THEN exactly those CRs, sorted', () => {
    const index = new RelatedIndex();
    index.set('team-a/web', [byName(CONFIG_MAP, 'settings', 'team-a')]);
    index.set('team-a/api', [byName(CONFIG_MAP, 'settings', 'team-a')]);
    index.set('team-a/other', [byName(CONFIG_MAP, 'other', 'team-a')]);
    expect(index.referencing(CONFIG_MAP, obj(CONFIG_MAP, 'settings', 'team-a'))).toEqual(['team-a/api', 'team-a/web']);
    expect(index.size).toBe(3);
  });

  test('GIVEN a reference by name THEN another namespace, another kind or another group of the same kind does not match', () => {
    const index = new RelatedIndex();
    index.set('team-a/web', [byName(CONFIG_MAP, 'settings', 'team-a')]);
    expect(index.referencing(CONFIG_MAP, obj(CONFIG_MAP, 'settings', 'team-b'))).toEqual([]);
    expect(index.referencing(SECRET, obj(SECRET, 'settings', 'team-a'))).toEqual([]);
    expect(index.referencing(OTHER_CONFIG_MAP, obj(OTHER_CONFIG_MAP, 'settings', 'team-a'))).toEqual([]);
    expect(index.referencing(CONFIG_MAP, obj(CONFIG_MAP, 'settings-2', 'team-a'))).toEqual([]);
  });

  test('GIVEN a reference to a cluster-scoped object WHEN it changes THEN the CR is found (no namespace on either side)', () => {
    const index = new RelatedIndex();
    index.set('team-a/web', [byName(NODE, 'node-1')]);
    expect(index.referencing(NODE, obj(NODE, 'node-1'))).toEqual(['team-a/web']);
    expect(index.referencing(NODE, obj(NODE, 'node-2'))).toEqual([]);
  });

  test('GIVEN the version of a kind differs THEN it still matches (indexed by group and kind)', () => {
    const index = new RelatedIndex();
    index.set('x', [byName(kind('apps/v1', 'Deployment'), 'web', 'ns')]);
    expect(index.referencing(kind('apps/v1beta2', 'Deployment'), obj(kind('apps/v1beta2', 'Deployment'), 'web', 'ns'))).toEqual(['x']);
  });
});

describe('RelatedIndex by selector', () => {
  test('GIVEN a namespaced selector THEN only Pods of that namespace whose labels include it match', () => {
    const index = new RelatedIndex();
    index.set('team-a/web', [bySelector(POD, { app: 'web' }, 'team-a')]);
    expect(index.referencing(POD, obj(POD, 'web-1', 'team-a', { app: 'web', pod: 'x' }))).toEqual(['team-a/web']);
    expect(index.referencing(POD, obj(POD, 'web-1', 'team-b', { app: 'web' }))).toEqual([]);
    expect(index.referencing(POD, obj(POD, 'db-1', 'team-a', { app: 'db' }))).toEqual([]);
    expect(index.referencing(POD, obj(POD, 'bare', 'team-a'))).toEqual([]);
    expect(index.referencing(CONFIG_MAP, obj(CONFIG_MAP, 'web', 'team-a', { app: 'web' }))).toEqual([]);
  });

  test('GIVEN a selector without namespace (cluster-scoped kind) THEN matching objects match wherever they are', () => {
    const index = new RelatedIndex();
    index.set('web', [bySelector(NODE, { zone: 'a' })]);
    expect(index.referencing(NODE, obj(NODE, 'n1', undefined, { zone: 'a' }))).toEqual(['web']);
    expect(index.referencing(NODE, obj(NODE, 'n2', undefined, { zone: 'b' }))).toEqual([]);
  });

  test('GIVEN one CR with several selectors of the same kind THEN any of them matches, and the CR is listed once', () => {
    const index = new RelatedIndex();
    index.set('team-a/web', [bySelector(POD, { app: 'web' }, 'team-a'), bySelector(POD, { tier: 'front' }, 'team-a')]);
    expect(index.referencing(POD, obj(POD, 'p', 'team-a', { tier: 'front' }))).toEqual(['team-a/web']);
    expect(index.referencing(POD, obj(POD, 'p', 'team-a', { app: 'web', tier: 'front' }))).toEqual(['team-a/web']);
  });

  test('GIVEN a Pod whose labels change WHEN the old and the new state are both looked up THEN the CR whose selector matched before and the one that matches now are both found', () => {
    const index = new RelatedIndex();
    index.set('team-a/web', [bySelector(POD, { app: 'web' }, 'team-a')]);
    index.set('team-a/db', [bySelector(POD, { app: 'db' }, 'team-a')]);
    const before = obj(POD, 'p', 'team-a', { app: 'web' });
    const after = obj(POD, 'p', 'team-a', { app: 'db' });
    expect(index.referencing(POD, before)).toEqual(['team-a/web']);
    expect(index.referencing(POD, after)).toEqual(['team-a/db']);
  });

  test('GIVEN a CR that references the same object by name and by selector THEN it is listed once', () => {
    const index = new RelatedIndex();
    index.set('team-a/web', [byName(POD, 'p', 'team-a'), bySelector(POD, { app: 'web' }, 'team-a')]);
    expect(index.referencing(POD, obj(POD, 'p', 'team-a', { app: 'web' }))).toEqual(['team-a/web']);
  });
});

describe('RelatedIndex updates', () => {
  test('GIVEN a CR changes its references WHEN set again THEN the old ones no longer match and the new ones do', () => {
    const index = new RelatedIndex();
    index.set('team-a/web', [byName(CONFIG_MAP, 'v1', 'team-a'), bySelector(POD, { app: 'web' }, 'team-a')]);
    index.set('team-a/web', [byName(CONFIG_MAP, 'v2', 'team-a'), bySelector(POD, { app: 'web2' }, 'team-a')]);
    expect(index.referencing(CONFIG_MAP, obj(CONFIG_MAP, 'v1', 'team-a'))).toEqual([]);
    expect(index.referencing(CONFIG_MAP, obj(CONFIG_MAP, 'v2', 'team-a'))).toEqual(['team-a/web']);
    expect(index.referencing(POD, obj(POD, 'p', 'team-a', { app: 'web' }))).toEqual([]);
    expect(index.referencing(POD, obj(POD, 'p', 'team-a', { app: 'web2' }))).toEqual(['team-a/web']);
    expect(index.size).toBe(1);
  });

  test('GIVEN two CRs share a reference WHEN one is removed THEN the other is still found', () => {
    const index = new RelatedIndex();
    index.set('a', [byName(CONFIG_MAP, 'settings', 'ns'), bySelector(POD, { app: 'web' }, 'ns')]);
    index.set('b', [byName(CONFIG_MAP, 'settings', 'ns'), bySelector(POD, { app: 'web' }, 'ns')]);
    index.remove('a');
    expect(index.referencing(CONFIG_MAP, obj(CONFIG_MAP, 'settings', 'ns'))).toEqual(['b']);
    expect(index.referencing(POD, obj(POD, 'p', 'ns', { app: 'web' }))).toEqual(['b']);
    expect(index.size).toBe(1);
  });

  test('GIVEN a CR WHEN removed, or set with no references THEN nothing references it and size drops', () => {
    const index = new RelatedIndex();
    index.set('a', [byName(CONFIG_MAP, 'settings', 'ns')]);
    index.set('b', [bySelector(POD, { app: 'web' }, 'ns')]);
    index.remove('a');
    index.set('b', []);
    expect(index.referencing(CONFIG_MAP, obj(CONFIG_MAP, 'settings', 'ns'))).toEqual([]);
    expect(index.referencing(POD, obj(POD, 'p', 'ns', { app: 'web' }))).toEqual([]);
    expect(index.size).toBe(0);
    index.remove('never-set'); // no-op
    expect(index.size).toBe(0);
  });
});

describe('RelatedIndex against a scan of every CR', () => {
  // Small alphabets, so that names, namespaces and label pairs collide often.
  const label = fc.constantFrom('a', 'b', 'c');
  const value = fc.constantFrom('1', '2', '');
  const labels = fc.dictionary(label, value, { maxKeys: 3 });
  const namespace = fc.constantFrom(undefined, 'x', 'y');
  const relatedKind = fc.constantFrom(POD, CONFIG_MAP);
  const reference = fc.oneof(
    fc.record({ kind: relatedKind, name: fc.constantFrom('p', 'q'), namespace }).map((r) => byName(r.kind, r.name, r.namespace)),
    fc.record({ kind: relatedKind, selector: labels, namespace }).map((r) => bySelector(r.kind, r.selector, r.namespace)),
  );
  const step = fc.oneof(
    fc.record({ cr: fc.constantFrom('cr-1', 'cr-2', 'cr-3', 'cr-4'), references: fc.array(reference, { maxLength: 3 }) }),
    fc.record({ cr: fc.constantFrom('cr-1', 'cr-2', 'cr-3', 'cr-4'), remove: fc.constant(true) }),
  );
  const object = fc.record({ kind: relatedKind, name: fc.constantFrom('p', 'q'), namespace, labels });

  /** What referencing() must answer: every live CR with a reference of the kind that names or selects the object. */
  const scan = (live: Map<string, readonly ResolvedReference[]>, k: ResolvedKind, o: KubeObject): string[] =>
    [...live]
      .filter(([, references]) =>
        references.some((r) => {
          if (r.kind.group !== k.group || r.kind.kind !== k.kind) return false;
          const ns = o.metadata?.namespace ?? '';
          if (r.name !== undefined) return r.name === o.metadata?.name && (r.namespace ?? '') === ns;
          return (r.namespace === undefined || r.namespace === ns) && selectorMatches(r.selector ?? {}, o.metadata?.labels);
        }),
      )
      .map(([cr]) => cr)
      .sort();

  test('GIVEN any sequence of set and remove WHEN an object is looked up THEN the CRs found are those a scan finds', () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 12 }), fc.array(object, { minLength: 1, maxLength: 6 }), (steps, objects) => {
        const index = new RelatedIndex();
        const live = new Map<string, readonly ResolvedReference[]>();
        for (const s of steps) {
          if ('remove' in s) {
            index.remove(s.cr);
            live.delete(s.cr);
          } else {
            index.set(s.cr, s.references);
            if (s.references.length > 0) live.set(s.cr, s.references);
            else live.delete(s.cr);
          }
        }
        expect(index.size).toBe(live.size);
        for (const o of objects) {
          const found = obj(o.kind, o.name, o.namespace, o.labels);
          expect(index.referencing(o.kind, found)).toEqual(scan(live, o.kind, found));
        }
      }),
      { numRuns: 500 },
    );
  });
});
