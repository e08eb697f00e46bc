/**
 * A loopback TCP forwarder the watcher reaches the real kube-apiserver through, so a test can cut the network
 * (every open connection dropped, new ones refused), make it hang (new connections accepted and never answered,
 * as during an apiserver failover behind a load balancer) and restore it. Bytes pass through untouched (TLS
 * included).
 */
import { createServer, connect } from 'node:net';
import type { Server, Socket } from 'node:net';

export interface TcpProxy {
  /** `127.0.0.1:<port>` to connect to instead of the upstream. */
  readonly port: number;
  /** Drops every open connection and refuses new ones until {@link restore}. */
  cut(): void;
  /** Drops every open connection; new ones are accepted and then never answered (they stay so after restore). */
  hang(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(upstream: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let mode: 'pass' | 'cut' | 'hang' = 'pass';
  const server: Server = createServer((client) => {
    if (mode === 'cut') {
      client.destroy();
      return;
    }
    if (mode === 'hang') {
      sockets.add(client);
      client.on('close', () => {
        sockets.delete(client);
      });
      client.on('error', () => undefined);
      client.resume();
      return;
    }
    const target = connect(upstream.port, upstream.host);
    for (const socket of [client, target]) {
      sockets.add(socket);
      socket.on('close', () => {
        sockets.delete(socket);
      });
      socket.on('error', () => {
        client.destroy();
        target.destroy();
      });
    }
    client.pipe(target);
    target.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('proxy has no TCP address');
  return {
    port: address.port,
    cut: () => {
      mode = 'cut';
      for (const socket of sockets) socket.destroy();
    },
    hang: () => {
      mode = 'hang';
      for (const socket of sockets) socket.destroy();
    },
    restore: () => {
      mode = 'pass';
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => {
        server.close(() => {
          resolve();
        });
      });
    },
  };
}
