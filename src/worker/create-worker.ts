import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import type { KubeConfig } from '@kubernetes/client-node';
import { Worker } from '@temporalio/worker';
import type { NativeConnection, WorkerOptions } from '@temporalio/worker';

import { createActivities } from '../activities/index.js';
import type { EcsApi } from '../activities/ecs/ecs-api.js';
import { VSwitchCache } from '../activities/ecs/vswitch-cache.js';
import type { Logger } from '../logger.js';
import { activityLogInterceptors } from './sdk-logging.js';
import type { WorkerTracing } from './tracing.js';
import { CloudRecoveryNotifier } from './cloud-recovery.js';
import { workerMetrics } from './metrics.js';
import type { WorkerMetrics } from './metrics.js';

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

/** Where the worker's workflow code comes from: a given bundle, the prebuilt file, or the sources bundled now. */
export function workflowSource(
  given?: WorkerOptions['workflowBundle'],
): Pick<WorkerOptions, 'workflowBundle'> | Pick<WorkerOptions, 'workflowsPath'> {
  if (given !== undefined) return { workflowBundle: given };
  if (existsSync(WORKFLOW_BUNDLE_PATH)) return { workflowBundle: { codePath: WORKFLOW_BUNDLE_PATH } };
  return { workflowsPath: WORKFLOWS_PATH };
}

/** Dependencies of a worker: where it polls, and the clients its activities use. */
export interface EniflowWorkerDeps {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  ecs: EcsApi;
  kubeConfig: KubeConfig;
  logger: Logger;
  eniPollIntervalMs?: number;
  maxConcurrentActivities?: number;
  /** Where the workflows' metric sinks and the vSwitch cache report (default: the process's {@link workerMetrics}). */
  metrics?: WorkerMetrics;
  /** A pre-built bundle (tests build one per file); otherwise see {@link workflowSource}. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  /** Spans for activities and their Kubernetes calls (ECS calls get theirs from the `ecs` client's own tracer). */
  tracing?: Pick<WorkerTracing, 'callTracer' | 'activityInterceptors'>;
  /** Base URL of the Temporal Web UI: events link to the node's workflow. */
  temporalUiUrl?: string;
  /** When the cloud recovers, wake the nodes backing off after failures (default on). */
  wakeNodesOnCloudRecovery?: boolean;
  /** The worker's vSwitch cache, given when something else reads it too (`blocked()` for metrics); else a new one. */
  vSwitches?: VSwitchCache;
}

/** Builds the worker: the node workflow plus every activity, wired to the given clients. */
export async function createEniflowWorker(deps: EniflowWorkerDeps): Promise<Worker> {
  const metrics = deps.metrics ?? workerMetrics;
  const recovery =
    deps.wakeNodesOnCloudRecovery === false
      ? undefined
      : new CloudRecoveryNotifier({
          connection: deps.connection,
          namespace: deps.namespace,
          taskQueue: deps.taskQueue,
          logger: deps.logger,
        });
  const vSwitches = deps.vSwitches ?? new VSwitchCache();
  metrics.watchVSwitches(vSwitches);
  const activities = createActivities({
    ecs: deps.ecs,
    vSwitches,
    kubeConfig: deps.kubeConfig,
    logger: deps.logger,
    ...(deps.eniPollIntervalMs === undefined ? {} : { eniPollIntervalMs: deps.eniPollIntervalMs }),
    ...(deps.tracing === undefined ? {} : { tracer: deps.tracing.callTracer }),
    ...(deps.temporalUiUrl === undefined ? {} : { temporalUiUrl: deps.temporalUiUrl }),
    ...(recovery === undefined ? {} : { cloudOutcomes: recovery }),
  });
  return Worker.create({
    connection: deps.connection,
    namespace: deps.namespace,
    taskQueue: deps.taskQueue,
    activities,
    interceptors: {
      activity: [activityLogInterceptors, ...(deps.tracing === undefined ? [] : [deps.tracing.activityInterceptors])],
    },
    ...workflowSource(deps.workflowBundle),
    maxConcurrentActivityTaskExecutions: deps.maxConcurrentActivities ?? 100,
    // One workflow per node: bound the cache so a large cluster does not exhaust the worker's memory.
    maxCachedWorkflows: 1000,
    sinks: metrics.sinks,
  });
}
