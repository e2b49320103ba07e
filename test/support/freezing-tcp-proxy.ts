/**
 * A TCP proxy for tests that can make its connections half-open: `freeze()` stops forwarding on every
 * connection open at that moment, in both directions, WITHOUT closing either socket (no FIN, no RST), as
 * a NAT or conntrack entry that was dropped, or a load balancer that lost the flow, does. Connections
 * made after the freeze are forwarded normally (a new flow gets new state). TLS passes through untouched.
 */
import net from 'node:net';

interface Pair {
  readonly client: net.Socket;
  readonly upstream: net.Socket;
  frozen: boolean;
}

export class FreezingTcpProxy {
  private server: net.Server | undefined;
  private readonly pairs = new Set<Pair>();
  /** Bytes that arrived on frozen connections and were dropped, both directions. */
  droppedBytes = 0;

  constructor(
    private readonly upstreamHost: string,
    private readonly upstreamPort: number,
  ) {}

  /** Listens on 127.0.0.1 (a free port); returns the port. */
  async start(): Promise<number> {
    const server = net.createServer((client) => this.accept(client));
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return (server.address() as net.AddressInfo).port;
  }

  /** Connections open now (frozen or not). */
  openConnections(): number {
    return this.pairs.size;
  }

  /** Frozen connections still open on both sides: each one is a socket the runtime thinks is alive. */
  frozenConnections(): number {
    return [...this.pairs].filter((p) => p.frozen && !p.client.destroyed).length;
  }

  /** Stops forwarding on every connection open now, both ways; the sockets stay open. Returns how many. */
  freeze(): number {
    let n = 0;
    for (const pair of this.pairs) {
      if (pair.frozen) continue;
      pair.frozen = true;
      n++;
      pair.client.unpipe(pair.upstream);
      pair.upstream.unpipe(pair.client);
      // Keep reading (and dropping) so neither peer's writes block: the bytes vanish, as on a dead path.
      const drop = (chunk: Buffer) => (this.droppedBytes += chunk.length);
      pair.client.on('data', drop);
      pair.upstream.on('data', drop);
      pair.client.resume();
      pair.upstream.resume();
    }
    return n;
  }

  async stop(): Promise<void> {
    for (const pair of this.pairs) {
      pair.client.destroy();
      pair.upstream.destroy();
    }
    this.pairs.clear();
    const server = this.server;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private accept(client: net.Socket): void {
    const upstream = net.connect(this.upstreamPort, this.upstreamHost);
    const pair: Pair = { client, upstream, frozen: false };
    this.pairs.add(pair);
    const close = () => {
      // A frozen pair never passes a close on: the other side must not learn anything.
      if (!pair.frozen) {
        client.destroy();
        upstream.destroy();
      }
      if (client.destroyed && upstream.destroyed) this.pairs.delete(pair);
    };
    client.on('close', close);
    upstream.on('close', close);
    client.on('error', () => undefined);
    upstream.on('error', () => undefined);
    client.pipe(upstream);
    upstream.pipe(client);
  }
}
