import { createServer } from 'node:http';
import type { Server, ServerResponse } from 'node:http';

import type { Registry } from 'prom-client';

import { listenOn, serveMetrics } from '../http-endpoint.js';
import type { Logger } from '../logger.js';

/** Whether the worker takes work now, and if not, why (the `/readyz` body). */
export interface WorkerReadiness {
  ready: boolean;
  reason: string;
}

/**
 * Serves the worker's probes and eniflow's metrics: `/healthz` (the process answers and the worker has not failed),
 * `/readyz` (its pollers run and Temporal answers: see `RunningWorker.readiness`) and `/metrics` (the prom-client
 * registry: ECS calls, node passes, janitor, blocked vSwitches, Node's process metrics). The Temporal SDK's own
 * metrics stay on its exporter (`METRICS_ADDRESS`).
 */
export async function startWorkerHealthServer(input: {
  address: string;
  registry: Registry;
  /** Undefined while the worker is still starting (bundling, connecting): alive, not ready. */
  worker: () => { live(): boolean; readiness(): Promise<WorkerReadiness> } | undefined;
  logger: Logger;
}): Promise<{ port: number; close(): Promise<void> }> {
  const text = (response: ServerResponse, status: number, body: string): void => {
    response.writeHead(status, { 'content-type': 'text/plain' }).end(`${body}\n`);
  };
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    const worker = input.worker();
    if (path === '/healthz') {
      const live = worker?.live() ?? true;
      text(response, live ? 200 : 503, live ? 'ok' : 'worker failed');
    } else if (path === '/readyz') {
      if (worker === undefined) {
        text(response, 503, 'worker starting');
        return;
      }
      worker.readiness().then(
        (readiness) => {
          text(response, readiness.ready ? 200 : 503, readiness.reason);
        },
        (error: unknown) => {
          text(response, 503, `readiness check failed: ${error instanceof Error ? error.message : String(error)}`);
        },
      );
    } else if (path === '/metrics') {
      serveMetrics(response, input.registry, input.logger);
    } else {
      response.writeHead(404).end();
    }
  });
  return listenOn({ server, address: input.address, logger: input.logger });
}
