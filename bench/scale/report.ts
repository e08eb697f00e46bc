/** The scale benchmark's report: its JSON shape and the human-readable tables printed from it. */
import type { Counts } from './probes.js';
import { formatTimeline } from './timeline.js';
import type { NodeTimeline } from './timeline.js';
import type { TemporalCost } from './temporal-cost.js';
import type { TaskTimes } from './task-times.js';
import type { AuditResult } from './phases.js';
import type { TargetFigures } from './targets.js';
import { table } from './markdown-table.js';
import { targetRows } from './targets-report.js';
import { temporalServerTable } from './temporal-server.js';
import type { TemporalServerFigures } from './temporal-server.js';

export interface LatencySummary {
  count: number;
  p50: number;
  p99: number;
  max: number;
}

export interface ProcessFigures {
  name: string;
  /** CPU seconds during the burst (first pod created → everything settled). */
  cpuSecondsBurst: number;
  /** CPU seconds during the idle window, and extrapolated to an hour. */
  cpuSecondsIdle: number;
  cpuSecondsPerIdleHour: number;
  /** Peak resident set size (VmHWM) over the process's life, MiB. */
  peakRssMiB: number;
}

export interface ScaleReport {
  date: string;
  command: string;
  machine: { cpus: number; node: string; loadAverageAtStart: number[]; loadAverageAtEnd: number[] };
  config: {
    nodes: number;
    podsPerNode: number;
    idleSeconds: number;
    ecsLatencyMs: { min: number; max: number };
    attachMs: number;
    eniPollIntervalMs: number;
    pool: { min: number; max: number };
    /** The workflows' timer periods were divided by this (`--period-scale`). */
    periodScale: number;
    /** Where worker and watcher ran from: `dist` (as deployed) or `src (tsx)`. */
    roles: string;
    nodeOptions?: string;
    /** `--role-env`: more environment for the roles. */
    roleEnv?: Record<string, string>;
  };
  /** From the first node created to every node's pool warm (minPoolSize idle IPs in its CR). */
  nodesWarmSeconds: number;
  burst: {
    pods: number;
    served: number;
    /** Time to create every pod of the burst (the benchmark's own client, 32 requests at a time). */
    createSeconds: number;
    /** Pod created → its IP in the node's CR. */
    latencyMs: LatencySummary;
    /**
     * The same as the worker measures it (`eniflow_pod_ip_ready_seconds`, creation timestamp in whole seconds → the
     * status write), observations during the burst, quantiles interpolated in its buckets as Prometheus does.
     */
    workerHistogram: { count: number; p50Seconds: number; p99Seconds: number };
    /** First pod created → last pod's IP in its CR. */
    allServedSeconds: number;
    /** First pod created → no ECS call and no CR change for the settle period. */
    settledSeconds: number;
  };
  ecs: {
    /** Calls during the burst, by action, divided by the burst's pods. */
    callsPerPod: Record<string, number>;
    callsPerPodTotal: number;
    /** Calls during the idle window by action, extrapolated to an hour (whole cluster). */
    idleCallsPerHour: Record<string, number>;
    /** Calls the call log dropped before they were read (0 means the counts are complete). */
    lost: number;
  };
  apiserver: {
    /** eniflow's requests (server counters minus the benchmark's own), by verb. */
    burstByVerb: Counts;
    idlePerHourByVerb: Counts;
    /** The same by `VERB resource[/subresource]`. */
    burstDetail: Counts;
    idlePerHourDetail: Counts;
  };
  watcherSignals: { burst: number; idlePerHour: number };
  history: {
    workflows: number;
    runs: number;
    /** Per node: growth during the burst, and during the idle window extrapolated to an hour. */
    perNodeBurst: { events: number; bytes: number };
    perNodeIdleHour: { events: number; bytes: number };
    /** Per node since its workflow started (node creation, burst and idle window). */
    perNodeTotal: { events: number; bytes: number };
  };
  /** What the node workflows cost Temporal, from their histories. */
  temporal: {
    /** The whole cluster in the burst window (first pod created → settled) and in the idle window. */
    burst: TemporalCost;
    idle: TemporalCost;
    perPodServed: TemporalCost;
    /** The idle window's cost for one node, scaled to 24 hours. */
    perIdleNodeDay: TemporalCost;
    /** The orphan-ENI janitor (one workflow for the cluster) in the idle window, scaled to a day. */
    janitorPerIdleDay: TemporalCost;
  };
  processes: ProcessFigures[];
  /** The Temporal server's own cost and its database's writes (issue 31), and the signals per second it accepts. */
  temporalServer?: TemporalServerFigures;
  workers: {
    replicas: number;
    /** Every worker process the run started: the replicas, their rolling-update replacements, the restarted one. */
    processes: {
      name: string;
      replica: number;
      pid: number;
      /** Its Temporal identity (`pid@host`), as the history events name it. */
      identity: string;
      /** WorkflowTaskStarted events with its identity, over the whole run (node workflows). */
      workflowTasks: number;
      /** ActivityTaskStarted events with its identity: the activities whose last attempt it ran. */
      activityTasks: number;
      /** CPU seconds over its life (its last sample before it stopped or at the end). */
      cpuSeconds: number;
      peakRssMiB: number;
    }[];
    /** Tasks whose identity is none of these processes (0 unless the SDK's identity is not `pid@host`). */
    otherIdentities: { identities: string[]; workflowTasks: number; activityTasks: number };
  };
  restart: {
    /** New worker process spawned → "Worker started" logged (connected, workflow bundle built). */
    workerStartSeconds: number;
    /** New worker process spawned (old one SIGKILLed) → a pod created at that moment has its IP in the CR. */
    servedSeconds: number;
    /** Workflow tasks of the pod's node the new process started and completed from its spawn (the dead one's: 0). */
    newProcessTasksCompleted: number;
    /** With 2 replicas or more: each replaced in turn (SIGTERM, new one started), a pod created as the roll starts. */
    rollingUpdate?: { replicas: number; rollSeconds: number; servedSeconds: number };
    /** `--restart-during-burst`: replica 1 killed once the burst was created → "Worker started" / every pod served. */
    duringBurst?: { workerStartSeconds: number; allServedSeconds: number };
    /** `--all-in-one-restart`: `npm start -- --role all` killed -9 and started again (see all-in-one.ts). */
    allInOne?: {
      nodes: number;
      /** The killed process's own start (it may have bundled the workflow code). */
      firstWorkerStartSeconds: number;
      /** From the replacement's spawn. */
      workerStartSeconds: number;
      leaderSeconds: number;
      servedSeconds: number;
      /** Spawn → the new leader's sweep done (the window of its workflow task times). */
      windowSeconds: number;
      /** Workflow tasks the replacement took (whole run: only its window). */
      workflowTasks: number;
      cpuSeconds: number;
      peakRssMiB: number;
    };
  };
  /** Queue and run time of the node workflows' workflow tasks, per window (task-times.ts). */
  workflowTasks: { burst: TaskTimes; restart: TaskTimes; allInOneRestart?: TaskTimes };
  /** The first node's burst: its pods and its workflow's history events, from the first pod's creation to settled. */
  timeline: NodeTimeline;
  /** Issue 29's figures (targets.ts). */
  targets: TargetFigures;
  /** The zero-leak audit at the end (test/support/audit.ts); not clean makes the benchmark exit non-zero. */
  audit: AuditResult;
  notes: string[];
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((sorted.length * p) / 100) - 1))] ?? Number.NaN;
}

