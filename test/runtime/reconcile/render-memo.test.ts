/**
 * The render skip (render-memo.ts): the reconciler with a real render (renderCustomResource of a test
 * operator whose render counts its calls), in-memory caches and a recording fake client. What a skip
 * still does (diff, apply of drift, status) and what undoes it: the CR's spec, a related field render
 * read, the observed children or the CR's status when render read them, a failed reconcile, a timed
 * requeue, the CR's deletion. The same against a real API server: test/integration/render-skip.test.ts.
 */
import { ApiObject, App, Duration } from 'cdk8s';
import { z } from 'zod';
import type { CustomResource } from '../../../lib/operator/custom-resource.js';
import { resolveKind } from '../../../lib/operator/kinds.js';
import type { RelatedDeclaration } from '../../../lib/operator/render/related.js';
import { RelatedReads } from '../../../lib/operator/render/related-reads.js';
import { relatedLookupOf, renderCustomResource, type RenderOutput } from '../../../lib/operator/render/render-children.js';
import type { KubeResource } from '../../../lib/operator/render/render-context.js';
import type { KubeObject } from '../../../lib/runtime/client/kube-client.js';
import { MAX_RENDER_MEMO_ENTRIES, RenderMemo } from '../../../lib/runtime/reconcile/render-memo.js';
import { ContextOperator, REF_UID, configMap, type ContextScript, type RefSpec } from '../../operator/fixtures/context-operators.js';
import { reconcilerHarness } from '../../support/reconciler-harness.js';

const CHILD_KINDS = [{ apiVersion: 'v1', kind: 'ConfigMap' }].map((k) => resolveKind(k));
const Status = z.object({ nodes: z.array(z.string()) });
type Related = Record<string, RelatedDeclaration<CustomResource<RefSpec>>>;
const related: Related = { config: { apiVersion: 'v1', kind: 'ConfigMap', references: 'spec.configMapRef.name' } };

const CR = { apiVersion: 'demo.example.com/v1', kind: 'Ref', metadata: { name: 'shop', namespace: 'team-a', uid: REF_UID, generation: 1, resourceVersion: '10' } };
const CHILD = '/api/v1/namespaces/team-a/configmaps/shop-config';

function setup(script: ContextScript<typeof Status>, options: { spec?: Partial<RefSpec>; renderSkip?: boolean; related?: Related } = {}) {
  const operator = new ContextOperator<typeof Status>(new App(), { status: Status, related: options.related, renderSkip: options.renderSkip }, script);
  const relatedObjects: KubeResource[] = [];
  const relatedReads = new RelatedReads();
  let renders = 0;
  const skipped: string[] = [];
  const harness = reconcilerHarness({
    operator,
    render: (cr, inputs) => {
      renders++;
      return renderCustomResource(operator, cr as unknown as CustomResource, { ...inputs, relatedReads });
    },
    related: { get: (...args) => relatedLookupOf(relatedObjects).get(...args), select: (...args) => relatedLookupOf(relatedObjects).select(...args) },
    relatedReads,
    statusFields: Object.keys(Status.shape),
    childKinds: CHILD_KINDS,
    crs: [{ ...CR, spec: { ...options.spec } }],
    metrics: { applySkipped: () => {}, childrenPruned: () => {}, renderSkipped: () => skipped.push('skipped') },
  });
  /** The CR in the cache, edited as the API server would store `change` (a new resourceVersion; generation + 1 for a spec change). */
  const editCr = (change: (cr: KubeObject & { spec?: any; status?: any }) => KubeObject) => {
    const cr = harness.crs.get('team-a', 'shop')!;
    const next = change(structuredClone(cr));
    harness.crs.put({ ...next, metadata: { ...next.metadata, resourceVersion: `${Number(cr.metadata?.resourceVersion ?? 0) + 1000}` } });
  };
  /** The child in the cache, changed as another writer would (a new resourceVersion). */
  const editChild = (change: (child: KubeObject & { data?: any; status?: any }) => KubeObject) => {
    const cache = harness.cache('configmaps');
    const child = cache.get('team-a', 'shop-config')!;
    const next = change(structuredClone(child));
    cache.put({ ...next, metadata: { ...next.metadata, resourceVersion: `${child.metadata?.resourceVersion}-1` } });
  };
  return { ...harness, operator, relatedObjects, relatedReads, editCr, editChild, skipped, renders: () => renders };
}

