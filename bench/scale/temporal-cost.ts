/**
 * What the node workflows cost Temporal in a window of time, counted from their histories: workflow tasks, activity
 * tasks (every attempt), local activities, timers, signals, events and bytes, and the Actions Temporal Cloud would
 * bill for them.
 */
import type { Client } from '@temporalio/client';

import { nodeWorkflowId } from '../../src/shared/workflow-ids.js';
import { forEachLimited } from './cluster.js';
import { LOCAL_ACTIVITY_MARKER, PATCH_MARKER, workflowEvents } from './history-events.js';
import type { BenchEvent } from './history-events.js';
import { addCounts } from './probes.js';
import type { Counts } from './probes.js';

export interface TemporalCost {
  /** WorkflowTaskCompleted events. */
  workflowTasks: number;
  /** Activity attempts: the `attempt` of each ActivityTaskStarted (a retry writes no event of its own). */
  activityTasks: number;
  /** Local-activity markers. */
  localActivities: number;
  /** Local-activity markers by activity type (which reads and writes a pass records). */
  localActivitiesByType: Counts;
  timersStarted: number;
  signals: number;
  events: number;
  /** Protobuf-encoded size of the events. */
  bytes: number;
  /** Temporal Cloud Actions, by the rules below. */
  actions: number;
  actionsByKind: Counts;
  /** History bytes by event type (markers and scheduled activities by activity type): what makes history large. */
  bytesByEvent: Counts;
}

export const NO_COST: TemporalCost = {
  workflowTasks: 0,
  activityTasks: 0,
  localActivities: 0,
  localActivitiesByType: {},
  timersStarted: 0,
  signals: 0,
  events: 0,
  bytes: 0,
  actions: 0,
  actionsByKind: {},
  bytesByEvent: {},
};

/** Search attribute of workflow versioning, which Temporal Cloud does not bill an upsert of. */
const CHANGE_VERSION_ATTRIBUTE = 'TemporalChangeVersion';

/**
 * The Actions Temporal Cloud bills for one event, as https://docs.temporal.io/cloud/actions lists them (checked
 * against temporalio/documentation docs/evaluate/temporal-cloud/actions.mdx): a workflow started (a client start or a
 * continue-as-new: the new run's started event), a signal received or sent, a timer started (the implicit one of
 * `condition` with a timeout too), every activity attempt (`attempt` on the started event), a search-attribute upsert
 * unless it only sets TemporalChangeVersion, a side effect, an accepted update, a child workflow (two: its start and
 * its execution), a Nexus operation scheduled or cancelled, and options updated. Local activities are not billed here:
 * Cloud counts all markers of one workflow task as one Action (see `temporalCost`). Patch markers are versioning, not
 * billed. Queries and activity heartbeats are billed but leave no event, so they are not counted.
 */
function eventActions(event: BenchEvent): { kind: string; actions: number } | undefined {
  switch (event.type) {
    case 'WorkflowExecutionStarted':
      return { kind: 'workflow started', actions: 1 };
    case 'WorkflowExecutionSignaled':
    case 'SignalExternalWorkflowExecutionInitiated':
      return { kind: 'signal', actions: 1 };
    case 'TimerStarted':
      return { kind: 'timer started', actions: 1 };
    case 'ActivityTaskStarted':
      return { kind: 'activity attempt', actions: event.attempt ?? 1 };
    case 'UpsertWorkflowSearchAttributes': {
      const keys = event.searchAttributes ?? [];
      const versioningOnly = keys.length > 0 && keys.every((key) => key === CHANGE_VERSION_ATTRIBUTE);
      return versioningOnly ? undefined : { kind: 'search attribute upsert', actions: 1 };
    }
    case 'MarkerRecorded':
      return event.marker === LOCAL_ACTIVITY_MARKER || event.marker === PATCH_MARKER
        ? undefined
        : { kind: 'side effect', actions: 1 };
    case 'WorkflowExecutionUpdateAccepted':
      return { kind: 'update', actions: 1 };
    case 'StartChildWorkflowExecutionInitiated':
      return { kind: 'child workflow', actions: 2 };
    case 'NexusOperationScheduled':
    case 'NexusOperationCancelRequested':
      return { kind: 'nexus operation', actions: 1 };
    case 'WorkflowExecutionOptionsUpdated':
      return { kind: 'options updated', actions: 1 };
    default:
      return undefined;
  }
}