export function summarizeLatencies(values: readonly number[]): LatencySummary {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    count: sorted.length,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted.at(-1) ?? Number.NaN,
  };
}

const seconds = (ms: number): string => `${(ms / 1000).toFixed(2)} s`;
const fixed = (value: number, digits = 2): string => (Number.isFinite(value) ? value.toFixed(digits) : '-');
const kib = (bytes: number): string => `${(bytes / 1024).toFixed(1)} KiB`;

function countsLine(counts: Counts, digits: number): string {
  const entries = Object.entries(counts).sort((a, b) => b[1] - a[1]);
  return entries.length === 0 ? '-' : entries.map(([key, value]) => `${key} ${fixed(value, digits)}`).join(', ');
}

function temporalTable(temporal: ScaleReport['temporal']): string[] {
  const { perPodServed: pod, perIdleNodeDay: day } = temporal;
  const row = (name: string, value: (cost: TemporalCost) => number, digits = 2): string[] => [
    name,
    fixed(value(pod), digits),
    fixed(value(day), digits),
  ];
  return table(
    ['Temporal cost (node workflows)', 'per pod served (burst)', 'per idle node-day'],
    [
      row('workflow tasks', (cost) => cost.workflowTasks),
      row('activity tasks (attempts)', (cost) => cost.activityTasks),
      row('local activities', (cost) => cost.localActivities),
      ['local activities by type', countsLine(pod.localActivitiesByType, 2), countsLine(day.localActivitiesByType, 2)],
      row('timers started', (cost) => cost.timersStarted),
      row('signals received', (cost) => cost.signals),
      row('history events', (cost) => cost.events),
      ['history bytes', kib(pod.bytes), kib(day.bytes)],
      ['history bytes by event (B)', countsLine(pod.bytesByEvent, 0), countsLine(day.bytesByEvent, 0)],
      row('Temporal Cloud actions', (cost) => cost.actions),
      ['actions by kind', countsLine(pod.actionsByKind, 2), countsLine(day.actionsByKind, 2)],
    ],
  ).concat([
    '',
    `The janitor (one workflow for the cluster) per idle day: ${fixed(temporal.janitorPerIdleDay.actions, 1)} ` +
      `Temporal Cloud actions, ${fixed(temporal.janitorPerIdleDay.events, 1)} history events ` +
      `(${kib(temporal.janitorPerIdleDay.bytes)}), ${fixed(temporal.janitorPerIdleDay.activityTasks, 1)} activity tasks.`,
  ]);
}

