/**
 * How long the node workflows' workflow tasks took, from their histories: the time a task waited for a worker
 * (scheduled → started) and the time the worker held it (started → completed, failed or timed out). Issue 20 asks
 * that no workflow task take more than a second; a task that runs local activities holds the task while they run
 * (reads and status writes), so its time includes theirs.
 */
import type { BenchEvent } from './history-events.js';

export interface TaskTimes {
  /** Workflow tasks that ended in the window. */
  count: number;
  /** Started → ended, milliseconds. */
  runP50Ms: number;
  runP99Ms: number;
  runMaxMs: number;
  /** Tasks held longer than a second by their worker. */
  runOverOneSecond: number;
  /** Scheduled → started, milliseconds: the wait for a worker (a replay after a restart starts here). */
  queueP50Ms: number;
  queueP99Ms: number;
  queueMaxMs: number;
  /** Tasks that ended failed or timed out instead of completed. */
  failedOrTimedOut: number;
}

const TASK_ENDS = new Set(['WorkflowTaskCompleted', 'WorkflowTaskFailed', 'WorkflowTaskTimedOut']);

/** The nearest-rank quantile of ascending `sorted` (NaN when empty). */
function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? Number.NaN;
}

/**
 * The workflow tasks of the runs that ended in [fromMs, toMs). A run has at most one workflow task outstanding, so a
 * task is the last WorkflowTaskScheduled and WorkflowTaskStarted before its end event.
 */
export function workflowTaskTimes(input: {
  runs: readonly (readonly BenchEvent[])[];
  fromMs: number;
  toMs: number;
}): TaskTimes {
  const run: number[] = [];
  const queue: number[] = [];
  let failedOrTimedOut = 0;
  for (const events of input.runs) {
    let scheduledMs: number | undefined;
    let startedMs: number | undefined;
    for (const event of events) {
      if (event.type === 'WorkflowTaskScheduled') {
        scheduledMs = event.atMs;
        startedMs = undefined;
      } else if (event.type === 'WorkflowTaskStarted') {
        startedMs = event.atMs;
      } else if (TASK_ENDS.has(event.type)) {
        const inWindow = event.atMs >= input.fromMs && event.atMs < input.toMs;
        // A task that timed out before a worker started it only waited.
        if (inWindow && startedMs !== undefined) run.push(event.atMs - startedMs);
        if (inWindow && scheduledMs !== undefined) queue.push((startedMs ?? event.atMs) - scheduledMs);
        if (inWindow && event.type !== 'WorkflowTaskCompleted') failedOrTimedOut += 1;
        scheduledMs = undefined;
        startedMs = undefined;
      }
    }
  }
  run.sort((a, b) => a - b);
  queue.sort((a, b) => a - b);
  return {
    count: queue.length,
    runP50Ms: quantile(run, 0.5),
    runP99Ms: quantile(run, 0.99),
    runMaxMs: run.at(-1) ?? Number.NaN,
    runOverOneSecond: run.filter((ms) => ms > 1_000).length,
    queueP50Ms: quantile(queue, 0.5),
    queueP99Ms: quantile(queue, 0.99),
    queueMaxMs: queue.at(-1) ?? Number.NaN,
    failedOrTimedOut,
  };
}

/**
 * Workflow tasks that `identity` started and completed in [fromMs, toMs): proof that a process did the work of a
 * window. A task only scheduled on a dead process's sticky queue and timed out there counts for nobody.
 */
export function completedTasksOf(input: {
  runs: readonly (readonly BenchEvent[])[];
  identity: string;
  fromMs: number;
  toMs: number;
}): number {
  let completed = 0;
  for (const events of input.runs) {
    let startedBy: string | undefined;
    for (const event of events) {
      if (event.type === 'WorkflowTaskStarted') startedBy = event.identity;
      else if (TASK_ENDS.has(event.type)) {
        const inWindow = event.atMs >= input.fromMs && event.atMs < input.toMs;
        if (inWindow && event.type === 'WorkflowTaskCompleted' && startedBy === input.identity) completed += 1;
        startedBy = undefined;
      }
    }
  }
  return completed;
}
