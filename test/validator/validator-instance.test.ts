// The validator module is compiled once per process, not once per realm: jest gives each test file fresh
// modules (a realm of its own), and every file that renders would otherwise compile and initialise the
// 66 MB module again. Two module registries in this one file stand for two test files of one worker.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jest } from '@jest/globals';
import { VALIDATOR_WASM_ENV } from '../../lib/validator/validator-wasm-file.js';

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

/**
 * A module with the validator's exports whose `validate` traps (`unreachable`); `version` answers
 * "v1.37.2" from a data segment, `input` puts the request at 1024 in its one page.
 */
const trapsOnValidate = Buffer.from([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // magic, version 1
  0x01, 0x0d, 0x03, 0x60, 0x00, 0x00, 0x60, 0x01, 0x7f, 0x01, 0x7f, 0x60, 0x00, 0x01, 0x7f, // types: () -> (), (i32) -> i32, () -> i32
  0x03, 0x06, 0x05, 0x00, 0x01, 0x02, 0x02, 0x02, // functions: _initialize, input, validate, output, version
  0x05, 0x03, 0x01, 0x00, 0x01, // one memory, 1 page
  0x07, 0x3e, 0x06, // exports
  0x06, ...Buffer.from('memory'), 0x02, 0x00,
  0x0b, ...Buffer.from('_initialize'), 0x00, 0x00,
  0x05, ...Buffer.from('input'), 0x00, 0x01,
  0x08, ...Buffer.from('validate'), 0x00, 0x02,
  0x06, ...Buffer.from('output'), 0x00, 0x03,
  0x07, ...Buffer.from('version'), 0x00, 0x04,
  0x0a, 0x18, 0x05, // code
  0x02, 0x00, 0x0b, // _initialize: nothing
  0x05, 0x00, 0x41, 0x80, 0x08, 0x0b, // input: 1024
  0x03, 0x00, 0x00, 0x0b, // validate: unreachable
  0x04, 0x00, 0x41, 0x00, 0x0b, // output: 0
  0x04, 0x00, 0x41, 0x07, 0x0b, // version: 7 bytes
  0x0b, 0x0d, 0x01, 0x00, 0x41, 0x00, 0x0b, 0x07, ...Buffer.from('v1.37.2'), // data at 0
]);

test('GIVEN two realms sharing a module WHEN one realm\'s call traps THEN the other loads a new module before its call, and each gets its own realm\'s ValidatorLoadError', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'validator-trap-'));
  const saved = process.env[VALIDATOR_WASM_ENV];
  try {
    const file = join(dir, 'traps-on-validate.wasm');
    writeFileSync(file, trapsOnValidate);
    process.env[VALIDATOR_WASM_ENV] = file;
    const first = await freshModule();
    const second = await freshModule();
    const before = first.validatorCompilations();
    const a = first.validatorInstance();
    const b = second.validatorInstance();
    expect({ file: b.file, version: b.kubernetesVersion, compiled: second.validatorCompilations() - before }).toEqual({ file, version: 'v1.37.2', compiled: 1 });
    let errorOfA: unknown;
    try {
      a.call('[]');
    } catch (error) {
      errorOfA = error;
    }
    expect(errorOfA).toBeInstanceOf(first.ValidatorLoadError);
    expect((errorOfA as Error).message).toContain(`${file} failed`);
    expect(first.validatorCompilations() - before).toBe(1); // a trap loads nothing by itself
    let errorOfB: unknown;
    try {
      b.call('[]');
    } catch (error) {
      errorOfB = error;
    }
    // b's module was dropped by a's trap: b compiled a new one, which traps in its turn
    expect(second.validatorCompilations() - before).toBe(2);
    expect(errorOfB).toBeInstanceOf(second.ValidatorLoadError);
    expect(errorOfB).not.toBeInstanceOf(first.ValidatorLoadError);
  } finally {
    if (saved === undefined) delete process.env[VALIDATOR_WASM_ENV];
    else process.env[VALIDATOR_WASM_ENV] = saved;
    rmSync(dir, { recursive: true, force: true });
  }
});
