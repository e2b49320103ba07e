/**
 * Downloads one file over HTTP(S) to a path, hashing it as it streams, with progress lines, and refuses
 * it (deleting what was written) when it is shorter than its Content-Length or its digest is not the
 * published one. Only a file that passed both checks is left at the path.
 */
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { ExpectedDigest } from './published-digest.js';

/** Options of {@link downloadFile}. */
export interface DownloadFileOptions {
  /** The digest the file must have. */
  readonly expected: ExpectedDigest;
  /** Receives progress lines (start, every tenth of the size or 5 s, done). @default none */
  readonly log?: (line: string) => void;
  /** Name in progress lines and errors. @default the URL's last path segment */
  readonly label?: string;
  /**
   * How long the server may send nothing (before the headers or between chunks), in milliseconds.
   * @default 60000 ms: a minute without a byte is a stalled connection, not a slow one
   */
  readonly idleTimeoutMs?: number;
}

/** Request headers: GitHub's API refuses requests without a User-Agent. */
export const DOWNLOAD_HEADERS = { 'user-agent': 'cdk8s-operator-sdk (control-plane download)' } as const;

/** Seconds between progress lines when no tenth was crossed, so a slow download never looks hung. */
const PROGRESS_INTERVAL_MS = 5_000;

/** `n` bytes as MiB with one decimal (`12.3 MiB`). */
export function mebibytes(n: number): string {
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/** Progress as `received/total bytes (MiB, percent)` or, without a total, `received bytes`. */
function progress(received: number, total: number | undefined): string {
  if (total === undefined) return `${received} bytes (${mebibytes(received)})`;
  return `${received}/${total} bytes (${mebibytes(received)} of ${mebibytes(total)}, ${Math.floor((received / total) * 100)}%)`;
}

/** Aborts `signal` once `touch()` has not been called for `ms`; `stop()` ends the watch. */
function idleWatch(ms: number): { signal: AbortSignal; touch: () => void; stalled: () => boolean; stop: () => void } {
  const abort = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const touch = (): void => {
    clearTimeout(timer);
    timer = setTimeout(() => abort.abort(), ms);
  };
  touch();
  return { signal: abort.signal, touch, stalled: () => abort.signal.aborted, stop: () => clearTimeout(timer) };
}

/**
 * GETs `url` (following redirects, as release downloads need) into `path`.
 *
 * @throws Error, with nothing left at `path`, when: the request fails or answers other than 2xx (names
 *   the URL and status); the body ends before its Content-Length (`truncated: got N of M bytes`); the
 *   server sends nothing for `idleTimeoutMs` (`stalled`); or the digest differs (names the URL, where
 *   the expected digest was stated, expected and actual).
 */
export async function downloadFile(url: string, path: string, options: DownloadFileOptions): Promise<void> {
  const { expected, log } = options;
  const label = options.label ?? new URL(url).pathname.split('/').pop() ?? url;
  const idleTimeoutMs = options.idleTimeoutMs ?? 60_000;
  const idle = idleWatch(idleTimeoutMs);
  let received = 0;
  let total: number | undefined;
  const stalledError = (): Error =>
    new Error(`${label}: download from ${url} stalled: no bytes for ${idleTimeoutMs / 1000} s after ${received} of ${total ?? 'an unknown number of'} bytes`);
  const started = Date.now();
  try {
    let response: Response;
    try {
      // identity: a Content-Encoding would make Content-Length count other bytes than the file's.
      response = await fetch(url, { redirect: 'follow', headers: { ...DOWNLOAD_HEADERS, 'accept-encoding': 'identity' }, signal: idle.signal });
    } catch (err) {
      if (idle.stalled()) throw stalledError();
      throw new Error(`GET ${url}: ${(err as Error).message}${(err as Error).cause ? ` (${String((err as Error).cause)})` : ''}`, { cause: err });
    }
    if (!response.ok || !response.body) {
      await response.body?.cancel();
      throw new Error(`GET ${url}: HTTP ${response.status} ${response.statusText}`);
    }
    const lengthHeader = response.headers.get('content-length');
    total = lengthHeader !== null && /^\d+$/.test(lengthHeader) ? Number(lengthHeader) : undefined;
    log?.(`${label}: downloading ${url} (${total === undefined ? 'size unknown' : mebibytes(total)})`);

    const hash = createHash(expected.algorithm);
    let lastTenth = 0;
    let lastLineAt = Date.now();
    const count = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        idle.touch();
        hash.update(chunk);
        received += chunk.length;
        const tenth = total ? Math.floor((received / total) * 10) : 0;
        if ((tenth > lastTenth && received < (total ?? Infinity)) || Date.now() - lastLineAt >= PROGRESS_INTERVAL_MS) {
          lastTenth = Math.max(lastTenth, tenth);
          lastLineAt = Date.now();
          log?.(`${label}: ${progress(received, total)}`);
        }
        callback(null, chunk);
      },
    });
    try {
      try {
        await pipeline(Readable.fromWeb(response.body as WebReadableStream<Uint8Array>), count, createWriteStream(path, { mode: 0o600 }));
      } catch (err) {
        if (idle.stalled()) throw stalledError();
        throw new Error(`${label}: download from ${url} truncated: got ${received} of ${total ?? 'an unknown number of'} bytes (${(err as Error).message})`, { cause: err });
      }
      if (total !== undefined && received !== total) {
        throw new Error(`${label}: download from ${url} truncated: got ${received} of ${total} bytes (Content-Length)`);
      }
      const actual = hash.digest('hex');
      if (actual !== expected.hex) {
        throw new Error(
          `${label}: ${expected.algorithm} mismatch for ${url} (${received} bytes): expected ${expected.hex} (stated by ${expected.statedBy}), ` +
            `got ${actual}. The file is truncated or not the published one; it was deleted and nothing was added to the cache.`,
        );
      }
    } catch (err) {
      await rm(path, { force: true });
      throw err;
    }
  } finally {
    idle.stop();
  }
  log?.(`${label}: ${progress(received, total)}, ${expected.algorithm} verified, in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
