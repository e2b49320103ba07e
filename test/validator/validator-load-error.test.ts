// A validator that cannot load is a clear error naming the file, never a silent pass. Its own test file:
// jest gives each file fresh modules, so this process's validator has not been loaded yet.
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

const configMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'default' } };

test.each([
  ['a corrupt file', 'corrupt.wasm', Buffer.from('\0asm\x01\0\0\0 this is not a module')],
  ['a missing file', 'missing.wasm', undefined],
])('GIVEN %s WHEN objects are validated THEN ValidatorLoadError names the file', (_, name, bytes) => {
  const file = join(tmp, name);
  if (bytes !== undefined) writeFileSync(file, bytes);
  process.env[VALIDATOR_WASM_ENV] = file;
  expect(() => validateBuiltInObjects([configMap])).toThrow(ValidatorLoadError);
  expect(() => validateBuiltInObjects([configMap])).toThrow(file);
});
