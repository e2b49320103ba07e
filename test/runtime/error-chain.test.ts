/** Errors are found through their cause chain (controller-runtime's errors.Is), from any copy of the SDK. */
import { RenderError, TerminalError } from '../../lib/operator/errors.js';
import { ApiError } from '../../lib/runtime/client/kube-client.js';
import { ReconcileError } from '../../lib/runtime/errors.js';
import { apiErrorOf, isTerminalError } from '../../lib/runtime/error-chain.js';
import { reconcileErrorFields } from '../../lib/runtime/reconcile/reconcile-error-fields.js';

const ref = { kind: 'Widget', namespace: 'ns', name: 'w' };

describe('isTerminalError', () => {
  test('GIVEN a TerminalError wrapped by RenderError and ReconcileError THEN it is found', () => {
    const terminal = new TerminalError('cannot');
    const wrapped = new ReconcileError('RenderFailed', 'render Widget ns/w: cannot', { cause: new RenderError('RenderFailed', ref, 'render() threw: cannot', { cause: terminal }) });
    expect(wrapped instanceof TerminalError).toBe(false);
    expect(isTerminalError(wrapped)).toBe(true);
  });

  test("GIVEN a TerminalError of another copy of the SDK (same brand, other class) THEN it is found", () => {
    // What a user's operator module with its own node_modules throws: branded by the registry symbol only.
    const foreign = Object.assign(Object.create({ [Symbol.for('cdk8s-operator-sdk/TerminalError')]: true }), { message: 'x' });
    expect(isTerminalError(new ReconcileError('FinalizeFailed', 'finalize', { cause: foreign }))).toBe(true);
  });

  test('GIVEN no TerminalError in the chain, or a cyclic chain THEN false', () => {
    expect(isTerminalError(new ReconcileError('ApplyFailed', 'x', { cause: new Error('y') }))).toBe(false);
    const a = new Error('a') as Error & { cause?: unknown };
    const b = new Error('b', { cause: a });
    a.cause = b;
    expect(isTerminalError(a)).toBe(false);
    expect(isTerminalError(undefined)).toBe(false);
  });
});

describe('reconcileErrorFields', () => {
  test('GIVEN an apply rejected by the API server THEN step, reason, code and the server message', () => {
    const api = new ApiError('PATCH', '/apis/apps/v1/namespaces/ns/deployments/w', 422, 'Invalid', { message: 'spec.replicas: Invalid value: -1' }, 'invalid');
    const err = new ReconcileError('ApplyFailed', 'patch Deployment ns/w: 422 Invalid', { cause: api });
    expect(apiErrorOf(err)).toBe(api);
    expect(reconcileErrorFields(err)).toEqual({ step: 'apply', reason: 'ApplyFailed', code: 422, serverMessage: 'spec.replicas: Invalid value: -1' });
    expect(reconcileErrorFields(new ReconcileError('PruneFailed', 'x'))).toEqual({ step: 'prune', reason: 'PruneFailed' });
    expect(reconcileErrorFields(new Error('bug'))).toEqual({});
  });
});
