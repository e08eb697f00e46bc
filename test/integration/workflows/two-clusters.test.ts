/**
 * Two eniflow clusters in one cloud account: two kube-apiservers (the test run's and a second one started here),
 * two cluster ids, two workers on their own task queues, one ECS emulator. Each cluster serves pods, has rollback
 * ENIs (Available, in no CR) past and within the janitor's grace, and cluster B has a create intent in flight
 * (its answer lost, its worker down); each runs its janitor with deletes on. No ENI of one cluster is touched by
 * the other: each janitor deletes exactly its own old rollback ENI, an ENI made before the cluster tag is reported
 * by both and deleted by neither, and each `OrphanEniDeleted` Event is in its own cluster. A legacy ENI in use on a
 * third cluster's node is reported but never counted in `eniflow_janitor_unowned_enis` (its alert would page for a
 * neighbour's healthy ENI forever); only the detached one is.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import * as $Ecs from '@alicloud/ecs20140526';
import { KubeConfig } from '@kubernetes/client-node';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { pino } from 'pino';

import { kubeApiserver } from '../../../scripts/lib/kube-test-server.js';
import type { RunningTestServer } from '../../../scripts/lib/test-server.js';
import { pollUntil } from '../../../scripts/lib/poll-until.js';
import { AlibabaEcsApi } from '../../../src/activities/ecs/alibaba-ecs-api.js';
import type { NodeSpec } from '../../../src/ipam/index.js';
import { JANITOR_WORKFLOW_TYPE, NODE_WORKFLOW_TYPE, nodeWorkflowId } from '../../../src/shared/workflow-ids.js';
import { createEniflowWorker } from '../../../src/worker/create-worker.js';
import { createWorkerMetrics } from '../../../src/worker/metrics.js';
import type { WorkerMetrics } from '../../../src/worker/metrics.js';
import { runJanitorUpdate } from '../../../src/workflows/janitor-workflow.js';
import type { eniJanitorWorkflow, JanitorReport } from '../../../src/workflows/janitor-workflow.js';
import { reconcileSignal, stateQuery } from '../../../src/workflows/messages.js';
import type { nodeIpamWorkflow } from '../../../src/workflows/node-ipam-workflow.js';
import { DEMO, emulatorConnection, startEmulatorHarness } from '../../support/ecs-emulator.js';
import type { EmulatorHarness } from '../../support/ecs-emulator.js';
import {
  createCoreNode,
  createNodeCr,
  createPodOnNode,
  createTestNamespace,
  deleteNodeCr,
  kubeTestClients,
  readNodeCr,
  readyCondition,
  uniqueName,
} from '../../support/kube-env.js';
import type { KubeTestClients } from '../../support/kube-env.js';
import { bindingsOf, demoNodeSpec, TEST_SETTINGS } from '../../support/node-scenario.js';
import { connectTemporalTestEnv, uniqueTaskQueue } from '../../support/temporal-env.js';
import type { TemporalTestEnv } from '../../support/temporal-env.js';
import { bundleNodeWorkflow } from '../../support/workflow-bundle.js';

const GRACE_MS = 5_000;

let temporal: TemporalTestEnv;
let bundle: WorkflowBundleWithSourceMap;
let emulator: EmulatorHarness;
let secondApiserver: RunningTestServer;
let secondRunDir: string;
let kubeA: KubeTestClients;
let kubeB: KubeTestClients;

before(async () => {
  secondRunDir = await mkdtemp(join(tmpdir(), 'eniflow-cluster-b-'));
  [temporal, bundle, secondApiserver, emulator] = await Promise.all([
    connectTemporalTestEnv(),
    bundleNodeWorkflow(),
    kubeApiserver.start({ runDir: secondRunDir, log: () => undefined }),
    startEmulatorHarness(),
  ]);
  kubeA = kubeTestClients();
  const configB = new KubeConfig();
  configB.loadFromFile(String(secondApiserver.details['kubeconfig']));
  kubeB = kubeTestClients(configB);
});
after(async () => {
  await emulator.close();
  await secondApiserver.stop();
  await rm(secondRunDir, { recursive: true, force: true });
  await temporal.close();
});

/** One eniflow cluster: its apiserver, id, task queue, worker and one node. */
interface Cluster {
  name: string;
  clusterId: string;
  kube: KubeTestClients;
  taskQueue: string;
  nodeName: string;
  namespace: string;
  stopWorker(): Promise<void>;
  startWorker(): Promise<void>;
  signal(): Promise<void>;
  runJanitor(): Promise<JanitorReport>;
  close(): Promise<void>;
}

