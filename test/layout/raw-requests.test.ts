/**
 * Every request in lib/ goes through the typed client (lib/runtime/client/resource-client.ts: get, list,
 * watch, create, apply, applyStatus, patch, delete on a ResourceRef), so errors are mapped once and paths
 * are built once (issue 36, item 1). This counts the raw `KubeClient.request(…)` calls (also
 * `.request<T>(…)`) and `ApiClient`'s `send(…)` / `ApiClient.sendOnce(…)` (the raw answer, any status) in
 * lib/ outside lib/runtime/client, and fails above the limit. lib/cli/operator-host.ts is left out: its
 * `send` is the child process's IPC channel, not a request.
 *
 * What may stay raw: reads that are no resource (`/readyz` in lib/cli/env-command.ts and dev-command.ts,
 * discovery in lib/testing/install-crds.ts, the pod proxy in lib/cli/deploy-command.ts, which answers
 * the container's own body), and the local control plane's start-up requests (lib/testing/control-plane.ts
 * `adminRequest`, one call site). A KubeClient that wraps another (a class that `implements KubeClient`:
 * lib/cli/dry-run-client.ts, lib/cli/dry-run-writes.ts) forwards what its callers send and is not counted.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** The most raw requests allowed: issue 36's goal, 5 (today the five named above). */
const LIMIT = 5;

/** A call of a method named `request`, `send` or `sendOnce`, with or without type arguments: `x.request(`, `x.send<T>(`. */
const RAW_REQUEST = /\.(?:request|send|sendOnce)(<[^()]*>)?\(/g;
/** Files whose `send` is no API request. */
const NOT_REQUESTS = [join('lib', 'cli', 'operator-host.ts')];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

test(`GIVEN lib/ outside lib/runtime/client WHEN its raw .request( / .send( / .sendOnce( calls are counted THEN there are at most ${LIMIT}`, () => {
  const client = join(root, 'lib', 'runtime', 'client');
  const calls = sources(join(root, 'lib'))
    .filter((file) => !file.startsWith(client + '/'))
    .filter((file) => !NOT_REQUESTS.includes(relative(root, file)))
    .filter((file) => !/\bimplements KubeClient\b/.test(readFileSync(file, 'utf8')))
    .flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .flatMap((line, i) => [...line.matchAll(RAW_REQUEST)].map(() => `${relative(root, file)}:${i + 1}: ${line.trim()}`)),
    );
  // Named in the failure, so whoever adds one sees where they are.
  expect({ count: calls.length, calls }).toEqual({ count: Math.min(calls.length, LIMIT), calls });
});

test('GIVEN the pattern THEN it finds plain and typed calls and not a property named request', () => {
  const found = (text: string) => [...text.matchAll(RAW_REQUEST)].length;
  expect(found("client.request('GET', path)")).toBe(1);
  expect(found("this.client.request<{ items?: KubeObject[] }>('GET', path)")).toBe(1);
  expect(found('review.request?.uid; const request = review?.request;')).toBe(0);
  expect(found("client.send('GET', '/readyz')")).toBe(1);
  expect(found("ApiClient.sendOnce(options, 'GET', path)")).toBe(1);
  expect(found('const send = options.send; sender.sendOne(x)')).toBe(0);
});
