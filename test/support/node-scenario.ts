/**
 * End-to-end scenarios of one node: the real Temporal dev server and kube-apiserver of the test run, an ECS
 * emulator of the test's own, an in-process worker with the real activities, and the objects Terway's control
 * plane and daemon would have written (core Node, Node CR), plus pods bound to the node.
 */
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { isGrpcServiceError, WorkflowNotFoundError } from '@temporalio/client';
import type { WorkflowHandle } from '@temporalio/client';
import { pino } from 'pino';
import type { Logger } from 'pino';

import { mkdir, writeFile } from 'node:fs/promises';

import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';

import { pollUntil } from '../../scripts/lib/poll-until.js';
import { TEST_ENV_VARS, requireTestEnvVar } from '../../scripts/lib/test-env-vars.js';
import { AlibabaEcsApi } from '../../src/activities/ecs/alibaba-ecs-api.js';
import type { EcsEmulatorOptions } from '../../src/ecs-emulator/index.js';
import { NODE_CR_FINALIZER } from '../../src/ipam/index.js';
import type { NodeCr, NodeSpec } from '../../src/ipam/index.js';
import { createEniflowWorker } from '../../src/worker/create-worker.js';
import type { EniflowWorkerDeps } from '../../src/worker/create-worker.js';
import { ecsCallMetrics } from '../../src/worker/metrics.js';
import type { WorkerTracing } from '../../src/worker/tracing.js';
import { reconcileSignal, stateQuery } from '../../src/workflows/messages.js';
import type { NodeWorkflowState } from '../../src/workflows/messages.js';
import type { nodeIpamWorkflow } from '../../src/workflows/node-ipam-workflow.js';
import type { NodeIpamSettings } from '../../src/workflows/messages.js';
import { NODE_WORKFLOW_TYPE, nodeWorkflowId } from '../../src/shared/workflow-ids.js';
import { DEMO, emulatorConnection, startEmulatorHarness } from './ecs-emulator.js';
import type { EmulatorHarness } from './ecs-emulator.js';
import {
  createCoreNode,
  createNodeCr,
  createPodOnNode,
  createTestNamespace,
  deleteNodeCr,
  deletePodNow,
  kubeTestClients,
  NODE_CR_RESOURCE,
  readNodeCr,
  TEST_CLUSTER_ID,
  uniqueName,
} from './kube-env.js';
import type { KubeTestClients } from './kube-env.js';
export { TEST_CLUSTER_ID } from './kube-env.js';
import { connectTemporalTestEnv, uniqueTaskQueue } from './temporal-env.js';
import { bundleNodeWorkflow } from './workflow-bundle.js';
import type { TemporalTestEnv } from './temporal-env.js';

/** Shared by the scenarios of one test file: connections and the workflow bundle (built once). */
export interface ScenarioEnv {
  temporal: TemporalTestEnv;
  kube: KubeTestClients;
  bundle: WorkflowBundleWithSourceMap;
  close(): Promise<void>;
}

export async function openScenarioEnv(options: { workflowsPath?: string } = {}): Promise<ScenarioEnv> {
  const temporal = await connectTemporalTestEnv();
  const bundle = await bundleNodeWorkflow(options.workflowsPath);
  return { temporal, kube: kubeTestClients(), bundle, close: () => temporal.close() };
}

/** Fast settings so scenarios settle in seconds; each test may override. */
export const TEST_SETTINGS: Partial<NodeIpamSettings> = {
  clusterId: TEST_CLUSTER_ID,
  minReconcileIntervalMs: 200,
  gcPeriodMs: 60 * 60_000,
  idleWakeMs: 2_000,
  maxFailureBackoffMs: 2_000,
  eventRepeatMs: 60_000,
};

