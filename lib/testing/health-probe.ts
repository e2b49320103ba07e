/**
 * Polls an HTTP(S) health endpoint (`/health`, `/healthz`, `/readyz`) until it answers 200.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import { messageOf } from '../error-text.js';

/** TLS material for an https probe (ignored for http). */
export interface ProbeTls {
  /** CA (PEM) to verify the server with. @default none: the certificate is not verified (loopback only) */
  readonly ca?: string;
  /** Client certificate (PEM), sent with `key`. @default none: no client certificate */
  readonly cert?: string;
  /** Private key (PEM) of `cert`. @default none */
  readonly key?: string;
}

/** Outcome of one probe: the status code (0 when the connection failed) and the body or error text. */
export interface ProbeResult {
  readonly statusCode: number;
  readonly body: string;
}

/**
 * GETs `url` (http or https) once; never rejects.
 *
 * @param tls default `{}`: no client certificate, and the server certificate is not verified
 * @param timeoutMs how long to wait for an answer, in ms; default 2000: a health endpoint on loopback
 *   answers in milliseconds, and a hung one must not stall the polling loop
 * @returns the status code and body; status code 0 and the error text when the connection failed or
 *   timed out
 */
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
  /** Give up after this many milliseconds (at least one attempt is made). */
  readonly timeoutMs: number;
  /**
   * Delay between attempts in milliseconds.
   * @default 100 ms: a wait ends soon after its condition holds, without busy-polling a starting component
   */
  readonly intervalMs?: number;
  /** Stop waiting early when this settles (e.g. the process exited); its rejection is rethrown. @default none */
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
      last = messageOf(err);
    }
    if (abortedSet) throw aborted;
    if (Date.now() >= deadline) throw new Error(`${what}: not ready after ${options.timeoutMs} ms (last: ${last})`);
    await new Promise((r) => setTimeout(r, interval));
  }
}
