/** The scale benchmark's Temporal cost: tasks, events and Temporal Cloud Actions counted from node histories. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { BenchEvent } from '../../../bench/scale/history-events.js';
import { scaleCost, tasksByIdentity, temporalCost } from '../../../bench/scale/temporal-cost.js';

let nextId = 1;
function event(atMs: number, type: string, extra: Partial<BenchEvent> = {}): BenchEvent {
  return { id: nextId++, atMs, type, bytes: 10, ...extra };
}
const localActivity = (atMs: number, task: number, activityType: string): BenchEvent =>
  event(atMs, 'MarkerRecorded', { marker: 'core_local_activity', workflowTaskCompletedId: task, activityType });

/** One pass: a signal, a task that runs three local activities and schedules an activity retried twice, a timer. */
const pass: BenchEvent[] = [
  event(100, 'WorkflowExecutionSignaled', { signal: 'reconcile' }),
  event(101, 'WorkflowTaskScheduled'),
  event(102, 'WorkflowTaskStarted', { identity: '1@h' }),
  event(110, 'WorkflowTaskCompleted', { id: 500 }),
  localActivity(110, 500, 'readNodeView'),
  localActivity(110, 500, 'describeVSwitches'),
  localActivity(110, 500, 'writeNodeStatusChanges'),
  event(111, 'ActivityTaskScheduled', { activityType: 'createNetworkInterface' }),
  event(900, 'ActivityTaskStarted', { activityType: 'createNetworkInterface', attempt: 3, identity: '1@h' }),
  event(950, 'ActivityTaskCompleted', { activityType: 'createNetworkInterface' }),
  event(951, 'WorkflowTaskScheduled'),
  event(952, 'WorkflowTaskStarted'),
  event(960, 'WorkflowTaskCompleted', { id: 600 }),
  localActivity(960, 600, 'writeNodeStatusChanges'),
  event(961, 'TimerStarted', { timer: '1 (4.0 s)' }),
  event(962, 'MarkerRecorded', { marker: 'core_patch', workflowTaskCompletedId: 600 }),
  event(963, 'UpsertWorkflowSearchAttributes', { searchAttributes: ['TemporalChangeVersion'] }),
];

describe('temporalCost', () => {
  it('counts tasks, attempts, local activities, timers, signals, events and bytes', () => {
    const cost = temporalCost({ runs: [pass], fromMs: 0, toMs: 10_000 });
    assert.equal(cost.workflowTasks, 2);
    assert.equal(cost.activityTasks, 3, 'every attempt of the retried activity');
    assert.equal(cost.localActivities, 4);
    assert.equal(cost.timersStarted, 1);
    assert.equal(cost.signals, 1);
    assert.equal(cost.events, pass.length);
    assert.equal(cost.bytes, 10 * pass.length);
  });

  it('bills Temporal Cloud Actions: local activities once per workflow task, each attempt, no versioning', () => {
    const cost = temporalCost({ runs: [pass], fromMs: 0, toMs: 10_000 });
    assert.deepEqual(cost.actionsByKind, {
      signal: 1,
      'activity attempt': 3,
      'timer started': 1,
      'local activities (one per workflow task)': 2,
    });
    assert.equal(cost.actions, 7);
  });

  it('keeps the workflow tasks of two runs apart and bills the continue-as-new start', () => {
    const nextRun = [
      event(2_000, 'WorkflowExecutionStarted'),
      event(2_010, 'WorkflowTaskCompleted', { id: 500 }),
      localActivity(2_010, 500, 'readNodeView'),
      event(2_020, 'UpsertWorkflowSearchAttributes', { searchAttributes: ['NodeName', 'InstanceId'] }),
      event(2_030, 'MarkerRecorded', { marker: 'SideEffect', workflowTaskCompletedId: 500 }),
    ];
    const cost = temporalCost({ runs: [pass, nextRun], fromMs: 0, toMs: 10_000 });
    assert.equal(cost.actionsByKind['local activities (one per workflow task)'], 3);
    assert.equal(cost.actionsByKind['workflow started'], 1);
    assert.equal(cost.actionsByKind['search attribute upsert'], 1);
    assert.equal(cost.actionsByKind['side effect'], 1);
    assert.equal(cost.actions, 7 + 4);
  });

  it('counts only the events in [fromMs, toMs)', () => {
    const cost = temporalCost({ runs: [pass], fromMs: 100, toMs: 900 });
    assert.equal(cost.events, 8);
    assert.equal(cost.activityTasks, 0, 'the attempt finished at 900, outside the window');
    assert.equal(cost.actions, 2, 'the signal and one workflow task of local activities');
  });

  it('scales every count', () => {
    const cost = scaleCost(temporalCost({ runs: [pass], fromMs: 0, toMs: 10_000 }), 0.5);
    assert.equal(cost.actions, 3.5);
    assert.equal(cost.activityTasks, 1.5);
    assert.equal(cost.actionsByKind['activity attempt'], 1.5);
  });
});

describe('tasksByIdentity', () => {
  it('gives each worker identity the workflow tasks and activities it started', () => {
    const runs = [
      [...pass, event(970, 'WorkflowTaskStarted', { identity: '2@h' })],
      [event(3_000, 'ActivityTaskStarted', { identity: '2@h', attempt: 1 })],
    ];
    assert.deepEqual(
      [...tasksByIdentity(runs)].sort((a, b) => a[0].localeCompare(b[0])),
      [
        ['', { workflowTasks: 1, activityTasks: 0 }],
        ['1@h', { workflowTasks: 1, activityTasks: 1 }],
        ['2@h', { workflowTasks: 1, activityTasks: 1 }],
      ],
    );
  });
});
