/**
 * CPU our process spends per watch re-open, beside the CPU of one GET, side by side in one run against a
 * real local kube-apiserver: what each of a replica's watches costs it while nothing changes.
 *
 * ```
 * npx tsx bench/watch-reopen-cost.ts [--watches 44] [--timeout-seconds 2] [--seconds 30] [--gets 1000]
 * ```
 *
 * Why: every {@link Watcher} re-opens its watch when the server ends it at `timeoutSeconds` (a random
 * 30–45 s by default: the watch's heartbeat over HTTP/1.1, lib/runtime/cache/watch-heartbeat.ts), so an
 * idle replica's CPU grows with its number of watches: a `run --sharding` replica holding 11 of 32
 * buckets runs 11 × 4 per-bucket watches of the memcached example (docs/how-to/sharding.md).
 *
 * What it does: one {@link ApiClient} (as the runtime makes it: node:https, a keep-alive agent) and
 * `--watches` {@link Watcher}s on ConfigMaps, each with its own label selector that matches nothing (so
 * each stream carries no events), opened with `--timeout-seconds` (short, so a window holds many
 * re-opens); after the first lists, `--seconds` of re-opens are measured: the process's CPU (utime +
 * stime), the re-opens (the watchers' `restarted` metric) and the TLS connections opened meanwhile
 * (`tls.connect`; 0 means each re-open went out on its pooled socket). Then, with the watchers stopped,
 * `--gets` GETs of one ConfigMap through the same client, one at a time. Prints one JSON object: CPU per
 * re-open and per GET (ms), their ratio, and what a watch costs an idle replica at the default timeout
 * (per re-open ÷ the default's mean 37.5 s, in ms of CPU per second).
 */
import tls from 'node:tls';
import { ApiClient } from '../lib/runtime/client/api-client.js';
import { Watcher, DEFAULT_WATCH_TIMEOUT_SECONDS } from '../lib/runtime/cache/watcher.js';
import { startControlPlane } from '../lib/testing/control-plane.js';
import { benchOptions } from './bench-options.js';
import { waitFor } from './wait-for.js';

const { number } = benchOptions({
  watches: { type: 'string', default: '44' },
  'timeout-seconds': { type: 'string', default: '2' },
  seconds: { type: 'string', default: '30' },
  gets: { type: 'string', default: '1000' },
});
const WATCHES = number('watches');
const TIMEOUT_SECONDS = number('timeout-seconds');
const SECONDS = number('seconds');
const GETS = number('gets');

// Count the TLS connections the process opens (node:https's agent calls tls.connect for each new socket).
let tlsConnects = 0;
const connect = tls.connect;
(tls as { connect: typeof tls.connect }).connect = ((...args: Parameters<typeof tls.connect>) => {
  tlsConnects++;
  return connect(...args);
}) as typeof tls.connect;

const cpuMs = (since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
};

const plane = await startControlPlane({ components: { controllerManager: false, scheduler: false, kwok: false } });
const client = new ApiClient({ kubeConfig: plane.kubeConfig });
try {
  const configMaps = { group: '', version: 'v1', plural: 'configmaps', namespaced: true };
  await client.request('POST', '/api/v1/namespaces/default/configmaps', { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'watch-reopen-cost' } } });

  let reopens = 0;
  const reopened = new Set<number>();
  const watchers = Array.from(
    { length: WATCHES },
    (_, i) =>
      new Watcher({
        client,
        resource: configMaps,
        namespace: 'default',
        labelSelector: `watch-reopen-cost=w${i}`,
        timeoutSeconds: TIMEOUT_SECONDS,
        onChange: () => {},
        metrics: {
          restarted: (_resource, reason) => {
            if (reason !== 'closed') return;
            reopens++;
            reopened.add(i);
          },
        },
      }),
  );
  for (const watcher of watchers) watcher.start();
  await Promise.all(watchers.map((watcher) => watcher.waitForSync()));
  // Every watcher has re-opened once: its socket is pooled and the path warm.
  await waitFor('a first re-open of every watch', () => reopened.size === WATCHES, 60_000);

  const reopensBefore = reopens;
  const tlsBefore = tlsConnects;
  const cpuBefore = process.cpuUsage();
  await new Promise((resolve) => setTimeout(resolve, SECONDS * 1000));
  const watchCpuMs = cpuMs(cpuBefore);
  const measuredReopens = reopens - reopensBefore;
  const newTls = tlsConnects - tlsBefore;
  await Promise.all(watchers.map((watcher) => watcher.stop()));

  const path = '/api/v1/namespaces/default/configmaps/watch-reopen-cost';
  for (let i = 0; i < 100; i++) await client.request('GET', path);
  const getCpuBefore = process.cpuUsage();
  for (let i = 0; i < GETS; i++) await client.request('GET', path);
  const getCpuMs = cpuMs(getCpuBefore);

  const perReopenMs = watchCpuMs / Math.max(1, measuredReopens);
  const perGetMs = getCpuMs / GETS;
  const defaultMeanSeconds = (DEFAULT_WATCH_TIMEOUT_SECONDS.min + DEFAULT_WATCH_TIMEOUT_SECONDS.max) / 2;
  process.stdout.write(
    `${JSON.stringify(
      {
        node: process.version,
        watches: WATCHES,
        timeoutSeconds: TIMEOUT_SECONDS,
        windowSeconds: SECONDS,
        reopens: measuredReopens,
        tlsConnectionsOpenedInWindow: newTls,
        cpuMsPerReopen: Number(perReopenMs.toFixed(3)),
        cpuMsPerGet: Number(perGetMs.toFixed(3)),
        reopenOverGet: Number((perReopenMs / perGetMs).toFixed(2)),
        idleCpuMsPerSecondPerWatchAtDefaultTimeout: Number((perReopenMs / defaultMeanSeconds).toFixed(3)),
      },
      null,
      2,
    )}\n`,
  );
} finally {
  client.close();
  await plane.stop();
}
