/**
 * related.ts: how a CR's references to related objects are resolved from a declaration (a field path or
 * a function), and how label selectors match.
 */
import { UnknownKindError } from '../../lib/operator/errors.js';
import {
  ReferenceProblem,
  describeReference,
  resolveReferences,
  resolveRelatedKinds,
  selectorMatches,
  type RelatedDeclaration,
  type ResolvedReference,
} from '../../lib/operator/render/related.js';
import type { CustomResource } from '../../lib/operator/custom-resource.js';

type Declarations = Record<string, RelatedDeclaration<never>>;

/** `namespace: null` gives a cluster-scoped CR. */
function cr(spec: unknown, namespace: string | null = 'team-a'): CustomResource {
  return { apiVersion: 'demo.example.com/v1', kind: 'Ref', metadata: { name: 'shop', ...(namespace ? { namespace } : {}), uid: 'u-1' }, spec };
}

function resolve(declarations: Declarations, resource: CustomResource): ResolvedReference[] {
  return resolveReferences(declarations, resolveRelatedKinds(declarations), resource);
}

function problem(fn: () => unknown): ReferenceProblem {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ReferenceProblem);
    return e as ReferenceProblem;
  }
  throw new Error('expected a ReferenceProblem');
}

const byPath = (references: string, extra: Partial<RelatedDeclaration<never>> = {}): Declarations => ({
  config: { apiVersion: 'v1', kind: 'ConfigMap', references, ...extra } as RelatedDeclaration<never>,
});
const byFunction = (kind: { apiVersion: string; kind: string; plural?: string; namespaced?: boolean }, fn: (cr: CustomResource) => unknown, extra: Partial<RelatedDeclaration<never>> = {}): Declarations => ({
  target: { ...kind, references: fn as never, ...extra } as RelatedDeclaration<never>,
});

describe('resolveReferences with a field path', () => {
  test('GIVEN the path holds a name WHEN resolved THEN one name reference in the CR namespace, required, sourced from the path', () => {
    const [ref, ...rest] = resolve(byPath('spec.configMapRef.name'), cr({ configMapRef: { name: 'settings' } }));
    expect(rest).toEqual([]);
    expect(ref).toEqual({
      related: 'config',
      kind: expect.objectContaining({ group: '', kind: 'ConfigMap', plural: 'configmaps', namespaced: true }),
      namespace: 'team-a',
      name: 'settings',
      optional: false,
      source: 'spec.configMapRef.name',
    });
  });

  test('GIVEN optional: true WHEN resolved THEN the reference is optional', () => {
    const [ref] = resolve(byPath('spec.configMapRef.name', { optional: true }), cr({ configMapRef: { name: 'settings' } }));
    expect(ref.optional).toBe(true);
  });

  test.each([
    ['the leaf is missing', { configMapRef: {} }],
    ['an intermediate object is missing', {}],
    ['the leaf is null', { configMapRef: { name: null } }],
    ['an intermediate value is a string', { configMapRef: 'settings' }],
    ['the spec is absent', undefined],
  ])('GIVEN %s WHEN resolved THEN there is no reference (and no error)', (_what, spec) => {
    expect(resolve(byPath('spec.configMapRef.name'), cr(spec))).toEqual([]);
  });

  test.each([
    ['a number', 5, '5'],
    ['an empty string', '', '""'],
    ['an object', { n: 'x' }, '{"n":"x"}'],
    ['a boolean', true, 'true'],
  ])('GIVEN the path holds %s WHEN resolved THEN a ReferenceProblem names the path and the value', (_what, value, shown) => {
    const error = problem(() => resolve(byPath('spec.configMapRef.name'), cr({ configMapRef: { name: value } })));
    expect(error.path).toBe('spec.configMapRef.name');
    expect(error.message).toBe(`spec.configMapRef.name: must name a ConfigMap (a non-empty string), got ${shown}`);
  });

  test('GIVEN a cluster-scoped CR and a path reference to a namespaced kind WHEN resolved THEN a ReferenceProblem says a namespace is needed', () => {
    const error = problem(() => resolve(byPath('spec.configMapRef.name'), cr({ configMapRef: { name: 'settings' } }, null)));
    expect(error.path).toBe('spec.configMapRef.name');
    expect(error.message).toContain('namespaced ConfigMap from a cluster-scoped custom resource must give a namespace');
  });

  test('GIVEN a path reference to a cluster-scoped kind WHEN resolved THEN the reference has no namespace', () => {
    const declarations: Declarations = { ns: { apiVersion: 'v1', kind: 'Namespace', references: 'spec.target' } as RelatedDeclaration<never> };
    const [ref] = resolve(declarations, cr({ target: 'prod' }));
    expect(ref).toMatchObject({ name: 'prod', namespace: undefined, kind: expect.objectContaining({ namespaced: false }) });
  });
});

