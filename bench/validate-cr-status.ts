/**
 * Benchmark (not a test) for issue 34's "run --validate-children also checks the CR's own status against
 * the CRD, if cheap": what one offline verdict on a CR's status update costs (lib/validator's
 * validateCustomResource: the API server's own CR validation, CEL included), beside one render of the
 * same CR. Prints one JSON line of medians.
 *
 * ```
 * npx tsx bench/validate-cr-status.ts [--calls 500]
 * ```
 *
 * The CR is the Memcached example (operators/memcached) with a status as the runtime writes it (a Ready
 * condition, two `status.children` entries, the operator's `nodes`), validated as an update of the same
 * CR without status (the status subresource's request). `firstCallMs` includes loading the validator and
 * compiling the CRD's rules; `perCallMs` is the median of `--calls` calls after it.
 */
import { App } from 'cdk8s';
import { renderCustomResource } from '../lib/operator/render/render-children.js';
import { validateCustomResource } from '../lib/validator/validate-custom-resource.js';
import { addOperators } from '../operators/index.js';
import { benchOptions } from './bench-options.js';

const calls = benchOptions({ calls: { type: 'string', default: '500' } }).number('calls');

const operator = addOperators(new App()).find((o) => o.crd.kind === 'Memcached');
if (!operator) throw new Error('no Memcached operator in operators/index.ts');
const crd = operator.customResourceDefinition.toJson() as object;
const example = operator.examples[0]!;
const cr = { ...example, metadata: { ...example.metadata, namespace: 'default', uid: '0b3c1c9e-5b0e-4a57-9a53-6f6d6c1b2a10', resourceVersion: '1', generation: 1 } };
const now = new Date().toISOString();
const status = {
  observedGeneration: 1,
  conditions: [{ type: 'Ready', status: 'True', reason: 'Reconciled', message: 'all children ready', lastTransitionTime: now, observedGeneration: 1 }],
  children: [
    { apiVersion: 'apps/v1', kind: 'Deployment', name: 'demo', namespace: 'default', ready: true },
    { apiVersion: 'v1', kind: 'Service', name: 'demo', namespace: 'default', ready: true },
  ],
  nodes: ['demo-0', 'demo-1'],
};
const updated = { ...cr, status };

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
let started = performance.now();
const firstErrors = validateCustomResource({ crd, object: updated, oldObject: cr });
const firstCallMs = performance.now() - started;
const perCall: number[] = [];
for (let i = 0; i < calls; i += 1) {
  started = performance.now();
  validateCustomResource({ crd, object: updated, oldObject: cr });
  perCall.push(performance.now() - started);
}
const perRender: number[] = [];
for (let i = 0; i < Math.min(calls, 200); i += 1) {
  started = performance.now();
  renderCustomResource(operator, cr as never);
  perRender.push(performance.now() - started);
}
console.log(JSON.stringify({
  kind: operator.crd.kind, calls, errors: firstErrors, firstCallMs: Math.round(firstCallMs), perCallMs: Math.round(median(perCall) * 100) / 100,
  renderMs: Math.round(median(perRender) * 100) / 100, rssMB: Math.round(process.memoryUsage().rss / 2 ** 20),
}));
