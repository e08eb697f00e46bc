/**
 * The benchmark's worker replicas: N processes on the same task queue, each with its own health and metrics ports,
 * and every process the run started (replicas replaced by the rolling update or the restart included), so the report
 * can give each its share of the tasks and its CPU and memory.
 */
import { hostname } from 'node:os';

import type { ManagedProcess } from '../../scripts/lib/managed-process.js';
import { sampleProcess } from './probes.js';
import type { ProcessSample } from './probes.js';

export interface WorkerProcess {
  /** Its log's and the report's name: `worker-1`, `worker-1-rolled`, `worker-1-restarted`. */
  name: string;
  /** The replica it is or was: 1 … N. */
  slot: number;
  process: ManagedProcess;
  /**
   * The identity its Temporal workers give in WorkflowTaskStarted and ActivityTaskStarted: the SDK's default,
   * `pid@hostname`, which the worker does not override.
   */
  identity: string;
  /** The worker's health server's /metrics (eniflow's own metrics). */
  metricsUrl: string;
  /** The Temporal SDK's exporter (`METRICS_ADDRESS`): `temporal_*`, the workflow task latencies among them. */
  sdkMetricsUrl: string;
  /** The last /proc sample while it ran, refreshed by `sample()` and just before it is stopped. */
  lastSample?: ProcessSample;
}

/** Starts one worker process; the caller gives it fresh ports. */
export type WorkerStarter = (
  name: string,
) => Promise<{ process: ManagedProcess; metricsUrl: string; sdkMetricsUrl: string }>;

export class WorkerSet {
  /** Every worker process the run started, in order. */
  readonly all: WorkerProcess[] = [];
  /** The current process of each replica, slot 1 first. */
  readonly replicas: WorkerProcess[] = [];
  private readonly starter: WorkerStarter;

  constructor(starter: WorkerStarter) {
    this.starter = starter;
  }

  /** Starts the process of replica `slot` (replacing the current one in `replicas`, which the caller stops). */
  async start(slot: number, name: string): Promise<WorkerProcess> {
    const { process, metricsUrl, sdkMetricsUrl } = await this.starter(name);
    const identity = `${process.pid}@${hostname()}`;
    const worker: WorkerProcess = { name, slot, process, identity, metricsUrl, sdkMetricsUrl };
    this.all.push(worker);
    this.replicas[slot - 1] = worker;
    return worker;
  }

  /** Refreshes the last sample of every running worker process. */
  sample(): void {
    for (const worker of this.all) {
      if (worker.process.hasExited) continue;
      const sample = sampleProcess(worker.process.pid);
      if (sample !== undefined) worker.lastSample = sample;
    }
  }

  /** The report name of the process behind a history event's identity. */
  nameOf(identity: string): string | undefined {
    return this.all.find((worker) => worker.identity === identity)?.name;
  }

  async stopAll(graceMs: number): Promise<void> {
    await Promise.all(this.all.map((worker) => worker.process.stop(graceMs)));
  }
}
