import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadOperators, OperatorLoadError } from '../../lib/cli/load-operators.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

describe('loadOperators', () => {
  test('GIVEN no module WHEN loading THEN the three example operators, found by name and by apiVersion + kind', async () => {
    const set = await loadOperators();
    expect(set.names()).toEqual(['memcached-operator', 'app-operator', 'database-operator']);
    expect(set.forKind('cache.example.com/v1alpha1', 'Memcached')?.operatorName).toBe('memcached-operator');
    expect(set.forKind('databases.example.com/v1alpha1', 'Database')).toBe(set.get('database-operator'));
    expect(set.forKind('cache.example.com/v1', 'Memcached')).toBeUndefined();
    expect(set.get('nope')).toBeUndefined();
    for (const operator of set.operators) expect(operator.node.scope).toBe(set.app);
  });

  test('GIVEN a relative module path WHEN loading THEN it is resolved against cwd', async () => {
    const set = await loadOperators({ modulePath: 'fixtures/echo-operator.ts', cwd: join(root, 'test', 'cli') });
    expect(set.names()).toEqual(['echo-operator']);
    expect(set.forKind('demo.example.com/v1', 'Echo')?.operatorName).toBe('echo-operator');
  });

  test('GIVEN two loads WHEN compared THEN each has its own App', async () => {
    const [a, b] = await Promise.all([loadOperators(), loadOperators()]);
    expect(a.app).not.toBe(b.app);
  });

  test.each([
    ['fixtures/does-not-exist.ts', 'ModuleNotLoaded'],
    ['fixtures/no-add-operators.ts', 'NoAddOperators'],
    ['fixtures/duplicate.ts', 'DuplicateOperator'],
  ])('GIVEN module %s WHEN loading THEN OperatorLoadError %s', async (modulePath, reason) => {
    const load = loadOperators({ modulePath, cwd: join(root, 'test', 'cli') });
    await expect(load).rejects.toBeInstanceOf(OperatorLoadError);
    await expect(load).rejects.toMatchObject({ reason, modulePath: join(root, 'test', 'cli', modulePath) });
  });
});
