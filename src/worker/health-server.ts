import type { Registry } from 'prom-client';

import { startProbeServer } from '../http-endpoint.js';
import type { ListeningEndpoint, ProbeSource } from '../http-endpoint.js';
import type { Logger } from '../logger.js';

/** Whether the worker takes work now, and if not, why (the `/readyz` body). */
export interface WorkerReadiness {
  ready: boolean;
  reason: string;
}

/** A running worker as its probes see it; undefined while it is still starting (bundling, connecting). */
export type WorkerProbeTarget = () => { live(): boolean; readiness(): Promise<WorkerReadiness> } | undefined;

/**
 * The worker's probes and metrics: live while the worker has not failed (and while it starts), ready once its
 * pollers run and Temporal answers (see `RunningWorker.readiness`), and its registry (ECS calls, node passes, pod →
 * IP and attach latency, janitor, blocked vSwitches, Node's process metrics).
 */
export function workerProbes(input: { registry: Registry; worker: WorkerProbeTarget }): ProbeSource {
  return {
    registry: input.registry,
    live: () => {
      const live = input.worker()?.live() ?? true;
      return live ? { ok: true, reason: 'ok' } : { ok: false, reason: 'worker failed' };
    },
    ready: async () => {
      const worker = input.worker();
      if (worker === undefined) return { ok: false, reason: 'worker starting' };
      const readiness = await worker.readiness();
      return { ok: readiness.ready, reason: readiness.reason };
    },
  };
}

/**
 * Serves the worker's probes and eniflow's metrics (see {@link workerProbes}) on `/healthz`, `/readyz` and
 * `/metrics`. The Temporal SDK's own metrics stay on its exporter (`METRICS_ADDRESS`).
 */
export async function startWorkerHealthServer(input: {
  address: string;
  registry: Registry;
  worker: WorkerProbeTarget;
  logger: Logger;
}): Promise<ListeningEndpoint> {
  return startProbeServer({ address: input.address, source: workerProbes(input), logger: input.logger });
}
