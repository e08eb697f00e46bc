/** Turns the phases' snapshots and timings into the report: differences between snapshots, per pod, per hour. */
import { cpus, loadavg } from 'node:os';

import { diffCounts, histogramQuantile, histogramSince, sumCounts } from './probes.js';
import type { Counts, HistoryTotals, ScrapedHistogram } from './probes.js';
import { summarizeLatencies } from './report.js';
import type { ProcessFigures, ScaleReport } from './report.js';
import type { Options } from './options.js';
import type { AuditResult, BurstResult, RestartResult, RollResult } from './phases.js';
import type { WorkerSet } from './workers.js';
import { ECS_LATENCY_MS } from './stack.js';
import type { Snapshot } from './stack.js';
import type { NodeTimeline } from './timeline.js';
import type { BenchEvent } from './history-events.js';
import { scaleCost, tasksByIdentity, temporalCost } from './temporal-cost.js';
import { completedTasksOf, workflowTaskTimes } from './task-times.js';
import { eniFigures, targetFigures } from './targets.js';
import { taskHistogramsBetween } from './task-latency.js';
import type { SdkTaskHistograms } from './task-latency.js';
import { deployedNodeOptions } from './roles.js';
import type { BenchRole } from './roles.js';
import type { AllInOneResult } from './all-in-one.js';

