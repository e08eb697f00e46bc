/**
 * A small cluster for crash tests: a Temporal server of the test's own (the dev server with its state in a SQLite
 * file, or with `ENIFLOW_TEST_TEMPORAL=postgres` the compose file's server on its own PostgreSQL, so it can be killed
 * with SIGKILL and restarted on the same port; test/support/chaos-processes.ts), worker replicas as real processes
 * (the worker's runWorker with a workflow bundle built once, see bundled-worker-main.ts, so they can be killed and
 * restarted quickly), the watcher in the test process (configured by its environment, as `npm run watcher` is), the
 * ECS emulator with one ECS instance per node, and the shared test kube-apiserver holding the nodes and pods.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import { pino } from 'pino';

import { pollUntil } from '../../scripts/lib/poll-until.js';
import { TEST_ENV_VARS, requireTestEnvVar } from '../../scripts/lib/test-env-vars.js';
import { DEMO_FIXTURE_PATH } from '../../src/ecs-emulator/index.js';
import type { EmulatorFixture, SettingsPatch } from '../../src/ecs-emulator/index.js';
import type { NodeSpec } from '../../src/ipam/index.js';
import { loadWatcherConfig, runWatcher } from '../../src/watcher/run-watcher.js';
import type { WatcherHandle } from '../../src/watcher/run-watcher.js';
import { runJanitorUpdate } from '../../src/workflows/janitor-workflow.js';
import type { eniJanitorWorkflow, JanitorReport } from '../../src/workflows/janitor-workflow.js';
import { stateQuery } from '../../src/workflows/messages.js';
import type { NodeIpamSettings, NodeWorkflowState } from '../../src/workflows/messages.js';
import { JANITOR_WORKFLOW_TYPE, nodeWorkflowId } from '../../src/shared/workflow-ids.js';
import { auditCluster, auditProblems, formatAudit } from './audit.js';
import type { AuditReport } from './audit.js';
import { DEMO, startEmulatorHarness } from './ecs-emulator.js';
import type { EmulatorHarness } from './ecs-emulator.js';
import {
  createCoreNode,
  createNodeCr,
  createPodOnNode,
  createTestNamespace,
  apiStatusCode,
  deleteNodeCr,
  deletePodNow,
  kubeTestClients,
  NODE_CR_RESOURCE,
  readNodeCr,
  readyCondition,
  TEST_CLUSTER_ID,
  uniqueName,
} from './kube-env.js';
import type { KubeTestClients } from './kube-env.js';
import { bundleNodeWorkflow } from './workflow-bundle.js';
import { RestartableTemporal, WorkerProcess } from './chaos-processes.js';

export { RestartableTemporal, WorkerProcess } from './chaos-processes.js';

const TASK_QUEUE = 'eniflow';

/** One node of the cluster: its names and the ECS instance behind it. */
export interface ChaosNode {
  name: string;
  instanceId: string;
  dualStack: boolean;
}

export interface ChaosClusterOptions {
  /** Prefix of node names, namespace and log directory. */
  name: string;
  nodeCount: number;
  /** Nodes with an odd index run dual-stack when true. */
  dualStack?: boolean;
  pool?: { minPoolSize: number; maxPoolSize: number };
  emulatorSettings?: SettingsPatch;
  /** Node-workflow settings the watcher records in the workflows it starts (`NODE_WORKFLOW_SETTINGS`). */
  nodeSettings?: Partial<NodeIpamSettings>;
  /** Worker processes polling the same task queues, as a Deployment's replicas (default 1). */
  workerReplicas?: number;
  /** More environment for the worker processes (e.g. `ENIFLOW_ECS_RATE_LIMIT`). */
  workerEnv?: Record<string, string>;
  /** Starts the cluster's Temporal server (default: {@link RestartableTemporal}, the dev server). */
  startTemporal?: (runDir: string, options: { ecsBurst?: number }) => Promise<ChaosTemporal>;
}

