/**
 * `npm run bench:scale -- --preset smoke` end to end: it starts its own servers, worker and watcher, and its
 * report has every figure, in relations that hold in a correct run and fail in a wrong one (a pod without an IP, more
 * ENIs than the pods need, a restart served by nobody new). No timing is asserted: the machine is shared.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';

import type { ScaleReport } from '../../../bench/scale/report.js';

const REPO_ROOT = fileURLToPath(new URL('../../..', import.meta.url));

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
    const byAction = Object.values(report.ecs.callsPerPod).reduce((sum, value) => sum + value, 0);
    assert.ok(Math.abs(byAction - report.ecs.callsPerPodTotal) < 1e-9, 'calls per pod are the sum over actions');
    // Status writes (PUT) are the burst's requests that must be there: their bases come from the worker's read cache,
    // so a burst may well have no GET.
    assertPositive(report.apiserver.burstByVerb['PUT'] ?? 0, 'apiserver PUTs in the burst (status writes)');
    assertPositive(report.apiserver.idlePerHourByVerb['PUT'] ?? 0, 'apiserver PUTs when idle (lease renewals)');
    assert.ok(report.watcherSignals.burst >= 1, 'the burst reached the workflows through watcher signals');

    // Issue 29's figures. Every burst pod is bound in its node's CR, on an ENI IP; no node has more ENIs, nor made
    // more creates, than its pods and its warm pool need (5 + 2 IPs per node on 15-IP ENIs: one).
    const { targets } = report;
    const { enis } = targets;
    assert.equal(enis.nodes, 3);
    assert.equal(enis.podsBound, 15, 'the CRs bind every burst pod');
    assert.ok(enis.ipsOnEnis >= enis.podsBound, `IPs on ENIs ${enis.ipsOnEnis} < pods ${enis.podsBound}`);
    assert.equal(enis.nodesShortOfIps, 0);
    assert.equal(enis.enisNeededPerNodeMax, 1, 'ceil((5 pods + minPool 2) / 15) from the CR limits');
    assert.ok(enis.enisPerNodeMax <= enis.enisNeededPerNodeMax, `ENIs per node ${enis.enisPerNodeMax}`);
    assert.equal(enis.nodesOverNeed, 0);
    assert.ok(enis.createsPerNode <= enis.enisNeededPerNodeMax, `creates per node ${enis.createsPerNode}`);
    assert.ok(enis.createsBeyondWarmUpPerNode <= enis.createsPerNode);
    assert.equal(targets.ecsCallsPerPod.total, report.ecs.callsPerPodTotal);
    assert.deepEqual(targets.podToIpMs, report.burst.latencyMs);
    assert.ok(targets.allocationWindowSeconds <= report.burst.settledSeconds, 'served before settled');
    assert.ok(targets.podToIpMs.max <= targets.allocationWindowSeconds * 1000, 'no pod waited past the window');
    // CPU per pod in the allocation window: measured for every process under test, eniflow's being its roles' sum.
    assertPositive(targets.eniflowCpuMsPerPod, 'eniflow CPU ms per pod');
    assertPositive(targets.temporalCpuMsPerPod, 'Temporal server CPU ms per pod');
    const worker = targets.cpuMsPerPod['worker'] ?? Number.NaN;
    const watcher = targets.cpuMsPerPod['watcher'] ?? Number.NaN;
    assert.ok(Math.abs(worker + watcher - targets.eniflowCpuMsPerPod) < 1e-9, 'eniflow = worker + watcher');
    for (const [name, mib] of Object.entries(targets.peakRssMiB)) assertPositive(mib, `${name} peak RSS`);
    // The worker's own task-latency histogram saw the burst's tasks; its top bucket is at least its mean.
    const execution = targets.workflowTaskLatency.burst.execution;
    assert.equal(execution.metric, 'temporal_workflow_task_execution_latency');
    assert.ok(execution.count >= 1, 'the SDK histogram observed the burst');
    assert.ok(
      execution.maxAtMostMs >= execution.meanMs,
      `top bucket ${execution.maxAtMostMs}, mean ${execution.meanMs}`,
    );
    assert.ok(execution.overOneSecond >= 0 && execution.overOneSecond <= execution.count);

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
    assertPositive(perPodServed.events, 'history events per pod');
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

    // The kill -9 restart: the pod created at the respawn was served, and the new process did workflow work in that
    // window (its own completed tasks: a task left on the dead process's sticky queue completes for nobody).
    assertPositive(report.restart.workerStartSeconds, 'restart: worker started');
    assertPositive(report.restart.servedSeconds, 'restart: pod served');
    assert.ok(report.restart.servedSeconds >= report.restart.workerStartSeconds - 1);
    assert.ok(report.restart.newProcessTasksCompleted >= 1, 'the new process completed workflow tasks');
    const restarted = report.workers.processes.find((process) => process.name === 'worker-1-restarted');
    assert.ok(restarted !== undefined && restarted.workflowTasks >= report.restart.newProcessTasksCompleted);
    assert.ok((targets.workflowTaskLatency.restartedProcess?.execution.count ?? 0) >= 1, 'its SDK histogram too');

    // Workflow task times, from the same histories: every completed task of the burst window is timed.
    const tasks = report.workflowTasks;
    assert.ok(tasks.burst.count >= report.temporal.burst.workflowTasks, `burst tasks timed: ${tasks.burst.count}`);
    assert.ok(tasks.burst.runP50Ms <= tasks.burst.runMaxMs && tasks.burst.queueP50Ms <= tasks.burst.queueMaxMs);
  });
});