/** Node CR spec of a demo instance, as Terway's control plane and daemon write it. */
export function demoNodeSpec(input: {
  instance: 'large-h' | 'erdma-i';
  dualStack?: boolean;
  erdma?: boolean;
  pool?: { minPoolSize: number; maxPoolSize: number };
  vSwitchIds?: string[];
}): NodeSpec {
  const large = input.instance === 'large-h';
  const adapters = large ? 3 : 4;
  const perAdapter = large ? 6 : 15;
  const flavor: NonNullable<NodeSpec['flavor']> = [];
  let secondary = adapters - 1;
  if (input.erdma === true) {
    flavor.push({ networkInterfaceType: 'Secondary', networkInterfaceTrafficMode: 'HighPerformance', count: 1 });
    secondary -= 1;
  }
  flavor.push({ networkInterfaceType: 'Secondary', networkInterfaceTrafficMode: 'Standard', count: secondary });
  return {
    nodeMetadata: {
      regionID: DEMO.regionId,
      instanceType: large ? 'ecs.g7.large' : 'ecs.g8ae.2xlarge',
      instanceID: large ? DEMO.instanceLargeH : DEMO.instanceErdmaI,
      zoneID: large ? DEMO.zoneH : DEMO.zoneI,
    },
    nodeCap: {
      adapters,
      totalAdapters: adapters,
      ipv4PerAdapter: perAdapter,
      ipv6PerAdapter: perAdapter,
      eriQuantity: input.erdma === true ? 1 : 0,
    },
    eni: {
      enableIPv4: true,
      enableIPv6: input.dualStack === true,
      enableERDMA: input.erdma === true,
      enableTrunk: false,
      vSwitchOptions: input.vSwitchIds ?? [large ? DEMO.vSwitchH : DEMO.vSwitchI],
      securityGroupIDs: [DEMO.securityGroup],
      vSwitchSelectPolicy: 'ordered',
      tag: { 'k8s.aliyun.com': 'true' },
    },
    pool: input.pool ?? { minPoolSize: 1, maxPoolSize: 3 },
    flavor,
  };
}

/** One node under test, with its own emulator, worker, task queue, namespace and names. */
export interface NodeScenario {
  nodeName: string;
  namespace: string;
  taskQueue: string;
  emulator: EmulatorHarness;
  worker: { stop(): Promise<void>; restart(): Promise<void> };
  workflow: WorkflowHandle<typeof nodeIpamWorkflow>;
  /** Environment of a worker process (`src/worker/main.ts`) serving this scenario's task queue. */
  workerProcessEnv(): NodeJS.ProcessEnv;
  /** Starts (or signals) the node's workflow as the watcher does. */
  signal(reason?: string): Promise<void>;
  createPods(names: readonly string[], options?: { erdma?: boolean }): Promise<void>;
  deletePods(names: readonly string[]): Promise<void>;
  readCr(): Promise<NodeCr>;
  /** Polls the CR until `check` returns a value. */
  waitForCr<T>(description: string, check: (cr: NodeCr) => T | undefined, timeoutMs?: number): Promise<T>;
  state(): Promise<NodeWorkflowState>;
  close(): Promise<void>;
}

/** Pod ids bound in the CR, per family: `ns/name → { ipv4, ipv6, eniId }`. */
export function bindingsOf(cr: NodeCr): Map<string, { ipv4?: string; ipv6?: string; eniId: string }> {
  const out = new Map<string, { ipv4?: string; ipv6?: string; eniId: string }>();
  for (const eni of Object.values(cr.status?.networkInterfaces ?? {})) {
    for (const family of ['ipv4', 'ipv6'] as const) {
      for (const entry of Object.values(eni[family] ?? {})) {
        if (entry.podID === undefined || entry.podID === '') continue;
        const binding = out.get(entry.podID) ?? { eniId: eni.id };
        binding[family] = entry.ip;
        out.set(entry.podID, binding);
      }
    }
  }
  return out;
}

