/** Issue 29's figures from the scale benchmark's measurements: ENIs against need, CPU per pod, SDK task latency. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { BenchEvent } from '../../../bench/scale/history-events.js';
import { cpuMsPerPod, eniFigures } from '../../../bench/scale/targets.js';
import { formatTaskLatency } from '../../../bench/scale/targets-report.js';
import {
  latencyHistogramMs,
  summarizeTaskLatency,
  taskHistogramsBetween,
  NO_SDK_TASK_HISTOGRAMS,
} from '../../../bench/scale/task-latency.js';
import { completedTasksOf } from '../../../bench/scale/task-times.js';

const node = (name: string, enis: number, ips: number, pods: number, minPoolSize = 2) => ({
  node: name,
  enis,
  ips,
  pods,
  ipv4PerAdapter: 15,
  minPoolSize,
});

describe('eniFigures', () => {
  it('sets each node against ceil((pods + minPool) / IPs per ENI) from its CR', () => {
    const figures = eniFigures({
      nodes: [node('a', 2, 30, 25), node('b', 3, 33, 25), node('c', 1, 7, 5)],
      createsAfterBurst: 7,
      createsInBurst: 4,
    });
    assert.equal(figures.enisNeededPerNodeMax, 2);
    assert.equal(figures.enisNeededPerNodeMean, 5 / 3);
    assert.equal(figures.enisPerNodeMax, 3);
    assert.equal(figures.nodesOverNeed, 1, 'b opened a third ENI where two hold 27 IPs');
    assert.equal(figures.enisOverNeed, 1);
    assert.equal(figures.createsPerNode, 7 / 3);
    assert.equal(figures.createsBeyondWarmUpPerNode, 4 / 3);
    assert.equal(figures.podsBound, 55);
    assert.equal(figures.ipsOnEnis, 70);
    assert.equal(figures.nodesShortOfIps, 0);
  });

  it('counts a node with fewer IPs than bound pods, and a pool of 0 needs only the pods', () => {
    const figures = eniFigures({
      nodes: [node('a', 1, 15, 16, 0), node('b', 1, 15, 15, 0)],
      createsAfterBurst: 2,
      createsInBurst: 2,
    });
    assert.equal(figures.nodesShortOfIps, 1);
    assert.deepEqual([figures.enisNeededPerNodeMax, figures.nodesOverNeed], [2, 0]);
  });
});

describe('cpuMsPerPod', () => {
  it('divides each process CPU over the window by the pods, NaN for a process replaced in between', () => {
    const perPod = cpuMsPerPod(
      { 'worker-1': { pid: 10, cpuSeconds: 1 }, watcher: { pid: 11, cpuSeconds: 2 }, gone: undefined },
      { 'worker-1': { pid: 10, cpuSeconds: 1.5 }, watcher: { pid: 12, cpuSeconds: 2.5 }, gone: undefined },
      100,
    );
    assert.equal(perPod['worker-1'], 5);
    assert.ok(Number.isNaN(perPod['watcher']));
    assert.ok(Number.isNaN(perPod['gone']));
  });
});

const PAGE = [
  '# TYPE temporal_workflow_task_execution_latency histogram',
  ...[1, 10, 20, 50, 100, 200, 500, 1000].map(
    (le, index) =>
      `temporal_workflow_task_execution_latency_bucket{namespace="default",le="${le}"} ${[0, 3, 5, 8, 9, 9, 9, 9][index]}`,
  ),
  'temporal_workflow_task_execution_latency_bucket{namespace="default",le="+Inf"} 10',
  'temporal_workflow_task_execution_latency_sum{namespace="default"} 1540',
  'temporal_workflow_task_execution_latency_count{namespace="default"} 10',
  'temporal_workflow_task_replay_latency_seconds_bucket{le="0.01"} 2',
  'temporal_workflow_task_replay_latency_seconds_bucket{le="+Inf"} 2',
  'temporal_workflow_task_replay_latency_seconds_count 2',
].join('\n');

describe('SDK workflow task latency', () => {
  it('reads the histogram in ms, counts tasks over a second and knows the longest only as over the last bound', () => {
    const summary = summarizeTaskLatency('x', latencyHistogramMs(PAGE, 'temporal_workflow_task_execution_latency'));
    assert.equal(summary.count, 10);
    assert.equal(summary.overOneSecond, 1);
    assert.equal(summary.maxAtMostMs, Number.POSITIVE_INFINITY);
    assert.equal(summary.lastBoundMs, 1000);
    assert.equal(summary.meanMs, 154);
    assert.match(formatTaskLatency(summary), /^10 tasks, max > 1000 ms, 1 over 1 s, mean 154\.0 ms$/);
  });

  it('turns a `_seconds` histogram into ms and gives the top bucket crossed as the maximum', () => {
    const replay = latencyHistogramMs(PAGE, 'temporal_workflow_task_replay_latency');
    assert.deepEqual(replay.buckets[0], { le: 10, count: 2 });
    const summary = summarizeTaskLatency('x', replay);
    assert.equal(summary.maxAtMostMs, 10);
    assert.ok(Number.isNaN(summary.overOneSecond), 'no 1000 ms bound to count against');
  });

  it('subtracts the earlier scrape per process and drops a process whose page is gone', () => {
    const execution = latencyHistogramMs(PAGE, 'temporal_workflow_task_execution_latency');
    const before = {
      a: {
        ...NO_SDK_TASK_HISTOGRAMS,
        execution: {
          ...execution,
          buckets: execution.buckets.map((b) => ({ ...b, count: Math.min(b.count, 4) })),
          count: 4,
          sum: 40,
        },
      },
    };
    const after = { a: { ...NO_SDK_TASK_HISTOGRAMS, execution }, dead: NO_SDK_TASK_HISTOGRAMS };
    const between = taskHistogramsBetween(before, after);
    assert.equal(between.execution.count, 6);
    assert.equal(between.execution.sum, 1500);
    assert.equal(summarizeTaskLatency('x', between.execution).overOneSecond, 1);
  });
});

describe('completedTasksOf', () => {
  const event = (id: number, atMs: number, type: string, identity?: string): BenchEvent => ({
    id,
    atMs,
    type,
    ...(identity === undefined ? {} : { identity }),
  });

  it('counts the tasks an identity started and completed in the window, not a timed-out one of a dead process', () => {
    const runs = [
      [
        event(1, 100, 'WorkflowTaskScheduled'),
        event(2, 101, 'WorkflowTaskStarted', 'old'),
        event(3, 6_000, 'WorkflowTaskTimedOut'),
        event(4, 6_000, 'WorkflowTaskScheduled'),
        event(5, 6_100, 'WorkflowTaskStarted', 'new'),
        event(6, 6_200, 'WorkflowTaskCompleted'),
        event(7, 9_000, 'WorkflowTaskScheduled'),
        event(8, 9_001, 'WorkflowTaskStarted', 'new'),
        event(9, 9_050, 'WorkflowTaskCompleted'),
      ],
    ];
    assert.equal(completedTasksOf({ runs, identity: 'new', fromMs: 0, toMs: 8_000 }), 1);
    assert.equal(completedTasksOf({ runs, identity: 'new', fromMs: 0, toMs: 10_000 }), 2);
    assert.equal(completedTasksOf({ runs, identity: 'old', fromMs: 0, toMs: 10_000 }), 0);
  });
});
