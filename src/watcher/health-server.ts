import { createServer } from 'node:http';
import type { Server } from 'node:http';

import type { Logger } from '../logger.js';
import type { WatcherMetrics } from './main.js';

/** What the health server reads from a running watcher. */
export interface HealthSource {
  /** True once every informer has listed once. */
  isSynced(): boolean;
  metrics(): WatcherMetrics;
}

function prometheusText(metrics: WatcherMetrics): string {
  const lines: string[] = [];
  const metric = (input: { name: string; type: 'counter' | 'gauge'; help: string; samples: [string, number][] }) => {
    lines.push(`# HELP ${input.name} ${input.help}`, `# TYPE ${input.name} ${input.type}`);
    for (const [labels, value] of input.samples) lines.push(`${input.name}${labels} ${String(value)}`);
  };
  metric({
    name: 'eniflow_watcher_signals_sent_total',
    type: 'counter',
    help: 'Signals Temporal accepted.',
    samples: [['', metrics.signalsSent]],
  });
  metric({
    name: 'eniflow_watcher_signal_failures_total',
    type: 'counter',
    help: 'Signal attempts that failed (retried).',
    samples: [['', metrics.signalFailures]],
  });
  metric({
    name: 'eniflow_watcher_is_leader',
    type: 'gauge',
    help: '1 while this replica holds the lease.',
    samples: [['', metrics.isLeader ? 1 : 0]],
  });
  metric({
    name: 'eniflow_watcher_leadership_acquired_total',
    type: 'counter',
    help: 'Times this replica became leader.',
    samples: [['', metrics.leader.acquired]],
  });
  const informers = Object.entries(metrics.informers).sort(([a], [b]) => (a < b ? -1 : 1));
  for (const [field, help] of [
    ['lists', 'Lists made (first list and relists).'],
    ['expired', 'Watches answered 410 Gone.'],
    ['errors', 'Errors that stopped an informer.'],
    ['restarts', 'Informer restarts after errors.'],
  ] as const) {
    metric({
      name: `eniflow_watcher_informer_${field}_total`,
      type: 'counter',
      help,
      samples: informers.map(([name, counters]) => [`{informer="${name}"}`, counters[field]]),
    });
  }
  return `${lines.join('\n')}\n`;
}

/**
 * Serves the watcher's probes and metrics: `/healthz` (the process answers), `/readyz` (every informer has listed
 * once) and `/metrics` (Prometheus text of the watcher's counters).
 */
export async function startHealthServer(input: {
  address: string;
  source: HealthSource;
  logger: Logger;
}): Promise<{ port: number; close(): Promise<void> }> {
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
      response
        .writeHead(200, { 'content-type': 'text/plain; version=0.0.4' })
        .end(prometheusText(input.source.metrics()));
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
