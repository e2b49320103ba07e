/**
 * Failure messages (condition messages, Event notes) lead with the reason, name the CR once and fit
 * 1024 UTF-8 bytes, whatever the CR's name (up to the 253 characters a CR name may have).
 */
import { App } from 'cdk8s';
import fc from 'fast-check';
import { renderCustomResource } from '../../../lib/operator/render/render-children.js';
import type { CustomResource } from '../../../lib/operator/custom-resource.js';
import type { KubeObject } from '../../../lib/runtime/client/kube-client.js';
import { ReconcileError } from '../../../lib/runtime/errors.js';
import { FAILURE_MESSAGE_MAX_BYTES, failureMessage } from '../../../lib/runtime/reconcile/failure-message.js';
import { utf8ByteLength } from '../../../lib/runtime/reconcile/text-limit.js';
import { addOperators } from '../../../operators/index.js';
import type { FakeKubeClient } from '../../support/fake-kube-client.js';
import { reconcilerHarness } from '../../support/reconciler-harness.js';

const dnsName = (length: number) => fc.stringMatching(/^[a-z0-9]$/).chain((first) => fc.string({ unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789-'.split('')), minLength: length - 2, maxLength: length - 2 }).map((middle) => `${first}${middle}z`));

describe('failureMessage', () => {
  test('GIVEN a short message THEN the reason leads and the CR is named once, at the end', () => {
    expect(failureMessage('render', { reference: 'Widget ns/w', name: 'w' }, 'render Widget ns/w: render() threw: boom')).toBe('render() threw: boom (render Widget ns/w)');
    expect(failureMessage('render', { reference: 'Widget ns/w', name: 'w' }, 'Widget ns/w is invalid: spec.size: Too small')).toBe('invalid: spec.size: Too small (render Widget ns/w)');
    expect(failureMessage('apply', { reference: 'Widget ns/w', name: 'w' }, 'patch Deployment ns/w: 422 Invalid: spec.replicas: must be ≥ 0')).toBe('patch Deployment ns/w: 422 Invalid: spec.replicas: must be ≥ 0 (apply Widget ns/w)');
  });

  test('PROPERTY: a CR name of 64–253 characters repeated three times in the message never pushes the reason past the cut; the result fits 1024 bytes', () => {
    fc.assert(
      fc.property(fc.integer({ min: 64, max: 253 }).chain(dnsName), fc.string({ minLength: 1, maxLength: 200 }), (name, problem) => {
        const reason = `must be no more than 63 characters: ${problem}`;
        const detail = `render Thing ns/${name}: Service ${name}-svc at ${name}/service/Resource: invalid name "${name}-svc": ${reason}`;
        const message = failureMessage('render', { reference: `Thing ns/${name}`, name }, detail);
        expect(utf8ByteLength(message)).toBeLessThanOrEqual(FAILURE_MESSAGE_MAX_BYTES);
        expect(message).toContain(reason);
        expect(message.split(name).length - 1).toBeLessThanOrEqual(1); // named once
        expect(message.startsWith('Service ')).toBe(true);
      }),
    );
  });

  test('PROPERTY: any detail, any name: at most 1024 UTF-8 bytes', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 253 }), fc.string({ maxLength: 3000 }), (name, detail) => {
        const message = failureMessage('apply', { reference: `Thing ns/${name}`, name }, detail);
        expect(utf8ByteLength(message)).toBeLessThanOrEqual(FAILURE_MESSAGE_MAX_BYTES);
      }),
    );
  });
});

describe('failure messages of a real operator with a 253-character CR name', () => {
  const memcached = addOperators(new App()).find((o) => o.operatorName === 'memcached-operator')!;
  const name = 'm'.repeat(253);

  function reconcile(spec: Record<string, unknown>) {
    const cr: KubeObject = { apiVersion: 'cache.example.com/v1beta1', kind: 'Memcached', metadata: { name, namespace: 'ns', uid: 'uid-1', generation: 1, resourceVersion: '1' }, spec };
    const harness = reconcilerHarness({ operator: memcached, render: (c, inputs) => renderCustomResource(memcached, c as unknown as CustomResource, inputs), crs: [cr] });
    return { client: harness.client, run: () => harness.reconcile(`ns/${name}`) };
  }

  const texts = (client: FakeKubeClient) => {
    const stalled = client.calls.find((c) => c.path.endsWith('/status'))!.body.status.conditions.find((c: { type: string }) => c.type === 'Stalled');
    const note = client.calls.find((c) => c.path.includes('/events'))!.body.note as string;
    return { condition: stalled.message as string, note };
  };

  // Such a CR exists only if it was created before its CRD restricted metadata.name (crNameRule): the
  // reconciler refuses it at metadata.name, before render names a child after it.
  test('GIVEN a CR name its children cannot carry THEN the condition and the Event lead with the reason (metadata.name), name the CR once, fit 1024 bytes', async () => {
    const { client, run } = reconcile({ replicas: 1 });
    await expect(run()).rejects.toThrow(ReconcileError);
    for (const text of Object.values(texts(client))) {
      expect(utf8ByteLength(text)).toBeLessThanOrEqual(1024);
      expect(text).toMatch(/^invalid: metadata\.name: Invalid value: "m{12}…m{6}": must be a DNS-1035 label of at most 63 characters/);
      expect(text.split(name).length - 1).toBe(1);
    }
  });

  test('GIVEN an invalid spec THEN the message names the field and carries no raw JSON of the validation cause', async () => {
    const { client, run } = reconcile({ replicas: -1 });
    const err = (await run().catch((e: unknown) => e)) as Error;
    expect(err.message).not.toContain('"code"');
    for (const text of Object.values(texts(client))) {
      expect(text).toMatch(/^invalid: metadata\.name: [^;]*; spec\.replicas: Too small/);
      expect(text).not.toMatch(/[[{]\s*"/);
      expect(text.split(name).length - 1).toBe(1);
    }
  });
});

describe('a ZodError thrown by render()', () => {
  test('GIVEN render() parses something with zod and throws THEN the RenderError says path: reason, no raw JSON', async () => {
    const { z } = await import('zod');
    const { FailingOperator } = await import('../../integration/fixtures/failing-operator.js');
    class ParsingOperator extends FailingOperator {
      override render(): void {
        z.object({ port: z.number().min(1) }).parse({ port: 0 });
      }
    }
    const operator = new ParsingOperator(new App());
    const cr = { apiVersion: 'failing.example.com/v1', kind: 'Failing', metadata: { name: 'f', namespace: 'ns', uid: 'u' }, spec: {} } as unknown as CustomResource;
    expect(() => renderCustomResource(operator, cr)).toThrow(/^render Failing ns\/f: render\(\) threw: port: Too small: expected number to be >=1$/);
  });
});