/** A ConfigMap child whose data is the CR's replicas: reads only the CR's spec. */
const specOnly: ContextScript<typeof Status> = (cr, scope) => {
  new ApiObject(scope, 'config', { apiVersion: 'v1', kind: 'ConfigMap', data: { replicas: String(cr.spec.replicas) } });
};

/** Converges: reconcile, then the caches show what was written; twice, so the status and children settle. */
async function converge(h: ReturnType<typeof setup>): Promise<void> {
  await h.reconcile('team-a/shop');
  h.sync();
  await h.reconcile('team-a/shop');
  h.sync();
}

describe('render skip: what it saves and what it still does', () => {
  test('GIVEN a converged CR WHEN only a child\'s status changes THEN render is not called, nothing is applied, and the skip is counted', async () => {
    const h = setup(specOnly);
    await converge(h);
    const renders = h.renders();
    expect(renders).toBe(1); // the second reconcile of converge() already reused the first render (its status write changed only the CR's status)
    h.editChild((child) => ({ ...child, status: { observed: 'moved' } }));
    const n = h.client.calls.length;
    await h.reconcile('team-a/shop');
    expect(h.renders()).toBe(renders);
    expect(h.applies(n)).toEqual([]);
    expect(h.skipped.length).toBe(2);
    expect(h.reconciler.rememberedRenders).toBe(1);
  });

  test('GIVEN a skipped render WHEN a child drifted THEN the remembered children are applied again (the drift is repaired)', async () => {
    const h = setup(specOnly, { spec: { replicas: 2 } });
    await converge(h);
    const renders = h.renders();
    h.editChild((child) => ({ ...child, data: { replicas: '9' } }));
    const n = h.client.calls.length;
    await h.reconcile('team-a/shop');
    expect(h.renders()).toBe(renders);
    expect(h.applies(n)).toEqual([CHILD]);
    const apply = h.client.calls.slice(n).find((c) => c.path === CHILD)!;
    expect(apply.body.data).toEqual({ replicas: '2' });
  });

  test('GIVEN a converged CR WHEN its spec changes THEN render runs and the new child is applied', async () => {
    const h = setup(specOnly);
    await converge(h);
    const renders = h.renders();
    h.editCr((cr) => ({ ...cr, spec: { replicas: 3 }, metadata: { ...cr.metadata, generation: 2 } }));
    const n = h.client.calls.length;
    await h.reconcile('team-a/shop');
    expect(h.renders()).toBe(renders + 1);
    expect(h.client.calls.slice(n).find((c) => c.path === CHILD)!.body.data).toEqual({ replicas: '3' });
  });

  test('GIVEN a converged CR WHEN a label or annotation of the CR changes THEN render runs (render may read its metadata)', async () => {
    const h = setup(specOnly);
    await converge(h);
    const renders = h.renders();
    h.editCr((cr) => ({ ...cr, metadata: { ...cr.metadata, labels: { tier: 'gold' } } }));
    await h.reconcile('team-a/shop');
    expect(h.renders()).toBe(renders + 1);
    h.sync();
    h.editCr((cr) => ({ ...cr, metadata: { ...cr.metadata, annotations: { note: 'x' } } }));
    await h.reconcile('team-a/shop');
    expect(h.renders()).toBe(renders + 2);
  });

  test('GIVEN renderSkip: false THEN every reconcile renders', async () => {
    const h = setup(specOnly, { renderSkip: false });
    await converge(h);
    h.editChild((child) => ({ ...child, status: { observed: 'moved' } }));
    await h.reconcile('team-a/shop');
    expect(h.renders()).toBe(3);
    expect(h.skipped).toEqual([]);
    expect(h.reconciler.rememberedRenders).toBe(0);
  });

  test('GIVEN render returned a requeueAfter THEN it is never skipped', async () => {
    const h = setup((cr, scope) => {
      new ApiObject(scope, 'config', { apiVersion: 'v1', kind: 'ConfigMap', data: { replicas: String(cr.spec.replicas) } });
      return { requeueAfter: Duration.minutes(5) };
    });
    await converge(h);
    await h.reconcile('team-a/shop');
    expect(h.renders()).toBe(3);
    expect(h.reconciler.rememberedRenders).toBe(0);
  });
});

