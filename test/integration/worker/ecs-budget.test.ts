/**
 * One ECS budget for the cluster, enforced by the Temporal server, in Terway's shape: a burst of up to a minute's
 * budget at once (`ENIFLOW_ECS_BURST`, and the server's `matching.minTaskThrottlingBurstSize` per partition), then
 * the budget per second.
 *
 * - The burst: 88 nodes whose warm pools want 3 ENIs each at once, 264 creates demanded together on a budget of 300
 *   a minute with a burst of 300. More must go out in ten seconds than the budget's pace allows (50, plus the ~10 the
 *   server admits at once by default). Not all 264 do: the server charges a token for every sync-match offer, matched
 *   or not, and again when it dispatches a task from the backlog, so a burst demanded faster than the pollers take
 *   it spends about twice its size in tokens (docs/decisions.md, "One ECS budget for the cluster").
 * - The window: two worker replicas, a budget of 60 creates a minute with a burst of 60, and 45 nodes wanting 135
 *   creates, more than the burst and a minute's budget together. The emulator's call log must show at most burst +
 *   budget (120) creates in any 60-second window, at least the budget in the busiest, and both replicas making
 *   creates.
 */
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import type { Client } from '@temporalio/client';
import { tsToMs } from '@temporalio/common/lib/time.js';

import { pollUntil } from '../../../scripts/lib/poll-until.js';
import { worstMinute } from '../../../src/shared/ecs-budget.js';
import { nodeWorkflowId } from '../../../src/shared/workflow-ids.js';
import { maxInWindow } from '../../support/call-windows.js';
import { startChaosCluster } from '../../support/chaos-cluster.js';
import type { ChaosCluster } from '../../support/chaos-cluster.js';

/** When each create the emulator answered arrived (epoch ms). */
/**
 * A cluster whose nodes each want three ENIs as soon as their workflows run (a warm pool of more than two secondary
 * ENIs of 15 addresses), its workers held to `budget` creates a minute with a burst of `burst`.
 */
async function startCreatingCluster(input: {
  name: string;
  nodeCount: number;
  budget: number;
  burst: number;
  workerReplicas?: number;
}): Promise<ChaosCluster> {
  return startChaosCluster({
    name: input.name,
    nodeCount: input.nodeCount,
    ...(input.workerReplicas === undefined ? {} : { workerReplicas: input.workerReplicas }),
    workerEnv: {
      ENIFLOW_ECS_RATE_LIMIT: JSON.stringify({ CreateNetworkInterface: input.budget }),
      ENIFLOW_ECS_BURST: String(input.burst),
    },
    pool: { minPoolSize: 31, maxPoolSize: 35 },
  });
}

async function createTimes(cluster: ChaosCluster): Promise<number[]> {
  return (await cluster.emulator.emulator.admin.calls({ action: 'CreateNetworkInterface' })).map((call) =>
    Date.parse(call.time),
  );
}

/** Waits for `count` creates in the emulator's log; returns their arrival times. */
async function untilCreates(cluster: ChaosCluster, count: number, timeoutMs: number): Promise<number[]> {
  return pollUntil(
    async () => {
      const times = await createTimes(cluster);
      return times.length >= count ? times : undefined;
    },
    { description: `${count} creates`, timeoutMs, intervalMs: 2_000 },
  );
}

/**
 * When each first attempt of `createEni` was scheduled and when it started, from the node workflows' histories (every
 * run: a workflow may have continued as new since). The started event carries the attempt's start time.
 */
async function createWaits(
  client: Client,
  nodeNames: readonly string[],
): Promise<{ scheduledMs: number; waitMs: number }[]> {
  const waits: { scheduledMs: number; waitMs: number }[] = [];
  for (const nodeName of nodeNames) {
    const workflowId = nodeWorkflowId(nodeName);
    for await (const execution of client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) {
      const history = await client.workflow.getHandle(workflowId, execution.runId).fetchHistory();
      const scheduled = new Map<string, number>();
      for (const event of history.events ?? []) {
        const id = String(event.eventId);
        if (event.activityTaskScheduledEventAttributes?.activityType?.name === 'createEni') {
          scheduled.set(id, tsToMs(event.eventTime));
        }
        const started = event.activityTaskStartedEventAttributes;
        const scheduledMs =
          started === null || started === undefined ? undefined : scheduled.get(String(started.scheduledEventId));
        if (started !== null && started !== undefined && scheduledMs !== undefined && (started.attempt ?? 1) === 1) {
          waits.push({ scheduledMs, waitMs: tsToMs(event.eventTime) - scheduledMs });
        }
      }
    }
  }
  return waits;
}

