/**
 * A small cluster for crash tests: a Temporal dev server of the test's own (state in a SQLite file, so it can be
 * killed with SIGKILL and restarted on the same port), the worker as a real process (the worker's runWorker with a
 * workflow bundle built once, see bundled-worker-main.ts, so it can be killed and restarted quickly), the watcher in the test process (configured by its environment, as `npm run watcher` is), the ECS
 * emulator with one ECS instance per node, and the shared test kube-apiserver holding the nodes and pods.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client, Connection } from '@temporalio/client';
import { pino } from 'pino';

import { reserveFreePorts } from '../../scripts/lib/free-ports.js';
import { pollUntil } from '../../scripts/lib/poll-until.js';
import { ManagedProcess } from '../../scripts/lib/managed-process.js';
import { startTemporalDevServer } from '../../scripts/lib/temporal-dev-server.js';
import type { TemporalDevServerPorts } from '../../scripts/lib/temporal-dev-server.js';
import { TEST_ENV_VARS, requireTestEnvVar } from '../../scripts/lib/test-env-vars.js';
import type { RunningTestServer } from '../../scripts/lib/test-server.js';
import { DEMO_FIXTURE_PATH } from '../../src/ecs-emulator/index.js';
import type { EmulatorFixture, SettingsPatch } from '../../src/ecs-emulator/index.js';
import type { NodeSpec } from '../../src/ipam/index.js';
import { loadWatcherConfig, runWatcher } from '../../src/watcher/main.js';
import type { WatcherHandle } from '../../src/watcher/main.js';
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
  deleteNodeCr,
  deletePodNow,
  kubeTestClients,
  readyCondition,
  uniqueName,
} from './kube-env.js';
import type { KubeTestClients } from './kube-env.js';
import { bundleNodeWorkflow } from './workflow-bundle.js';

const WORKER_MAIN = fileURLToPath(new URL('./bundled-worker-main.ts', import.meta.url));
const TASK_QUEUE = 'eniflow';

/** A Temporal dev server that survives its own SIGKILL: same ports and database file on restart. */
export class RestartableTemporal {
  readonly address: string;
  private server: RunningTestServer | undefined;
  private readonly runDir: string;
  private readonly ports: TemporalDevServerPorts;
  private readonly dbFilename: string;

  private constructor(input: { runDir: string; ports: TemporalDevServerPorts; server: RunningTestServer }) {
    this.runDir = input.runDir;
    this.ports = input.ports;
    this.server = input.server;
    this.dbFilename = join(input.runDir, 'temporal.db');
    this.address = `127.0.0.1:${input.ports.grpc}`;
  }

  static async start(runDir: string): Promise<RestartableTemporal> {
    const [grpc = 0, ui = 0, http = 0, metrics = 0] = await reserveFreePorts(4);
    const ports = { grpc, ui, http, metrics };
    const server = await RestartableTemporal.launch(runDir, ports);
    return new RestartableTemporal({ runDir, ports, server });
  }

  private static launch(runDir: string, ports: TemporalDevServerPorts): Promise<RunningTestServer> {
    return startTemporalDevServer(
      { runDir, log: () => undefined },
      { dbFilename: join(runDir, 'temporal.db'), ports, logName: 'temporal.log' },
    );
  }

  /** `kill -9` of the server's process group; resolves once it is gone. */
  async kill(): Promise<void> {
    const server = this.server;
    if (server === undefined) return;
    this.server = undefined;
    process.kill(-server.details.pid, 'SIGKILL');
    await server.exited;
  }

  /** Starts it again on the same ports and database file; resolves once it is ready. */
  async restart(): Promise<void> {
    if (this.server !== undefined) throw new Error('the Temporal server is running');
    this.server = await RestartableTemporal.launch(this.runDir, this.ports);
  }

  async stop(): Promise<void> {
    await this.server?.stop();
    this.server = undefined;
  }

  get databaseFile(): string {
    return this.dbFilename;
  }
}

/**
 * The worker process, supervised as Kubernetes would: SIGKILLed and restarted at will, and restarted after 1 s when it
 * exits on its own (e.g. started while the Temporal server is down: the connect at start fails and the process
 * exits). Each start's time to "Worker started" is kept.
 */
export class WorkerProcess {
  /** Milliseconds from spawn to the worker's "Worker started" log line (its pollers start right after). */
  readonly startTimesMs: number[] = [];
  kills = 0;
  /** Exits the worker made on its own, each followed by a restart. */
  selfExits = 0;
  private current: ManagedProcess | undefined;
  private readonly killed = new WeakSet<ManagedProcess>();
  private starts = 0;
  private stopping = false;
  private readonly env: NodeJS.ProcessEnv;
  private readonly logDir: string;
  private readonly logName: string;

  constructor(input: { env: NodeJS.ProcessEnv; logDir: string; logName?: string }) {
    this.env = input.env;
    this.logDir = input.logDir;
    this.logName = input.logName ?? 'worker.log';
  }

  /** Spawns the worker unless one runs; resolves at once, its start time is recorded when the line appears. */
  start(): void {
    if (this.stopping || (this.current !== undefined && !this.current.hasExited)) return;
    this.starts += 1;
    const spawnedAt = Date.now();
    const started = new ManagedProcess({
      name: `worker-${this.starts}`,
      command: process.execPath,
      args: ['--import', 'tsx', WORKER_MAIN],
      logPath: join(this.logDir, this.logName),
      env: this.env,
    });
    this.current = started;
    started
      .waitForStdoutLine((line) => line.includes('"Worker started"'), 120_000)
      .then(() => this.startTimesMs.push(Date.now() - spawnedAt))
      .catch(() => undefined);
    void started.exited.then(() => {
      if (this.killed.has(started) || this.stopping) return;
      this.selfExits += 1;
      setTimeout(() => {
        if (this.current === started) this.start();
      }, 1_000);
    });
  }

