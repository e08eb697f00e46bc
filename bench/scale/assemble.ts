/** Turns the phases' snapshots and timings into the report: differences between snapshots, per pod, per hour. */
import { cpus, loadavg } from 'node:os';

import { diffCounts, histogramQuantile, histogramSince, sumCounts } from './probes.js';
import type { Counts, HistoryTotals, ProcessSample, ScrapedHistogram } from './probes.js';
import { summarizeLatencies } from './report.js';
import type { ProcessFigures, ScaleReport } from './report.js';
import type { Options } from './options.js';
import type { BurstResult, RestartResult } from './phases.js';
import { ECS_LATENCY_MS } from './stack.js';
import type { Snapshot } from './stack.js';
import type { NodeTimeline } from './timeline.js';

export interface RunResults {
  options: Options;
  loadAverageAtStart: number[];
  nodesWarmMs: number;
  burst: BurstResult;
  /** Latency (ms) of each burst pod served. */
  latencies: number[];
  afterIdle: Snapshot;
  workerPeak: ProcessSample | undefined;
  restart: RestartResult;
  final: Snapshot;
  ecsLost: number;
  timeline: NodeTimeline;
}

const scale = (counts: Counts, factor: number): Counts =>
  Object.fromEntries(Object.entries(counts).map(([key, value]) => [key, value * factor]));

const byVerb = (detail: Counts): Counts => {
  const out: Counts = {};
  for (const [key, value] of Object.entries(detail)) {
    const verb = key.split(' ')[0] ?? key;
    out[verb] = (out[verb] ?? 0) + value;
  }
  return out;
};

/** eniflow's apiserver requests between two snapshots: the server's counters minus the benchmark's own. */
const eniflowRequests = (from: Snapshot, to: Snapshot): Counts =>
  diffCounts(diffCounts(to.apiserver, from.apiserver), diffCounts(to.ownRequests, from.ownRequests));

export function assembleReport(results: RunResults): ScaleReport {
  const { options, burst, afterIdle, final } = results;
  const { before: beforeBurst, after: afterBurst } = burst;
  const idleMs = afterIdle.atMs - afterBurst.atMs;
  const perHour = 3_600_000 / idleMs;
  const burstDetail = eniflowRequests(beforeBurst, afterBurst);
  const idleDetail = scale(eniflowRequests(afterBurst, afterIdle), perHour);
  const podCount = burst.pods.length;
  const burstEcs = diffCounts(afterBurst.ecs, beforeBurst.ecs);
  const cpu = (name: string, from: Snapshot, to: Snapshot): number =>
    (to.processes[name]?.cpuSeconds ?? Number.NaN) - (from.processes[name]?.cpuSeconds ?? Number.NaN);
  const processNames = ['worker', 'watcher', 'temporal server', 'kube-apiserver', 'bench + emulator'];
  const processes: ProcessFigures[] = processNames.map((name) => {
    const peak = name === 'worker' ? results.workerPeak : (final.processes[name] ?? afterIdle.processes[name]);
    const idle = cpu(name, afterBurst, afterIdle);
    return {
      name: name === 'worker' ? 'worker (first process)' : name,
      cpuSecondsBurst: cpu(name, beforeBurst, afterBurst),
      cpuSecondsIdle: idle,
      cpuSecondsPerIdleHour: idle * perHour,
      peakRssMiB: (peak?.peakRssBytes ?? Number.NaN) / 1024 / 1024,
    };
  });
  const perNode = (from: HistoryTotals, to: HistoryTotals, factor = 1): { events: number; bytes: number } => ({
    events: ((to.events - from.events) / options.nodes) * factor,
    bytes: ((to.bytes - from.bytes) / options.nodes) * factor,
  });
  const noHistogram: ScrapedHistogram = { buckets: [], count: 0 };
  const burstHistogram = histogramSince(afterBurst.podIpReady ?? noHistogram, beforeBurst.podIpReady ?? noHistogram);
  const noHistory: HistoryTotals = { workflows: 0, runs: 0, events: 0, bytes: 0 };
  return {
    date: new Date().toISOString(),
    command: `npm run bench:scale -- ${process.argv.slice(2).join(' ')}`.trim(),
    machine: {
      cpus: cpus().length,
      node: process.version,
      loadAverageAtStart: results.loadAverageAtStart,
      loadAverageAtEnd: loadavg(),
    },
    config: {
      nodes: options.nodes,
      podsPerNode: options.pods,
      idleSeconds: options.idleSeconds,
      ecsLatencyMs: ECS_LATENCY_MS,
      attachMs: options.attachMs,
      eniPollIntervalMs: options.eniPollIntervalMs,
      pool: options.pool,
    },
    nodesWarmSeconds: results.nodesWarmMs / 1000,
    burst: {
      pods: podCount,
      served: results.latencies.length,
      createSeconds: burst.createMs / 1000,
      latencyMs: summarizeLatencies(results.latencies),
      workerHistogram: {
        count: burstHistogram.count,
        p50Seconds: histogramQuantile(0.5, burstHistogram),
        p99Seconds: histogramQuantile(0.99, burstHistogram),
      },
      allServedSeconds: burst.allServedMs / 1000,
      settledSeconds: burst.settledMs / 1000,
    },
    ecs: {
      callsPerPod: scale(burstEcs, 1 / podCount),
      callsPerPodTotal: sumCounts(burstEcs) / podCount,
      idleCallsPerHour: scale(diffCounts(afterIdle.ecs, afterBurst.ecs), perHour),
      lost: results.ecsLost,
    },
    apiserver: {
      burstByVerb: byVerb(burstDetail),
      idlePerHourByVerb: byVerb(idleDetail),
      burstDetail,
      idlePerHourDetail: idleDetail,
    },
    watcherSignals: {
      burst: afterBurst.signals - beforeBurst.signals,
      idlePerHour: (afterIdle.signals - afterBurst.signals) * perHour,
    },
    history: {
      workflows: afterIdle.history.workflows,
      runs: afterIdle.history.runs,
      perNodeBurst: perNode(beforeBurst.history, afterBurst.history),
      perNodeIdleHour: perNode(afterBurst.history, afterIdle.history, perHour),
      perNodeTotal: perNode(noHistory, afterIdle.history),
    },
    processes,
    restart: {
      workerStartSeconds: results.restart.workerStartMs / 1000,
      servedSeconds: results.restart.servedMs / 1000,
    },
    timeline: results.timeline,
    notes: [
      `Per-hour figures are the ${options.idleSeconds} s idle window scaled to an hour. The workflow's own timers ` +
        '(a safety-net pass every 6–7.5 h, the OpenAPI resync every 12–24 h; GC passes only while there is work) ' +
        'are hours apart, so a short window shows none of them: add one pass per node per 6 h for the safety net.',
      'apiserver requests are the server counters for pods, nodes, Node CRs, events and leases minus the ' +
        "benchmark's own requests (node, CR and pod creation, its CR watch); the apiserver's own lease renewals " +
        'remain in the lease counts.',
      '"bench + emulator" is this process: the ECS emulator runs in it, with the benchmark driver.',
      ...(results.ecsLost > 0 ? [`The emulator's call log dropped ${results.ecsLost} calls: ECS counts are low.`] : []),
    ],
  };
}
