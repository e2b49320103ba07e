import { progressTable } from '../../lib/cli/dev-command.js';

test('GIVEN samples THEN the table has CR, READY, CHILDREN (ready/total) and TIME TO READY, aligned', () => {
  const table = progressTable([
    { cr: 'Memcached default/memcached-sample', path: '/x', appliedAtMs: 0, ready: true, detail: '', children: { ready: 2, total: 2 }, timeToReadyMs: 1234 },
    { cr: 'Database default/orders', path: '/y', appliedAtMs: 0, ready: false, detail: '', children: { ready: 4, total: 6 } },
  ]);
  expect(table).toBe(
    [
      'CR                                   READY   CHILDREN   TIME TO READY',
      'Memcached default/memcached-sample   True    2/2        1.2s',
      'Database default/orders              False   4/6        -',
      '',
    ].join('\n'),
  );
});
