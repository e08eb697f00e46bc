import { createServer } from 'node:http';
import type { Server, ServerResponse } from 'node:http';

import type { Registry } from 'prom-client';

import type { Logger } from './logger.js';

/** An HTTP endpoint that is listening: the port it bound (the address may ask for 0) and how to stop it. */
export interface ListeningEndpoint {
  port: number;
  close(): Promise<void>;
}

/** Answers `/metrics` from a prom-client registry (500, logged, when a collector fails). */
function serveMetrics(response: ServerResponse, registry: Registry, logger: Logger): void {
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
async function listenOn(input: { server: Server; address: string; logger: Logger }): Promise<ListeningEndpoint> {
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

/** A probe's answer: whether it passes, and the line its body says (`ok`, or why not). */
export interface ProbeResult {
  ok: boolean;
  reason: string;
}

/** What one process serves on its health address: liveness, readiness and the registry of its roles. */
export interface ProbeSource {
  registry: Registry;
  live(): ProbeResult;
  ready(): Promise<ProbeResult>;
}

/**
 * Serves `/healthz` (200 or 503 with the reason), `/readyz` (the same, from `ready`) and `/metrics` (the registry)
 * on `host:port`: the worker's, the watcher's and both roles' endpoints in one process (`npm start`).
 */
export async function startProbeServer(input: {
  address: string;
  source: ProbeSource;
  logger: Logger;
}): Promise<ListeningEndpoint> {
  const { source } = input;
  const text = (response: ServerResponse, result: ProbeResult): void => {
    response.writeHead(result.ok ? 200 : 503, { 'content-type': 'text/plain' }).end(`${result.reason}\n`);
  };
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    if (path === '/healthz') {
      text(response, source.live());
    } else if (path === '/readyz') {
      source.ready().then(
        (result) => {
          text(response, result);
        },
        (error: unknown) => {
          const reason = `readiness check failed: ${error instanceof Error ? error.message : String(error)}`;
          text(response, { ok: false, reason });
        },
      );
    } else if (path === '/metrics') {
      serveMetrics(response, source.registry, input.logger);
    } else {
      response.writeHead(404).end();
    }
  });
  return listenOn({ server, address: input.address, logger: input.logger });
}

/**
 * The probes of several roles in one process (`npm start -- --role all`): live and ready when every role is,
 * the reasons of those that are not joined; one registry of every role's metrics (each given once: merged
 * registries must not share a name, so only one of them carries Node's process metrics).
 */
export function combineProbes(input: {
  probes: readonly Pick<ProbeSource, 'live' | 'ready'>[];
  registry: Registry;
}): ProbeSource {
  const combine = (results: readonly ProbeResult[]): ProbeResult => {
    const failing = results.filter((result) => !result.ok);
    if (failing.length === 0) return { ok: true, reason: 'ok' };
    return { ok: false, reason: failing.map((result) => result.reason).join('; ') };
  };
  return {
    registry: input.registry,
    live: () => combine(input.probes.map((probe) => probe.live())),
    ready: async () => combine(await Promise.all(input.probes.map((probe) => probe.ready()))),
  };
}