describe('render skip: inputs render read', () => {
  /** Copies the referenced ConfigMap's data: reads only `data` of the related object. */
  const copiesData: ContextScript<typeof Status> = (_cr, scope, context) => {
    new ApiObject(scope, 'config', { apiVersion: 'v1', kind: 'ConfigMap', data: { ...context.related.config[0]?.data } });
  };

  test('GIVEN render reads data of a related ConfigMap WHEN only its labels change THEN render is skipped; WHEN its data changes THEN render runs', async () => {
    const h = setup(copiesData, { related, spec: { configMapRef: { name: 'settings' } } });
    h.relatedObjects.push(configMap('settings', 'team-a', { greeting: 'hello' }));
    await converge(h);
    const renders = h.renders();
    expect([...h.relatedReads.fieldsRead('config')!]).toEqual(['data']);
    h.relatedObjects[0] = { ...configMap('settings', 'team-a', { greeting: 'hello' }, { team: 'a' }), metadata: { ...configMap('settings').metadata, labels: { team: 'a' }, resourceVersion: '2' } };
    await h.reconcile('team-a/shop');
    expect(h.renders()).toBe(renders);
    h.relatedObjects[0] = { ...configMap('settings', 'team-a', { greeting: 'bye' }), metadata: { ...configMap('settings').metadata, resourceVersion: '3' } };
    const n = h.client.calls.length;
    await h.reconcile('team-a/shop');
    expect(h.renders()).toBe(renders + 1);
    expect(h.client.calls.slice(n).find((c) => c.path === CHILD)!.body.data).toEqual({ greeting: 'bye' });
  });

  test('GIVEN render reads the labels of a related ConfigMap WHEN its labels change THEN render runs', async () => {
    const h = setup(
      (_cr, scope, context) => {
        new ApiObject(scope, 'config', { apiVersion: 'v1', kind: 'ConfigMap', data: { team: context.related.config[0]?.metadata.labels?.team ?? '' } });
      },
      { related, spec: { configMapRef: { name: 'settings' } } },
    );
    h.relatedObjects.push(configMap('settings', 'team-a', {}, { team: 'a' }));
    await converge(h);
    const renders = h.renders();
    h.relatedObjects[0] = configMap('settings', 'team-a', {}, { team: 'b' });
    await h.reconcile('team-a/shop');
    expect(h.renders()).toBe(renders + 1);
  });

  test('GIVEN an optional related object WHEN it appears or goes THEN render runs', async () => {
    const optional: Related = { config: { ...related.config, optional: true } };
    const h = setup(copiesData, { related: optional, spec: { configMapRef: { name: 'settings' } } });
    await converge(h);
    const renders = h.renders();
    h.relatedObjects.push(configMap('settings', 'team-a', { greeting: 'hello' }));
    await h.reconcile('team-a/shop');
    expect(h.renders()).toBe(renders + 1);
    h.sync();
    h.relatedObjects.pop();
    await h.reconcile('team-a/shop');
    expect(h.renders()).toBe(renders + 2);
  });

  test('GIVEN render reads the observed children WHEN a child\'s status changes THEN render runs', async () => {
    const h = setup((_cr, scope, context) => {
      const existing = context.observed.get({ apiVersion: 'v1', kind: 'ConfigMap' }, 'shop-config');
      new ApiObject(scope, 'config', { apiVersion: 'v1', kind: 'ConfigMap', data: { seen: String(existing !== undefined) } });
    });
    await converge(h);
    await h.reconcile('team-a/shop');
    const renders = h.renders();
    await h.reconcile('team-a/shop');
    expect(h.renders()).toBe(renders); // nothing changed: skipped
    h.editChild((child) => ({ ...child, status: { observed: 'moved' } }));
    await h.reconcile('team-a/shop');
    expect(h.renders()).toBe(renders + 1);
  });

  test('GIVEN render reads the CR\'s status WHEN the status changes THEN render runs; a render that does not read it is skipped (first test)', async () => {
    const h = setup((cr, scope) => {
      new ApiObject(scope, 'config', { apiVersion: 'v1', kind: 'ConfigMap', data: { nodes: String((cr.status as { nodes?: string[] } | undefined)?.nodes?.length ?? 0) } });
    });
    await h.reconcile('team-a/shop');
    h.sync();
    const renders = h.renders();
    await h.reconcile('team-a/shop'); // the status write of the first reconcile changed the CR's status
    expect(h.renders()).toBe(renders + 1);
    h.sync();
    await h.reconcile('team-a/shop'); // the status is as the last render saw it
    expect(h.renders()).toBe(renders + 1);
    h.editCr((cr) => ({ ...cr, status: { ...cr.status, nodes: ['a'] } }));
    await h.reconcile('team-a/shop');
    expect(h.renders()).toBe(renders + 2);
  });
});

