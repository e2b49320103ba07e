/**
 * A free TCP port on 127.0.0.1 for a server a test starts (a process's --metrics-bind-address, a webhook
 * port): the kernel picks one for a listener that is closed again at once. It is free the moment it is
 * returned; another process may take it before the caller binds it, which on one test machine is rare.
 */
import { createServer } from 'node:net';

/** A TCP port that was free a moment ago on 127.0.0.1. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
