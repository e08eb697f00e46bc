/**
 * The faults of a real Temporal cluster, on the compose file's server on PostgreSQL: temporal-server SIGKILLed in the
 * middle of a pod burst and started again on the same database, then PostgreSQL itself stopped in the middle of the
 * next burst as a crash stops it (`pg_ctl stop -m immediate`, no checkpoint) and started again on the same data
 * directory and port. The worker process and the watcher keep running through both; after each, every pod has its
 * IP in its Node CR, the node workflows carry on in the runs the database kept, and the zero-leak audit finds no ENI
 * or address in the emulator that the CRs do not account for. Needs `npm run tools -- --temporal postgres`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';

import { pollUntil } from '../../scripts/lib/poll-until.js';
import { nodeWorkflowId } from '../../src/shared/workflow-ids.js';
import { assertCleanAudit, formatAudit } from '../support/audit.js';
import { startChaosCluster } from '../support/chaos-cluster.js';
import type { ChaosCluster } from '../support/chaos-cluster.js';
import { RestartableTemporalPostgres } from '../support/chaos-processes.js';

const NODE_COUNT = 3;
/** Two bursts of this many pods per node: 24 pods fit in the three secondary ENIs (15 addresses each) of a node. */
const PODS_PER_NODE = 12;
/** How long each fault lasts before the restart: long enough for every client to see its calls fail. */
const DOWN_MS = 5_000;
/**
 * Each burst outgrows the ENIs its nodes have (one after the first burst's warm-up, two after the second's), so each
 * needs a create: the fault comes with the first one, while the pods waiting for its addresses are unserved (the
 * emulator takes 1–2 s to answer it, then the attach takes 1.5–2 s).
 */
const SERVING_ACTION = 'CreateNetworkInterface';

let cluster: ChaosCluster;
let temporal: RestartableTemporalPostgres | undefined;
let failed = false;
const pods: string[] = [];

before(async () => {
  cluster = await startChaosCluster({
    name: 'pg-faults',
    nodeCount: NODE_COUNT,
    emulatorSettings: {
      latency: {
        CreateNetworkInterface: { minMs: 1_000, maxMs: 2_000 },
        AttachNetworkInterface: { minMs: 500, maxMs: 1_000 },
      },
      transitionDelays: { attachMs: 1_000, detachMs: 200, deleteMs: 200 },
    },
    nodeSettings: { gcPeriodMs: 10_000, maxFailureBackoffMs: 5_000 },
    startTemporal: async (runDir, options) => {
      temporal = await RestartableTemporalPostgres.start(runDir, options);
      return temporal;
    },
  });
});

after(async () => {
  await cluster.close({ keepLogs: failed });
  if (failed) process.stderr.write(`cluster-faults: logs kept in ${cluster.runDir}\n`);
});

/**
 * The node workflows' run ids now. The watcher starts a node's workflow when it sees the node, which may be after
 * the worker is ready: wait until every node has one (a clean-clone CI run asked too early and got
 * WorkflowNotFoundError).
 */
function runIds(): Promise<string[]> {
  const runIdOf = async (name: string): Promise<string | undefined> => {
    try {
      return (await cluster.client.workflow.getHandle(nodeWorkflowId(name)).describe()).runId;
    } catch (error) {
      if (error instanceof Error && error.name === 'WorkflowNotFoundError') return undefined;
      throw error;
    }
  };
  return Promise.all(
    cluster.nodes.map((node) =>
      pollUntil(() => runIdOf(node.name), { timeoutMs: 60_000, description: `the workflow of node ${node.name}` }),
    ),
  );
}

/**
 * Creates a burst of pods and runs `fault` as soon as the first ECS call serving it is made, while the pods are
 * still being created and served; then waits for the cluster to settle and checks every pod served, nothing leaked
 * and the same workflow runs.
 */
async function burstWithFault(label: string, fault: () => Promise<void>): Promise<void> {
  try {
    await cluster.worker.ready();
    const runsBefore = await runIds();
    const admin = cluster.emulator.emulator.admin;
    const sinceSeq = (await admin.calls({ limit: 1 })).at(-1)?.seq ?? 0;
    const podsBefore = pods.length;
    const creating = (async () => {
      for (const [index, node] of cluster.nodes.entries()) {
        for (let i = 0; i < PODS_PER_NODE; i++) {
          const name = `${label}-${index}-${i}`;
          await cluster.createPod(name, node.name);
          pods.push(name);
        }
      }
    })();
    // Awaited below; marked handled so a failed creation during the poll fails the test there, not the process.
    creating.catch(() => undefined);
    await pollUntil(
      async () => ((await admin.calls({ sinceSeq, action: SERVING_ACTION })).length > 0 ? true : undefined),
      { description: `the first ECS call serving the ${label} burst`, timeoutMs: 60_000, intervalMs: 100 },
    );
    const withIp = (await cluster.states()).reduce((sum, state) => sum + (state?.pods.withIp ?? 0), 0);
    const servedAtFault = withIp - podsBefore;
    const faultAt = Date.now();
    await fault();
    await creating;

    const audit = await cluster.settle(180_000);
    process.stderr.write(
      `cluster-faults: ${label}: ${servedAtFault} of ${pods.length - podsBefore} pods served at the fault, settled ` +
        `${((Date.now() - faultAt) / 1000).toFixed(1)} s after it; ` +
        `${formatAudit(audit)}\n`,
    );
    assert.ok(servedAtFault < NODE_COUNT * PODS_PER_NODE, 'the fault came in the middle of the burst');
    assert.equal(audit.livePods, pods.length, 'every pod created is live and audited');
    assertCleanAudit(audit);
    assert.deepEqual(await runIds(), runsBefore, 'the node workflows went on in the runs the database kept');
    assert.equal(cluster.worker.kills, 0, 'the worker process was never restarted');
  } catch (error) {
    failed = true;
    process.stderr.write(`worker log tail:\n${await cluster.workerLogTail()}\n`);
    throw error;
  }
}

describe('a Temporal cluster on PostgreSQL', () => {
  it('a kill -9 of temporal-server mid-burst, restarted on the same database, loses no pod and leaks nothing', async () => {
    await burstWithFault('server-kill', async () => {
      await cluster.temporal.kill();
      await sleep(DOWN_MS);
      await cluster.temporal.restart();
    });
  });

  it('a PostgreSQL crash and restart mid-burst loses no pod and leaks nothing', async () => {
    const server = temporal;
    assert.ok(server !== undefined);
    await burstWithFault('postgres-restart', async () => {
      await server.crashDatabase();
      await sleep(DOWN_MS);
      await server.restartDatabase();
      // A real cluster's server outlives its database's restart; were it to exit, Kubernetes would restart it, and
      // this test would say so rather than pass on a restart it did not ask for.
      assert.ok(server.serverRunning, `temporal-server exited while PostgreSQL was down (log ${server.serverLogPath})`);
    });
  });
});
