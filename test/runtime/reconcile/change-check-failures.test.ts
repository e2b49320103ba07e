import { ChangeCheckFailures } from '../../../lib/runtime/reconcile/change-check-failures.js';

describe('ChangeCheckFailures: what a CR must tell of the operator\'s code failing on a related object', () => {
  const CR = 'ns/a';
  const CM = 'ConfigMap ns/settings';

  test('GIVEN a changeMatters failure and a transform failure of one related object THEN the CR tells both, the first reason leading; each clears on its own', () => {
    const failures = new ChangeCheckFailures();
    failures.failed(CR, CM, new Error('check broke'));
    failures.failed(CR, CM, 'cannot slim', 'CacheTransformFailed');
    expect(failures.of(CR)).toEqual({
      reason: 'ChangeMattersFailed',
      message: `related ${CM}: changeMatters threw: check broke; every change of it reconciles this CR until the operator is fixed; `
        + `related ${CM}: the cache transform threw: cannot slim; it is cached untransformed until the operator is fixed`,
    });
    expect(failures.succeeded(CR, CM)).toBe(true);
    expect(failures.of(CR)?.reason).toBe('CacheTransformFailed');
    expect(failures.succeeded(CR, CM)).toBe(false);
    expect(failures.succeeded(CR, CM, 'CacheTransformFailed')).toBe(true);
    expect(failures.of(CR)).toBeUndefined();
    expect(failures.size).toBe(0);
  });

  test('GIVEN failures of several CRs WHEN one CR stops referencing the object THEN only its entries go; WHEN the object is deleted THEN all go', () => {
    const failures = new ChangeCheckFailures();
    failures.failed(CR, CM, 'x', 'CacheTransformFailed');
    failures.failed('ns/b', CM, new Error('y'));
    failures.failed('ns/b', CM, 'x', 'CacheTransformFailed');
    failures.forgetRelated(CM, CR);
    expect(failures.of(CR)).toBeUndefined();
    expect(failures.of('ns/b')?.message).toContain('changeMatters threw: y');
    failures.forgetRelated(CM);
    expect(failures.size).toBe(0);
  });
});