describe('render skip: a render function that returns bare children', () => {
  test('GIVEN a render function whose reads are unknown WHEN a child\'s status changes THEN render runs; WHEN nothing changed THEN it is skipped', async () => {
    let renders = 0;
    const child = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'shop-config', namespace: 'team-a', labels: { 'app.kubernetes.io/managed-by': 'ref-operator', 'operator.cdk8s.io/owner-uid': REF_UID } }, data: { a: '1' } };
    const h = reconcilerHarness({
      operator: { operatorName: 'ref-operator', crd: { apiVersion: 'demo.example.com/v1', group: 'demo.example.com', version: 'v1', kind: 'Ref', plural: 'refs', namespaced: true } },
      render: () => (renders++, [structuredClone(child)]),
      childKinds: CHILD_KINDS,
      crs: [{ ...CR, spec: {} }],
    });
    await h.reconcile('team-a/shop');
    h.sync();
    await h.reconcile('team-a/shop');
    h.sync();
    await h.reconcile('team-a/shop');
    const before = renders;
    await h.reconcile('team-a/shop');
    expect(renders).toBe(before);
    const cache = h.cache('configmaps');
    const stored = cache.get('team-a', 'shop-config')!;
    cache.put({ ...stored, status: { moved: true }, metadata: { ...stored.metadata, resourceVersion: 'rv-moved' } });
    await h.reconcile('team-a/shop');
    expect(renders).toBe(before + 1);
  });
});

describe('render skip: failures and forgetting', () => {
  test('GIVEN a skipped render whose apply fails THEN the retry renders again, and the one after it is skipped', async () => {
    const h = setup(specOnly);
    await converge(h);
    const renders = h.renders();
    h.editChild((child) => ({ ...child, data: { replicas: 'drifted' } }));
    h.client.fail = (call) => (call.path === CHILD ? new Error('apply rejected') : undefined);
    await expect(h.reconcile('team-a/shop')).rejects.toThrow('apply rejected');
    expect(h.renders()).toBe(renders); // skipped, then failed
    h.client.fail = () => undefined;
    await h.reconcile('team-a/shop');
    expect(h.renders()).toBe(renders + 1); // never skipped right after a failure
    h.sync();
    await h.reconcile('team-a/shop');
    expect(h.renders()).toBe(renders + 1);
  });

  test('GIVEN render fails THEN the failed render is not remembered: the retry with the same inputs renders again', async () => {
    const h = setup((cr, scope) => {
      if (cr.spec.replicas === 3) throw new Error('three is not allowed');
      new ApiObject(scope, 'config', { apiVersion: 'v1', kind: 'ConfigMap', data: { replicas: String(cr.spec.replicas) } });
    });
    await converge(h);
    h.editCr((cr) => ({ ...cr, spec: { replicas: 3 }, metadata: { ...cr.metadata, generation: 2 } }));
    const renders = h.renders();
    await expect(h.reconcile('team-a/shop')).rejects.toThrow('three is not allowed');
    h.sync();
    await expect(h.reconcile('team-a/shop')).rejects.toThrow('three is not allowed');
    expect(h.renders()).toBe(renders + 2);
    expect(h.reconciler.rememberedRenders).toBe(0);
  });

  test('GIVEN a remembered render WHEN the CR is deleted THEN it is forgotten; a CR created again under the name (new uid) renders', async () => {
    const h = setup(specOnly);
    await converge(h);
    expect(h.reconciler.rememberedRenders).toBe(1);
    const cr = h.crs.get('team-a', 'shop')!;
    h.crs.delete(cr);
    h.reconciler.forget(cr);
    expect(h.reconciler.rememberedRenders).toBe(0);

    h.cache('configmaps').delete(h.cache('configmaps').get('team-a', 'shop-config')!); // the garbage collector's work
    h.crs.put({ ...cr, metadata: { ...cr.metadata, uid: 'other-uid' } });
    await converge(h);
    const renders = h.renders();
    expect(h.reconciler.rememberedRenders).toBe(1);
    h.cache('configmaps').delete(h.cache('configmaps').get('team-a', 'shop-config')!);
    h.crs.put({ ...cr, metadata: { ...cr.metadata, uid: 'third-uid' } }); // deleted and created again between two events
    await h.reconcile('team-a/shop');
    expect(h.renders()).toBe(renders + 1);
  });

  test('GIVEN a remembered render WHEN a reconcile finds the CR gone from the cache THEN it is forgotten', async () => {
    const h = setup(specOnly);
    await converge(h);
    h.crs.delete(h.crs.get('team-a', 'shop')!);
    await h.reconcile('team-a/shop');
    expect(h.reconciler.rememberedRenders).toBe(0);
  });
});

