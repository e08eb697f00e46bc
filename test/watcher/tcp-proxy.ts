/**
 * A loopback TCP forwarder the watcher reaches the real kube-apiserver through, so a test can cut the network
 * (every open connection dropped, new ones refused) and restore it. Bytes pass through untouched (TLS included).
 */
import { createServer, connect } from 'node:net';
import type { Server, Socket } from 'node:net';

export interface TcpProxy {
  /** `127.0.0.1:<port>` to connect to instead of the upstream. */
  readonly port: number;
  /** Drops every open connection and refuses new ones until {@link restore}. */
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(upstream: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let isCut = false;
  const server: Server = createServer((client) => {
    if (isCut) {
      client.destroy();
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
      isCut = true;
      for (const socket of sockets) socket.destroy();
    },
    restore: () => {
      isCut = false;
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
