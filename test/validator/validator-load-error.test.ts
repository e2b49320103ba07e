// A validator that cannot load is a clear error naming the file, never a silent pass. Its own test file:
// jest gives each file fresh modules, so this realm's validator has not been loaded yet, and the process
// shares loaded modules by file only (each file here is a new path).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ValidatorLoadError } from '../../lib/validator/validator-instance.js';
import { validateBuiltInObjects } from '../../lib/validator/validate-built-in-objects.js';
import { VALIDATOR_WASM_ENV } from '../../lib/validator/validator-wasm-file.js';

const tmp = mkdtempSync(join(tmpdir(), 'validator-load-'));
const saved = process.env[VALIDATOR_WASM_ENV];
afterAll(() => {
  process.env[VALIDATOR_WASM_ENV] = saved;
  rmSync(tmp, { recursive: true, force: true });
});

/**
 * A module whose sections decode but whose one function body is invalid (`i32.add` on an empty stack):
 * with `--wasm-lazy-validation` it compiles and instantiates, and fails when `_initialize` first runs.
 */
const invalidBody = Buffer.from([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // magic, version 1
  0x01, 0x04, 0x01, 0x60, 0x00, 0x00, // type section: () -> ()
  0x03, 0x02, 0x01, 0x00, // function section: one function of type 0
  0x05, 0x03, 0x01, 0x00, 0x01, // memory section: one memory, 1 page
  0x07, 0x18, 0x02, 0x06, ...Buffer.from('memory'), 0x02, 0x00, 0x0b, ...Buffer.from('_initialize'), 0x00, 0x00, // exports
  0x0a, 0x05, 0x01, 0x03, 0x00, 0x6a, 0x0b, // code section: no locals, i32.add, end
]);

const configMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'default' } };

test.each([
  ['a corrupt file', 'corrupt.wasm', Buffer.from('\0asm\x01\0\0\0 this is not a module')],
  ['a module with an invalid function body', 'invalid-body.wasm', invalidBody],
  ['a missing file', 'missing.wasm', undefined],
])('GIVEN %s WHEN objects are validated THEN ValidatorLoadError names the file', (_, name, bytes) => {
  const file = join(tmp, name);
  if (bytes !== undefined) writeFileSync(file, bytes);
  process.env[VALIDATOR_WASM_ENV] = file;
  expect(() => validateBuiltInObjects([configMap])).toThrow(ValidatorLoadError);
  expect(() => validateBuiltInObjects([configMap])).toThrow(file);
});