/** What a crash test does to the cluster's Temporal server: `kill -9` it and start it again on the same state. */
export interface ChaosTemporal {
  readonly address: string;
  kill(): Promise<void>;
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** The running cluster; `close()` stops everything it started and removes its objects. */
export interface ChaosCluster {
  readonly temporal: ChaosTemporal;
  readonly client: Client;
  readonly emulator: EmulatorHarness;
  /** The first replica (the only one unless `workerReplicas` is set). */
  readonly worker: WorkerProcess;
  readonly workers: readonly WorkerProcess[];
  readonly watcher: WatcherHandle;
  readonly kube: KubeTestClients;
  /** The nodes still in the cluster (a deleted node leaves this list). */
  readonly nodes: readonly ChaosNode[];
  readonly namespace: string;
  readonly taskQueue: string;
  readonly runDir: string;
  createPod(name: string, nodeName: string): Promise<void>;
  deletePod(name: string): Promise<void>;
  /** Points a node's Node CR at other security groups (a spec change an operator makes). */
  setSecurityGroups(nodeName: string, securityGroupIds: string[]): Promise<void>;
  /**
   * Removes a node as the cluster autoscaler does: its pods, its core Node and its Node CR go, and the node leaves
   * {@link nodes}; resolves once the CR is gone (eniflow's finalizer removed after its ENIs were released).
   */
  deleteNode(nodeName: string, timeoutMs: number): Promise<void>;
  /** The node workflows' `state` answers (undefined where the query failed). */
  states(): Promise<(NodeWorkflowState | undefined)[]>;
  /** Audits the cluster's nodes against the emulator (test/support/audit.ts). */
  audit(): Promise<AuditReport>;
  /**
   * Waits until every node workflow is quiet (no pod waiting, no cloud operation or create intent pending) and the
   * audit shows no problem but orphan ENIs (the janitor's business); returns that audit. On timeout the last audit
   * and the node states are in the error.
   */
  settle(timeoutMs: number): Promise<AuditReport>;
  /** Starts a janitor with this grace period on the worker's task queue, runs one pass and returns its report. */
  runJanitor(graceMs: number): Promise<JanitorReport>;
  /** The end of each worker replica's log, for failure messages. */
  workerLogTail(lines?: number): Promise<string>;
  close(options?: { keepLogs?: boolean }): Promise<void>;
}

/** ECS instance id of node `index` in the fixture {@link chaosFixture} builds. */
function instanceIdOf(index: number): string {
  return `i-bp1chaos${String(index).padStart(12, '0')}`;
}

/** The demo fixture plus `count` ecs.g7.2xlarge instances in zone h (4 ENIs, 15 addresses each per family). */
async function chaosFixture(count: number): Promise<EmulatorFixture> {
  const fixture = JSON.parse(await readFile(DEMO_FIXTURE_PATH, 'utf8')) as EmulatorFixture;
  for (let index = 0; index < count; index++) {
    fixture.instances.push({
      instanceId: instanceIdOf(index),
      instanceType: 'ecs.g7.2xlarge',
      vSwitchId: DEMO.vSwitchH,
      securityGroupIds: [DEMO.securityGroup],
      instanceName: `chaos-${index}`,
    });
  }
  return fixture;
}

function nodeSpecOf(node: ChaosNode, pool: { minPoolSize: number; maxPoolSize: number }): NodeSpec {
  return {
    nodeMetadata: {
      regionID: DEMO.regionId,
      instanceType: 'ecs.g7.2xlarge',
      instanceID: node.instanceId,
      zoneID: DEMO.zoneH,
    },
    nodeCap: { adapters: 4, totalAdapters: 4, ipv4PerAdapter: 15, ipv6PerAdapter: 15 },
    eni: {
      enableIPv4: true,
      enableIPv6: node.dualStack,
      vSwitchOptions: [DEMO.vSwitchH],
      securityGroupIDs: [DEMO.securityGroup],
      vSwitchSelectPolicy: 'ordered',
    },
    pool,
    flavor: [{ networkInterfaceType: 'Secondary', networkInterfaceTrafficMode: 'Standard', count: 3 }],
  };
}

/** Starts the cluster: servers, emulator, nodes (core Node + Node CR), worker process and watcher. */
export async function startChaosCluster(options: ChaosClusterOptions): Promise<ChaosCluster> {
  const runDir = await mkdtemp(join(tmpdir(), `eniflow-${options.name}-`));
  const kube = kubeTestClients();
  // The server's ECS burst follows the workers' ENIFLOW_ECS_BURST, as an operator configures them together.
  const ecsBurst = options.workerEnv?.['ENIFLOW_ECS_BURST'];
  const temporal = await (options.startTemporal ?? RestartableTemporal.start)(
    runDir,
    ecsBurst === undefined ? {} : { ecsBurst: Number(ecsBurst) },
  );
  const connection = await Connection.connect({ address: temporal.address });
  const client = new Client({ connection, namespace: 'default' });
  const emulator = await startEmulatorHarness({
    fixture: await chaosFixture(options.nodeCount),
    settings: { callLogCapacity: 200_000, ...options.emulatorSettings },
  });
  const namespace = await createTestNamespace(kube, options.name);
  let nodes: ChaosNode[] = Array.from({ length: options.nodeCount }, (_, index) => ({
    name: uniqueName(`${options.name}-${index}`),
    instanceId: instanceIdOf(index),
    dualStack: options.dualStack === true && index % 2 === 1,
  }));
  const pool = options.pool ?? { minPoolSize: 2, maxPoolSize: 5 };
  for (const node of nodes) {
    await createCoreNode(kube, { name: node.name, conditions: [readyCondition('chaos node')] });
    await createNodeCr(kube, { name: node.name, spec: nodeSpecOf(node, pool) });
  }
  const bundlePath = join(runDir, 'workflow-bundle.js');
  await writeFile(bundlePath, (await bundleNodeWorkflow()).code);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ENIFLOW_TEST_WORKFLOW_BUNDLE: bundlePath,
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_NAMESPACE: 'default',
    TEMPORAL_TASK_QUEUE: TASK_QUEUE,
    KUBECONFIG: requireTestEnvVar(TEST_ENV_VARS.kubeconfig),
    ECS_REGION_ID: emulator.emulator.regionId,
    ECS_ENDPOINT: emulator.emulator.endpoint,
    ECS_PROTOCOL: 'http',
    ALIBABA_CLOUD_ACCESS_KEY_ID: emulator.emulator.accessKeyId,
    ALIBABA_CLOUD_ACCESS_KEY_SECRET: emulator.emulator.accessKeySecret,
    ENI_POLL_INTERVAL_MS: '500',
    LOG_LEVEL: 'info',
    LEASE_NAMESPACE: 'default',
    LEASE_NAME: uniqueName('eniflow-chaos'),
    ENIFLOW_CLUSTER_ID: TEST_CLUSTER_ID,
    ...(options.nodeSettings === undefined ? {} : { NODE_WORKFLOW_SETTINGS: JSON.stringify(options.nodeSettings) }),
  };
  const workerEnv = { ...env, ...options.workerEnv };
  const worker = new WorkerProcess({ env: workerEnv, logDir: runDir, name: 'worker' });
  const workers = [
    worker,
    ...Array.from(
      { length: (options.workerReplicas ?? 1) - 1 },
      (_, index) => new WorkerProcess({ env: workerEnv, logDir: runDir, name: `worker-${index + 2}` }),
    ),
  ];
  for (const replica of workers) replica.start();
  const watcher = await runWatcher(loadWatcherConfig({ ...env, LOG_LEVEL: process.env['TEST_LOG_LEVEL'] ?? 'warn' }), {
    logger: pino({ level: process.env['TEST_LOG_LEVEL'] ?? 'silent' }),
  });
  const podNode = new Map<string, string>();
  const deletePod = async (name: string): Promise<void> => {
    // A pod may already be gone with its node (deleteNode), as a churn wave and a node removal can overlap.
    await deletePodNow(kube, { namespace, name }).catch((error: unknown) => {
      if (apiStatusCode(error) !== 404) throw error;
    });
    podNode.delete(name);
  };
  const states = (): Promise<(NodeWorkflowState | undefined)[]> =>
    Promise.all(
      nodes.map((node) =>
        client.workflow
          .getHandle(nodeWorkflowId(node.name))
          .query(stateQuery)
          .catch(() => undefined),
      ),
    );
  // A removed node's workflow releases the ENIs it made before it ends: the cluster is settled only once it has.
  const removed: string[] = [];
  const removedStillRunning = async (): Promise<string[]> => {
    const running: string[] = [];
    for (const name of removed) {
      const status = await client.workflow
        .getHandle(nodeWorkflowId(name))
        .describe()
        .then((description) => description.status.name)
        .catch(() => 'UNKNOWN');
      if (status === 'RUNNING' || status === 'UNKNOWN') running.push(name);
    }
    return running;
  };
  const audit = (): Promise<AuditReport> =>
    auditCluster({ kube, admin: emulator.emulator.admin, nodeNames: nodes.map((node) => node.name) });

