/**
 * The operator's status() hook (status-step.ts, custom-status.ts) in the reconciler, with a real render
 * (renderCustomResource), in-memory caches and the recording fake client: called on every reconcile,
 * also when render was skipped; what it reads does not undo a skip; merged over render's status; a
 * failure told like a failed render after the children are applied. Against a real API server:
 * test/integration/render-skip.test.ts (memcached's status.nodes).
 */
import { ApiObject, App } from 'cdk8s';
import { z } from 'zod';
import type { Construct } from 'constructs';
import type { CustomResource } from '../../../lib/operator/custom-resource.js';
import { resolveKind } from '../../../lib/operator/kinds.js';
import type { RelatedDeclaration } from '../../../lib/operator/render/related.js';
import { RelatedReads } from '../../../lib/operator/render/related-reads.js';
import { relatedLookupOf, renderCustomResource } from '../../../lib/operator/render/render-children.js';
import { statusOfCustomResource } from '../../../lib/operator/render/custom-status.js';
import type { KubeResource, RenderContext } from '../../../lib/operator/render/render-context.js';
import type { KubeObject } from '../../../lib/runtime/client/kube-client.js';
import { ReconcileError } from '../../../lib/runtime/errors.js';
import { ContextOperator, REF_UID, configMap, type ContextScript, type RefSpec } from '../../operator/fixtures/context-operators.js';
import { reconcilerHarness } from '../../support/reconciler-harness.js';

const CHILD_KINDS = [{ apiVersion: 'v1', kind: 'ConfigMap' }].map((k) => resolveKind(k));
const Status = z.object({ nodes: z.array(z.string()).optional(), source: z.string().optional() });
type StatusScript = (cr: CustomResource<RefSpec>, context: RenderContext) => z.input<typeof Status> | undefined;
const related: Record<string, RelatedDeclaration<CustomResource<RefSpec>>> = { config: { apiVersion: 'v1', kind: 'ConfigMap', references: 'spec.configMapRef.name' } };

const CR = { apiVersion: 'demo.example.com/v1', kind: 'Ref', metadata: { name: 'shop', namespace: 'team-a', uid: REF_UID, generation: 1, resourceVersion: '10' } };
const CHILD = '/api/v1/namespaces/team-a/configmaps/shop-config';

class StatusHookOperator extends ContextOperator<typeof Status> {
  statusCalls = 0;
  constructor(scope: Construct, props: ConstructorParameters<typeof ContextOperator<typeof Status>>[1], script: ContextScript<typeof Status>, private readonly statusScript: StatusScript) {
    super(scope, props, script);
  }

  override status(cr: CustomResource<RefSpec>, context: RenderContext): z.input<typeof Status> | undefined {
    this.statusCalls++;
    return this.statusScript(cr, context);
  }
}

/** A ConfigMap child whose data is the CR's replicas: render reads only the CR's spec. */
const specOnly: ContextScript<typeof Status> = (cr, scope) => {
  new ApiObject(scope, 'config', { apiVersion: 'v1', kind: 'ConfigMap', data: { replicas: String(cr.spec.replicas) } });
};

function setup(statusScript: StatusScript, options: { render?: ContextScript<typeof Status>; spec?: Partial<RefSpec>; crs?: KubeObject[] } = {}) {
  const operator = new StatusHookOperator(new App(), { status: Status, related }, options.render ?? specOnly, statusScript);
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
    status: (cr, inputs) => statusOfCustomResource(operator, cr as unknown as CustomResource, { ...inputs, relatedReads }),
    related: { get: (...args) => relatedLookupOf(relatedObjects).get(...args), select: (...args) => relatedLookupOf(relatedObjects).select(...args) },
    relatedReads,
    statusFields: Object.keys(Status.shape),
    childKinds: CHILD_KINDS,
    crs: options.crs ?? [{ ...CR, spec: { ...options.spec } }],
    metrics: { applySkipped: () => {}, childrenPruned: () => {}, renderSkipped: () => skipped.push('skipped') },
  });
  const editChild = (change: (child: KubeObject & { status?: any }) => KubeObject) => {
    const cache = harness.cache('configmaps');
    const child = cache.get('team-a', 'shop-config')!;
    const next = change(structuredClone(child));
    cache.put({ ...next, metadata: { ...next.metadata, resourceVersion: `${child.metadata?.resourceVersion}-1` } });
  };
  return { ...harness, operator, relatedObjects, relatedReads, editChild, skipped, renders: () => renders };
}

async function converge(h: ReturnType<typeof setup>, key = 'team-a/shop'): Promise<void> {
  await h.reconcile(key);
  h.sync();
  await h.reconcile(key);
  h.sync();
}

/** status.nodes: the observed children's names and their status.phase. */
const fromObserved: StatusScript = (_cr, context) => ({ nodes: context.observed.all().map((c) => `${c.metadata.name}:${c.status?.phase ?? '-'}`) });

