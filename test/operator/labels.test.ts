import { childLabels, INSTANCE_LABEL, MANAGED_BY_LABEL, OWNER_UID_LABEL, toLabelValue } from '../../lib/operator/render/labels.js';

describe('labels', () => {
  test('GIVEN a valid short value WHEN made a label value THEN it is unchanged', () => {
    expect(toLabelValue('shop.eu-1')).toBe('shop.eu-1');
  });

  test('GIVEN a 253-character name WHEN made a label value THEN it is ≤ 63, valid, and stable', () => {
    const long = `a${'b.c-'.repeat(63)}`;
    const value = toLabelValue(long);
    expect(value.length).toBeLessThanOrEqual(63);
    expect(value).toMatch(/^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/);
    expect(toLabelValue(long)).toBe(value);
    expect(toLabelValue(`${long}x`)).not.toBe(value);
  });

  test('GIVEN a CR WHEN child labels are built THEN they name the operator, the instance and the owner uid', () => {
    expect(childLabels('web-operator', { metadata: { name: 'shop', uid: 'u-1' } })).toEqual({
      [MANAGED_BY_LABEL]: 'web-operator',
      [INSTANCE_LABEL]: 'shop',
      [OWNER_UID_LABEL]: 'u-1',
    });
  });
});
