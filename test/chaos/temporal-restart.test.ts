/**
 * eniflow survives its Temporal server going away: a dev server keeping its state in a SQLite file (or, with
 * `ENIFLOW_TEST_TEMPORAL=postgres`, the compose file's server on PostgreSQL) is SIGKILLed in the middle of a pod
 * burst and started again on the same port and database. The worker process and the watcher keep running through
 * it; every pod gets its IP, the node workflows carry on in the same runs, and the audit finds nothing leaked,
 * without a janitor pass.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';

import { pollUntil } from '../../scripts/lib/poll-until.js';
import { nodeWorkflowId } from '../../src/shared/workflow-ids.js';
import { assertCleanAudit, formatAudit } from '../support/audit.js';
import { startChaosCluster } from '../support/chaos-cluster.js';
import type { ChaosCluster } from '../support/chaos-cluster.js';

const NODE_COUNT = 3;
const PODS_PER_NODE = 15;

let cluster: ChaosCluster;
let failed = false;

before(async () => {
  cluster = await startChaosCluster({
    name: 'temporal-restart',
    nodeCount: NODE_COUNT,
    emulatorSettings: {
      latency: {
        CreateNetworkInterface: { minMs: 1_000, maxMs: 2_000 },
        AttachNetworkInterface: { minMs: 500, maxMs: 1_000 },
      },
      transitionDelays: { attachMs: 1_000, detachMs: 200, deleteMs: 200 },
    },
    nodeSettings: { gcPeriodMs: 10_000, maxFailureBackoffMs: 5_000 },
  });
});

after(async () => {
  await cluster.close({ keepLogs: failed });
  if (failed) process.stderr.write(`temporal-restart: logs kept in ${cluster.runDir}\n`);
});

describe('Temporal server restart', () => {
  it('a kill -9 of the Temporal server mid-burst loses no pod and leaks nothing', async () => {
    try {
      await cluster.worker.ready();
      const pods: string[] = [];
      // The pods are created while the first creates are watched for: the kill below lands while the burst is being
      // served. (Waiting for "some pods bound, not all" could not be relied on: a pass binds a node's pods at once,
      // and the three nodes' passes end within a poll interval of each other.)
      const creating = (async () => {
        for (const [index, node] of cluster.nodes.entries()) {
          for (let i = 0; i < PODS_PER_NODE; i++) {
            const name = `p-${index}-${i}`;
            await cluster.createPod(name, node.name);
            pods.push(name);
          }
        }
      })();
      // Awaited below; marked handled so a failed creation during the poll fails the test there, not the process.
      creating.catch(() => undefined);
      const admin = cluster.emulator.emulator.admin;
      await pollUntil(
        async () => ((await admin.calls({ action: 'CreateNetworkInterface' })).length > 0 ? true : undefined),
        { description: 'the first ENI create', timeoutMs: 60_000, intervalMs: 100 },
      );
      await creating;
      const runsBefore = await Promise.all(
        cluster.nodes.map(
          async (node) => (await cluster.client.workflow.getHandle(nodeWorkflowId(node.name)).describe()).runId,
        ),
      );
      await cluster.temporal.kill();
      await sleep(3_000);
      await cluster.temporal.restart();

      const audit = await cluster.settle(120_000);
      process.stderr.write(`temporal-restart: ${formatAudit(audit)}\n`);
      assert.equal(audit.livePods, pods.length);
      assertCleanAudit(audit);
      const runsAfter = await Promise.all(
        cluster.nodes.map(
          async (node) => (await cluster.client.workflow.getHandle(nodeWorkflowId(node.name)).describe()).runId,
        ),
      );
      assert.deepEqual(runsAfter, runsBefore, 'the node workflows went on in the runs the database kept');
      assert.equal(cluster.worker.kills, 0, 'the worker process was never restarted');
    } catch (error) {
      failed = true;
      process.stderr.write(`worker log tail:\n${await cluster.workerLogTail()}\n`);
      throw error;
    }
  });
});
