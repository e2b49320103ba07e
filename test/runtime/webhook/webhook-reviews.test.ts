import { App } from 'cdk8s';
import { ManualClock } from '../../../lib/runtime/clock.js';
import { BadReviewError, handleAdmissionReview, handleConversionReview } from '../../../lib/runtime/webhook/webhook-reviews.js';
import { MemcachedOperator } from '../../../operators/memcached/index.js';
import { FakeKubeClient } from '../../support/fake-kube-client.js';
import { bucketOf } from '../../../lib/runtime/sharding/bucket-hash.js';

const operator = new MemcachedOperator(new App());

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
    await expect(handleAdmissionReview(operator, {}, { type: 'validate', client: new FakeKubeClient() })).rejects.toThrow(BadReviewError);
  });

  test('GIVEN a Memcached over the namespace policy and named like a foreign Service WHEN validated THEN denied with a 422 Invalid Status listing both fields', async () => {
    const client = new FakeKubeClient({
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
    const answer = (await handleAdmissionReview(operator, review('CREATE', cr), { type: 'validate', client: new FakeKubeClient() })) as { response: Record<string, unknown> };
    expect(answer.response).toEqual({ uid: 'u-1', allowed: true });
  });

  test('GIVEN a Memcached without the name label WHEN mutated THEN a JSON Patch adds it', async () => {
    const cr = { apiVersion: 'cache.example.com/v1beta1', kind: 'Memcached', metadata: { name: 'ok', labels: { a: 'b' } }, spec: { replicas: 1 } };
    const answer = (await handleAdmissionReview(operator, review('CREATE', cr), { type: 'mutate', client: new FakeKubeClient() })) as { response: { patchType: string; patch: string } };
    expect(answer.response.patchType).toBe('JSONPatch');
    expect(JSON.parse(Buffer.from(answer.response.patch, 'base64').toString())).toEqual([{ op: 'add', path: '/metadata/labels/app.kubernetes.io~1name', value: 'memcached' }]);
  });

  test('GIVEN a sharded run WHEN a Memcached is created THEN the same JSON Patch adds its bucket label (computed from namespace/name), repairs a wrong one, and leaves an UPDATE or a generateName create alone', async () => {
    const patchOf = async (body: unknown) => {
      const answer = (await handleAdmissionReview(operator, body, { type: 'mutate', client: new FakeKubeClient(), shardBucketCount: 8 })) as { response: { patch?: string } };
      return answer.response.patch === undefined ? [] : (JSON.parse(Buffer.from(answer.response.patch, 'base64').toString()) as { op: string; path: string; value: unknown }[]);
    };
    const bucket = String(bucketOf('team-a', 'ok', 8));
    const cr = (labels: Record<string, string>, metadata: Record<string, unknown> = { name: 'ok' }) => ({ apiVersion: 'cache.example.com/v1beta1', kind: 'Memcached', metadata: { ...metadata, labels }, spec: { replicas: 1 } });
    expect(await patchOf(review('CREATE', cr({ a: 'b' })))).toEqual([
      { op: 'add', path: '/metadata/labels/app.kubernetes.io~1name', value: 'memcached' },
      { op: 'add', path: '/metadata/labels/operator.cdk8s.io~1shard-bucket', value: bucket },
    ]);
    const wrong = String((Number(bucket) + 1) % 8);
    expect(await patchOf(review('CREATE', cr({ 'app.kubernetes.io/name': 'memcached', 'operator.cdk8s.io/shard-bucket': wrong })))).toEqual([
      { op: 'replace', path: '/metadata/labels/operator.cdk8s.io~1shard-bucket', value: bucket },
    ]);
    expect(await patchOf(review('CREATE', cr({ 'app.kubernetes.io/name': 'memcached', 'operator.cdk8s.io/shard-bucket': bucket })))).toEqual([]);
    expect(await patchOf(review('CREATE', cr({ 'app.kubernetes.io/name': 'memcached' }, { generateName: 'ok-' })))).toEqual([]);
    const old = cr({ 'app.kubernetes.io/name': 'memcached' });
    const changed = { ...old, spec: { replicas: 2 } };
    expect(await patchOf({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: 'u-3', operation: 'UPDATE', namespace: 'team-a', object: changed, oldObject: old } })).toEqual([]);
  });

  describe('production rules: exempt updates, ratcheting, the deadline', () => {
    type Answer = { response: { allowed: boolean; status?: Record<string, any>; warnings?: string[]; patch?: string } }; // eslint-disable-line @typescript-eslint/no-explicit-any
    const policy = (max: number) => ({ '/api/v1/namespaces/team-a/configmaps/memcached-policy': { data: { maxReplicas: String(max) } } });
    const memcached = (spec: Record<string, unknown>, metadata: Record<string, unknown> = {}) => ({ apiVersion: 'cache.example.com/v1beta1', kind: 'Memcached', metadata: { name: 'm', namespace: 'team-a', ...metadata }, spec });
    const update = (oldObject: unknown, object: unknown) => ({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: 'u-2', operation: 'UPDATE', namespace: 'team-a', object, oldObject } });
    const validate = async (body: unknown, client = new FakeKubeClient(policy(1)), clock?: ManualClock, op = operator) => (await handleAdmissionReview(op, body, { type: 'validate', client, clock })) as Answer;

    test('GIVEN a terminating Memcached over a lowered policy WHEN its last finalizer is removed THEN allowed without calling the hook', async () => {
      const terminating = { deletionTimestamp: '2026-01-01T00:00:00Z', finalizers: ['example.com/hold'] };
      const answer = await validate(update(memcached({ replicas: 3 }, terminating), memcached({ replicas: 3 }, { ...terminating, finalizers: [] })));
      expect(answer.response).toEqual({ uid: 'u-2', allowed: true });
    });

    test('GIVEN a metadata-only UPDATE of a Memcached over the policy THEN validation allows it and mutation sends no patch', async () => {
      const old = memcached({ replicas: 3, cache: { memoryMiB: 64 } });
      const relabelled = memcached({ replicas: 3, cache: { memoryMiB: 64 } }, { labels: { team: 'x' }, finalizers: ['example.com/hold'] });
      expect((await validate(update(old, relabelled))).response).toEqual({ uid: 'u-2', allowed: true });
      const mutated = (await handleAdmissionReview(operator, update(old, relabelled), { type: 'mutate', client: new FakeKubeClient() })) as Answer;
      expect(mutated.response).toEqual({ uid: 'u-2', allowed: true }); // the name label is not added on a metadata-only update
    });

    test('GIVEN a Memcached over a lowered policy WHEN an update leaves replicas as they were THEN allowed, with the kept violation as a warning', async () => {
      const answer = await validate(update(memcached({ replicas: 3, cache: { memoryMiB: 64 } }), memcached({ replicas: 3, cache: { memoryMiB: 32 } })));
      expect(answer.response.allowed).toBe(true);
      expect(answer.response.warnings).toEqual(['spec.replicas: Invalid value: 3: must be at most 1 (ConfigMap team-a/memcached-policy, maxReplicas) (unchanged by this update, so allowed)']);
    });

    test('GIVEN a Memcached over a lowered policy WHEN an update corrects replicas THEN allowed; WHEN it changes them and still violates THEN denied', async () => {
      expect((await validate(update(memcached({ replicas: 3 }), memcached({ replicas: 1 })))).response).toEqual({ uid: 'u-2', allowed: true });
      const worse = await validate(update(memcached({ replicas: 3 }), memcached({ replicas: 2 })));
      expect(worse.response.allowed).toBe(false);
      expect(worse.response.status!.details.causes).toEqual([{ reason: 'FieldValueInvalid', field: 'spec.replicas', message: 'Invalid value: 2: must be at most 1 (ConfigMap team-a/memcached-policy, maxReplicas)' }]);
    });

    test('GIVEN an old object that today\'s zod schema rejects WHEN a correcting or an unrelated update arrives THEN the review does not fail on the old object', async () => {
      const stored = memcached({ replicas: 1, cache: { memoryMiB: 8 } }); // memoryMiB min 16 since a tightened release
      expect((await validate(update(stored, memcached({ replicas: 1, cache: { memoryMiB: 32 } })))).response).toEqual({ uid: 'u-2', allowed: true });
      const unrelated = await validate(update(stored, memcached({ replicas: 2, cache: { memoryMiB: 8 } })), new FakeKubeClient(policy(5)));
      expect(unrelated.response.allowed).toBe(true);
      expect(unrelated.response.warnings).toEqual([expect.stringMatching(/^spec\.cache\.memoryMiB: Too small.*unchanged by this update, so allowed\)$/)]);
      const introduced = await validate(update(stored, memcached({ replicas: 1, cache: { memoryMiB: 4 } })));
      expect(introduced.response.status).toMatchObject({ code: 422, details: { causes: [{ field: 'spec.cache.memoryMiB' }] } });
    });

    test('GIVEN a policy read that never answers WHEN the budget passes THEN a 504 Timeout denial naming the read, before the API server\'s 10 s', async () => {
      const clock = new ManualClock();
      let aborted = false;
      const stuck = new FakeKubeClient();
      stuck.hold = (call) => new Promise((_, reject) => call.signal!.addEventListener('abort', () => ((aborted = true), reject(new Error('aborted')))));
      let seen: AbortSignal | undefined;
      const watching = Object.create(operator, { validateAdmission: { value: (cr: never, old: never, context: { signal: AbortSignal }) => ((seen = context.signal), operator.validateAdmission(cr, old, context as never)) } }) as typeof operator;
      const answering = validate(review('CREATE', memcached({ replicas: 1 })), stuck, clock, watching);
      await Promise.resolve();
      clock.advance(9000);
      const answer = await answering;
      expect(aborted).toBe(true);
      expect(seen?.aborted).toBe(true); // the hook's own I/O can stop too
      expect(answer.response.allowed).toBe(false);
      expect(answer.response.status).toMatchObject({ code: 504, reason: 'Timeout' });
      expect(answer.response.status!.message).toBe("Memcached team-a/m: the validating hook of memcached-operator timed out: reading ConfigMap team-a/memcached-policy did not finish within 9000 ms (the webhook's timeoutSeconds 10 minus a margin, so the answer reaches the API server in time)");
    });

    test('GIVEN a validateAdmission that never resolves WHEN the budget passes THEN denied naming the hook; under failurePolicy Ignore allowed with a warning', async () => {
      const stuckHook = Object.create(operator, { validateAdmission: { value: () => new Promise(() => {}) } }) as typeof operator;
      const clock = new ManualClock();
      const answering = validate(review('CREATE', memcached({ replicas: 1 })), new FakeKubeClient(), clock, stuckHook);
      clock.advance(9000);
      expect((await answering).response.status!.message).toMatch(/timed out: validateAdmission did not finish within 9000 ms/);

      const ignoring = Object.create(stuckHook, { webhook: { value: { ...operator.webhook!, failurePolicy: 'Ignore' } } }) as typeof operator;
      const clock2 = new ManualClock();
      const allowed = validate(review('CREATE', memcached({ replicas: 1 })), new FakeKubeClient(), clock2, ignoring);
      clock2.advance(9000);
      expect((await allowed).response).toEqual({ uid: 'u-1', allowed: true, warnings: [expect.stringMatching(/^Memcached team-a\/m: the validating hook of memcached-operator timed out: validateAdmission/)] });
    });

    test('GIVEN a hook that throws, or one past its deadline WHEN answered THEN denied naming the object, and a warn line says so', async () => {
      const lines: { level: string; fields: Record<string, unknown>; msg: string }[] = [];
      const record = (level: string) => (fields: object, msg: string) => lines.push({ level, fields: fields as Record<string, unknown>, msg });
      const logger = { debug: record('debug'), info: record('info'), warn: record('warn'), error: record('error') };
      const throwing = Object.create(operator, { validateAdmission: { value: async () => { throw new Error('policy store unreachable'); } } }) as typeof operator;
      const failed = (await handleAdmissionReview(throwing, review('CREATE', memcached({ replicas: 1 })), { type: 'validate', client: new FakeKubeClient(), logger })) as Answer;
      expect(failed.response.status).toMatchObject({ code: 500, reason: 'InternalError', message: 'Memcached team-a/m: the validating hook of memcached-operator failed: policy store unreachable' });
      const clock = new ManualClock();
      const stuck = Object.create(operator, { validateAdmission: { value: () => new Promise(() => {}) } }) as typeof operator;
      const answering = handleAdmissionReview(stuck, review('CREATE', memcached({ replicas: 1 })), { type: 'validate', client: new FakeKubeClient(), logger, clock });
      clock.advance(9000);
      await answering;
      expect(lines.map((l) => [l.level, l.msg, l.fields.object])).toEqual([
        ['warn', 'admission hook failed; denied', 'Memcached team-a/m'],
        ['warn', 'admission hook timed out; denied', 'Memcached team-a/m'],
      ]);
    });
  });
});
