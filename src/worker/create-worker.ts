import { fileURLToPath } from 'node:url';

import type { KubeConfig } from '@kubernetes/client-node';
import { Worker } from '@temporalio/worker';
import type { NativeConnection, WorkerOptions } from '@temporalio/worker';

import { createActivities } from '../activities/index.js';
import type { EcsApi } from '../activities/ecs/ecs-api.js';
import { VSwitchCache } from '../activities/ecs/vswitch-cache.js';
import type { Logger } from '../logger.js';

/** Path of the workflow bundle entry, for `workflowsPath` or `bundleWorkflowCode`. */
export const WORKFLOWS_PATH = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

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
  /** A pre-built bundle (tests build one per file); otherwise the worker bundles `WORKFLOWS_PATH` itself. */
  workflowBundle?: WorkerOptions['workflowBundle'];
}

/** Builds the worker: the node workflow plus every activity, wired to the given clients. */
export async function createEniflowWorker(deps: EniflowWorkerDeps): Promise<Worker> {
  const activities = createActivities({
    ecs: deps.ecs,
    vSwitches: new VSwitchCache(),
    kubeConfig: deps.kubeConfig,
    logger: deps.logger,
    ...(deps.eniPollIntervalMs === undefined ? {} : { eniPollIntervalMs: deps.eniPollIntervalMs }),
  });
  return Worker.create({
    connection: deps.connection,
    namespace: deps.namespace,
    taskQueue: deps.taskQueue,
    activities,
    ...(deps.workflowBundle === undefined
      ? { workflowsPath: WORKFLOWS_PATH }
      : { workflowBundle: deps.workflowBundle }),
    maxConcurrentActivityTaskExecutions: deps.maxConcurrentActivities ?? 100,
    // One workflow per node: bound the cache so a large cluster does not exhaust the worker's memory.
    maxCachedWorkflows: 1000,
  });
}