describe('status(): every reconcile, apart from render', () => {
  test('GIVEN status() reads the observed children WHEN only a child\'s status changes THEN render is skipped, status() runs and its new fields are written', async () => {
    const h = setup(fromObserved);
    await converge(h);
    expect(h.renders()).toBe(1);
    expect(h.operator.statusCalls).toBe(2);
    expect(h.lastStatus()).toMatchObject({ nodes: ['shop-config:-'] });
    h.editChild((child) => ({ ...child, status: { phase: 'Bound' } }));
    const n = h.client.calls.length;
    await h.reconcile('team-a/shop');
    expect(h.renders()).toBe(1);
    expect(h.skipped.length).toBe(2);
    expect(h.operator.statusCalls).toBe(3);
    expect(h.applies(n)).toEqual([]);
    expect(h.statusWrites(n)).toEqual([expect.objectContaining({ nodes: ['shop-config:Bound'] })]);
  });

  test('GIVEN status() reads a related ConfigMap that render never looks at WHEN it changes THEN render is skipped and status() sees the new object', async () => {
    const h = setup((_cr, context) => ({ source: context.related.config[0]?.data?.greeting ?? 'none' }), { spec: { configMapRef: { name: 'settings' } } });
    h.relatedObjects.push(configMap('settings', 'team-a', { greeting: 'hello' }));
    await converge(h);
    expect(h.lastStatus()).toMatchObject({ source: 'hello' });
    const renders = h.renders();
    h.relatedObjects[0] = { ...configMap('settings', 'team-a', { greeting: 'bye' }), metadata: { ...configMap('settings').metadata, resourceVersion: '3' } };
    await h.reconcile('team-a/shop');
    expect(h.renders()).toBe(renders);
    expect(h.lastStatus()).toMatchObject({ source: 'bye' });
    // status()'s reads decide which related changes reconcile the CR, not whether render runs.
    expect([...h.relatedReads.fieldsRead('config')!]).toEqual(['data']);
    expect([...h.relatedReads.renderFieldsRead('config')!]).toEqual([]);
  });

  test('GIVEN render and status() both return status THEN render\'s fields, then status()\'s (a field both set is status()\'s)', async () => {
    const h = setup(() => ({ source: 'status()' }), {
      render: (cr, scope) => {
        specOnly(cr, scope, undefined as never);
        return { status: { nodes: ['from-render'], source: 'render' } };
      },
    });
    await converge(h);
    expect(h.lastStatus()).toMatchObject({ nodes: ['from-render'], source: 'status()' });
  });

  test('GIVEN status() returns undefined THEN the fields render returned are written as they are', async () => {
    const h = setup(() => undefined, {
      render: (cr, scope) => {
        specOnly(cr, scope, undefined as never);
        return { status: { nodes: ['from-render'] } };
      },
    });
    await converge(h);
    expect(h.lastStatus()).toMatchObject({ nodes: ['from-render'] });
    expect(h.lastStatus()).not.toHaveProperty('source');
  });
});

describe('status(): failures', () => {
  const stalled = (status: any) => status?.conditions?.find((c: { type: string }) => c.type === 'Stalled');

  test('GIVEN status() throws THEN the children are still applied, Stalled=True StatusFailed, a Warning event, and a ReconcileError with step status', async () => {
    const h = setup(() => {
      throw new Error('pods unreadable');
    });
    const error = await h.reconcile('team-a/shop').then(() => undefined, (err: unknown) => err);
    expect(error).toBeInstanceOf(ReconcileError);
    expect(error).toMatchObject({ reason: 'StatusFailed', step: 'status' });
    expect((error as Error).message).toContain('pods unreadable');
    expect(h.applies()).toContain(CHILD);
    expect(stalled(h.lastStatus())).toMatchObject({ status: 'True', reason: 'StatusFailed' });
    expect(h.lastStatus().children).toEqual([expect.objectContaining({ name: 'shop-config' })]);
    const event = h.client.calls.find((c) => c.path.includes('/events'))!;
    expect(event.body).toMatchObject({ type: 'Warning', reason: 'StatusFailed', action: 'Status' });
    expect(event.body.note).toContain('pods unreadable');
  });

  test('GIVEN status() returns what the status schema refuses THEN InvalidStatus naming status.<path>', async () => {
    const h = setup(() => ({ nodes: 'not-a-list' }) as never);
    const error = await h.reconcile('team-a/shop').then(() => undefined, (err: unknown) => err);
    expect(error).toMatchObject({ reason: 'InvalidStatus', step: 'status' });
    expect((error as Error).message).toContain('status.nodes');
    expect(stalled(h.lastStatus())).toMatchObject({ status: 'True', reason: 'InvalidStatus' });
  });

  test('GIVEN status() throws for one CR THEN another CR of the operator still converges', async () => {
    const other = { ...CR, metadata: { ...CR.metadata, name: 'cafe', uid: 'uid-cafe' }, spec: {} };
    const h = setup((cr) => {
      if (cr.metadata.name === 'shop') throw new Error('bad shop');
      return { nodes: [cr.metadata.name] };
    }, { crs: [{ ...CR, spec: {} }, other] });
    await expect(h.reconcile('team-a/shop')).rejects.toMatchObject({ reason: 'StatusFailed' });
    await h.reconcile('team-a/cafe');
    const cafe = h.client.calls.filter((c) => c.path.endsWith('/refs/cafe/status')).at(-1)!.body.status;
    expect(cafe).toMatchObject({ nodes: ['cafe'] });
    expect(stalled(cafe)).toMatchObject({ status: 'False' });
  });
});
