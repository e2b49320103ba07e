import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCliLogger } from '../../lib/cli/cli-logger.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cli-logger-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

test('GIVEN --log-format json THEN one JSON object per line with the fields, filtered by level', async () => {
  const file = join(dir, 'json.log');
  const logger = createCliLogger({ level: 'info', format: 'json', destination: file });
  logger.debug({ hidden: true }, 'not shown');
  logger.info({ controller: 'memcached-operator', namespace: 'ns', name: 'x', reconcileID: 'r1' }, 'created child');
  const lines = (await readFile(file, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatchObject({ level: 30, msg: 'created child', controller: 'memcached-operator', namespace: 'ns', name: 'x', reconcileID: 'r1', component: 'cdk8s-operator' });
});

test('GIVEN --log-format text THEN one human-readable line per record (pino-pretty, fields on the line), not JSON', async () => {
  const file = join(dir, 'text.log');
  const logger = createCliLogger({ level: 'info', format: 'text', destination: file });
  logger.warn({ controller: 'app-operator', retries: 2 }, 'reconcile failed');
  const text = await readFile(file, 'utf8');
  expect(text).toMatch(/^\[[\d:.]+\] WARN: reconcile failed \{"controller":"app-operator","retries":2\}\n$/);
  expect(() => JSON.parse(text.split('\n')[0])).toThrow();
});

test('GIVEN --log-format text and an error with a stack THEN the fields stay on the line and the stack follows it, frame per line', async () => {
  const file = join(dir, 'text-err.log');
  const logger = createCliLogger({ level: 'info', format: 'text', destination: file });
  const err = new Error('render failed');
  logger.error({ cr: 'App ns/a', err: { message: err.message, stack: err.stack } }, 'Reconciler error');
  const lines = (await readFile(file, 'utf8')).split('\n');
  expect(lines[0]).toMatch(/ERROR: Reconciler error \{"cr":"App ns\/a"\}$/);
  expect(lines.some((line) => /^\s+at .*cli-logger\.test\.ts:\d+:\d+/.test(line))).toBe(true);
});

test('GIVEN --log-format text and textOmits (dev) THEN those fields are left out of the line and the others stay', async () => {
  const file = join(dir, 'omits.log');
  const logger = createCliLogger({ level: 'info', format: 'text', destination: file, textOmits: ['reconcileID', 'controller'] });
  logger.info({ controller: 'app-operator', reconcileID: 'r1', key: 'ns/x' }, 'created child');
  expect(await readFile(file, 'utf8')).toMatch(/^\[[\d:.]+\] INFO: created child \{"key":"ns\/x"\}\n$/);
});

test('GIVEN an unknown level or format THEN an error naming the valid ones', () => {
  expect(() => createCliLogger({ level: 'loud' })).toThrow(/unknown log level "loud"; one of .*debug/);
  expect(() => createCliLogger({ format: 'xml' as never })).toThrow('unknown log format "xml"; one of json, text');
});
