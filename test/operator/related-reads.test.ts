/**
 * RelatedReads: render is handed stand-ins of its related objects that read as the cached objects and
 * record the top-level fields render read, per related declaration (what the runtime's fan-out of
 * related changes is decided from).
 */
import { inspect } from 'node:util';
import { ApiObject, App } from 'cdk8s';
import { RelatedReads } from '../../lib/operator/render/related-reads.js';
import { relatedLookupOf, renderCustomResource } from '../../lib/operator/render/render-children.js';
import type { KubeResource, RenderContext } from '../../lib/operator/render/render-context.js';
import { deepFreeze } from '../../lib/runtime/cache/informer.js';
import { ContextOperator, configMap, pod, refCr } from './fixtures/context-operators.js';

const RELATED = {
  config: { apiVersion: 'v1', kind: 'ConfigMap', references: 'spec.configMapRef.name' },
  pods: { apiVersion: 'v1', kind: 'Pod', references: () => [{ selector: { app: 'web' } }] },
} as const;

/** Renders a Ref referencing ConfigMap `settings` and the `app=web` Pods, running `read` on the context; returns the reads. */
function readsOf(read: (context: RenderContext) => unknown, reads = new RelatedReads()): RelatedReads {
  const operator = new ContextOperator(new App(), { related: RELATED as never }, (_cr, scope, context) => {
    read(context);
    new ApiObject(scope, 'marker', { apiVersion: 'v1', kind: 'ConfigMap' });
  });
  const objects = deepFreeze([configMap('settings', 'team-a', { greeting: 'hi' }, { team: 'a' }), pod('web-0', { app: 'web' })]) as unknown as KubeResource[];
  renderCustomResource(operator, refCr({ configMapRef: { name: 'settings' } }) as never, { related: relatedLookupOf(objects), relatedReads: reads });
  return reads;
}

const fields = (reads: RelatedReads, key: string) => [...(reads.fieldsRead(key) ?? ['<none handed>'])].sort();

describe('RelatedReads', () => {
  test('GIVEN a render that reads only data of its ConfigMap WHEN rendered THEN config records data alone, and pods (handed, not read) nothing', () => {
    const reads = readsOf((context) => context.related.config[0].data);
    expect(fields(reads, 'config')).toEqual(['data']);
    expect(fields(reads, 'pods')).toEqual([]);
  });

  test('GIVEN no render yet WHEN asked THEN nothing is known (undefined: every field may matter)', () => {
    expect(new RelatedReads().fieldsRead('config')).toBeUndefined();
  });

  test('GIVEN a render that reads a Pod name WHEN rendered THEN pods records metadata', () => {
    const reads = readsOf((context) => context.related.pods.map((p) => p.metadata.name));
    expect(fields(reads, 'pods')).toEqual(['metadata']);
  });

  test('GIVEN a render that reads a field the object lacks (binaryData) WHEN rendered THEN that field is recorded, so that a change adding it matters', () => {
    const reads = readsOf((context) => [context.related.config[0].binaryData, 'immutable' in context.related.config[0]]);
    expect(fields(reads, 'config')).toEqual(['binaryData', 'immutable']);
  });

  test.each([
    ['a spread', (o: KubeResource) => ({ ...o })],
    ['JSON.stringify', (o: KubeResource) => JSON.stringify(o)],
    ['structuredClone', (o: KubeResource) => structuredClone(o)],
    ['Object.entries', (o: KubeResource) => Object.entries(o)],
    ['util.inspect (console.log)', (o: KubeResource) => inspect(o)],
  ])('GIVEN a render that copies the object with %s WHEN rendered THEN every field is recorded (conservative)', (_how, copy) => {
    const reads = readsOf((context) => copy(context.related.config[0]));
    // (JSON.stringify also looks up toJSON, which the object lacks: recorded, and harmless.)
    expect(fields(reads, 'config')).toEqual(expect.arrayContaining(['apiVersion', 'data', 'kind', 'metadata']));
  });

  test('GIVEN a stand-in WHEN used as the object THEN it reads as the cached object: equal, same nested values, frozen, cloneable, printed as the object', () => {
    const cached = deepFreeze(configMap('settings', 'team-a', { greeting: 'hi' }, { team: 'a' })) as unknown as KubeResource;
    const standIn = new RelatedReads().track('config', cached);
    expect(standIn).toEqual(cached);
    expect(standIn.data).toBe(cached.data);
    expect(standIn.metadata).toBe(cached.metadata);
    expect(Object.isFrozen(standIn)).toBe(true);
    expect(Object.keys(standIn)).toEqual(Object.keys(cached));
    expect(structuredClone(standIn)).toEqual(cached);
    expect(JSON.parse(JSON.stringify(standIn))).toEqual(cached);
    expect(inspect(standIn)).toBe(inspect(cached));
    expect(() => {
      (standIn as { data: unknown }).data = {};
    }).toThrow(TypeError);
  });

  test('GIVEN two renders WHEN the second reads metadata THEN reads accumulate (data and metadata)', () => {
    const reads = readsOf((context) => context.related.config[0].data);
    readsOf((context) => context.related.config[0].metadata.labels, reads);
    expect(fields(reads, 'config')).toEqual(['data', 'metadata']);
  });

  test('GIVEN no relatedReads in the inputs WHEN rendered THEN render gets the cached objects themselves', () => {
    const cached = deepFreeze(configMap('settings')) as unknown as KubeResource;
    let seen: unknown;
    const operator = new ContextOperator(new App(), { related: RELATED as never }, (_cr, scope, context) => {
      seen = context.related.config[0];
      new ApiObject(scope, 'marker', { apiVersion: 'v1', kind: 'ConfigMap' });
    });
    renderCustomResource(operator, refCr({ configMapRef: { name: 'settings' } }) as never, { related: relatedLookupOf([cached]) });
    expect(seen).toBe(cached);
  });
});
