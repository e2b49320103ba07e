import { fieldsOf, type FieldSet } from '../../../lib/runtime/reconcile/managed-fields.js';

// A Deployment as the API server returns it after an operator's apply and kube-controller-manager's
// writes, and the operator's managedFields entry (fieldsV1) as the server records it.
const deployment = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: {
    name: 'web',
    namespace: 'default',
    labels: { app: 'web', team: 'other' },
    annotations: { 'deployment.kubernetes.io/revision': '2', 'example.com/owned': 'yes' },
  },
  spec: {
    replicas: 2,
    revisionHistoryLimit: 10,
    template: {
      spec: {
        containers: [
          { name: 'app', image: 'app:2', args: ['-v'], terminationMessagePath: '/dev/termination-log' },
          { name: 'sidecar', image: 'sidecar:1' },
        ],
        tolerations: [{ key: 'a', operator: 'Exists' }],
      },
    },
  },
};

const operatorFields: FieldSet = {
  'f:metadata': { 'f:labels': { 'f:app': {} }, 'f:annotations': { '.': {}, 'f:example.com/owned': {} } },
  'f:spec': {
    'f:replicas': {},
    'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"app"}': { '.': {}, 'f:name': {}, 'f:image': {}, 'f:args': {} } } } },
  },
};

test('GIVEN an object and one manager\'s field set WHEN projected THEN only the fields it names are kept, list items by key', () => {
  expect(fieldsOf(deployment, operatorFields)).toEqual({
    metadata: { labels: { app: 'web' }, annotations: { 'example.com/owned': 'yes' } },
    spec: { replicas: 2, template: { spec: { containers: [{ name: 'app', image: 'app:2', args: ['-v'] }] } } },
  });
});

test('GIVEN set-valued and indexed list entries WHEN projected THEN v: matches by value and i: by position', () => {
  expect(fieldsOf({ finalizers: ['a', 'b', 'c'] }, { 'f:finalizers': { 'v:"b"': {}, 'v:"c"': {} } })).toEqual({ finalizers: ['b', 'c'] });
  expect(fieldsOf({ items: [{ x: 1 }, { x: 2 }] }, { 'f:items': { 'i:1': { 'f:x': {} } } })).toEqual({ items: [{ x: 2 }] });
  // A leaf keeps the whole value under it, a list included; a key that names nothing present adds nothing.
  expect(fieldsOf({ args: ['-v', '-m'], gone: undefined }, { 'f:args': {}, 'f:missing': {} })).toEqual({ args: ['-v', '-m'] });
  // A k: key whose fields differ from every item keeps none; the input is not modified.
  const input = { ports: [{ port: 80, protocol: 'TCP' }] };
  expect(fieldsOf(input, { 'f:ports': { 'k:{"port":81,"protocol":"TCP"}': { 'f:port': {} } } })).toEqual({ ports: [] });
  expect(input).toEqual({ ports: [{ port: 80, protocol: 'TCP' }] });
});
