import { formatLoadError, userFrameOf } from '../../lib/cli/load-error-location.js';
import { OperatorLoadError } from '../../lib/cli/load-operators.js';

test('GIVEN esbuild\'s TransformError (a syntax error, as tsx throws it) wrapped in an OperatorLoadError THEN file:line:col: message', () => {
  const transform = Object.assign(new Error('Transform failed with 1 error:\n/p/labels.ts:2:9: ERROR: Unexpected ";"'), { name: 'TransformError' });
  const error = new OperatorLoadError('ModuleNotLoaded', '/p/op.ts', 'cannot load the module: Transform failed with 1 error:', { cause: transform });
  expect(formatLoadError(error, '/p/op.ts')).toBe('/p/labels.ts:2:9: Unexpected ";"');
});

test('GIVEN an error thrown at load THEN the first frame in the user\'s code, past the SDK\'s and node_modules\' frames', () => {
  const error = new TypeError('cannot read x');
  error.stack = [
    'TypeError: cannot read x',
    '    at check (/sdk/lib/operator/operator.ts:120:11)',
    '    at Object.<anonymous> (/proj/node_modules/zod/index.js:5:1)',
    '    at new MyOperator (file:///proj/my-operator.ts:14:5)',
    '    at addOperators (/proj/my-operator.ts:30:10)',
    '    at ModuleJob.run (node:internal/modules/esm/module_job:325:25)',
  ].join('\n');
  expect(formatLoadError(error, '/proj/my-operator.ts', '/sdk')).toBe('/proj/my-operator.ts:14:5: TypeError: cannot read x');
});

test('GIVEN a stack with SDK frames only THEN the first of them', () => {
  expect(userFrameOf('Error: x\n    at f (/sdk/lib/a.ts:1:2)\n    at g (/sdk/lib/b.ts:3:4)', '/sdk')).toEqual({ file: '/sdk/lib/a.ts', line: 1, column: 2 });
});

test('GIVEN an error with no location (no addOperators export) THEN the module path and the message', () => {
  const error = new OperatorLoadError('NoAddOperators', '/p/op.ts', 'the module must export `addOperators(scope: Construct): Operator[]`');
  error.stack = `OperatorLoadError: ${error.message}\n    at ModuleJob.run (node:internal/modules/esm/module_job:325:25)`;
  expect(formatLoadError(error, '/p/op.ts')).toBe('/p/op.ts: the module must export `addOperators(scope: Construct): Operator[]`');
});

test('GIVEN a non-Error thrown THEN the module path and its text', () => {
  expect(formatLoadError('boom', '/p/op.ts')).toBe('/p/op.ts: boom');
});
