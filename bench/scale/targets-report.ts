/** The Markdown section of issue 29's target figures (targets.ts). */
import type { TargetFigures, TaskLatencyFigures } from './targets.js';
import type { TaskLatencySummary } from './task-latency.js';

const fixed = (value: number, digits = 2): string => (Number.isFinite(value) ? value.toFixed(digits) : '-');

function byName(values: Readonly<Record<string, number>>, unit: string, digits: number): string {
  const entries = Object.entries(values);
  return entries.length === 0
    ? '-'
    : entries.map(([name, value]) => `${name} ${fixed(value, digits)}${unit}`).join(', ');
}

/** `n tasks, max ≤ X ms, k over 1 s, mean m ms`; "> last bound" when a task fell above the last bucket. */
export function formatTaskLatency(summary: TaskLatencySummary): string {
  if (summary.count === 0) return '0 tasks';
  const max = Number.isFinite(summary.maxAtMostMs)
    ? `max ≤ ${fixed(summary.maxAtMostMs, 0)} ms`
    : `max > ${fixed(summary.lastBoundMs, 0)} ms`;
  return `${summary.count} tasks, ${max}, ${fixed(summary.overOneSecond, 0)} over 1 s, mean ${fixed(summary.meanMs, 1)} ms`;
}

function taskRows(name: string, figures: TaskLatencyFigures): string[][] {
  return [
    [
      `${name}: workflow task execution (temporal_workflow_task_execution_latency)`,
      formatTaskLatency(figures.execution),
    ],
    [`${name}: workflow task replay (temporal_workflow_task_replay_latency)`, formatTaskLatency(figures.replay)],
    [
      `${name}: workflow task schedule → start (temporal_workflow_task_schedule_to_start_latency)`,
      formatTaskLatency(figures.scheduleToStart),
    ],
  ];
}

/** Rows of `| figure | value |`, for report.ts's table. */
export function targetRows(targets: TargetFigures): string[][] {
  const { podToIpMs: ip, enis } = targets;
  const seconds = (ms: number): string => `${fixed(ms / 1000)} s`;
  return [
    [
      'pod → IP p50 / p99 / max (p99 ÷ p50)',
      `${seconds(ip.p50)} / ${seconds(ip.p99)} / ${seconds(ip.max)} (${fixed(targets.p99OverP50)})`,
    ],
    ['allocation window (first pod created → last served)', `${fixed(targets.allocationWindowSeconds)} s`],
    [
      'CPU ms per pod, allocation window: eniflow / Temporal server',
      `${fixed(targets.eniflowCpuMsPerPod)} / ${fixed(targets.temporalCpuMsPerPod)}`,
    ],
    ['CPU ms per pod, allocation window, by process', byName(targets.cpuMsPerPod, '', 2)],
    ['peak RSS by process', byName(targets.peakRssMiB, ' MiB', 0)],
    [
      'ECS calls per pod (burst), by action',
      `${fixed(targets.ecsCallsPerPod.total, 3)}: ${byName(targets.ecsCallsPerPod.byAction, '', 3)}`,
    ],
    [
      'creates per node: warm-up + burst / beyond warm-up',
      `${fixed(enis.createsPerNode)} / ${fixed(enis.createsBeyondWarmUpPerNode)}`,
    ],
    [
      'ENIs per node mean / max, needed mean / max (ceil((pods + minPool) ÷ IPs per ENI))',
      `${fixed(enis.enisPerNodeMean)} / ${enis.enisPerNodeMax}, ${fixed(enis.enisNeededPerNodeMean)} / ${enis.enisNeededPerNodeMax}`,
    ],
    [
      'nodes with more ENIs than needed (ENIs over need)',
      `${enis.nodesOverNeed} of ${enis.nodes} (${enis.enisOverNeed})`,
    ],
    [
      'pods bound / IPs on ENIs (nodes with fewer IPs than pods)',
      `${enis.podsBound} / ${enis.ipsOnEnis} (${enis.nodesShortOfIps})`,
    ],
    ...taskRows('burst', targets.workflowTaskLatency.burst),
    ...(targets.workflowTaskLatency.restartedProcess === undefined
      ? []
      : taskRows('restarted process', targets.workflowTaskLatency.restartedProcess)),
  ];
}