function taskTimesTable(times: ScaleReport['workflowTasks']): string[] {
  const windows: [string, TaskTimes | undefined][] = [
    ['burst (first pod → settled)', times.burst],
    ['worker restart (spawn → pod served)', times.restart],
    ['all-in-one restart (spawn → sweep done)', times.allInOneRestart],
  ];
  const ms = (value: number): string => (Number.isFinite(value) ? `${value.toFixed(0)} ms` : '-');
  return table(
    ['workflow tasks', 'tasks', 'run p50 / p99 / max', 'run > 1 s', 'queue p50 / p99 / max', 'failed or timed out'],
    windows.flatMap(([name, t]) =>
      t === undefined
        ? []
        : [
            [
              name,
              String(t.count),
              `${ms(t.runP50Ms)} / ${ms(t.runP99Ms)} / ${ms(t.runMaxMs)}`,
              String(t.runOverOneSecond),
              `${ms(t.queueP50Ms)} / ${ms(t.queueP99Ms)} / ${ms(t.queueMaxMs)}`,
              String(t.failedOrTimedOut),
            ],
          ],
    ),
  );
}

function workersTable(workers: ScaleReport['workers']): string[] {
  const other = workers.otherIdentities;
  return [
    ...table(
      ['worker process', 'replica', 'workflow tasks', 'activity tasks', 'CPU s (life)', 'peak RSS'],
      workers.processes.map((process) => [
        `${process.name} (pid ${process.pid})`,
        String(process.replica),
        String(process.workflowTasks),
        String(process.activityTasks),
        fixed(process.cpuSeconds),
        `${fixed(process.peakRssMiB, 0)} MiB`,
      ]),
    ),
    ...(other.identities.length === 0
      ? []
      : [
          '',
          `Tasks of other identities (${other.identities.join(', ')}): ${other.workflowTasks} workflow, ${other.activityTasks} activity.`,
        ]),
  ];
}

