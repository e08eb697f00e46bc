import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import type { KubeConfig } from '@kubernetes/client-node';
import { Worker } from '@temporalio/worker';
import type { NativeConnection, WorkerOptions } from '@temporalio/worker';

import { createActivities } from '../activities/index.js';
import type { EcsApi } from '../activities/ecs/ecs-api.js';
import { VSwitchCache } from '../activities/ecs/vswitch-cache.js';
import type { NodeReadCache } from '../activities/node-read-cache.js';
import type { Logger } from '../logger.js';

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
  /** The worker's informers, started by the caller; without one every read is live. */
  readCache?: NodeReadCache;
  eniPollIntervalMs?: number;
  maxConcurrentActivities?: number;
  /** A pre-built bundle (tests build one per file); otherwise see {@link workflowSource}. */
  workflowBundle?: WorkerOptions['workflowBundle'];
}

/** Builds the worker: the node workflow plus every activity, wired to the given clients. */
export async function createEniflowWorker(deps: EniflowWorkerDeps): Promise<Worker> {
  const activities = createActivities({
    ecs: deps.ecs,
    vSwitches: new VSwitchCache(),
    kubeConfig: deps.kubeConfig,
    logger: deps.logger,
    ...(deps.readCache === undefined ? {} : { readCache: deps.readCache }),
    ...(deps.eniPollIntervalMs === undefined ? {} : { eniPollIntervalMs: deps.eniPollIntervalMs }),
  });
  return Worker.create({
    connection: deps.connection,
    namespace: deps.namespace,
    taskQueue: deps.taskQueue,
    activities,
    ...workflowSource(deps.workflowBundle),
    maxConcurrentActivityTaskExecutions: deps.maxConcurrentActivities ?? 100,
    // One workflow per node: bound the cache so a large cluster does not exhaust the worker's memory.
    maxCachedWorkflows: 1000,
  });
}
