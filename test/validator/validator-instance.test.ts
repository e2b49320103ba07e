// The validator module is compiled once per process, not once per realm: jest gives each test file fresh
// modules (a realm of its own), and every file that renders would otherwise compile and initialise the
// 66 MB module again. Two module registries in this one file stand for two test files of one worker.
import { jest } from '@jest/globals';

type InstanceModule = typeof import('../../lib/validator/validator-instance.js');

async function freshModule(): Promise<InstanceModule> {
  let module: InstanceModule | undefined;
  await jest.isolateModulesAsync(async () => {
    module = await import('../../lib/validator/validator-instance.js');
  });
  return module!;
}

const request = JSON.stringify([{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'default' }, data: { 'bad key!': 'x' } }]);

test('GIVEN two fresh copies of the loader module in one process WHEN each loads the validator THEN the module was compiled once and both give the same verdict', async () => {
  const first = await freshModule();
  const second = await freshModule();
  expect(second.validatorInstance).not.toBe(first.validatorInstance); // two realms' copies of the loader
  const before = first.validatorCompilations();
  const a = first.validatorInstance();
  const compiledByFirst = first.validatorCompilations();
  expect(compiledByFirst - before).toBeLessThanOrEqual(1); // 0 when an earlier copy in this process loaded it
  const b = second.validatorInstance();
  expect(second.validatorCompilations()).toBe(compiledByFirst);
  expect(b).not.toBe(a);
  expect(b.kubernetesVersion).toMatch(/^v1\.\d+\.\d+$/);
  expect(b.kubernetesVersion).toBe(a.kubernetesVersion);
  const verdict = a.call(request);
  expect(verdict).toContain('bad key!');
  expect(b.call(request)).toBe(verdict);
});
