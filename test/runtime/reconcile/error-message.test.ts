/**
 * errorMessage: the text of an error a reconcile step caught.
 */
import { RenderError } from '../../../lib/operator/errors.js';
import { ReconcileError } from '../../../lib/runtime/errors.js';
import { errorMessage } from '../../../lib/runtime/reconcile/error-message.js';

describe('errorMessage', () => {
  test('GIVEN an error whose cause says more THEN the cause is appended; GIVEN a cause already in the message THEN it is not repeated', () => {
    expect(errorMessage(new Error('fetch failed', { cause: new Error('ECONNREFUSED') }))).toBe('fetch failed: ECONNREFUSED');
    expect(errorMessage(new Error('fetch failed: ECONNREFUSED', { cause: new Error('ECONNREFUSED') }))).toBe('fetch failed: ECONNREFUSED');
  });

  test('GIVEN the SDK\'s own errors THEN their message as it is (a validation error\'s cause is raw JSON); GIVEN a non-Error THEN its string', () => {
    const ref = { apiVersion: 'x.io/v1', kind: 'Widget', namespace: 'ns', name: 'w' };
    const render = new RenderError('RenderFailed', ref, 'render() threw: boom', { cause: new Error('{"raw":"json"}') });
    expect(errorMessage(render)).toBe(render.message);
    expect(errorMessage(new ReconcileError('ApplyFailed', 'patch ConfigMap ns/c: 500', { cause: new Error('inner') }))).toBe('patch ConfigMap ns/c: 500');
    expect(errorMessage('boom')).toBe('boom');
  });
});