describe('RenderMemo: bounded', () => {
  const output = (): RenderOutput => ({ children: [], waitsFor: new Map(), readyWhen: new Map(), references: [], inputsRead: { observed: false, status: false } });
  const cr = (name: string): KubeObject => ({ apiVersion: 'demo.example.com/v1', kind: 'Ref', metadata: { name, namespace: 'ns', uid: `uid-${name}` } });

  test('GIVEN more CRs than the bound THEN at most that many are kept, the least recently reconciled going first', () => {
    const bound = 8;
    const memo = new RenderMemo({ maxEntries: bound });
    const none = () => [];
    for (let i = 0; i <= bound; i++) {
      const o = output();
      memo.remember(`ns/cr-${i}`, memo.fingerprint(cr(`cr-${i}`), o, none), { output: o, desired: [] });
      if (i === 0) expect(memo.reuse('ns/cr-0', cr('cr-0'), none)).toBeDefined();
      if (i === bound - 1) expect(memo.reuse('ns/cr-0', cr('cr-0'), none)).toBeDefined(); // now the most recent
    }
    expect(memo.size).toBe(bound);
    expect(memo.reuse('ns/cr-0', cr('cr-0'), none)).toBeDefined();
    expect(memo.reuse('ns/cr-1', cr('cr-1'), none)).toBeUndefined();
  });

  test('GIVEN the default bound WHEN 5000 CRs were reconciled one after the other THEN the first still finds its render (N = 5000 in bench:peers)', () => {
    expect(MAX_RENDER_MEMO_ENTRIES).toBeGreaterThanOrEqual(5000);
    const memo = new RenderMemo();
    const none = () => [];
    for (let i = 0; i < 5000; i++) {
      const o = output();
      memo.remember(`ns/cr-${i}`, memo.fingerprint(cr(`cr-${i}`), o, none), { output: o, desired: [] });
    }
    expect(memo.size).toBe(5000);
    expect(memo.reuse('ns/cr-0', cr('cr-0'), none)).toBeDefined();
  });

  test('GIVEN a remembered render WHEN it is looked up with a changed CR THEN it is not reused, and dropped', () => {
    const memo = new RenderMemo({ maxEntries: 2 });
    const o = output();
    memo.remember('ns/a', memo.fingerprint(cr('a'), o, () => []), { output: o, desired: [] });
    expect(memo.reuse('ns/a', { ...cr('a'), spec: { x: 1 } }, () => [])).toBeUndefined();
    expect(memo.size).toBe(0);
  });
});
