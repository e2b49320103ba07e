import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

/**
 * The benches that need no control plane, each run once at a tiny size: they are run by hand only, so
 * a change to the code they drive broke them unseen (bench:related-fan-out's stand-in informer lacked
 * `transformFailure` for a day). Each must exit 0 and print its figures as JSON (its last JSON
 * object), with the size it was given. Figures are not judged: they are measured by hand.
 */
const root = fileURLToPath(new URL('../../..', import.meta.url));
const run = promisify(execFile);

/** The last JSON object a bench printed: a line `{…}`, or a pretty-printed object from its `{` line to the end. */
function lastJson(stdout: string): Record<string, unknown> {
  const lines = stdout.trimEnd().split('\n');
  const last = lines[lines.length - 1]!;
  if (last.startsWith('{')) return JSON.parse(last) as Record<string, unknown>;
  return JSON.parse(lines.slice(lines.lastIndexOf('{')).join('\n')) as Record<string, unknown>;
}

const benches: { bench: string; args: string[]; check: (figures: Record<string, unknown>) => void }[] = [
  { bench: 'bucket-spread', args: ['--rings', '20', '--buckets', '8,16'], check: (f) => expect(f).toMatchObject({ replicas: 3, rings: 20 }) },
  { bench: 'fair-queue', args: ['--crs', '20', '--gets', '100'], check: (f) => expect(f).toMatchObject({ startUp: { crs: 20 } }) },
  { bench: 'related-fan-out', args: ['--crs', '20'], check: (f) => expect(f).toMatchObject({ crs: 20, labelAdded: { before: 20, after: 0 } }) },
  { bench: 'validate-cr-status', args: ['--calls', '5'], check: (f) => expect(f).toMatchObject({ kind: 'Memcached', calls: 5, errors: [] }) },
];

describe('benches without a control plane', () => {
  test.each(benches)('GIVEN bench/$bench.ts at a tiny size WHEN run THEN it exits 0 and prints its figures as JSON', async ({ bench, args, check }) => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', `bench/${bench}.ts`, ...args], { cwd: root, env: { ...process.env, NODE_OPTIONS: '' }, maxBuffer: 16 * 1024 * 1024 });
    check(lastJson(stdout));
  }, 120_000);
});
