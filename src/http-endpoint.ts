import type { Server, ServerResponse } from 'node:http';

import type { Registry } from 'prom-client';

import type { Logger } from './logger.js';

/** An HTTP endpoint that is listening: the port it bound (the address may ask for 0) and how to stop it. */
export interface ListeningEndpoint {
  port: number;
  close(): Promise<void>;
}

/** Answers `/metrics` from a prom-client registry (500, logged, when a collector fails). */
export function serveMetrics(response: ServerResponse, registry: Registry, logger: Logger): void {
  registry.metrics().then(
    (body) => response.writeHead(200, { 'content-type': registry.contentType }).end(body),
    (error: unknown) => {
      logger.error({ err: error }, 'Could not collect metrics');
      response.writeHead(500).end();
    },
  );
}

/**
 * Binds `server` to `host:port` (the worker's and the watcher's health and metrics endpoints); `close` also ends
 * kept-alive connections, so a scraper cannot hold a shutdown.
 */
export async function listenOn(input: { server: Server; address: string; logger: Logger }): Promise<ListeningEndpoint> {
  const { server } = input;
  const separator = input.address.lastIndexOf(':');
  const host = input.address.slice(0, separator);
  const port = Number(input.address.slice(separator + 1));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      resolve();
    });
  });
  const address = server.address();
  const boundPort = typeof address === 'object' && address !== null ? address.port : port;
  input.logger.info({ address: `${host}:${String(boundPort)}` }, 'Health and metrics endpoint listening');
  return {
    port: boundPort,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => {
          resolve();
        });
        server.closeAllConnections();
      }),
  };
}
