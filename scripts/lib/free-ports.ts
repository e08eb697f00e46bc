/** Free TCP ports on 127.0.0.1 for servers that must be told their port up front. */
import { createServer } from 'node:net';
import type { Server } from 'node:net';

/**
 * Returns `count` distinct ports that were free a moment ago. All are held open together while they are
 * collected, so the kernel cannot hand out the same port twice; another process could still take one before
 * the server binds it, which on loopback during a test run is rare enough to accept.
 */
export async function reserveFreePorts(count: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    const ports: number[] = [];
    for (let index = 0; index < count; index++) {
      const server = createServer();
      servers.push(server);
      ports.push(await listenOnFreePort(server));
    }
    return ports;
  } finally {
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  }
}

/**
 * Like {@link reserveFreePorts}, but below the kernel's ephemeral range, from `[low, high]`: for servers that keep
 * their ports in a signed 16-bit column (Temporal's SQL `cluster_membership`), which the ephemeral ports (32768 and
 * up on Linux) overflow. Candidates are drawn at random; a taken one is skipped.
 */
export async function reserveFreePortsBelow(count: number, { low = 20_000, high = 32_767 } = {}): Promise<number[]> {
  const servers: Server[] = [];
  try {
    const ports = new Set<number>();
    for (let attempt = 0; ports.size < count; attempt++) {
      if (attempt >= count * 50) throw new Error(`could not find ${count} free ports in ${low}-${high}`);
      const candidate = low + Math.floor(Math.random() * (high - low + 1));
      if (ports.has(candidate)) continue;
      const server = createServer();
      try {
        ports.add(await listenOnFreePort(server, candidate));
        servers.push(server);
      } catch {
        // Taken: try another.
      }
    }
    return [...ports];
  } finally {
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  }
}

function listenOnFreePort(server: Server, port = 0): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      if (address !== null && typeof address === 'object') resolve(address.port);
      else reject(new Error(`unexpected server address ${String(address)}`));
    });
  });
}
