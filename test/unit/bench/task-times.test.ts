/** The scale benchmark's workflow task times: queue and run time of each task, from node histories. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { BenchEvent } from '../../../bench/scale/history-events.js';
import { workflowTaskTimes } from '../../../bench/scale/task-times.js';

let nextId = 1;
function event(atMs: number, type: string): BenchEvent {
  return { id: nextId++, atMs, type };
}

/** A task scheduled at `scheduledMs`, started `queueMs` later and ended `runMs` after that. */
function task(scheduledMs: number, queueMs: number, runMs: number, end = 'WorkflowTaskCompleted'): BenchEvent[] {
  return [
    event(scheduledMs, 'WorkflowTaskScheduled'),
    event(scheduledMs + queueMs, 'WorkflowTaskStarted'),
    event(scheduledMs + queueMs + runMs, end),
  ];
}

describe('workflowTaskTimes', () => {
  it('measures each task from scheduled to started and from started to its end', () => {
    const runs = [
      [
        event(0, 'WorkflowExecutionStarted'),
        ...task(0, 5, 40),
        event(50, 'ActivityTaskScheduled'),
        ...task(900, 10, 1_500),
      ],
      [...task(100, 2_000, 20, 'WorkflowTaskFailed')],
    ];
    const times = workflowTaskTimes({ runs, fromMs: 0, toMs: 10_000 });
    assert.equal(times.count, 3);
    assert.equal(times.runMaxMs, 1_500);
    assert.equal(times.runP50Ms, 40);
    assert.equal(times.runOverOneSecond, 1);
    assert.equal(times.queueMaxMs, 2_000);
    assert.equal(times.queueP50Ms, 10);
    assert.equal(times.failedOrTimedOut, 1);
  });

  it('keeps only the tasks that ended in the window', () => {
    const runs = [[...task(0, 5, 40), ...task(1_000, 5, 3_000), ...task(5_000, 1, 10)]];
    const times = workflowTaskTimes({ runs, fromMs: 500, toMs: 4_500 });
    assert.equal(times.count, 1);
    assert.equal(times.runMaxMs, 3_000);
  });

  it('counts a task that timed out before any worker started it as queued, not run', () => {
    const runs = [[event(0, 'WorkflowTaskScheduled'), event(10_000, 'WorkflowTaskTimedOut'), ...task(10_000, 3, 7)]];
    const times = workflowTaskTimes({ runs, fromMs: 0, toMs: 20_000 });
    assert.equal(times.count, 2);
    assert.equal(times.queueMaxMs, 10_000);
    assert.equal(times.runMaxMs, 7, 'the timed-out task held by no worker adds no run time');
    assert.equal(times.failedOrTimedOut, 1);
  });

  it('has no figures when no task ended in the window', () => {
    const times = workflowTaskTimes({ runs: [task(0, 1, 1)], fromMs: 100, toMs: 200 });
    assert.equal(times.count, 0);
    assert.ok(Number.isNaN(times.runMaxMs));
  });
});
