/**
 * What render may return besides its children: `{ status, requeueAfter }` (render-result.ts), checked
 * directly and through renderCustomResource.
 */
import { ApiObject, App, Duration } from 'cdk8s';
import { z } from 'zod';
import { RenderError } from '../../lib/operator/errors.js';
import { renderCustomResource } from '../../lib/operator/render/render-children.js';
import { RUNTIME_STATUS_FIELDS } from '../../lib/operator/schema/crd.js';
import { MAX_REQUEUE_AFTER_MS, MIN_REQUEUE_AFTER_MS, renderResultOf } from '../../lib/operator/render/render-result.js';
import { ContextOperator, refCr } from './fixtures/context-operators.js';

const REF = { apiVersion: 'demo.example.com/v1', kind: 'Ref', namespace: 'team-a', name: 'shop' };

const Status = z.object({
  nodes: z.array(z.string()).describe('Pods seen.'),
  phase: z.enum(['Pending', 'Running']).default('Pending'),
  endpoint: z.string().optional(),
});

function renderError(fn: () => unknown): RenderError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(RenderError);
    return e as RenderError;
  }
  throw new Error('expected a RenderError');
}

/** An operator with the Status schema (or none, with `null`) whose render returns `result`. */
function returning(result: unknown, status: z.ZodType | null = Status) {
  return new ContextOperator(new App(), status ? { status } : {}, (_cr, scope) => {
    new ApiObject(scope, 'config', { apiVersion: 'v1', kind: 'ConfigMap' });
    return result;
  });
}

describe('renderResultOf: shape', () => {
  test.each([undefined, null, {}])('GIVEN render returns %p THEN there is no status and no requeue', (returned) => {
    expect(renderResultOf(returned, Status, REF)).toEqual({});
  });

  test.each([
    ['an array', [], 'got an array'],
    ['a string', 'ok', 'got string'],
    ['a number', 5, 'got number'],
  ])('GIVEN render returns %s THEN InvalidResult says what it got', (_what, returned, detail) => {
    const error = renderError(() => renderResultOf(returned, Status, REF));
    expect(error.reason).toBe('InvalidResult');
    expect(error.message).toContain('render() must return nothing or { status?, requeueAfter? }');
    expect(error.message).toContain(detail);
  });

  test('GIVEN render returns unknown keys THEN InvalidResult lists them and names the CR', () => {
    const error = renderError(() => renderResultOf({ status: { nodes: [] }, requeue: true, children: [] }, Status, REF));
    expect(error.reason).toBe('InvalidResult');
    expect(error.message).toBe('render Ref team-a/shop: render() returned unknown field(s) requeue, children; expected status, requeueAfter');
  });
});

describe('renderResultOf: status', () => {
  test('GIVEN a valid status THEN it is returned with defaults applied and unknown fields stripped, as a copy', () => {
    const status = { nodes: ['a'], extra: 'x' };
    const out = renderResultOf({ status }, Status, REF);
    expect(out).toEqual({ status: { nodes: ['a'], phase: 'Pending' } });
    status.nodes.push('b');
    expect(out.status!.nodes).toEqual(['a']);
  });

  test('GIVEN a status that violates the schema THEN InvalidStatus names every status.<path>', () => {
    const error = renderError(() => renderResultOf({ status: { nodes: ['a', 3], phase: 'Broken' } }, Status, REF));
    expect(error.reason).toBe('InvalidStatus');
    expect(error.message).toMatch(/^render Ref team-a\/shop: status\.nodes\.1: .+; status\.phase: .+/);
  });

  test('GIVEN a status that is missing a required field THEN InvalidStatus names it', () => {
    const error = renderError(() => renderResultOf({ status: {} }, Status, REF));
    expect(error.reason).toBe('InvalidStatus');
    expect(error.message).toContain('status.nodes: ');
  });

  test('GIVEN a status but no status schema THEN InvalidStatus says the operator declares none', () => {
    const error = renderError(() => renderResultOf({ status: { nodes: [] } }, undefined, REF));
    expect(error.reason).toBe('InvalidStatus');
    expect(error.message).toContain('render() returned a status, but the operator declares no `status` schema');
  });

  test.each([...RUNTIME_STATUS_FIELDS])('GIVEN a status schema that lets %s through THEN InvalidStatus refuses the runtime-owned key', (key) => {
    const loose = z.looseObject({ nodes: z.array(z.string()) });
    const error = renderError(() => renderResultOf({ status: { nodes: [], [key]: 1 } }, loose, REF));
    expect(error.reason).toBe('InvalidStatus');
    expect(error.message).toContain(`status.${key} is written by the runtime; use another field name`);
  });

  test('GIVEN a schema whose output is not an object THEN InvalidStatus', () => {
    const error = renderError(() => renderResultOf({ status: 'ok' }, z.string(), REF));
    expect(error.reason).toBe('InvalidStatus');
    expect(error.message).toContain('status must be an object');
  });
});

