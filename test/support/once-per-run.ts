/**
 * Work shared by every test file of one jest run (an npm pack, a consumer project's install): the first
 * caller does it, the others, in any worker, wait for its result. jest.config.js gives each run its own
 * directory (CDK8S_OPERATOR_TEST_RUN_DIR).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { waitUntil } from '../../lib/testing/health-probe.js';

/** Set by jest.config.js: a directory of this jest run. */
export const TEST_RUN_DIR_ENV = 'CDK8S_OPERATOR_TEST_RUN_DIR';

/** This run's directory. @throws Error when jest ran without jest.config.js */
export function testRunDir(): string {
  const runDir = process.env[TEST_RUN_DIR_ENV];
  if (!runDir) throw new Error(`${TEST_RUN_DIR_ENV} is not set: run the tests through jest.config.js (npm test)`);
  return runDir;
}

/**
 * The string `produce` returned for `key` in this run, calling it only in the first caller.
 * `produce` gets a fresh directory of its own (`<run dir>/<key>`).
 *
 * @throws Error with the first caller's failure, in every caller
 */
export async function oncePerRun(key: string, produce: (dir: string) => Promise<string>, timeoutMs = 15 * 60_000): Promise<string> {
  const dir = join(testRunDir(), key);
  const done = `${dir}.done`;
  const failed = `${dir}.failed`;
  let first = true;
  try {
    mkdirSync(dir);
  } catch {
    first = false;
  }
  if (first) {
    try {
      writeFileSync(done, await produce(dir));
    } catch (error) {
      const stderr = (error as { stderr?: unknown }).stderr;
      writeFileSync(failed, `${error instanceof Error ? error.message : String(error)}${stderr ? `\n${String(stderr)}` : ''}`);
    }
  } else {
    await waitUntil(key, async () => ({ ok: existsSync(done) || existsSync(failed), detail: 'still in progress in another test file' }), {
      timeoutMs,
      intervalMs: 250,
    });
  }
  if (existsSync(failed)) throw new Error(`${key} failed: ${readFileSync(failed, 'utf8')}`);
  return readFileSync(done, 'utf8');
}