/**
 * The cost of the events in [fromMs, toMs) of the given runs (each run's events in order; workflow task ids are per
 * run, so runs stay apart).
 */
export function temporalCost(input: {
  runs: readonly (readonly BenchEvent[])[];
  fromMs: number;
  toMs: number;
}): TemporalCost {
  const cost: TemporalCost = { ...NO_COST, actionsByKind: {}, localActivitiesByType: {}, bytesByEvent: {} };
  const bill = (kind: string, actions: number): void => {
    cost.actions += actions;
    addCounts(cost.actionsByKind, kind, actions);
  };
  for (const events of input.runs) {
    const tasksWithLocalActivities = new Set<number>();
    for (const event of events) {
      if (event.atMs < input.fromMs || event.atMs >= input.toMs) continue;
      cost.events += 1;
      cost.bytes += event.bytes ?? 0;
      const typed = event.type === 'MarkerRecorded' || event.type === 'ActivityTaskScheduled';
      addCounts(cost.bytesByEvent, typed ? `${event.type} ${event.activityType ?? '?'}` : event.type, event.bytes ?? 0);
      if (event.type === 'WorkflowTaskCompleted') cost.workflowTasks += 1;
      if (event.type === 'ActivityTaskStarted') cost.activityTasks += event.attempt ?? 1;
      if (event.type === 'TimerStarted') cost.timersStarted += 1;
      if (event.type === 'WorkflowExecutionSignaled') cost.signals += 1;
      if (event.marker === LOCAL_ACTIVITY_MARKER) {
        cost.localActivities += 1;
        addCounts(cost.localActivitiesByType, event.activityType ?? '?');
        tasksWithLocalActivities.add(event.workflowTaskCompletedId ?? -event.id);
      }
      const billed = eventActions(event);
      if (billed !== undefined) bill(billed.kind, billed.actions);
    }
    if (tasksWithLocalActivities.size > 0)
      bill('local activities (one per workflow task)', tasksWithLocalActivities.size);
  }
  return cost;
}

/** Every count multiplied by `factor` (per pod, per node-day). */
export function scaleCost(cost: TemporalCost, factor: number): TemporalCost {
  return {
    workflowTasks: cost.workflowTasks * factor,
    activityTasks: cost.activityTasks * factor,
    localActivities: cost.localActivities * factor,
    localActivitiesByType: scaleCounts(cost.localActivitiesByType, factor),
    timersStarted: cost.timersStarted * factor,
    signals: cost.signals * factor,
    events: cost.events * factor,
    bytes: cost.bytes * factor,
    actions: cost.actions * factor,
    actionsByKind: scaleCounts(cost.actionsByKind, factor),
    bytesByEvent: scaleCounts(cost.bytesByEvent, factor),
  };
}

function scaleCounts(counts: Counts, factor: number): Counts {
  return Object.fromEntries(Object.entries(counts).map(([key, n]) => [key, n * factor]));
}

/** Every run of every node's workflow, 8 workflows fetched at a time. */
export async function nodeWorkflowRuns(client: Client, nodeNames: readonly string[]): Promise<BenchEvent[][]> {
  const runs: BenchEvent[][] = [];
  await forEachLimited(nodeNames, 8, async (node) => {
    runs.push(...(await workflowEvents(client, nodeWorkflowId(node))));
  });
  return runs;
}

/** Tasks by the identity of the worker that took them. */
export interface TasksByIdentity {
  /** WorkflowTaskStarted events. */
  workflowTasks: number;
  /** ActivityTaskStarted events: each activity counts for the worker of its last attempt (earlier ones write none). */
  activityTasks: number;
}

/** Counts, over every event of the runs, the workflow and activity tasks each worker identity started. */
export function tasksByIdentity(runs: readonly (readonly BenchEvent[])[]): Map<string, TasksByIdentity> {
  const byIdentity = new Map<string, TasksByIdentity>();
  for (const event of runs.flat()) {
    if (event.type !== 'WorkflowTaskStarted' && event.type !== 'ActivityTaskStarted') continue;
    const identity = event.identity ?? '';
    const tasks = byIdentity.get(identity) ?? { workflowTasks: 0, activityTasks: 0 };
    if (event.type === 'WorkflowTaskStarted') tasks.workflowTasks += 1;
    else tasks.activityTasks += 1;
    byIdentity.set(identity, tasks);
  }
  return byIdentity;
}
