/**
 * `npm run bench:scale -- --preset smoke` end to end: it starts its own servers, worker and watcher, and its
 * report has every figure, with sane values. No timing is asserted: the machine is shared.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';

import type { ScaleReport } from '../../bench/scale/report.js';

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

function assertPositive(value: number, what: string): void {
  assert.ok(Number.isFinite(value) && value > 0, `${what}: ${value}`);
}

describe('scale benchmark, smoke preset', () => {
  it('runs the whole stack and reports every figure', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', 'bench/scale.ts', '--preset', 'smoke', '--json'],
      // SIGTERM on timeout lets the benchmark stop everything it started.
      { cwd: REPO_ROOT, timeout: 280_000, killSignal: 'SIGTERM', maxBuffer: 16 * 1024 * 1024 },
    );
    const report = JSON.parse(stdout) as ScaleReport;

    assert.equal(report.config.nodes, 3);
    assert.equal(report.burst.pods, 15);
    assert.equal(report.burst.served, 15, 'every burst pod got its IP');
    assert.equal(report.burst.latencyMs.count, 15);
    for (const figure of ['p50', 'p99', 'max'] as const) assertPositive(report.burst.latencyMs[figure], figure);
    assert.ok(report.burst.latencyMs.p50 <= report.burst.latencyMs.p99);
    assert.ok(report.burst.latencyMs.p99 <= report.burst.latencyMs.max);
    // The worker process (with its read cache) observed each burst pod once, in its own pod → IP histogram.
    assert.equal(report.burst.workerHistogram.count, 15);
    assertPositive(report.burst.workerHistogram.p99Seconds, 'worker histogram p99');
    assertPositive(report.burst.allServedSeconds, 'all served');
    assertPositive(report.nodesWarmSeconds, 'nodes warm');

    assert.equal(report.ecs.lost, 0, 'the call log kept every ECS call');
    assertPositive(report.ecs.callsPerPodTotal, 'ECS calls per pod');
    assertPositive(report.apiserver.burstByVerb['GET'] ?? 0, 'apiserver GETs in the burst');
    assertPositive(report.apiserver.idlePerHourByVerb['PUT'] ?? 0, 'apiserver PUTs when idle (lease renewals)');
    assert.ok(report.watcherSignals.burst >= 1, 'the burst reached the workflows through watcher signals');

    assert.equal(report.history.workflows, 3, 'one workflow per node');
    assertPositive(report.history.perNodeBurst.events, 'history events per node in the burst');
    assertPositive(report.history.perNodeBurst.bytes, 'history bytes per node in the burst');
    // Cost follows change: an idle node-hour writes less history than the burst wrote per node (0 when idle).
    assert.ok(
      report.history.perNodeIdleHour.events < report.history.perNodeBurst.events,
      `idle events per node-hour ${report.history.perNodeIdleHour.events}, burst ${report.history.perNodeBurst.events}`,
    );

    // The Temporal bill, from the histories: every pod served cost some workflow tasks and actions; an idle
    // node-day costs fewer actions than the burst's node did (the burst is 5 pods per node).
    const { perPodServed, perIdleNodeDay } = report.temporal;
    assertPositive(perPodServed.workflowTasks, 'workflow tasks per pod');
    assertPositive(perPodServed.actions, 'Temporal actions per pod');
    assert.ok(perPodServed.events >= perPodServed.workflowTasks, 'a workflow task is at least one history event');
    assert.ok(
      perIdleNodeDay.actions < perPodServed.actions * 5,
      `idle actions per node-day ${perIdleNodeDay.actions}, burst per node ${perPodServed.actions * 5}`,
    );
    assert.equal(report.audit.clean, true, report.audit.lines.join('\n'));

    assert.deepEqual(
      report.processes.map((process) => process.name),
      ['worker (first process)', 'watcher', 'temporal server', 'kube-apiserver', 'bench + emulator'],
    );
    for (const process of report.processes) {
      assert.ok(Number.isFinite(process.cpuSecondsBurst) && process.cpuSecondsBurst >= 0, process.name);
      assert.ok(Number.isFinite(process.cpuSecondsPerIdleHour) && process.cpuSecondsPerIdleHour >= 0, process.name);
      assertPositive(process.peakRssMiB, `${process.name} peak RSS`);
    }

    assertPositive(report.restart.workerStartSeconds, 'restart: worker started');
    assertPositive(report.restart.servedSeconds, 'restart: pod served');
    assert.ok(report.restart.servedSeconds >= report.restart.workerStartSeconds - 1);

    // Workflow task times, from the same histories: every completed task of the burst window is timed, and the pod
    // created at the restart needed at least one task of the new worker.
    const tasks = report.workflowTasks;
    assert.ok(tasks.burst.count >= report.temporal.burst.workflowTasks, `burst tasks timed: ${tasks.burst.count}`);
    assert.ok(tasks.burst.runP50Ms <= tasks.burst.runMaxMs && tasks.burst.queueP50Ms <= tasks.burst.queueMaxMs);
    assert.ok(tasks.restart.count >= 1, 'the pod created at the restart took a workflow task');
  });
});