describe('the cluster ECS budget', () => {
  it("lets a burst of 264 creates demanded together out faster than the budget's pace (300 a minute)", async (t) => {
    const budget = 300;
    const burst = 300;
    const cluster = await startCreatingCluster({ name: 'burst', nodeCount: 88, budget, burst });
    try {
      await cluster.worker.ready();
      const times = await untilCreates(cluster, 264, 240_000);
      const waits = await createWaits(
        cluster.client,
        cluster.nodes.map((node) => node.name),
      );
      const scheduled = waits.map((wait) => wait.scheduledMs);
      const demandedIn10s = maxInWindow(scheduled, 10_000);
      const longestWaitMs = Math.max(...waits.map((wait) => wait.waitMs));
      const sortedWaits = waits.map((wait) => wait.waitMs).sort((a, b) => a - b);
      const p50 = sortedWaits[Math.floor(sortedWaits.length / 2)] ?? 0;
      t.diagnostic(
        `${times.length} creates, ${waits.length} first attempts in the histories; most scheduled in any 10 s: ` +
          `${demandedIn10s}; queue wait p50 ${p50} ms, max ${longestWaitMs} ms; most created in any 1 s: ` +
          `${maxInWindow(times, 1_000)}, in any 10 s: ${maxInWindow(times, 10_000)}`,
      );
      assert.ok(waits.length >= 264, `every create's first attempt found in the histories (${waits.length})`);
      // The demand came together (how closely depends on the machine's load): well over what the budget's pace lets
      // through in 10 s, so without a burst most of it would wait in the queue.
      assert.ok(demandedIn10s >= 150, `at least 150 creates demanded within 10 s (${demandedIn10s})`);
      // The budget's pace alone lets 50 through in 10 s, and the server's default burst about 10 more.
      const inTenSeconds = maxInWindow(times, 10_000);
      assert.ok(inTenSeconds >= 100, `the burst went out at once (${inTenSeconds} creates in the busiest 10 s)`);
      assert.ok(inTenSeconds <= burst + budget / 6, `never more than the burst and 10 s of budget (${inTenSeconds})`);
    } finally {
      await cluster.close();
    }
  });

  it('two worker replicas with a budget of 60 creates a minute and a burst of 60 make at most 120 in any minute', async (t) => {
    const budget = 60;
    const burst = 60;
    const cluster = await startCreatingCluster({ name: 'budget', nodeCount: 45, budget, burst, workerReplicas: 2 });
    try {
      await Promise.all(cluster.workers.map((worker) => worker.ready()));
      // Past 130 creates the calls have spanned more than a minute at the queue's pace (60 at once, then 1 a second).
      const times = await untilCreates(cluster, 130, 240_000);
      const perMinute = maxInWindow(times, 60_000);
      const perSecond = maxInWindow(times, 1_000);
      const inFiveSeconds = maxInWindow(times, 5_000);
      const spanS = (Math.max(...times) - Math.min(...times)) / 1_000;
      // One log per replica in the run directory (worker.log, worker-2.log, …).
      const logNames = (await readdir(cluster.runDir)).filter((name) => /^worker.*\.log$/.test(name)).sort();
      const logs = await Promise.all(logNames.map((name) => readFile(join(cluster.runDir, name), 'utf8')));
      const createdBy = logs.map((log) => log.split('\n').filter((line) => line.includes('"Created ENI"')).length);
      t.diagnostic(
        `${times.length} creates over ${spanS.toFixed(1)} s; most in any 60 s: ${perMinute}, in any 5 s: ${inFiveSeconds}, ` +
          `in any 1 s: ${perSecond}; ` +
          `created by replica: ${createdBy.join(' / ')}`,
      );
      const bound = worstMinute({ callsPerMinute: budget, burst });
      assert.ok(perMinute <= bound, `at most burst + budget = ${bound} creates in any minute, got ${perMinute}`);
      // The demand used the window: at least a minute's budget (a demand beyond the burst spends much of it on
      // offers, see the header).
      assert.ok(perMinute >= budget, `the demand used the budget (${perMinute} in the busiest minute)`);
      assert.ok(
        createdBy.length === 2 && createdBy.every((count) => count > 0),
        `both replicas made creates: ${createdBy.join(' / ')}`,
      );
    } finally {
      await cluster.close();
    }
  });
});
