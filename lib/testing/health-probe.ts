/**
 * Polls an HTTP(S) health endpoint (`/health`, `/healthz`, `/readyz`) until it answers 200.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest, type RequestOptions } from 'node:https';

/** TLS material for an https probe. Default: none, and the server certificate is not verified. */
export interface ProbeTls {
  /** CA (PEM) to verify the server with. Without it the certificate is not verified (loopback only). */
  readonly ca?: string;
  /** Client certificate and key (PEM). */
  readonly cert?: string;
  readonly key?: string;
}

/** Outcome of one probe: the status code (0 when the connection failed) and the body or error text. */
export interface ProbeResult {
  readonly statusCode: number;
  readonly body: string;
}

/** GETs `url` once; never rejects. `timeoutMs` default 2000. */
export async function probeOnce(url: string, tls: ProbeTls = {}, timeoutMs = 2000): Promise<ProbeResult> {
  const target = new URL(url);
  const options: RequestOptions = {
    method: 'GET',
    hostname: target.hostname,
    port: target.port,
    path: target.pathname + target.search,
    timeout: timeoutMs,
  };
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  if (target.protocol === 'https:') {
    Object.assign(options, { ca: tls.ca, cert: tls.cert, key: tls.key, rejectUnauthorized: tls.ca !== undefined });
  }
  return await new Promise<ProbeResult>((resolve) => {
    const outgoing = send(options, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ statusCode: response.statusCode ?? 0, body }));
      response.on('error', (err) => resolve({ statusCode: 0, body: err.message }));
    });
    outgoing.on('timeout', () => outgoing.destroy(new Error(`no response within ${timeoutMs} ms`)));
    outgoing.on('error', (err) => resolve({ statusCode: 0, body: err.message }));
    outgoing.end();
  });
}

/** Options of {@link waitUntil}. */
export interface WaitOptions {
  /** Give up after this many milliseconds. */
  readonly timeoutMs: number;
  /** Delay between attempts in milliseconds. Default 100. */
  readonly intervalMs?: number;
  /** Stop waiting early when this settles (e.g. the process exited); its rejection is rethrown. */
  readonly abort?: Promise<never>;
}

/**
 * Calls `check` until it returns `{ ok: true }`. `check` returns a `detail` for the timeout message.
 *
 * @throws Error `"<what>: not ready after <timeoutMs> ms (last: <detail>)"` on timeout, or the rejection of `abort`.
 */
export async function waitUntil(
  what: string,
  check: () => Promise<{ ok: boolean; detail: string }>,
  options: WaitOptions,
): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  const interval = options.intervalMs ?? 100;
  let last = 'no attempt yet';
  let aborted: unknown;
  let abortedSet = false;
  options.abort?.catch((err: unknown) => {
    aborted = err;
    abortedSet = true;
  });
  for (;;) {
    if (abortedSet) throw aborted;
    try {
      const result = await check();
      if (result.ok) return;
      last = result.detail;
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
    if (abortedSet) throw aborted;
    if (Date.now() >= deadline) throw new Error(`${what}: not ready after ${options.timeoutMs} ms (last: ${last})`);
    await new Promise((r) => setTimeout(r, interval));
  }
}