describe('renderResultOf: requeueAfter', () => {
  test.each([
    ['Duration.minutes(5)', Duration.minutes(5), 300_000],
    ['Duration.seconds(1)', Duration.seconds(1), 1_000],
    ['Duration.millis(10), raised to 1 s', Duration.millis(10), MIN_REQUEUE_AFTER_MS],
    ['Duration.millis(1), raised to 1 s', Duration.millis(1), 1_000],
    ['Duration.hours(24)', Duration.hours(24), 86_400_000],
    ['Duration.days(2), capped at 24 h', Duration.days(2), MAX_REQUEUE_AFTER_MS],
    ['any { toMilliseconds }, rounded', { toMilliseconds: () => 1500.6 }, 1501],
  ])('GIVEN %s THEN requeueAfterMs is as expected', (_what, requeueAfter, ms) => {
    expect(renderResultOf({ requeueAfter }, undefined, REF)).toEqual({ requeueAfterMs: ms });
  });

  test('GIVEN the caps THEN they are 1 s and 24 h', () => {
    expect([MIN_REQUEUE_AFTER_MS, MAX_REQUEUE_AFTER_MS]).toEqual([1_000, 24 * 60 * 60 * 1_000]);
  });

  test.each([
    ['zero', Duration.seconds(0)],
    ['negative', { toMilliseconds: () => -5 }],
    ['NaN', { toMilliseconds: () => NaN }],
    ['Infinity', { toMilliseconds: () => Infinity }],
    ['a bare number', 5000],
    ['a string', '5m'],
    ['null', null],
  ])('GIVEN requeueAfter %s THEN InvalidResult asks for a positive Duration', (_what, requeueAfter) => {
    const error = renderError(() => renderResultOf({ requeueAfter }, undefined, REF));
    expect(error.reason).toBe('InvalidResult');
    expect(error.message).toContain('requeueAfter must be a positive Duration (e.g. Duration.minutes(5)), got ');
  });
});

describe('renderCustomResource: the render result', () => {
  test('GIVEN render returns a status and a requeue THEN the output carries the validated status and requeueAfterMs next to the children', () => {
    const output = renderCustomResource(returning({ status: { nodes: ['b', 'a'] }, requeueAfter: Duration.minutes(10) }), refCr());
    expect(output.status).toEqual({ nodes: ['b', 'a'], phase: 'Pending' });
    expect(output.requeueAfterMs).toBe(600_000);
    expect(output.children.map((c) => `${c.kind} ${c.metadata.name}`)).toEqual(['ConfigMap shop-config']);
  });

  test('GIVEN render returns nothing THEN the output has neither status nor requeueAfterMs', () => {
    const output = renderCustomResource(returning(undefined), refCr());
    expect('status' in output).toBe(false);
    expect('requeueAfterMs' in output).toBe(false);
  });

  test('GIVEN render returns an invalid status THEN renderCustomResource throws InvalidStatus naming the CR and status.<path>', () => {
    const error = renderError(() => renderCustomResource(returning({ status: { nodes: 'a' } }), refCr()));
    expect(error.reason).toBe('InvalidStatus');
    expect(error.message).toMatch(/^render Ref team-a\/shop: status\.nodes: /);
  });

  test('GIVEN an operator without status schema WHEN render returns a status THEN InvalidStatus', () => {
    const error = renderError(() => renderCustomResource(returning({ status: { nodes: [] } }, null), refCr()));
    expect(error.reason).toBe('InvalidStatus');
  });

  test('GIVEN render returns an unknown key THEN InvalidResult', () => {
    const error = renderError(() => renderCustomResource(returning({ requeue: Duration.seconds(5) }), refCr()));
    expect(error.reason).toBe('InvalidResult');
    expect(error.message).toContain('unknown field(s) requeue');
  });

  test('GIVEN render returns a negative requeue THEN InvalidResult', () => {
    const error = renderError(() => renderCustomResource(returning({ requeueAfter: { toMilliseconds: () => -1 } }), refCr()));
    expect(error.reason).toBe('InvalidResult');
  });

  test('GIVEN a cdk8s Duration of NaN seconds (its toMilliseconds throws) WHEN returned THEN the render is refused', () => {
    // cdk8s itself throws "'NaN seconds' cannot be converted into a whole number of millis".
    expect(() => renderCustomResource(returning({ requeueAfter: Duration.seconds(NaN) }), refCr())).toThrow(
      expect.objectContaining({ reason: 'InvalidResult', message: expect.stringContaining('requeueAfter must be a positive Duration') }),
    );
  });

  test('GIVEN the same CR WHEN rendered twice THEN status and requeue are identical', () => {
    const operator = new ContextOperator(new App(), { status: Status }, (cr, scope) => {
      new ApiObject(scope, 'config', { apiVersion: 'v1', kind: 'ConfigMap' });
      return { status: { nodes: [cr.metadata.name], phase: 'Running' }, requeueAfter: Duration.seconds(30) };
    });
    const pick = (o: ReturnType<typeof renderCustomResource>) => JSON.stringify({ status: o.status, requeueAfterMs: o.requeueAfterMs, children: o.children });
    expect(pick(renderCustomResource(operator, refCr()))).toBe(pick(renderCustomResource(operator, refCr())));
    expect(renderCustomResource(operator, refCr()).status).toEqual({ nodes: ['shop'], phase: 'Running' });
  });
});