export async function startNodeScenario(
  env: ScenarioEnv,
  input: {
    name: string;
    spec: NodeSpec;
    settings?: Partial<NodeIpamSettings>;
    emulator?: EcsEmulatorOptions;
    coreNodeReady?: boolean;
    /** Start an in-process worker (default); false leaves it to the test (e.g. a worker process to kill). */
    inProcessWorker?: boolean;
    finalizer?: boolean;
    /** The worker's logger (default: silent, or TEST_LOG_LEVEL). */
    logger?: Logger;
    /** Spans for the worker's activities and calls, as `npm run worker` has with an OTLP endpoint. */
    tracing?: WorkerTracing;
    /** The worker's vSwitch cache and vSwitch wake, when a test shortens their times. */
    worker?: Pick<EniflowWorkerDeps, 'vSwitches' | 'vSwitchWake' | 'wakeNodesOnCloudRecovery'>;
  },
): Promise<NodeScenario> {
  const nodeName = uniqueName(input.name);
  const namespace = await createTestNamespace(env.kube, input.name);
  const taskQueue = uniqueTaskQueue(input.name);
  const emulator = await startEmulatorHarness(input.emulator ?? {});
  const logger = input.logger ?? pino({ level: process.env['TEST_LOG_LEVEL'] ?? 'silent' });
  const metadata = input.spec.nodeMetadata;
  await createCoreNode(env.kube, {
    name: nodeName,
    // As the cloud controller manager writes it: adoption takes the instance only when this names it.
    ...(metadata?.instanceID === undefined
      ? {}
      : { providerId: `${metadata.regionID ?? 'cn-hangzhou'}.${metadata.instanceID}` }),
    conditions: [
      {
        type: 'Ready',
        status: input.coreNodeReady === false ? 'False' : 'True',
        reason: 'KubeletReady',
        message: 'test node',
        lastHeartbeatTime: new Date(),
        lastTransitionTime: new Date(),
      },
    ],
  });
  await createNodeCr(env.kube, { name: nodeName, spec: input.spec });
  if (input.finalizer === true) {
    await env.kube.customObjects.patchClusterCustomObject(
      { ...NODE_CR_RESOURCE, name: nodeName, body: { metadata: { finalizers: [NODE_CR_FINALIZER] } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  }

  const startWorker = async () => {
    const worker = await createEniflowWorker({
      connection: env.temporal.nativeConnection,
      namespace: env.temporal.namespace,
      taskQueue,
      ecs: new AlibabaEcsApi({
        connection: emulatorConnection(emulator.emulator),
        observe: ecsCallMetrics(),
        ...(input.tracing === undefined ? {} : { tracer: input.tracing.callTracer }),
      }),
      kubeConfig: env.kube.kubeConfig,
      logger,
      eniPollIntervalMs: 20,
      workflowBundle: env.bundle,
      ...(input.tracing === undefined ? {} : { tracing: input.tracing }),
      ...input.worker,
    });
    const running = worker.run();
    return {
      worker,
      stop: async () => {
        if (worker.getState() === 'RUNNING') worker.shutdown();
        await running;
      },
    };
  };
  let current: Awaited<ReturnType<typeof startWorker>> | undefined =
    input.inProcessWorker === false ? undefined : await startWorker();
  const workflowId = nodeWorkflowId(nodeName);
  const workflow = env.temporal.client.workflow.getHandle<typeof nodeIpamWorkflow>(workflowId);
  const settings = { ...TEST_SETTINGS, ...input.settings };

  const scenario: NodeScenario = {
    nodeName,
    namespace,
    taskQueue,
    emulator,
    workflow,
    workerProcessEnv: () => ({
      ...process.env,
      TEMPORAL_ADDRESS: env.temporal.address,
      TEMPORAL_NAMESPACE: env.temporal.namespace,
      TEMPORAL_TASK_QUEUE: taskQueue,
      ECS_REGION_ID: emulator.emulator.regionId,
      ECS_ENDPOINT: emulator.emulator.endpoint,
      ECS_PROTOCOL: 'http',
      ALIBABA_CLOUD_ACCESS_KEY_ID: emulator.emulator.accessKeyId,
      ALIBABA_CLOUD_ACCESS_KEY_SECRET: emulator.emulator.accessKeySecret,
      KUBECONFIG: requireTestEnvVar(TEST_ENV_VARS.kubeconfig),
      ENI_POLL_INTERVAL_MS: '20',
      ENIFLOW_CLUSTER_ID: TEST_CLUSTER_ID,
      LOG_LEVEL: process.env['TEST_LOG_LEVEL'] ?? 'warn',
    }),
    worker: {
      stop: async () => {
        await current?.stop();
        current = undefined;
      },
      restart: async () => {
        await current?.stop();
        current = await startWorker();
      },
    },
    async signal(reason = 'test') {
      await env.temporal.client.workflow.signalWithStart<typeof nodeIpamWorkflow, [{ reason: string }]>(
        NODE_WORKFLOW_TYPE,
        {
          workflowId,
          taskQueue,
          args: [{ nodeName, settings }],
          signal: reconcileSignal,
          signalArgs: [{ reason }],
        },
      );
    },
    async createPods(names, options = {}) {
      for (const name of names) {
        if (options.erdma !== true) {
          await createPodOnNode(env.kube, { namespace, name, nodeName });
          continue;
        }
        await env.kube.core.createNamespacedPod({
          namespace,
          body: {
            metadata: { name },
            spec: {
              nodeName,
              containers: [
                {
                  name: 'main',
                  image: 'registry.invalid/eniflow-test:none',
                  resources: { limits: { 'aliyun/erdma': '1' } },
                },
              ],
            },
          },
        });
      }
    },
    async deletePods(names) {
      for (const name of names) await deletePodNow(env.kube, { namespace, name });
    },
    readCr: () => readNodeCr(env.kube, nodeName),
    async waitForCr(description, check, timeoutMs = 60_000) {
      try {
        return await pollUntil(async () => check(await readNodeCr(env.kube, nodeName)), {
          description: `${nodeName}: ${description}`,
          timeoutMs,
          intervalMs: 100,
        });
      } catch (error) {
        // What the node looked like when the wait gave up: the first thing anyone debugging this needs.
        const cr = await readNodeCr(env.kube, nodeName).catch(() => undefined);
        const state = await workflow.query(stateQuery).catch(() => undefined);
        throw new Error(
          `${error instanceof Error ? error.message : String(error)}\nCR status: ${JSON.stringify(cr?.status)}\n` +
            `workflow state: ${JSON.stringify(state)}`,
          { cause: error },
        );
      }
    },
    state: () => workflow.query(stateQuery),
    async close() {
      await recordHistoryIfAsked({ workflow, name: input.name });
      try {
        await workflow.terminate('test finished');
      } catch {
        // Already ended (or never started).
      }
      await current?.stop();
      await deleteNodeCr(env.kube, nodeName);
      await emulator.close();
    },
  };
  return scenario;
}

/** gRPC's NOT_FOUND status code: what fetching the history of a workflow never started answers. */
const GRPC_NOT_FOUND = 5;

/** Where replay tests find recorded histories (test/replay/replay.test.ts). */
export const HISTORIES_DIR = new URL('../replay/histories/', import.meta.url);

/**
 * With ENIFLOW_RECORD_HISTORIES=1, saves the scenario's workflow history as JSON for the replay tests: every
 * recorded scenario must keep replaying against the current workflow code.
 */
export async function recordHistoryIfAsked(input: { workflow: WorkflowHandle; name: string }): Promise<void> {
  if (process.env['ENIFLOW_RECORD_HISTORIES'] !== '1') return;
  let history: Awaited<ReturnType<WorkflowHandle['fetchHistory']>>;
  try {
    await untilNoWorkflowTaskRuns(input.workflow);
    history = await input.workflow.fetchHistory();
  } catch (error) {
    // A scenario that never started its node's workflow has no history to record.
    const code: unknown = isGrpcServiceError(error) ? error.code : undefined;
    if (error instanceof WorkflowNotFoundError || code === GRPC_NOT_FOUND) return;
    throw error;
  }
  await mkdir(HISTORIES_DIR, { recursive: true });
  await writeFile(new URL(`${input.name}.json`, HISTORIES_DIR), `${historyToJSON(history)}\n`);
}

/**
 * Waits (up to 30 s) until no workflow task of the run is scheduled or running: a pass made of local activities is
 * one long workflow task, and a history fetched in its middle ends before the pass (the new run of a continue-as-new
 * would be three events long).
 */
async function untilNoWorkflowTaskRuns(workflow: WorkflowHandle): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const description = await workflow.describe();
    if (description.status.name !== 'RUNNING' || description.raw.pendingWorkflowTask == null) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A CR check: every named pod of the scenario holds its IPs; returns the bindings then. */
export function allBound(scenario: NodeScenario, names: readonly string[]) {
  return (cr: NodeCr): ReturnType<typeof bindingsOf> | undefined => {
    const bindings = bindingsOf(cr);
    return names.every((name) => bindings.has(`${scenario.namespace}/${name}`)) ? bindings : undefined;
  };
}

/** Runs `test` on a fresh scenario and always cleans it up. */
export async function withScenario(
  env: ScenarioEnv,
  input: Parameters<typeof startNodeScenario>[1],
  test: (scenario: NodeScenario) => Promise<void>,
): Promise<void> {
  const scenario = await startNodeScenario(env, input);
  try {
    await test(scenario);
  } finally {
    await scenario.close();
  }
}
