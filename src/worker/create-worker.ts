import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import type { KubeConfig } from '@kubernetes/client-node';
import type { NativeConnection, WorkerOptions } from '@temporalio/worker';

import { createWorkerActivities } from '../activities/index.js';
import type { EcsApi } from '../activities/ecs/ecs-api.js';
import { VSwitchCache } from '../activities/ecs/vswitch-cache.js';
import type { NodeReadCache } from '../activities/node-read-cache.js';
import type { Logger } from '../logger.js';
import { activityLogInterceptors } from './sdk-logging.js';
import type { WorkerTracing } from './tracing.js';
import { ecsProbes } from './cloud-probe.js';
import { CloudRecoveryNotifier } from './cloud-recovery.js';
import type { CloudRecoveryOptions } from './cloud-recovery.js';
import { VSwitchWakeNotifier } from './vswitch-wake.js';
import type { VSwitchWakeOptions } from './vswitch-wake.js';
import { workerMetrics } from './metrics.js';
import type { WorkerMetrics } from './metrics.js';
import { loadCachedWorkflowBundle } from './workflow-bundle-cache.js';
import { temporalWorkerPatched } from './sdk-patch.js';
import { DEFAULT_CALLS_PER_MINUTE } from '../shared/ecs-budget.js';
import { DEFAULT_MAX_CONCURRENT_WORKFLOW_TASKS } from '../config.js';
import type { EcsApiName } from '../shared/ecs-budget.js';
import { routeActivities, WorkerGroup } from './worker-group.js';
import type { WorkflowCodeOrigin } from './workflow-bundle-cache.js';

/**
 * Path of the workflow bundle entry, for `workflowsPath` or `bundleWorkflowCode`: the TypeScript source when this
 * module runs from `src/` (tsx), the compiled JavaScript when it runs from `dist/`.
 */
export const WORKFLOWS_PATH = fileURLToPath(
  new URL(`../workflows/index.${import.meta.url.endsWith('.ts') ? 'ts' : 'js'}`, import.meta.url),
);

/**
 * The workflow bundle `npm run build` writes next to the compiled code (`dist/workflow-bundle.js`). A worker started
 * from `dist/` loads it instead of bundling at every start; from `src/` there is none, and the worker bundles.
 */
export const WORKFLOW_BUNDLE_PATH = fileURLToPath(new URL('../workflow-bundle.js', import.meta.url));

/** `src/` (or `dist/`): every module the workflow bundle may include from this project lives below it. */
const SOURCE_ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Where the worker's workflow code came from, as its start is logged. */
export type WorkflowCodeSource = 'given bundle' | 'prebuilt bundle' | WorkflowCodeOrigin;

/**
 * The worker's workflow code: a given bundle, the prebuilt file, or (from source) the bundle cached for the current
 * sources, bundled now on a miss (see workflow-bundle-cache.ts).
 */
export async function workflowSource(
  given: WorkerOptions['workflowBundle'] | undefined,
  logger: Logger,
): Promise<{ option: Pick<WorkerOptions, 'workflowBundle'>; source: WorkflowCodeSource }> {
  if (given !== undefined) return { option: { workflowBundle: given }, source: 'given bundle' };
  if (existsSync(WORKFLOW_BUNDLE_PATH)) {
    return { option: { workflowBundle: { codePath: WORKFLOW_BUNDLE_PATH } }, source: 'prebuilt bundle' };
  }
  const { code, origin } = await loadCachedWorkflowBundle({
    workflowsPath: WORKFLOWS_PATH,
    sourceRoot: SOURCE_ROOT,
    extraFiles: [join(SOURCE_ROOT, '..', 'package-lock.json'), join(SOURCE_ROOT, '..', 'tsconfig.json')],
    logger,
  });
  return { option: { workflowBundle: { code } }, source: origin };
}

/** Dependencies of a worker: where it polls, and the clients its activities use. */
export interface EniflowWorkerDeps {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  ecs: EcsApi;
  kubeConfig: KubeConfig;
  logger: Logger;
  /** The worker's informers, started by the caller; without one every read is live. */
  readCache?: NodeReadCache;
  eniPollIntervalMs?: number;
  maxConcurrentActivities?: number;
  /** The main worker's `maxConcurrentWorkflowTaskExecutions` (config: MAX_CONCURRENT_WORKFLOW_TASKS). */
  maxConcurrentWorkflowTasks?: number;
  /** Where the workflows' metric sinks and the vSwitch cache report (default: the process's {@link workerMetrics}). */
  metrics?: WorkerMetrics;
  /** A pre-built bundle (tests build one per file); otherwise see {@link workflowSource}. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  /** Spans for activities and their Kubernetes calls (ECS calls get theirs from the `ecs` client's own tracer). */
  tracing?: Pick<WorkerTracing, 'callTracer' | 'activityInterceptors'>;
  /** Base URL of the Temporal Web UI: events link to the node's workflow. */
  temporalUiUrl?: string;
  /**
   * When the cloud recovers, wake the nodes backing off after failures (default on, probing a failing action every
   * 20 s while no node calls it): see {@link CloudRecoveryNotifier}.
   */
  wakeNodesOnCloudRecovery?: boolean | CloudRecoveryOptions;
  /**
   * Wake nodes stuck on exhausted vSwitches when one gains addresses (default on, polling every 60 s): see
   * {@link VSwitchWakeNotifier}.
   */
  vSwitchWake?: VSwitchWakeOptions | false;
  /** The worker's vSwitch cache, given when something else reads it too (`blocked()` for metrics); else a new one. */
  vSwitches?: VSwitchCache;
  /** The cluster's ECS budget per action (calls per minute; default Terway's): each action queue's server-side rate. */
  callsPerMinute?: Readonly<Record<EcsApiName, number>>;
  /** Calls the Temporal server lets through at once on each ECS queue (default `DEFAULT_ECS_BURST`): their slots. */
  ecsBurst?: number;
}