  /** Resolves once a worker has logged "Worker started", waiting through restarts after exits of its own. */
  async ready(timeoutMs = 180_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const current = this.current;
      if (current === undefined) throw new Error('the worker was never started');
      try {
        await current.waitForStdoutLine((line) => line.includes('"Worker started"'), deadline - Date.now());
        return;
      } catch (error) {
        if (this.stopping || Date.now() >= deadline) throw error;
        await sleep(500);
      }
    }
  }

  /** SIGKILL, as the kernel's OOM killer or a node failure would end it. */
  async kill(): Promise<void> {
    const current = this.current;
    if (current === undefined || current.hasExited) return;
    this.killed.add(current);
    process.kill(-current.pid, 'SIGKILL');
    await current.exited;
    this.kills += 1;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.current?.stop(10_000);
  }
}

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
  /** Worker processes on the task queue (replicas; default 1): `worker` is the first, `workers` all. */
  workerReplicas?: number;
  /** More environment for the worker processes (e.g. `ENIFLOW_ECS_RATE_LIMIT`). */
  workerEnv?: Record<string, string>;
}

/** The running cluster; `close()` stops everything it started and removes its objects. */
export interface ChaosCluster {
  readonly temporal: RestartableTemporal;
  readonly client: Client;
  readonly emulator: EmulatorHarness;
  readonly worker: WorkerProcess;
  /** Every worker replica, `worker` first. */
  readonly workers: readonly WorkerProcess[];
  readonly watcher: WatcherHandle;
  readonly kube: KubeTestClients;
  readonly nodes: readonly ChaosNode[];
  readonly namespace: string;
  readonly taskQueue: string;
  readonly runDir: string;
  createPod(name: string, nodeName: string): Promise<void>;
  deletePod(name: string): Promise<void>;
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
  /** The end of the worker's log, for failure messages. */
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
  const temporal = await RestartableTemporal.start(runDir);
  const connection = await Connection.connect({ address: temporal.address });
  const client = new Client({ connection, namespace: 'default' });
  const emulator = await startEmulatorHarness({
    fixture: await chaosFixture(options.nodeCount),
    settings: { callLogCapacity: 200_000, ...options.emulatorSettings },
  });
  const namespace = await createTestNamespace(kube, options.name);
  const nodes: ChaosNode[] = Array.from({ length: options.nodeCount }, (_, index) => ({
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
    ...(options.nodeSettings === undefined ? {} : { NODE_WORKFLOW_SETTINGS: JSON.stringify(options.nodeSettings) }),
  };
  const workers = Array.from(
    { length: options.workerReplicas ?? 1 },
    (_, i) =>
      new WorkerProcess({
        env: { ...env, ...options.workerEnv },
        logDir: runDir,
        logName: i === 0 ? 'worker.log' : `worker-${i + 1}.log`,
      }),
  );
  const [worker] = workers;
  if (worker === undefined) throw new Error('workerReplicas must be at least 1');
  for (const replica of workers) replica.start();
  const watcher = await runWatcher(loadWatcherConfig({ ...env, LOG_LEVEL: process.env['TEST_LOG_LEVEL'] ?? 'warn' }), {
    logger: pino({ level: process.env['TEST_LOG_LEVEL'] ?? 'silent' }),
  });
  const podNode = new Map<string, string>();
  const states = (): Promise<(NodeWorkflowState | undefined)[]> =>
    Promise.all(
      nodes.map((node) =>
        client.workflow
          .getHandle(nodeWorkflowId(node.name))
          .query(stateQuery)
          .catch(() => undefined),
      ),
    );
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
    nodes,
    namespace,
    taskQueue: TASK_QUEUE,
    runDir,
    async createPod(name, nodeName) {
      await createPodOnNode(kube, { namespace, name, nodeName });
      podNode.set(name, nodeName);
    },
    async deletePod(name) {
      await deletePodNow(kube, { namespace, name });
      podNode.delete(name);
    },
    states,
    audit,
    async settle(timeoutMs) {
      let last: { report?: AuditReport; states?: (NodeWorkflowState | undefined)[] } = {};
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
        throw new Error(
          `${error instanceof Error ? error.message : String(error)}\n${busy.join('\n')}\n` +
            (last.report === undefined ? '(no audit)' : formatAudit(last.report)),
          { cause: error },
        );
      }
    },
    async runJanitor(graceMs) {
      const janitor = await client.workflow.start<typeof eniJanitorWorkflow>(JANITOR_WORKFLOW_TYPE, {
        workflowId: uniqueName('chaos-janitor'),
        taskQueue: TASK_QUEUE,
        args: [{ settings: { graceMs, intervalMs: 60 * 60_000 } }],
      });
      try {
        return await janitor.executeUpdate(runJanitorUpdate, { args: [{}] });
      } finally {
        await janitor.terminate('one pass was enough');
      }
    },
    async workerLogTail(lineCount = 40) {
      const text = await readFile(join(runDir, 'worker.log'), 'utf8').catch(() => '');
      return text.trimEnd().split('\n').slice(-lineCount).join('\n');
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
