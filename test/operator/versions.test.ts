import { App } from 'cdk8s';
import type { Construct } from 'constructs';
import { z } from 'zod';
import { OperatorConfigError } from '../../lib/operator/errors.js';
import { Operator } from '../../lib/operator/operator.js';
import { merge3 } from '../../lib/operator/versions/conversion.js';
import { spokeVersion, type SpokeVersion } from '../../lib/operator/versions/versions.js';

const Hub = z.object({ replicas: z.int() });
const Old = z.object({ size: z.int() });
const old = (extra: Partial<SpokeVersion> = {}): SpokeVersion => ({
  ...spokeVersion({ hubSpec: Hub, name: 'v1alpha1', spec: Old, toHub: (o) => ({ spec: { replicas: o.spec.size } }), fromHub: (h) => ({ spec: { size: h.spec.replicas } }) }),
  ...extra,
});

class Versioned extends Operator<typeof Hub> {
  constructor(scope: Construct, versions: SpokeVersion[]) {
    super(scope, 'v', { group: 'demo.example.com', version: 'v1', kind: 'Thing', spec: Hub, versions });
  }
  render(): void {}
}

describe('versions', () => {
  test.each([
    [[old(), old()], /versions\[1\]\.name "v1alpha1" is declared twice/],
    [[old({ name: 'v1' })], /versions\[0\]\.name "v1" is declared twice \(the hub is "v1"\)/],
    [[old({ storage: true }), old({ name: 'v1beta1', storage: true })], /v1alpha1 and v1beta1 are both marked storage/],
    [[old({ hubSpec: z.object({ replicas: z.int() }) })], /versions\[0\]\.hubSpec must be the operator's own spec schema/],
    [[old({ deprecationWarning: 'x' })], /versions\[0\]\.deprecationWarning needs deprecated: true/],
    [[old({ name: 'Version1' })], /versions\[0\]\.name "Version1"/],
  ])('GIVEN inconsistent versions WHEN the operator is built THEN an OperatorConfigError names the field (%#)', (versions, message) => {
    expect(() => new Versioned(new App(), versions)).toThrow(OperatorConfigError);
    expect(() => new Versioned(new App(), versions)).toThrow(message);
  });

  test('GIVEN a spoke marked storage WHEN synthesized THEN it is the one stored version and the hub is served but not stored', () => {
    const crd = new Versioned(new App(), [old({ storage: true })]).customResourceDefinition.toJson() as { spec: { versions: { name: string; storage: boolean; served: boolean }[] } };
    expect(crd.spec.versions.map((v) => [v.name, v.served, v.storage])).toEqual([['v1', true, false], ['v1alpha1', true, true]]);
  });

  test('GIVEN a restored, a base and a next value WHEN merged THEN what changed from base to next wins and the rest is restored', () => {
    expect(merge3({ a: 1, b: { c: 2, d: 3 } }, { a: 1, b: { c: 0, d: 0 } }, { a: 5, b: { c: 0, d: 0 } })).toEqual({ a: 5, b: { c: 2, d: 3 } });
    expect(merge3({ a: 1, keep: true }, { a: 1, gone: 1 }, { a: 1 })).toEqual({ a: 1, keep: true });
    expect(merge3({ list: [1, 2] }, { list: [1] }, { list: [3] })).toEqual({ list: [3] });
  });
});