describe('resolveReferences with a function', () => {
  const configMapKind = { apiVersion: 'v1', kind: 'ConfigMap' };

  test('GIVEN names with and without a namespace WHEN resolved THEN a missing namespace defaults to the CR namespace, in returned order', () => {
    const refs = resolve(byFunction(configMapKind, () => [{ name: 'a' }, { name: 'b', namespace: 'shared' }]), cr({}));
    expect(refs.map((r) => [r.name, r.namespace, r.source, r.optional])).toEqual([
      ['a', 'team-a', 'related.target[0]', false],
      ['b', 'shared', 'related.target[1]', false],
    ]);
  });

  test('GIVEN a selector WHEN resolved THEN it is a selector reference (always optional) with a copy of the selector', () => {
    const selector = { app: 'shop' };
    const [ref] = resolve(byFunction({ apiVersion: 'v1', kind: 'Pod' }, () => [{ selector }]), cr({}));
    expect(ref).toMatchObject({ related: 'target', namespace: 'team-a', selector: { app: 'shop' }, optional: true, source: 'related.target[0]' });
    expect(ref.name).toBeUndefined();
    expect(ref.selector).not.toBe(selector);
  });

  test('GIVEN the function reads the CR WHEN resolved THEN it is called with the CR', () => {
    const seen: unknown[] = [];
    const refs = resolve(
      byFunction({ apiVersion: 'v1', kind: 'Pod' }, (c) => {
        seen.push(c.metadata.name);
        return [{ selector: { app: c.metadata.name } }];
      }),
      cr({}),
    );
    expect(seen).toEqual(['shop']);
    expect(refs[0].selector).toEqual({ app: 'shop' });
  });

  test('GIVEN the function returns an empty array WHEN resolved THEN there is no reference', () => {
    expect(resolve(byFunction(configMapKind, () => []), cr({}))).toEqual([]);
  });

  test.each([
    ['not an array', () => ({ name: 'a' }), 'related.target', 'must return an array'],
    ['undefined', () => undefined, 'related.target', 'got undefined'],
    ['an entry without name or selector', () => [{ name: 'a' }, { namespace: 'x' }], 'related.target[1]', 'must be { name } or { selector }, got {"namespace":"x"}'],
    ['an empty name', () => [{ name: '' }], 'related.target[0]', 'must be { name } or { selector }'],
    ['a null entry', () => [null], 'related.target[0]', 'must be { name } or { selector }, got null'],
    ['a string entry', () => ['settings'], 'related.target[0]', 'must be { name } or { selector }, got "settings"'],
    ['a null selector', () => [{ selector: null }], 'related.target[0]', 'selector must be an object'],
    ['a selector value that is not a string', () => [{ selector: { app: 1 } }], 'related.target[0].selector.app', 'must be a string, got 1'],
  ])('GIVEN the function returns %s WHEN resolved THEN a ReferenceProblem names %s', (_what, fn, path, detail) => {
    const error = problem(() => resolve(byFunction(configMapKind, fn), cr({})));
    expect(error.path).toBe(path);
    expect(error.message.startsWith(`${path}: `)).toBe(true);
    expect(error.message).toContain(detail);
  });

  test('GIVEN a cluster-scoped CR WHEN a namespaced kind is referenced without a namespace THEN ReferenceProblem; with one THEN it is kept', () => {
    const without = problem(() => resolve(byFunction(configMapKind, () => [{ name: 'a' }]), cr({}, null)));
    expect(without.path).toBe('related.target[0]');
    expect(without.message).toContain('must give a namespace');
    const [ref] = resolve(byFunction(configMapKind, () => [{ name: 'a', namespace: 'shared' }]), cr({}, null));
    expect(ref.namespace).toBe('shared');
  });

  test('GIVEN a cluster-scoped CR WHEN a selector of a namespaced kind has no namespace THEN ReferenceProblem too', () => {
    const error = problem(() => resolve(byFunction({ apiVersion: 'v1', kind: 'Pod' }, () => [{ selector: { a: 'b' } }]), cr({}, null)));
    expect(error.path).toBe('related.target[0]');
  });

  test('GIVEN a cluster-scoped kind WHEN a reference gives a namespace THEN ReferenceProblem; without THEN no namespace, also from a namespaced CR', () => {
    const nodeKind = { apiVersion: 'v1', kind: 'Node' };
    const error = problem(() => resolve(byFunction(nodeKind, () => [{ name: 'n1', namespace: 'team-a' }]), cr({})));
    expect(error.message).toBe('related.target[0]: Node is cluster-scoped; a reference to it has no namespace');
    const refs = resolve(byFunction(nodeKind, () => [{ name: 'n1' }, { selector: { zone: 'a' } }]), cr({}));
    expect(refs.map((r) => r.namespace)).toEqual([undefined, undefined]);
  });

  test('GIVEN a kind outside the built-in table WHEN declared with plural and namespaced THEN it resolves; without THEN UnknownKindError', () => {
    const custom = { apiVersion: 'db.example.com/v1', kind: 'Database', plural: 'databases', namespaced: true };
    const [ref] = resolve(byFunction(custom, () => [{ name: 'main' }]), cr({}));
    expect(ref.kind).toMatchObject({ group: 'db.example.com', plural: 'databases' });
    expect(() => resolveRelatedKinds(byFunction({ apiVersion: 'db.example.com/v1', kind: 'Database' }, () => []))).toThrow(UnknownKindError);
  });
});

