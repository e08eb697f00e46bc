/**
 * One ECS budget for the cluster, enforced by the Temporal server: two worker processes on one task queue, a budget
 * of 60 CreateNetworkInterface calls a minute (`ENIFLOW_ECS_RATE_LIMIT`) with a burst of 20 (`ENIFLOW_ECS_BURST`, and
 * the server's `matching.minTaskThrottlingBurstSize` of 5 per partition), and 25 nodes whose warm pools want 3 ENIs
 * each at once (75 creates, more than a minute's budget). The emulator's call log must show the burst (more creates
 * in one second than the default server's limiter lets through), at most 60 creates in any 60-second window, and
 * both replicas making some of them.
 */
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { pollUntil } from '../../scripts/lib/poll-until.js';
import { maxInWindow } from '../support/call-windows.js';
import { startChaosCluster } from '../support/chaos-cluster.js';

describe('the cluster ECS budget', () => {
  it('two worker replicas with a budget of 60 creates a minute and a burst of 20 make at most 60 in any minute', async (t) => {
    const budget = 60;
    const burst = 20;
    const cluster = await startChaosCluster({
      name: 'budget',
      nodeCount: 25,
      workerReplicas: 2,
      workerEnv: {
        ENIFLOW_ECS_RATE_LIMIT: JSON.stringify({ CreateNetworkInterface: budget }),
        ENIFLOW_ECS_BURST: String(burst),
      },
      // Three secondary ENIs of 15 addresses each: every node wants three ENIs as soon as its workflow runs.
      pool: { minPoolSize: 40, maxPoolSize: 45 },
    });
    try {
      await Promise.all(cluster.workers.map((worker) => worker.ready()));
      const createTimes = async (): Promise<number[]> =>
        (await cluster.emulator.emulator.admin.calls({ action: 'CreateNetworkInterface' })).map((call) =>
          Date.parse(call.time),
        );
      // Past 66 creates the calls have spanned more than a minute at the queue's pace.
      const times = await pollUntil(
        async () => {
          const current = await createTimes();
          return current.length >= 66 ? current : undefined;
        },
        { description: '66 creates', timeoutMs: 150_000, intervalMs: 2_000 },
      );
      const perMinute = maxInWindow(times, 60_000);
      const perSecond = maxInWindow(times, 1_000);
      const spanS = (Math.max(...times) - Math.min(...times)) / 1_000;
      // One log per replica in the run directory (worker.log, worker-2.log, …).
      const logNames = (await readdir(cluster.runDir)).filter((name) => /^worker.*\.log$/.test(name)).sort();
      const logs = await Promise.all(logNames.map((name) => readFile(join(cluster.runDir, name), 'utf8')));
      const createdBy = logs.map((log) => log.split('\n').filter((line) => line.includes('"Created ENI"')).length);
      t.diagnostic(
        `${times.length} creates over ${spanS.toFixed(1)} s; most in any 60 s: ${perMinute}, in any 1 s: ${perSecond}; ` +
          `created by replica: ${createdBy.join(' / ')}`,
      );
      assert.ok(perMinute <= budget, `at most ${budget} creates in any minute, got ${perMinute}`);
      // The queue runs at (budget − burst)/min so the burst fits in the minute.
      assert.ok(perMinute >= budget - burst, `the demand used the budget (${perMinute} in the busiest minute)`);
      // The default server's limiter lets about 7 through in a second (SERVER_LIMITER_BURST); the configured one more.
      assert.ok(perSecond >= 12, `the burst went out at once (${perSecond} creates in the busiest second)`);
      assert.ok(
        createdBy.length === 2 && createdBy.every((count) => count > 0),
        `both replicas made creates: ${createdBy.join(' / ')}`,
      );
    } finally {
      await cluster.close();
    }
  });
});
