import { App } from 'cdk8s';
import type { ApiClient } from '../../../lib/runtime/client/api-client.js';
import { ApiError } from '../../../lib/runtime/client/api-client.js';
import { BadReviewError, handleAdmissionReview, handleConversionReview } from '../../../lib/runtime/webhook/webhook-reviews.js';
import { MemcachedOperator } from '../../../operators/memcached/index.js';

const operator = new MemcachedOperator(new App());

/** A client answering GETs from a table (404 otherwise): enough for the hooks' context.get. */
function fakeClient(objects: Record<string, unknown>): ApiClient {
  return {
    request: async (method: string, path: string) => {
      if (method === 'GET' && path in objects) return objects[path];
      throw new ApiError(method, path, 404, 'NotFound', undefined, 'not found');
    },
  } as unknown as ApiClient;
}

const review = (operation: string, object: unknown) => ({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: { uid: 'u-1', operation, namespace: 'team-a', object },
});

describe('webhook reviews', () => {
  test('GIVEN a ConversionReview of two objects WHEN handled THEN both are converted and the uid is echoed', () => {
    const answer = handleConversionReview([operator], {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'ConversionReview',
      request: {
        uid: 'c-1',
        desiredAPIVersion: 'cache.example.com/v1beta1',
        objects: [1, 2].map((size) => ({ apiVersion: 'cache.example.com/v1alpha1', kind: 'Memcached', metadata: { name: `m${size}` }, spec: { size } })),
      },
    });
    expect(answer).toEqual({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'ConversionReview',
      response: {
        uid: 'c-1',
        result: { status: 'Success' },
        convertedObjects: [1, 2].map((n) => ({ apiVersion: 'cache.example.com/v1beta1', kind: 'Memcached', metadata: { name: `m${n}` }, spec: { replicas: n, cache: { memoryMiB: 64 } } })),
      },
    });
  });

  test('GIVEN a stored object that today\'s rules reject WHEN handled THEN it converts best effort, the review succeeds and onBestEffort names the object and field', () => {
    const warnings: string[] = [];
    const answer = handleConversionReview([operator], {
      kind: 'ConversionReview',
      request: { uid: 'c-2', desiredAPIVersion: 'cache.example.com/v1beta1', objects: [{ apiVersion: 'cache.example.com/v1alpha1', kind: 'Memcached', metadata: { name: 'x', namespace: 'a' }, spec: { size: 0 } }] },
    }, { onBestEffort: (m) => warnings.push(m) }) as { response: { result: { status: string }; convertedObjects: { spec: unknown }[] } };
    expect(answer.response.result.status).toBe('Success');
    expect(answer.response.convertedObjects.map((o) => o.spec)).toEqual([{ replicas: 0, cache: { memoryMiB: 64 } }]);
    expect(warnings).toEqual([expect.stringMatching(/^Memcached a\/x: converted to cache\.example\.com\/v1beta1 best effort: .*spec\.size: Too small/)]);
  });

  test('GIVEN an object no operator here converts WHEN handled THEN the review fails with the message and converts nothing', () => {
    const answer = handleConversionReview([operator], {
      kind: 'ConversionReview',
      request: { uid: 'c-3', desiredAPIVersion: 'cache.example.com/v1beta1', objects: [{ apiVersion: 'other.example.com/v1', kind: 'Other', metadata: { name: 'x', namespace: 'a' }, spec: {} }] },
    }) as { response: { result: { status: string; message: string }; convertedObjects: unknown[] } };
    expect(answer.response.result.status).toBe('Failure');
    expect(answer.response.result.message).toMatch(/no operator here converts Other/);
    expect(answer.response.convertedObjects).toEqual([]);
  });

  test('GIVEN a body that is no review WHEN handled THEN BadReviewError (the server answers 400)', async () => {
    expect(() => handleConversionReview([operator], { kind: 'Nope' })).toThrow(BadReviewError);
    await expect(handleAdmissionReview(operator, {}, { type: 'validate', client: fakeClient({}) })).rejects.toThrow(BadReviewError);
  });

  test('GIVEN a Memcached over the namespace policy and named like a foreign Service WHEN validated THEN denied with a 422 Invalid Status listing both fields', async () => {
    const client = fakeClient({
      '/api/v1/namespaces/team-a/configmaps/memcached-policy': { data: { maxReplicas: '2' } },
      '/api/v1/namespaces/team-a/services/web': { metadata: { name: 'web', labels: {} } },
    });
    const cr = { apiVersion: 'cache.example.com/v1beta1', kind: 'Memcached', metadata: { name: 'web' }, spec: { replicas: 3 } };
    const answer = (await handleAdmissionReview(operator, review('CREATE', cr), { type: 'validate', client })) as { response: Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(answer.response.uid).toBe('u-1');
    expect(answer.response.allowed).toBe(false);
    expect(answer.response.status).toMatchObject({ code: 422, reason: 'Invalid', details: { name: 'web', group: 'cache.example.com', kind: 'Memcached' } });
    expect(answer.response.status.details.causes.map((c: { field: string }) => c.field)).toEqual(['spec.replicas', 'metadata.name']);
  });

  test('GIVEN a valid Memcached WHEN validated THEN allowed', async () => {
    const cr = { apiVersion: 'cache.example.com/v1beta1', kind: 'Memcached', metadata: { name: 'ok' }, spec: { replicas: 3 } };
    const answer = (await handleAdmissionReview(operator, review('CREATE', cr), { type: 'validate', client: fakeClient({}) })) as { response: Record<string, unknown> };
    expect(answer.response).toEqual({ uid: 'u-1', allowed: true });
  });

  test('GIVEN a Memcached without the name label WHEN mutated THEN a JSON Patch adds it', async () => {
    const cr = { apiVersion: 'cache.example.com/v1beta1', kind: 'Memcached', metadata: { name: 'ok', labels: { a: 'b' } }, spec: { replicas: 1 } };
    const answer = (await handleAdmissionReview(operator, review('CREATE', cr), { type: 'mutate', client: fakeClient({}) })) as { response: { patchType: string; patch: string } };
    expect(answer.response.patchType).toBe('JSONPatch');
    expect(JSON.parse(Buffer.from(answer.response.patch, 'base64').toString())).toEqual([{ op: 'add', path: '/metadata/labels/app.kubernetes.io~1name', value: 'memcached' }]);
  });
});