async function openCluster(input: {
  name: string;
  kube: KubeTestClients;
  spec: NodeSpec;
  metrics?: WorkerMetrics;
}): Promise<Cluster> {
  const clusterId = `c-${uniqueName(input.name)}`;
  const taskQueue = uniqueTaskQueue(input.name);
  const nodeName = uniqueName(`${input.name}-node`);
  const namespace = await createTestNamespace(input.kube, input.name);
  await createCoreNode(input.kube, { name: nodeName, conditions: [readyCondition()] });
  await createNodeCr(input.kube, { name: nodeName, spec: input.spec });
  let stop: (() => Promise<void>) | undefined;
  const startWorker = async (): Promise<void> => {
    const worker = await createEniflowWorker({
      connection: temporal.nativeConnection,
      namespace: temporal.namespace,
      taskQueue,
      ecs: new AlibabaEcsApi({
        connection: emulatorConnection(emulator.emulator),
      }),
      kubeConfig: input.kube.kubeConfig,
      logger: pino({ level: process.env['TEST_LOG_LEVEL'] ?? 'silent' }),
      eniPollIntervalMs: 20,
      workflowBundle: bundle,
      ...(input.metrics === undefined ? {} : { metrics: input.metrics }),
    });
    const running = worker.run();
    stop = async () => {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
    };
  };
  await startWorker();
  const janitors: string[] = [];
  const cluster: Cluster = {
    name: input.name,
    clusterId,
    kube: input.kube,
    taskQueue,
    nodeName,
    namespace,
    startWorker,
    stopWorker: async () => {
      await stop?.();
      stop = undefined;
    },
    signal: async () => {
      await temporal.client.workflow.signalWithStart<typeof nodeIpamWorkflow, [{ reason: string }]>(
        NODE_WORKFLOW_TYPE,
        {
          workflowId: nodeWorkflowId(nodeName),
          taskQueue,
          args: [{ nodeName, settings: { ...TEST_SETTINGS, clusterId } }],
          signal: reconcileSignal,
          signalArgs: [{ reason: 'test' }],
        },
      );
    },
    runJanitor: async () => {
      const workflowId = uniqueName(`${input.name}-janitor`);
      janitors.push(workflowId);
      const janitor = await temporal.client.workflow.start<typeof eniJanitorWorkflow>(JANITOR_WORKFLOW_TYPE, {
        workflowId,
        taskQueue,
        // As the watcher starts it: deletes on, the cluster id and VPC recorded (grace shortened for the test).
        args: [
          {
            settings: { graceMs: GRACE_MS, intervalMs: 60 * 60_000, dryRun: false, clusterId, vpcId: DEMO.vpcId },
          },
        ],
      });
      return janitor.executeUpdate(runJanitorUpdate, { args: [{}] });
    },
    close: async () => {
      for (const workflowId of [nodeWorkflowId(nodeName), ...janitors]) {
        await temporal.client.workflow
          .getHandle(workflowId)
          .terminate('test finished')
          .catch(() => undefined);
      }
      await stop?.();
      await deleteNodeCr(input.kube, nodeName);
    },
  };
  return cluster;
}

async function podsBound(cluster: Cluster, pods: readonly string[]): Promise<void> {
  await pollUntil(
    async () => {
      const bindings = bindingsOf(await readNodeCr(cluster.kube, cluster.nodeName));
      return pods.every((pod) => bindings.has(`${cluster.namespace}/${pod}`)) ? true : undefined;
    },
    { description: `${cluster.name}: pods bound`, timeoutMs: 60_000, intervalMs: 200 },
  );
}

/** An ENI as a create of `cluster`'s node leaves it (creator, node and cluster tags), Available and in no CR. */
async function rollbackEni(cluster: Cluster): Promise<string> {
  return emulator.createEni({
    tag: [
      new $Ecs.CreateNetworkInterfaceRequestTag({ key: 'creator', value: 'eniflow' }),
      new $Ecs.CreateNetworkInterfaceRequestTag({ key: 'eniflow.io/node', value: cluster.nodeName }),
      new $Ecs.CreateNetworkInterfaceRequestTag({ key: 'eniflow.io/cluster-id', value: cluster.clusterId }),
    ],
  });
}

