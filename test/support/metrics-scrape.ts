/**
 * Scrapes a secure `/metrics` server as Prometheus does: HTTPS GET with `Authorization: Bearer <token>`.
 * With `ca`, the server's certificate is verified against it; without, verification is skipped
 * (Prometheus `insecure_skip_verify`, for the self-signed certificate).
 */
import https from 'node:https';

export interface ScrapeAnswer {
  readonly status: number;
  readonly body: string;
}

/** GETs `https://127.0.0.1:<port><path>`; rejects when no answer comes within 30 s. */
export function scrapeMetrics(port: number, options: { token?: string; ca?: string; path?: string } = {}): Promise<ScrapeAnswer> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port,
        path: options.path ?? '/metrics',
        method: 'GET',
        headers: options.token ? { Authorization: `Bearer ${options.token}` } : {},
        ...(options.ca ? { ca: options.ca } : { rejectUnauthorized: false }),
        timeout: 30_000,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('no answer within 30 s')));
    req.on('error', reject);
    req.end();
  });
}
