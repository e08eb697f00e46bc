/**
 * The figures issue 29's targets are stated in, each computed from the run's measurements: pod → IP quantiles, CPU per
 * pod in the allocation window, peak memory, ECS calls per pod, ENIs per node against what the pods need, and the
 * worker's own workflow task latency (its SDK's histograms).
 */
import type { NodeShape } from './cluster.js';
import type { Counts } from './probes.js';
import type { LatencySummary, ProcessFigures } from './report.js';
import type { CpuSample } from './stack.js';
import { summarizeTaskHistograms } from './task-latency.js';
import type { SdkTaskHistograms, TaskLatencySummary } from './task-latency.js';

export type TaskLatencyFigures = Record<keyof SdkTaskHistograms, TaskLatencySummary>;

export interface EniFigures {
  nodes: number;
  /** CreateNetworkInterface calls per node: warm-up and burst, and the burst's alone (beyond warm-up). */
  createsPerNode: number;
  createsBeyondWarmUpPerNode: number;
  /** ENIs in the CRs once the burst settled, per node. */
  enisPerNodeMean: number;
  enisPerNodeMax: number;
  /** What each node needs: ceil((its pods + minPoolSize) / ipv4PerAdapter), from its CR's limits. */
  enisNeededPerNodeMean: number;
  enisNeededPerNodeMax: number;
  /** Nodes with more ENIs than they need, and the ENIs over need summed over nodes. */
  nodesOverNeed: number;
  enisOverNeed: number;
  /** Pods bound in the CRs and the IPs on their ENIs (pods ≤ IPs on every node: `nodesShortOfIps` is 0). */
  podsBound: number;
  ipsOnEnis: number;
  nodesShortOfIps: number;
}

export interface TargetFigures {
  /** Pod created → its IP in the CR, ms. */
  podToIpMs: LatencySummary;
  p99OverP50: number;
  /** First pod created → last pod served: the allocation window. */
  allocationWindowSeconds: number;
  /** CPU ms per burst pod in the allocation window, by process; eniflow is the worker(s) and the watcher together. */
  cpuMsPerPod: Record<string, number>;
  eniflowCpuMsPerPod: number;
  temporalCpuMsPerPod: number;
  /** Peak RSS (VmHWM) per process, MiB. */
  peakRssMiB: Record<string, number>;
  ecsCallsPerPod: { total: number; byAction: Counts };
  enis: EniFigures;
  /**
   * The worker's SDK histograms: observations in the burst window (processes alive at both ends), and those of the
   * process started at the kill -9 restart, from its start to the end of the run.
   */
  workflowTaskLatency: { burst: TaskLatencyFigures; restartedProcess?: TaskLatencyFigures };
}

export const TEMPORAL_PROCESS = 'temporal server';

/** Whether a process sample's name is eniflow's (a worker replica, the one process, the watcher). */
const isEniflow = (name: string): boolean => name.startsWith('worker-') || name === 'watcher';

/** CPU ms per pod between two samples, by process; NaN for a process replaced in between (another pid). */
export function cpuMsPerPod(from: CpuSample, to: CpuSample, pods: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, end] of Object.entries(to)) {
    const start = from[name];
    out[name] =
      end === undefined || start?.pid !== end.pid ? Number.NaN : ((end.cpuSeconds - start.cpuSeconds) * 1000) / pods;
  }
  return out;
}

export function eniFigures(input: {
  nodes: readonly NodeShape[];
  createsAfterBurst: number;
  createsInBurst: number;
}): EniFigures {
  const { nodes } = input;
  const count = Math.max(1, nodes.length);
  const needed = nodes.map((node) => Math.ceil((node.pods + node.minPoolSize) / node.ipv4PerAdapter));
  const over = nodes.map((node, index) => Math.max(0, node.enis - (needed[index] ?? 0)));
  const sum = (values: readonly number[]): number => values.reduce((total, value) => total + value, 0);
  return {
    nodes: nodes.length,
    createsPerNode: input.createsAfterBurst / count,
    createsBeyondWarmUpPerNode: input.createsInBurst / count,
    enisPerNodeMean: sum(nodes.map((node) => node.enis)) / count,
    enisPerNodeMax: Math.max(0, ...nodes.map((node) => node.enis)),
    enisNeededPerNodeMean: sum(needed) / count,
    enisNeededPerNodeMax: Math.max(0, ...needed),
    nodesOverNeed: over.filter((value) => value > 0).length,
    enisOverNeed: sum(over),
    podsBound: sum(nodes.map((node) => node.pods)),
    ipsOnEnis: sum(nodes.map((node) => node.ips)),
    nodesShortOfIps: nodes.filter((node) => node.ips < node.pods).length,
  };
}

export function targetFigures(input: {
  latencyMs: LatencySummary;
  allocationWindowMs: number;
  cpuAtStart: CpuSample;
  cpuAtAllServed: CpuSample;
  pods: number;
  processes: readonly ProcessFigures[];
  ecsCallsPerPod: Counts;
  ecsCallsPerPodTotal: number;
  enis: EniFigures;
  burstTasks: SdkTaskHistograms;
  restartedTasks?: SdkTaskHistograms;
  /** Display names of the sampled processes (`worker-1` → `eniflow --role all` with --one-process). */
  displayName: (name: string) => string;
}): TargetFigures {
  const perPod = cpuMsPerPod(input.cpuAtStart, input.cpuAtAllServed, input.pods);
  const eniflow = Object.entries(perPod)
    .filter(([name]) => isEniflow(name))
    .reduce((sum, [, ms]) => sum + ms, 0);
  return {
    podToIpMs: input.latencyMs,
    p99OverP50: input.latencyMs.p99 / input.latencyMs.p50,
    allocationWindowSeconds: input.allocationWindowMs / 1000,
    cpuMsPerPod: Object.fromEntries(Object.entries(perPod).map(([name, ms]) => [input.displayName(name), ms])),
    eniflowCpuMsPerPod: eniflow,
    temporalCpuMsPerPod: perPod[TEMPORAL_PROCESS] ?? Number.NaN,
    peakRssMiB: Object.fromEntries(input.processes.map((process) => [process.name, process.peakRssMiB])),
    ecsCallsPerPod: { total: input.ecsCallsPerPodTotal, byAction: input.ecsCallsPerPod },
    enis: input.enis,
    workflowTaskLatency: {
      burst: summarizeTaskHistograms(input.burstTasks),
      ...(input.restartedTasks === undefined
        ? {}
        : { restartedProcess: summarizeTaskHistograms(input.restartedTasks) }),
    },
  };
}