  return {
    temporal,
    client,
    emulator,
    worker,
    workers,
    watcher,
    kube,
    get nodes() {
      return nodes;
    },
    namespace,
    taskQueue: TASK_QUEUE,
    runDir,
    async createPod(name, nodeName) {
      await createPodOnNode(kube, { namespace, name, nodeName });
      podNode.set(name, nodeName);
    },
    deletePod,
    async setSecurityGroups(nodeName, securityGroupIds) {
      await kube.customObjects.patchClusterCustomObject(
        { ...NODE_CR_RESOURCE, name: nodeName, body: { spec: { eni: { securityGroupIDs: securityGroupIds } } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    },
    async deleteNode(nodeName, timeoutMs) {
      nodes = nodes.filter((node) => node.name !== nodeName);
      removed.push(nodeName);
      for (const [name, node] of [...podNode].sort()) {
        if (node === nodeName) await deletePod(name);
      }
      await kube.core.deleteNode({ name: nodeName }).catch(() => undefined);
      await deleteNodeCr(kube, nodeName);
      await pollUntil(
        async () => {
          try {
            await readNodeCr(kube, nodeName);
            return undefined;
          } catch (error) {
            if (apiStatusCode(error) === 404) return true;
            throw error;
          }
        },
        { description: `the Node CR of ${nodeName} to be gone`, timeoutMs, intervalMs: 1_000 },
      );
    },
    states,
    audit,
    async settle(timeoutMs) {
      let last: { report?: AuditReport; states?: (NodeWorkflowState | undefined)[]; removing?: string[] } = {};
      try {
        return await pollUntil(
          async () => {
            const current = await states();
            last = { states: current };
            const busy = current.some(
              (state) =>
                state === undefined ||
                state.pods.pending > 0 ||
                state.pendingOperations.length > 0 ||
                (state.pendingCreates ?? 0) > 0,
            );
            if (busy) return undefined;
            const removing = await removedStillRunning();
            last = { states: current, removing };
            if (removing.length > 0) return undefined;
            const report = await audit();
            last = { report, states: current };
            return auditProblems({ ...report, orphanEnis: [] }).length === 0 ? report : undefined;
          },
          { description: 'the cluster to settle', timeoutMs, intervalMs: 2_000 },
        );
      } catch (error) {
        const busy = (last.states ?? []).map((state, index) =>
          state === undefined
            ? `${nodes[index]?.name ?? index}: no answer`
            : `${state.nodeName}: ${state.ipamState}, pods ${JSON.stringify(state.pods)}, pending ops ` +
              `${state.pendingOperations.length}, pending creates ${state.pendingCreates ?? 0}, last errors ` +
              JSON.stringify(state.lastErrors.slice(-2)),
        );
        const removing = (last.removing ?? []).map((name) => `${name}: removed, its workflow still running`);
        throw new Error(
          `${error instanceof Error ? error.message : String(error)}\n${[...busy, ...removing].join('\n')}\n` +
            (last.report === undefined ? '(no audit)' : formatAudit(last.report)),
          { cause: error },
        );
      }
    },
    async runJanitor(graceMs) {
      const janitor = await client.workflow.start<typeof eniJanitorWorkflow>(JANITOR_WORKFLOW_TYPE, {
        workflowId: uniqueName('chaos-janitor'),
        taskQueue: TASK_QUEUE,
        args: [{ settings: { graceMs, intervalMs: 60 * 60_000, clusterId: TEST_CLUSTER_ID } }],
      });
      try {
        return await janitor.executeUpdate(runJanitorUpdate, { args: [{}] });
      } finally {
        await janitor.terminate('one pass was enough');
      }
    },
    async workerLogTail(lineCount = 40) {
      const tails = await Promise.all(
        workers.map(async (replica) => {
          const text = await readFile(replica.logPath, 'utf8').catch(() => '');
          return `--- ${replica.name}\n${text.trimEnd().split('\n').slice(-lineCount).join('\n')}`;
        }),
      );
      return tails.join('\n');
    },
    async close(closeOptions = {}) {
      await watcher.stop();
      await Promise.all(workers.map((replica) => replica.stop()));
      for (const name of podNode.keys()) await deletePodNow(kube, { namespace, name }).catch(() => undefined);
      for (const node of nodes) await deleteNodeCr(kube, node.name);
      await connection.close();
      await temporal.stop();
      await emulator.close();
      if (closeOptions.keepLogs !== true) await rm(runDir, { recursive: true, force: true });
    },
  };
}
