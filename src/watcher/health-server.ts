import { createServer } from 'node:http';
import type { Server } from 'node:http';

import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';

import type { Logger } from '../logger.js';
import type { WatcherMetrics } from './main.js';

/** What the health server reads from a running watcher. */
export interface HealthSource {
  /** True once every informer has listed once. */
  isSynced(): boolean;
  metrics(): WatcherMetrics;
}

const INFORMER_COUNTERS = [
  ['lists', 'Lists made (first list and relists).'],
  ['expired', 'Watches answered 410 Gone.'],
  ['errors', 'Errors that stopped an informer.'],
  ['restarts', 'Informer restarts after errors.'],
] as const;

/**
 * A registry with Node's default process metrics and the watcher's counters. The watcher keeps its own counts,
 * so each metric reads them when scraped and reports them as they are (a reset followed by one increment).
 */
function watcherRegistry(source: HealthSource): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const counter = (input: { name: string; help: string; read: (metrics: WatcherMetrics) => number }): void => {
    new Counter({
      name: input.name,
      help: input.help,
      registers: [registry],
      collect() {
        this.reset();
        this.inc(input.read(source.metrics()));
      },
    });
  };
  counter({
    name: 'eniflow_watcher_signals_sent_total',
    help: 'Signals Temporal accepted.',
    read: (metrics) => metrics.signalsSent,
  });
  counter({
    name: 'eniflow_watcher_signal_failures_total',
    help: 'Signal attempts that failed (retried).',
    read: (metrics) => metrics.signalFailures,
  });
  new Gauge({
    name: 'eniflow_watcher_is_leader',
    help: '1 while this replica holds the lease.',
    registers: [registry],
    collect() {
      this.set(source.metrics().isLeader ? 1 : 0);
    },
  });
  counter({
    name: 'eniflow_watcher_leadership_acquired_total',
    help: 'Times this replica became leader.',
    read: (metrics) => metrics.leader.acquired,
  });
  for (const [field, help] of INFORMER_COUNTERS) {
    new Counter({
      name: `eniflow_watcher_informer_${field}_total`,
      help,
      labelNames: ['informer'],
      registers: [registry],
      collect() {
        this.reset();
        const informers = Object.entries(source.metrics().informers).sort(([a], [b]) => (a < b ? -1 : 1));
        for (const [informer, counters] of informers) this.inc({ informer }, counters[field]);
      },
    });
  }
  return registry;
}

/**
 * Serves the watcher's probes and metrics: `/healthz` (the process answers), `/readyz` (every informer has listed
 * once) and `/metrics` (Prometheus text of the watcher's counters and Node's process metrics).
 */
export async function startHealthServer(input: {
  address: string;
  source: HealthSource;
  logger: Logger;
}): Promise<{ port: number; close(): Promise<void> }> {
  const registry = watcherRegistry(input.source);
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    if (path === '/healthz') {
      response.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
    } else if (path === '/readyz') {
      const ready = input.source.isSynced();
      response
        .writeHead(ready ? 200 : 503, { 'content-type': 'text/plain' })
        .end(ready ? 'ok\n' : 'informers not synced\n');
    } else if (path === '/metrics') {
      registry.metrics().then(
        (text) => response.writeHead(200, { 'content-type': registry.contentType }).end(text),
        (error: unknown) => {
          input.logger.error({ err: error }, 'Could not collect metrics');
          response.writeHead(500).end();
        },
      );
    } else {
      response.writeHead(404).end();
    }
  });
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