export interface RunResults {
  options: Options;
  loadAverageAtStart: number[];
  nodesWarmMs: number;
  burst: BurstResult;
  /** Latency (ms) of each burst pod served. */
  latencies: number[];
  afterIdle: Snapshot;
  /** Every worker process of the run; their last samples give CPU and peak memory. */
  workers: WorkerSet;
  roll: RollResult | undefined;
  restart: RestartResult;
  final: Snapshot;
  ecsLost: number;
  timeline: NodeTimeline;
  /** Every run of every node workflow, read at the end. */
  runs: BenchEvent[][];
  /** Every run of the workflow of the node the restart phase's pod was created on, and when the runs were read. */
  restartNodeRuns: BenchEvent[][];
  runsReadMs: number;
  /** The running worker processes' SDK task histograms after the final audit, by name. */
  sdkTasksAtEnd: Record<string, SdkTaskHistograms>;
  /** Every run of the janitor workflow, read at the end. */
  janitorRuns: BenchEvent[][];
  audit: AuditResult;
  /** `--all-in-one-restart`. */
  allInOne?: AllInOneResult;
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

/** Each worker process's tasks (by the identity in the history events), CPU and peak memory over its life. */
function workerFigures(results: RunResults): ScaleReport['workers'] {
  const tasks = tasksByIdentity(results.runs);
  const processes = results.workers.all.map((worker) => ({
    name: worker.name,
    replica: worker.slot,
    pid: worker.process.pid,
    identity: worker.identity,
    workflowTasks: tasks.get(worker.identity)?.workflowTasks ?? 0,
    activityTasks: tasks.get(worker.identity)?.activityTasks ?? 0,
    cpuSeconds: worker.lastSample?.cpuSeconds ?? Number.NaN,
    peakRssMiB: (worker.lastSample?.peakRssBytes ?? Number.NaN) / 1024 / 1024,
  }));
  const known = new Set(processes.map((process) => process.identity));
  const unknown = [...tasks].filter(([identity]) => !known.has(identity));
  return {
    replicas: results.options.workers,
    processes,
    otherIdentities: {
      identities: unknown.map(([identity]) => identity),
      workflowTasks: unknown.reduce((sum, [, count]) => sum + count.workflowTasks, 0),
      activityTasks: unknown.reduce((sum, [, count]) => sum + count.activityTasks, 0),
    },
  };
}

/** `--all-in-one-restart`: the restarted all-in-one process's figures, as the report's `restart.allInOne`. */
function allInOneFigures(results: RunResults): Pick<ScaleReport['restart'], 'allInOne'> {
  const run = results.allInOne;
  if (run === undefined) return {};
  return {
    allInOne: {
      nodes: run.nodes,
      firstWorkerStartSeconds: run.firstWorkerStartMs / 1000,
      workerStartSeconds: run.workerStartMs / 1000,
      leaderSeconds: run.leaderMs / 1000,
      servedSeconds: run.servedMs / 1000,
      windowSeconds: (run.endMs - run.startMs) / 1000,
      workflowTasks: tasksByIdentity(results.runs).get(run.identity)?.workflowTasks ?? 0,
      cpuSeconds: run.cpuSeconds,
      peakRssMiB: run.peakRssMiB,
    },
  };
}

/** The roles' NODE_OPTIONS as the report states them: --node-options, or each Deployment's. */
function nodeOptionsFigure(options: Options): { nodeOptions?: string } {
  if (options.nodeOptions !== undefined) return { nodeOptions: options.nodeOptions };
  if (!options.deployedNodeOptions) return {};
  const role = (name: BenchRole): string => deployedNodeOptions(name) ?? '(none)';
  return {
    nodeOptions: options.oneProcess
      ? `${role('all')} (overlays/single-process)`
      : `worker ${role('worker')}, watcher ${role('watcher')} (their Deployments')`,
  };
}

export function assembleReport(results: RunResults): ScaleReport {
  const { options, burst, afterIdle, final } = results;
  const { before: beforeBurst, after: afterBurst } = burst;
  const idleMs = afterIdle.atMs - afterBurst.atMs;
  const perHour = 3_600_000 / idleMs;
  // Timer-driven figures back to real time (see `--period-scale`); CPU, leases and signals run on real time anyway.
  const perTimerHour = perHour / options.periodScale;
  const burstDetail = eniflowRequests(beforeBurst, afterBurst);
  const idleDetail = scale(eniflowRequests(afterBurst, afterIdle), perHour);
  const podCount = burst.pods.length;
  const burstEcs = diffCounts(afterBurst.ecs, beforeBurst.ecs);
  // Worker process names as the report gives them: `worker` with one replica, the one process by its command.
  const displayName = (name: string): string =>
    options.oneProcess && name.startsWith('worker-')
      ? `eniflow --role all${name === 'worker-1' ? '' : ` (${name})`}`
      : options.workers === 1 && name === 'worker-1'
        ? 'worker'
        : name;
  const cpu = (name: string, from: Snapshot, to: Snapshot): number =>
    (to.processes[name]?.cpuSeconds ?? Number.NaN) - (from.processes[name]?.cpuSeconds ?? Number.NaN);
  const firstWorkers = results.workers.all.slice(0, options.workers);
  const processNames = [
    ...firstWorkers.map((worker) => worker.name),
    ...(options.oneProcess ? [] : ['watcher']),
    'temporal server',
    'kube-apiserver',
    'bench + emulator',
  ];
  const processes: ProcessFigures[] = processNames.map((name) => {
    const worker = firstWorkers.find((candidate) => candidate.name === name);
    const peak = worker === undefined ? (final.processes[name] ?? afterIdle.processes[name]) : worker.lastSample;
    const idle = cpu(name, afterBurst, afterIdle);
    return {
      name: worker === undefined ? name : `${displayName(name)} (first process)`,
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
  const epochMs = (performanceMs: number): number => performance.timeOrigin + performanceMs;
  const burstCost = temporalCost({
    runs: results.runs,
    fromMs: epochMs(burst.startMs),
    toMs: epochMs(afterBurst.atMs),
  });
  const idleCost = temporalCost({
    runs: results.runs,
    fromMs: epochMs(afterBurst.atMs),
    toMs: epochMs(afterIdle.atMs),
  });
  const latencyMs = summarizeLatencies(results.latencies);
  const creates = (counts: Counts): number => counts['CreateNetworkInterface'] ?? 0;
  const restarted = results.workers.all.find((worker) => worker.identity === results.restart.identity);
  const restartedTasks = restarted === undefined ? undefined : results.sdkTasksAtEnd[restarted.name];
  const targets = targetFigures({
    latencyMs,
    allocationWindowMs: burst.allServedMs,
    cpuAtStart: burst.cpuAtStart,
    cpuAtAllServed: burst.cpuAtAllServed,
    pods: podCount,
    processes,
    ecsCallsPerPod: scale(burstEcs, 1 / podCount),
    ecsCallsPerPodTotal: sumCounts(burstEcs) / podCount,
    enis: eniFigures({
      nodes: burst.nodesAfter,
      createsAfterBurst: creates(afterBurst.ecs),
      createsInBurst: creates(burstEcs),
    }),
    burstTasks: taskHistogramsBetween(beforeBurst.sdkTasks, afterBurst.sdkTasks),
    ...(restartedTasks === undefined
      ? {}
      : { restartedTasks: taskHistogramsBetween({}, { restarted: restartedTasks }) }),
    displayName,
  });
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
      periodScale: options.periodScale,
      roles: `${options.oneProcess ? 'one process (--role all)' : 'worker and watcher apart'}, from ${options.dist ? 'dist' : 'src (tsx)'}`,
      ...nodeOptionsFigure(options),
      ...(options.roleEnv === undefined ? {} : { roleEnv: options.roleEnv }),
    },
    nodesWarmSeconds: results.nodesWarmMs / 1000,
    burst: {
      pods: podCount,
      served: results.latencies.length,
      createSeconds: burst.createMs / 1000,
      latencyMs,
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
      idleCallsPerHour: scale(diffCounts(afterIdle.ecs, afterBurst.ecs), perTimerHour),
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
      perNodeIdleHour: perNode(afterBurst.history, afterIdle.history, perTimerHour),
      perNodeTotal: perNode(noHistory, afterIdle.history),
    },
    temporal: {
      burst: burstCost,
      idle: idleCost,
      perPodServed: scaleCost(burstCost, 1 / results.latencies.length),
      perIdleNodeDay: scaleCost(idleCost, 86_400_000 / idleMs / options.nodes / options.periodScale),
      janitorPerIdleDay: scaleCost(
        temporalCost({ runs: results.janitorRuns, fromMs: epochMs(afterBurst.atMs), toMs: epochMs(afterIdle.atMs) }),
        86_400_000 / idleMs / options.periodScale,
      ),
    },
    processes,
    workers: workerFigures(results),
    workflowTasks: {
      burst: workflowTaskTimes({ runs: results.runs, fromMs: epochMs(burst.startMs), toMs: epochMs(afterBurst.atMs) }),
      restart: workflowTaskTimes({
        runs: results.runs,
        fromMs: epochMs(results.restart.startMs),
        toMs: epochMs(results.restart.endMs),
      }),
      ...(results.allInOne === undefined
        ? {}
        : {
            allInOneRestart: workflowTaskTimes({
              runs: results.runs,
              fromMs: epochMs(results.allInOne.startMs),
              toMs: epochMs(results.allInOne.endMs),
            }),
          }),
    },
    restart: {
      workerStartSeconds: results.restart.workerStartMs / 1000,
      servedSeconds: results.restart.servedMs / 1000,
      newProcessTasksCompleted: completedTasksOf({
        runs: results.restartNodeRuns,
        identity: results.restart.identity,
        fromMs: epochMs(results.restart.startMs),
        // Up to when the histories were read, after the audit's settling: the task whose local activity wrote the
        // pod's IP completes after the write (and may hold further local activities).
        toMs: epochMs(results.runsReadMs),
      }),
      ...(results.roll === undefined
        ? {}
        : {
            rollingUpdate: {
              replicas: results.roll.replicas,
              rollSeconds: results.roll.rollMs / 1000,
              servedSeconds: results.roll.servedMs / 1000,
            },
          }),
      ...allInOneFigures(results),
      ...(results.burst.restart === undefined
        ? {}
        : {
            duringBurst: {
              workerStartSeconds: results.burst.restart.workerStartMs / 1000,
              allServedSeconds: results.burst.restart.allServedMs / 1000,
            },
          }),
    },
    timeline: results.timeline,
    targets,
    audit: results.audit,
    notes: [
      options.periodScale === 1
        ? `Per-hour figures are the ${options.idleSeconds} s idle window scaled to an hour. The workflow's own timers ` +
          '(a safety-net pass every 6–7.5 h, the OpenAPI resync every 12–24 h; GC passes only while there is work) ' +
          'are hours apart, so a short window shows none of them: add one pass per node per 6 h for the safety net ' +
          '(or use --period-scale, --preset idle).'
        : `The workflows' timers ran ${options.periodScale} times faster (--period-scale: safety-net pass, OpenAPI ` +
          `resync, GC period, stuck backoff, run age, janitor interval), so the ${options.idleSeconds} s idle window ` +
          `held ${((options.idleSeconds * options.periodScale) / 3600).toFixed(1)} h of timers. History, Temporal ` +
          `cost and ECS calls per idle hour are divided by ${options.periodScale} back to real time; CPU, apiserver ` +
          'requests (lease renewals) and signals run on real time and are not.',
      'apiserver requests are the server counters for pods, nodes, Node CRs, events and leases minus the ' +
        "benchmark's own requests (node, CR and pod creation, its CR watch); the apiserver's own lease renewals " +
        'remain in the lease counts.',
      "Temporal cost: counted from the node workflows' histories (every run), the events in the burst window " +
        '(first pod created → settled) divided by the pods served, and in the idle window scaled to one node for ' +
        `24 h (the window is ${options.idleSeconds} s). Activity tasks are attempts; Temporal Cloud Actions follow ` +
        'docs.temporal.io/cloud/actions (local activities of one workflow task count once); queries and activity ' +
        'heartbeats leave no event and are not counted.',
      ...(options.workers > 1
        ? [
            `${options.workers} worker replicas: the kill -9 restart replaces replica 1 while the others keep serving, ` +
              'so its pod may be served before the new process has started. Worker tasks per process come from the ' +
              "history events' identity (`pid@host`); an activity counts for the process of its last attempt.",
          ]
        : []),
      '"bench + emulator" is this process: the ECS emulator runs in it, with the benchmark driver.',
      'Workflow task times come from the histories: queue is scheduled → started (a task that waits for a worker, ' +
        'or replays after a restart, waits here), run is started → completed; a task holds its local activities ' +
        "(the node's reads and status writes), so its run time includes theirs.",
      ...(results.allInOne === undefined
        ? []
        : [
            'All-in-one restart: `npm start -- --role all` (src/ with tsx, as a user runs it; the image has no ' +
              'all-in-one entry) replaced the worker and the watcher once the other phases were done; it was ' +
              `SIGKILLed after its start sweep of ${options.nodes} nodes and a new one started with the same Lease ` +
              'identity (a container restarted in place). Its window runs from the spawn until the new leader’s ' +
              'sweep has signalled every node and their passes had 5 s to end.',
          ]),
      ...(results.ecsLost > 0 ? [`The emulator's call log dropped ${results.ecsLost} calls: ECS counts are low.`] : []),
    ],
  };
}
