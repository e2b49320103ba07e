/**
 * A jest reporter for runs nobody watches (CI): it says what is running when a run takes long, and why
 * jest did not exit when it does not.
 *
 * - Every `intervalMs` (default 5 min) it prints, to stderr, each test file running for longer than that,
 *   with its start time, so a log cut off by an outer timeout names the file it was in.
 * - After the run it gives jest `exitGraceMs` (default 60 s) to exit. If jest is still alive then (an
 *   open handle: a child process, a socket, a server, a ref'd timer), it prints the handles Node reports
 *   and exits with the run's result, instead of waiting for ever ("Jest did not exit one second after the
 *   test run has completed"). Its timers are unref'd: a run that exits by itself is never delayed.
 *
 * Plain JS on purpose: jest loads reporters outside its transform.
 */
export default class ProgressReporter {
  /** @type {Map<string, number>} test file path → start time (ms since epoch) */
  #running = new Map();
  #intervalMs;
  #exitGraceMs;
  #rootDir;
  #ticker;

  constructor(globalConfig, options = {}) {
    this.#intervalMs = options.intervalMs ?? 5 * 60_000;
    this.#exitGraceMs = options.exitGraceMs ?? 60_000;
    this.#rootDir = globalConfig.rootDir;
  }

  onRunStart() {
    this.#ticker = setInterval(() => this.#reportLongRunning(), this.#intervalMs);
    this.#ticker.unref();
  }

  onTestFileStart(test) {
    this.#running.set(test.path, Date.now());
  }

  onTestFileResult(test) {
    this.#running.delete(test.path);
  }

  onRunComplete(_contexts, results) {
    clearInterval(this.#ticker);
    const failed = results.numFailedTests + results.numFailedTestSuites + results.numRuntimeErrorTestSuites;
    const code = failed === 0 ? 0 : 1;
    setTimeout(() => {
      process.stderr.write(
        `\n[progress] jest is still alive ${this.#exitGraceMs / 1000} s after the run ended; what keeps it alive:\n` +
          `${describeHandles().map((line) => `  ${line}\n`).join('')}` +
          `[progress] exiting with the run's result (${code})\n`,
      );
      process.exit(code);
    }, this.#exitGraceMs).unref();
  }

  #reportLongRunning() {
    const now = Date.now();
    for (const [path, startedAt] of this.#running) {
      if (now - startedAt < this.#intervalMs) continue;
      const file = path.startsWith(this.#rootDir) ? path.slice(this.#rootDir.length + 1) : path;
      process.stderr.write(`[progress] ${new Date(now).toISOString()} still running after ${Math.round((now - startedAt) / 1000)} s: ${file} (started ${new Date(startedAt).toISOString()})\n`);
    }
  }
}

/** One line per handle or resource that keeps the event loop alive. */
function describeHandles() {
  const lines = [];
  const handles = typeof process._getActiveHandles === 'function' ? process._getActiveHandles() : [];
  for (const handle of handles) {
    if (handle === process.stdout || handle === process.stderr || handle === process.stdin) continue;
    const name = handle?.constructor?.name ?? typeof handle;
    if (name === 'ChildProcess') lines.push(`child process pid ${handle.pid}: ${(handle.spawnargs ?? []).join(' ').slice(0, 300)}`);
    else if (name === 'Socket') lines.push(`socket ${handle.localAddress ?? ''}:${handle.localPort ?? ''} -> ${handle.remoteAddress ?? ''}:${handle.remotePort ?? ''}`);
    else if (name === 'Server') lines.push(`server listening on ${JSON.stringify(handle.address?.())}`);
    else lines.push(name);
  }
  if (typeof process.getActiveResourcesInfo === 'function') lines.push(`resources: ${process.getActiveResourcesInfo().join(', ')}`);
  return lines;
}
