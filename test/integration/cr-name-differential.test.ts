/**
 * CR names, differentially: for each kind of `crNameRule`, the synthesized CRD is installed on the real
 * API server, and generated names (dots, leading digits, upper case, every length up to 253 and past
 * it) are created there with dryRun=All and validated offline (`parseCustomResource`, what `render -f`
 * and the snapshot helpers run). The verdicts must agree, and a refused name is refused at
 * `metadata.name` on both sides.
 */
import fc from 'fast-check';
import { App } from 'cdk8s';
import type { CrNameRule } from '../../lib/operator/schema/cr-name-rule.js';
import { CustomResourceValidationError } from '../../lib/operator/errors.js';
import { ApiClient } from '../../lib/runtime/client/api-client.js';
import { createTestNamespace, testKubeConfig } from '../support/cluster.js';
import { eventually } from '../support/eventually.js';
import { ScriptedOperator } from '../operator/fixtures/test-operators.js';

const kubeConfig = testKubeConfig();
const client = new ApiClient({ kubeConfig });
let namespace: string;

beforeAll(async () => {
  namespace = await createTestNamespace('cr-names', client);
}, 60_000);

const RULES: { id: string; rule?: CrNameRule }[] = [
  { id: 'default' },
  { id: 'label52', rule: { format: 'dns1123-label', maxLength: 52 } },
  { id: 'subdomain100', rule: { format: 'dns1123-subdomain', maxLength: 100 } },
  { id: 'server', rule: { format: 'dns1123-subdomain', maxLength: 253 } },
];

/** Names around every boundary the rules have: alphabet, leading character, dots, lengths 52/63/100/253. */
const names = fc.oneof(
  fc.stringMatching(/^[a-z0-9][-a-z0-9.]{0,30}[a-z0-9]$/),
  fc.tuple(fc.constantFrom('a', '7', 'A', '-', '.'), fc.integer({ min: 0, max: 260 }), fc.constantFrom('', 'z', '9', '.b', '-')).map(([head, n, tail]) => head + 'x'.repeat(n) + tail),
  fc.constantFrom('a', 'a.b', '2-pea', 'x'.repeat(52), 'x'.repeat(53), 'x'.repeat(63), 'x'.repeat(64), 'x'.repeat(100), 'x'.repeat(101), 'x'.repeat(253), 'x'.repeat(254), 'Upper'),
).filter((name) => name.length > 0);

describe.each(RULES)('crNameRule $id', ({ id, rule }) => {
  const group = `${id}.names.example.com`;
  const operator = new ScriptedOperator(new App(), `${id}-operator`, { group, kind: 'Web', ...(rule ? { crNameRule: rule } : {}) }, () => undefined);
  const crd = operator.customResourceDefinition.toJson() as { metadata: { name: string } };
  const collection = () => `/apis/${group}/v1alpha1/namespaces/${namespace}/webs`;

  beforeAll(async () => {
    const created = await ApiClient.sendOnce({ kubeConfig }, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: crd });
    if (created.statusCode !== 201) throw new Error(`the API server refused the synthesized CRD: ${created.statusCode} ${created.body}`);
    await eventually(`${crd.metadata.name} served`, async () => (await ApiClient.sendOnce({ kubeConfig }, 'GET', collection())).statusCode === 200 || undefined, { timeoutMs: 60_000 });
  }, 90_000);

  test('GIVEN generated names WHEN created on the server (dryRun) and validated offline THEN the verdicts agree, and both refuse at metadata.name', async () => {
    const verdicts = { accepted: 0, refused: 0 };
    await fc.assert(
      fc.asyncProperty(names, async (name) => {
        const cr = { apiVersion: `${group}/v1alpha1`, kind: 'Web', metadata: { name, namespace }, spec: { image: 'nginx:1.27' } };
        const res = await ApiClient.sendOnce({ kubeConfig }, 'POST', `${collection()}?dryRun=All`, { body: cr, timeoutMs: 30_000 });
        if (res.statusCode !== 201 && res.statusCode !== 422) throw new Error(`unexpected answer ${res.statusCode}: ${res.body.slice(0, 500)}`);
        let offline: CustomResourceValidationError | undefined;
        try {
          operator.parseCustomResource(cr);
        } catch (err) {
          if (!(err instanceof CustomResourceValidationError)) throw err;
          offline = err;
        }
        expect({ name, server: res.statusCode === 201, offline: offline === undefined }).toEqual({ name, server: offline === undefined, offline: offline === undefined });
        if (res.statusCode === 201) {
          verdicts.accepted++;
          return;
        }
        verdicts.refused++;
        const causes = (JSON.parse(res.body) as { details?: { causes?: { field?: string; message?: string }[] } }).details?.causes ?? [];
        expect(causes.map((c) => c.field)).toContain('metadata.name');
        expect(offline!.message).toContain(`metadata.name: Invalid value: ${JSON.stringify(name)}`);
      }),
      { numRuns: 120 },
    );
    expect({ accepted: verdicts.accepted > 0, refused: verdicts.refused > 0 }).toEqual({ accepted: true, refused: true });
  }, 600_000);
});