describe('resolveReferences with several declarations', () => {
  test('GIVEN a path and a function declaration WHEN resolved THEN references come in declaration order, each tagged with its key', () => {
    const declarations: Declarations = {
      pods: { apiVersion: 'v1', kind: 'Pod', references: ((c: CustomResource) => [{ selector: { app: c.metadata.name } }]) as never },
      config: { apiVersion: 'v1', kind: 'ConfigMap', references: 'spec.configMapRef.name', optional: true } as RelatedDeclaration<never>,
      secret: { apiVersion: 'v1', kind: 'Secret', references: 'spec.secretName' } as RelatedDeclaration<never>,
    };
    const refs = resolve(declarations, cr({ configMapRef: { name: 'settings' }, secretName: 'creds' }));
    expect(refs.map((r) => `${r.related}:${describeReference(r)}`)).toEqual(['pods:Pod team-a/{app=shop}', 'config:ConfigMap team-a/settings', 'secret:Secret team-a/creds']);
  });
});

describe('describeReference', () => {
  test('GIVEN references by name and selector, namespaced or not WHEN described THEN Kind namespace/name or Kind {k=v,…}', () => {
    const kind = (k: string) => ({ apiVersion: 'v1', group: '', version: 'v1', kind: k, plural: `${k.toLowerCase()}s`, namespaced: k !== 'Node' });
    expect(describeReference({ related: 'x', kind: kind('ConfigMap'), namespace: 'a', name: 'b', optional: false, source: 's' })).toBe('ConfigMap a/b');
    expect(describeReference({ related: 'x', kind: kind('Node'), name: 'n1', optional: false, source: 's' })).toBe('Node n1');
    expect(describeReference({ related: 'x', kind: kind('Pod'), namespace: 'a', selector: { app: 'web', tier: 'db' }, optional: true, source: 's' })).toBe('Pod a/{app=web,tier=db}');
  });
});

describe('selectorMatches', () => {
  test('GIVEN an empty selector THEN it matches any labels, also none', () => {
    expect(selectorMatches({}, undefined)).toBe(true);
    expect(selectorMatches({}, { a: 'b' })).toBe(true);
  });

  test('GIVEN a selector THEN it matches labels that include all its pairs, and nothing else', () => {
    const selector = { app: 'web', tier: 'front' };
    expect(selectorMatches(selector, { app: 'web', tier: 'front', extra: 'x' })).toBe(true);
    expect(selectorMatches(selector, { app: 'web' })).toBe(false);
    expect(selectorMatches(selector, { app: 'web', tier: 'back' })).toBe(false);
    expect(selectorMatches(selector, undefined)).toBe(false);
    expect(selectorMatches({ app: '' }, { app: '' })).toBe(true);
    expect(selectorMatches({ app: '' }, {})).toBe(false);
  });
});