/** Every ENI of the emulator, by id, with its cluster tag (`''`: none). */
async function clusterOfEveryEni(): Promise<Map<string, string>> {
  const inventory = await emulator.emulator.admin.inventory();
  return new Map(inventory.networkInterfaces.map((eni) => [eni.eniId, eni.tags['eniflow.io/cluster-id'] ?? '']));
}

/** The ENI ids deleted since the call log's `sinceSeq`. */
async function deletedSince(sinceSeq: number): Promise<string[]> {
  const calls = await emulator.emulator.admin.calls({ action: 'DeleteNetworkInterface', sinceSeq });
  return calls.map((call) => call.params['NetworkInterfaceId'] ?? '').sort();
}

async function lastSeq(): Promise<number> {
  const calls = await emulator.emulator.admin.calls({});
  return calls.reduce((max, call) => Math.max(max, call.seq), 0);
}

async function orphanEvents(kube: KubeTestClients): Promise<string[]> {
  const events = await kube.core.listEventForAllNamespaces({ fieldSelector: 'reason=OrphanEniDeleted' });
  return events.items.map((event) => `${event.involvedObject.name}: ${event.message ?? ''}`);
}

describe('two clusters in one account', () => {
  it("each janitor, deletes on, deletes only its own cluster's orphans; intents and rollbacks of the other stay", async () => {
    const metricsA = createWorkerMetrics();
    const a = await openCluster({
      name: 'cluster-a',
      kube: kubeA,
      spec: demoNodeSpec({ instance: 'large-h' }),
      metrics: metricsA,
    });
    const b = await openCluster({ name: 'cluster-b', kube: kubeB, spec: demoNodeSpec({ instance: 'erdma-i' }) });
    try {
      // Cluster A serves its pods: its ENIs carry its cluster tag.
      await createPodOnNode(a.kube, { namespace: a.namespace, name: 'a-0', nodeName: a.nodeName });
      await a.signal();
      await podsBound(a, ['a-0']);

      // Rollback ENIs of both clusters (a create whose attach failed and whose delete did not happen), and one
      // made before the cluster tag existed: all Available, in no CR.
      const oldA = await rollbackEni(a);
      const oldB = await rollbackEni(b);
      const legacy = await emulator.createEni({
        tag: [new $Ecs.CreateNetworkInterfaceRequestTag({ key: 'creator', value: 'eniflow' })],
      });
      // A third cluster's healthy legacy ENI, in use on its node: neither A's nor B's business.
      const legacyInUse = await emulator.createEni({
        vSwitchId: DEMO.vSwitchI,
        tag: [new $Ecs.CreateNetworkInterfaceRequestTag({ key: 'creator', value: 'eniflow' })],
      });
      await emulator.ecs.attachNetworkInterface(
        new $Ecs.AttachNetworkInterfaceRequest({
          regionId: DEMO.regionId,
          networkInterfaceId: legacyInUse,
          instanceId: DEMO.instanceLargeI,
        }),
      );
      await emulator.waitForStatus(legacyInUse, 'InUse');

      // Cluster B's first create: the cloud makes the ENI but the answer is lost, so B holds an open intent for an
      // ENI in no CR. Then B's worker goes down: the intent stays in flight.
      await emulator.emulator.admin.addFaults(['CreateNetworkInterface always lost']);
      await createPodOnNode(b.kube, { namespace: b.namespace, name: 'b-0', nodeName: b.nodeName });
      await b.signal();
      await pollUntil(
        async () => {
          const state = await temporal.client.workflow.getHandle(nodeWorkflowId(b.nodeName)).query(stateQuery);
          return (state.pendingCreates ?? 0) > 0 ? true : undefined;
        },
        { description: 'cluster B holds an open create intent', timeoutMs: 60_000, intervalMs: 250 },
      );
      await b.stopWorker();
      await emulator.emulator.admin.clearFaults();
      const intentEnis = [...(await clusterOfEveryEni())]
        .filter(([eniId, cluster]) => cluster === b.clusterId && eniId !== oldB)
        .map(([eniId]) => eniId);
      assert.ok(intentEnis.length > 0, 'the lost create made an ENI tagged for cluster B');

      // Everything above is past the grace period when the janitors look; these are within it.
      await new Promise((resolve) => setTimeout(resolve, GRACE_MS + 1_000));
      const youngA = await rollbackEni(a);
      const youngB = await rollbackEni(b);
      const before = await clusterOfEveryEni();

      // Cluster A's janitor, deletes on, while B's intent is open and B's worker is down.
      const sinceA = await lastSeq();
      const reportA = await a.runJanitor();
      assert.deepEqual(reportA.deleted, [oldA]);
      assert.deepEqual(reportA.failed, []);
      assert.ok(
        reportA.unowned.some((eni) => eni.eniId === legacy && eni.detached),
        'the legacy ENI is reported',
      );
      assert.ok(
        reportA.unowned.some((eni) => eni.eniId === legacyInUse && !eni.detached),
        `the neighbour's legacy ENI in use is reported as attached: ${JSON.stringify(reportA.unowned)}`,
      );
      const unownedGauge = (await metricsA.registry.getSingleMetric('eniflow_janitor_unowned_enis')?.get())?.values[0]
        ?.value;
      assert.equal(unownedGauge, 1, "only the detached legacy ENI counts, not the neighbour's in use");
      for (const eniId of await deletedSince(sinceA)) {
        assert.equal(before.get(eniId), a.clusterId, `${eniId} deleted during A's pass is A's`);
      }
      const afterA = await clusterOfEveryEni();
      for (const [eniId, cluster] of before) {
        if (cluster !== a.clusterId) assert.ok(afterA.has(eniId), `${eniId} (cluster "${cluster}") untouched by A`);
      }
      for (const eniId of [oldB, youngB, ...intentEnis, legacy, youngA]) assert.ok(afterA.has(eniId), eniId);

      // Cluster B comes back and runs its janitor, deletes on. Its young rollback ENI is made right before: A's
      // pass and B's worker start can take longer than the grace, after which `youngB` is fair game for B.
      await b.startWorker();
      const freshB = await rollbackEni(b);
      const sinceB = await lastSeq();
      const reportB = await b.runJanitor();
      assert.ok(reportB.deleted.includes(oldB), JSON.stringify(reportB));
      assert.ok(!reportB.deleted.includes(freshB), `${freshB} is within the grace: ${JSON.stringify(reportB)}`);
      assert.ok(
        reportB.unowned.some((eni) => eni.eniId === legacy),
        'the legacy ENI is reported by B too',
      );
      const deletedDuringB = await deletedSince(sinceB);
      for (const eniId of reportB.deleted) assert.equal(afterA.get(eniId), b.clusterId, `${eniId} is B's`);
      const afterB = await clusterOfEveryEni();
      for (const [eniId, cluster] of afterA) {
        if (cluster !== b.clusterId && cluster !== a.clusterId) assert.ok(afterB.has(eniId), `${eniId} kept`);
        if (cluster === a.clusterId) {
          assert.ok(afterB.has(eniId) || !reportB.deleted.includes(eniId), `${eniId} of A untouched by B`);
        }
      }
      for (const eniId of deletedDuringB) {
        // A's node workflow runs too (its own GC may delete its own ENIs): every delete is of the deleter's cluster.
        assert.ok([a.clusterId, b.clusterId].includes(afterA.get(eniId) ?? ''), eniId);
        if (afterA.get(eniId) === a.clusterId) assert.ok(!reportB.deleted.includes(eniId));
      }
      assert.ok(afterB.has(youngA) && afterB.has(legacy) && afterB.has(legacyInUse));
      assert.ok(afterB.has(freshB));

      // Each deletion is told on its own cluster's Node, never on the other's.
      const eventsA = await orphanEvents(a.kube);
      const eventsB = await orphanEvents(b.kube);
      assert.ok(
        eventsA.some((line) => line.startsWith(`${a.nodeName}: ENI ${oldA} `)),
        eventsA.join('\n'),
      );
      assert.ok(
        eventsB.some((line) => line.startsWith(`${b.nodeName}: ENI ${oldB} `)),
        eventsB.join('\n'),
      );
      assert.ok(!eventsA.some((line) => line.includes(b.clusterId) || line.includes(oldB)), eventsA.join('\n'));
      assert.ok(!eventsB.some((line) => line.includes(a.clusterId) || line.includes(oldA)), eventsB.join('\n'));

      // Cluster A still serves its pod.
      await podsBound(a, ['a-0']);
    } finally {
      await emulator.emulator.admin.clearFaults().catch(() => undefined);
      await b.close();
      await a.close();
    }
  });
});
