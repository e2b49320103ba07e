/**
 * OpenApiFieldTypes' reading and caching with a recording fake client. That the real API server's
 * documents give the right types is checked in test/integration/stored-form-differential.test.ts.
 */
import { ApiError } from '../../../lib/runtime/client/kube-client.js';
import { QUANTITY_SCHEMA } from '../../../lib/runtime/reconcile/field-type.js';
import { OpenApiFieldTypes } from '../../../lib/runtime/reconcile/openapi-field-types.js';
import { FakeKubeClient } from '../../support/fake-kube-client.js';

const quantityRef = { $ref: `#/components/schemas/${QUANTITY_SCHEMA}` };
const appsV1 = {
  components: {
    schemas: {
      [QUANTITY_SCHEMA]: { type: 'string', description: 'a long text' },
      'io.k8s.api.apps.v1.Deployment': {
        type: 'object',
        description: 'Deployment enables declarative updates',
        properties: { spec: { allOf: [{ $ref: '#/components/schemas/io.k8s.api.apps.v1.DeploymentSpec' }] } },
        'x-kubernetes-group-version-kind': [{ group: 'apps', kind: 'Deployment', version: 'v1' }],
      },
      'io.k8s.api.apps.v1.DeploymentSpec': {
        type: 'object',
        properties: {
          overhead: { type: 'object', additionalProperties: quantityRef },
          maxSurge: { format: 'int-or-string', oneOf: [{ type: 'integer' }, { type: 'string' }] },
          description: { type: 'string' },
          list: { type: 'array', items: quantityRef },
        },
      },
    },
  },
};
const widgets = {
  components: {
    schemas: {
      'com.example.v1.Widget': {
        type: 'object',
        properties: { spec: { type: 'object', properties: { port: { 'x-kubernetes-int-or-string': true } } } },
        'x-kubernetes-group-version-kind': [{ group: 'example.com', kind: 'Widget', version: 'v1' }],
      },
    },
  },
};

/** A server of the OpenAPI v3 index (`paths`, changed by a test) and two group-version documents. */
function setup() {
  const paths: Record<string, unknown> = { 'apis/apps/v1': { serverRelativeURL: '/openapi/v3/apis/apps/v1?hash=ABC' } };
  const client = new FakeKubeClient({ '/openapi/v3': { paths }, '/openapi/v3/apis/apps/v1': appsV1, '/openapi/v3/apis/example.com/v1': widgets });
  const requests = () =>
    client.calls.map((c) => {
      const search = new URLSearchParams(c.query as Record<string, string>).toString();
      return `${c.method} ${c.path}${search ? `?${search}` : ''}`;
    });
  let now = 0;
  const source = new OpenApiFieldTypes({ client, retryAfterMs: 1000, now: () => now });
  return { client, paths, requests, source, advance: (ms: number) => (now += ms) };
}

test('GIVEN a built-in kind THEN its fields are typed from the group-version document, read once with its hash', async () => {
  const { requests, source } = setup();
  const [deployment, again] = await Promise.all([source.forKind('apps/v1', 'Deployment'), source.forKind('apps/v1', 'Deployment')]);
  expect(again).toBe(deployment);
  const spec = deployment?.field('spec');
  expect(spec?.field('overhead')?.field('cpu')?.form).toBe('resource-list-quantity'); // a map of quantities: ResourceList
  expect(spec?.field('list')?.items()?.form).toBe('quantity');
  expect(spec?.field('maxSurge')?.form).toBe('int-or-string');
  expect(spec?.field('description')?.form).toBeUndefined(); // a property named description survives the stripping
  expect(spec?.field('description')).toBeDefined();
  expect(spec?.field('unknown')).toBeUndefined();
  expect(deployment?.form).toBeUndefined();
  await source.forKind('apps/v1', 'StatefulSet');
  expect(requests()).toEqual(['GET /openapi/v3', 'GET /openapi/v3/apis/apps/v1?hash=ABC']);
});

test('GIVEN a kind the document lacks THEN undefined', async () => {
  const { source } = setup();
  expect(await source.forKind('apps/v1', 'Nothing')).toBeUndefined();
});

test('GIVEN a group-version missing from the index (a CRD installed later) THEN the index is read again at most once per retryAfterMs', async () => {
  const { paths, requests, source, advance } = setup();
  expect(await source.forKind('example.com/v1', 'Widget')).toBeUndefined();
  expect(await source.forKind('example.com/v1', 'Widget')).toBeUndefined();
  expect(requests().filter((c) => c === 'GET /openapi/v3')).toHaveLength(1);
  paths['apis/example.com/v1'] = { serverRelativeURL: '/openapi/v3/apis/example.com/v1?hash=DEF' };
  advance(1000);
  const widget = await source.forKind('example.com/v1', 'Widget');
  expect(widget?.field('spec')?.field('port')?.form).toBe('int-or-string');
  expect(requests().filter((c) => c === 'GET /openapi/v3')).toHaveLength(2);
});

test('GIVEN the index is forbidden THEN the error names the request and reason, is remembered for retryAfterMs, then retried', async () => {
  const { client, requests, source, advance } = setup();
  client.fail = () => new ApiError('GET', '/openapi/v3', 403, 'Forbidden', undefined, 'forbidden: User "x" cannot get path "/openapi/v3"');
  await expect(source.forKind('apps/v1', 'Deployment')).rejects.toThrow(/reading the OpenAPI v3 schema GET \/openapi\/v3: .*403 Forbidden/);
  await expect(source.forKind('apps/v1', 'Deployment')).rejects.toThrow(/403/);
  expect(client.calls).toHaveLength(1);
  client.fail = undefined;
  advance(1000);
  expect((await source.forKind('apps/v1', 'Deployment'))?.field('spec')?.field('overhead')?.field('x')?.form).toBe('resource-list-quantity');
  expect(requests()).toEqual(['GET /openapi/v3', 'GET /openapi/v3', 'GET /openapi/v3/apis/apps/v1?hash=ABC']);
});