/** The report as Markdown tables (what docs/benchmarks.md shows). */
export function formatReport(report: ScaleReport, options: { timeline: boolean } = { timeline: false }): string {
  const { config, burst } = report;
  const lines = [
    `## ${config.nodes} nodes × ${config.podsPerNode} pods (${report.date})`,
    '',
    `\`${report.command}\` — ${report.machine.cpus} CPUs, Node ${report.machine.node}, load average ` +
      `${report.machine.loadAverageAtStart.map((v) => v.toFixed(2)).join(' ')} at start, ` +
      `${report.machine.loadAverageAtEnd.map((v) => v.toFixed(2)).join(' ')} at end; ECS latency ` +
      `${config.ecsLatencyMs.min}–${config.ecsLatencyMs.max} ms, attach ${config.attachMs} ms, ENI poll ` +
      `${config.eniPollIntervalMs} ms, pool ${config.pool.min}–${config.pool.max}, idle window ${config.idleSeconds} s${config.periodScale === 1 ? '' : ` (timers ×${config.periodScale})`}, roles: ${config.roles}${config.nodeOptions === undefined ? '' : ` with NODE_OPTIONS=${config.nodeOptions}`}${
        config.roleEnv === undefined
          ? ''
          : `, role environment ${Object.entries(config.roleEnv)
              .map(([key, value]) => `${key}=${value}`)
              .join(' ')}`
      }.`,
    '',
    ...table(
      ['figure', 'value'],
      [
        ['nodes: first created → every pool warm', seconds(report.nodesWarmSeconds * 1000)],
        ['burst: pods created (32 at a time)', `${burst.pods} in ${seconds(burst.createSeconds * 1000)}`],
        [
          'pod → IP in CR, p50 / p99 / max',
          `${seconds(burst.latencyMs.p50)} / ${seconds(burst.latencyMs.p99)} / ${seconds(burst.latencyMs.max)}`,
        ],
        [
          'pod → IP, worker histogram: observations, p50 / p99',
          `${burst.workerHistogram.count}, ${fixed(burst.workerHistogram.p50Seconds)} s / ${fixed(burst.workerHistogram.p99Seconds)} s`,
        ],
        [
          'first pod created → all served',
          `${seconds(burst.allServedSeconds * 1000)} (${burst.served}/${burst.pods} served)`,
        ],
        ['first pod created → settled', seconds(burst.settledSeconds * 1000)],
        [
          'ECS calls per pod (burst)',
          `${fixed(report.ecs.callsPerPodTotal)}: ${countsLine(report.ecs.callsPerPod, 2)}`,
        ],
        ['ECS calls per idle hour (cluster)', countsLine(report.ecs.idleCallsPerHour, 0)],
        ['apiserver requests, burst (eniflow)', countsLine(report.apiserver.burstByVerb, 0)],
        ['apiserver requests, burst, by resource', countsLine(report.apiserver.burstDetail, 0)],
        ['apiserver requests per idle hour (eniflow)', countsLine(report.apiserver.idlePerHourByVerb, 0)],
        ['apiserver requests per idle hour, by resource', countsLine(report.apiserver.idlePerHourDetail, 0)],
        [
          'watcher signals: burst / per idle hour',
          `${report.watcherSignals.burst} / ${fixed(report.watcherSignals.idlePerHour, 0)}`,
        ],
        [
          'history per node, burst',
          `${fixed(report.history.perNodeBurst.events, 1)} events, ${kib(report.history.perNodeBurst.bytes)}`,
        ],
        [
          'history per node, per idle hour',
          `${fixed(report.history.perNodeIdleHour.events, 1)} events, ${kib(report.history.perNodeIdleHour.bytes)}`,
        ],
        [
          'history per node, total at end',
          `${fixed(report.history.perNodeTotal.events, 1)} events, ${kib(report.history.perNodeTotal.bytes)} (${report.history.runs} runs of ${report.history.workflows} workflows)`,
        ],
        ['restart: new worker spawned → "Worker started"', seconds(report.restart.workerStartSeconds * 1000)],
        ['restart: new worker spawned → new pod served', seconds(report.restart.servedSeconds * 1000)],
        ...(report.restart.rollingUpdate === undefined
          ? []
          : [
              [
                `rolling update of ${report.restart.rollingUpdate.replicas} workers: roll / pod served`,
                `${seconds(report.restart.rollingUpdate.rollSeconds * 1000)} / ${seconds(report.restart.rollingUpdate.servedSeconds * 1000)}`,
              ],
            ]),
        ...(report.restart.allInOne === undefined
          ? []
          : [
              [
                `all-in-one restart, ${report.restart.allInOne.nodes} nodes: respawn → "Worker started" / leader / new pod served`,
                `${seconds(report.restart.allInOne.workerStartSeconds * 1000)} / ${seconds(report.restart.allInOne.leaderSeconds * 1000)} / ${seconds(report.restart.allInOne.servedSeconds * 1000)}`,
              ],
              [
                'all-in-one restart: workflow tasks, CPU s, peak RSS of the new process (its sweep window)',
                `${report.restart.allInOne.workflowTasks}, ${fixed(report.restart.allInOne.cpuSeconds)}, ${fixed(report.restart.allInOne.peakRssMiB, 0)} MiB (${fixed(report.restart.allInOne.windowSeconds, 1)} s)`,
              ],
            ]),
        ...(report.restart.duringBurst === undefined
          ? []
          : [
              [
                'restart during the burst: respawn → "Worker started" / every burst pod served',
                `${seconds(report.restart.duringBurst.workerStartSeconds * 1000)} / ${seconds(report.restart.duringBurst.allServedSeconds * 1000)}`,
              ],
            ]),
      ],
    ),
    '',
    ...table(
      ['process', 'CPU s, burst', 'CPU s, idle window', 'CPU s per idle hour', 'peak RSS'],
      report.processes.map((process) => [
        process.name,
        fixed(process.cpuSecondsBurst),
        fixed(process.cpuSecondsIdle),
        fixed(process.cpuSecondsPerIdleHour, 0),
        `${fixed(process.peakRssMiB, 0)} MiB`,
      ]),
    ),
  ];
  lines.push('', ...table(['figure (issue 29 targets)', 'value'], targetRows(report.targets)));
  lines.push('', ...temporalTable(report.temporal), '', ...workersTable(report.workers));
  if (report.temporalServer !== undefined) lines.push('', ...temporalServerTable(report.temporalServer));
  lines.push('', ...taskTimesTable(report.workflowTasks));
  lines.push('', ...report.audit.lines.map((line) => `- ${line}`));
  if (report.notes.length > 0) lines.push('', ...report.notes.map((note) => `- ${note}`));
  if (options.timeline) lines.push('', '```text', ...formatTimeline(report.timeline), '```');
  return `${lines.join('\n')}\n`;
}