/**
 * Builds the process's workers: the node workflow, the Kubernetes activities and the local reads on the task queue,
 * and a worker per ECS action on that action's queue, rate-limited by the server to the action's budget across all
 * workers (see worker-group.ts, shared/ecs-budget.ts).
 */
export async function createEniflowWorker(deps: EniflowWorkerDeps): Promise<WorkerGroup> {
  const metrics = deps.metrics ?? workerMetrics;
  const recovery =
    deps.wakeNodesOnCloudRecovery === false
      ? undefined
      : new CloudRecoveryNotifier({
          connection: deps.connection,
          namespace: deps.namespace,
          taskQueue: deps.taskQueue,
          logger: deps.logger,
          probe: ecsProbes(deps.ecs, { clusterId: process.env['ENIFLOW_CLUSTER_ID'] }),
          ...(typeof deps.wakeNodesOnCloudRecovery === 'object' ? deps.wakeNodesOnCloudRecovery : {}),
        });
  const vSwitches = deps.vSwitches ?? new VSwitchCache();
  metrics.watchVSwitches(vSwitches);
  const activityDeps = {
    ecs: deps.ecs,
    vSwitches,
    kubeConfig: deps.kubeConfig,
    logger: deps.logger,
    podIpReady: metrics.podIpReady,
    ...(deps.readCache === undefined ? {} : { readCache: deps.readCache }),
    ...(deps.eniPollIntervalMs === undefined ? {} : { eniPollIntervalMs: deps.eniPollIntervalMs }),
    ...(deps.tracing === undefined ? {} : { tracer: deps.tracing.callTracer }),
    ...(deps.temporalUiUrl === undefined ? {} : { temporalUiUrl: deps.temporalUiUrl }),
    ...(recovery === undefined ? {} : { cloudOutcomes: recovery }),
  };
  const { activities, ecsActivityNames } = createWorkerActivities(activityDeps);
  const queues = routeActivities({
    taskQueue: deps.taskQueue,
    activities,
    callsPerMinute: deps.callsPerMinute ?? DEFAULT_CALLS_PER_MINUTE,
    ...(deps.ecsBurst === undefined ? {} : { burst: deps.ecsBurst }),
    ecsActivityNames,
  });
  const startedMs = performance.now();
  const code = await workflowSource(deps.workflowBundle, deps.logger);
  deps.logger.info(
    { workflowCode: code.source, loadMs: Math.round(performance.now() - startedMs) },
    'Workflow code loaded',
  );
  if (!temporalWorkerPatched()) {
    deps.logger.warn(
      '@temporalio/worker is not patched (did the install skip scripts?): every call into the workflow sandbox ' +
        "pays the SDK's per-call watchdog thread (docs/decisions.md, issue 29 point 1)",
    );
  }
  const worker = await WorkerGroup.create({
    queues,
    common: {
      connection: deps.connection,
      namespace: deps.namespace,
      interceptors: {
        activity: [activityLogInterceptors, ...(deps.tracing === undefined ? [] : [deps.tracing.activityInterceptors])],
      },
      maxConcurrentActivityTaskExecutions: deps.maxConcurrentActivities ?? 100,
      // One workflow per node: bound the cache so a large cluster does not exhaust the worker's memory.
      maxCachedWorkflows: 1000,
      // After a crash, a workflow's next task waits this long on the dead worker's sticky queue before any worker
      // may take it (the server's own "sticky poller gone" check only applies 10 s after the last poll). The SDK's
      // 10 s would put every restart above its 10 s target; falling back to the normal queue costs one replay of a
      // small history, so a busy but live worker losing a task this way is cheap.
      stickyQueueScheduleToStartTimeout: '3s',
    },
    mainOptions: {
      ...code.option,
      // With eniflow's SDK patch this is the stuck guard's limit, and a trip fails the whole worker (every cached node
      // replays on the next one), not one workflow task as the SDK's per-call timeout did: so it sits far above any
      // healthy activation (a whole 47 KB history replays in well under a second) and only a real loop reaches it.
      isolateExecutionTimeout: '30s',
      sinks: metrics.sinks,
      maxConcurrentWorkflowTaskExecutions: deps.maxConcurrentWorkflowTasks ?? DEFAULT_MAX_CONCURRENT_WORKFLOW_TASKS,
    },
  });
  if (deps.vSwitchWake !== false) {
    const wake = new VSwitchWakeNotifier({
      connection: deps.connection,
      namespace: deps.namespace,
      taskQueue: deps.taskQueue,
      logger: deps.logger,
      ecs: deps.ecs,
      vSwitches,
      ...(deps.vSwitchWake === undefined ? {} : { options: deps.vSwitchWake }),
    });
    vSwitches.onUnblocked((vSwitchId) => {
      wake.gained(vSwitchId);
    });
    // Polls while the worker runs (or is about to), and stops with it.
    wake.start(() => ['INITIALIZED', 'RUNNING'].includes(worker.getState()));
  }
  return worker;
}
