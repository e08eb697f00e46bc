/**
 * Runs the real node workflow on the Temporal dev server against a {@link StubNode}: one worker per test on its own
 * task queue, with the workflow bundled once per file and the stub activities in place of the real ones.
 */
import type { WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';

import { pollUntil } from '../../../scripts/lib/poll-until.js';
import { DEFAULT_CALLS_PER_MINUTE } from '../../../src/shared/ecs-budget.js';
import { createWorkerMetrics } from '../../../src/worker/metrics.js';
import { routeActivities, WorkerGroup } from '../../../src/worker/worker-group.js';
import type { nodeIpamWorkflow } from '../../../src/workflows/index.js';
import { stateQuery } from '../../../src/workflows/messages.js';
import type { NodeIpamSettings, NodeWorkflowState } from '../../../src/workflows/messages.js';
import { connectTemporalTestEnv, uniqueTaskQueue, uniqueWorkflowId } from '../../support/temporal-env.js';
import type { TemporalTestEnv } from '../../support/temporal-env.js';
import { bundleNodeWorkflow } from '../../support/workflow-bundle.js';
import type { StubNode } from './stub-node.js';

export interface LogicEnv {
  temporal: TemporalTestEnv;
  bundle: WorkflowBundleWithSourceMap;
  close(): Promise<void>;
}

/** `workflowsPath`: another bundle entry than the worker's (test/support/continued-start-workflows.ts). */
export async function openLogicEnv(workflowsPath?: string): Promise<LogicEnv> {
  const [temporal, bundle] = await Promise.all([connectTemporalTestEnv(), bundleNodeWorkflow(workflowsPath)]);
  return { temporal, bundle, close: () => temporal.close() };
}

/**
 * Settings that make a pass follow at once on what asks for it: no minimum interval, short backoffs, and every
 * timer a test does not exercise (safety net, sync period, event delays) far out of reach.
 */
export const FAST_SETTINGS: Partial<NodeIpamSettings> = {
  clusterId: 'eniflow-test',
  minReconcileIntervalMs: 0,
  gcPeriodMs: 100,
  // The sync falls at 1–2 periods and the safety net at 1–1.25 × idleWakeMs: a sync period of twice the safety
  // net keeps the idle node's next pass the safety net whatever the draws (a test asserts that reason).
  openApiSyncPeriodMs: 7_200_000,
  idleWakeMs: 3_600_000,
  maxFailureBackoffMs: 200,
  transientFailureBackoffMs: 200,
  maxPassesPerRun: 500,
  eventRepeatMs: 3_600_000,
  pendingPodEventAfterMs: 3_600_000,
  daemonWaitEventAfterMs: 3_600_000,
};

export type NodeWorkflowHandle = WorkflowHandleWithFirstExecutionRunId<typeof nodeIpamWorkflow>;

/**
 * Starts a worker serving the stub's activities and the node workflow (started with no signal, as a new node's
 * first run), runs `body`, then terminates the workflow and stops the worker.
 */
export async function runNode<T>(
  env: LogicEnv,
  node: StubNode,
  settings: Partial<NodeIpamSettings>,
  body: (workflow: NodeWorkflowHandle) => Promise<T>,
  start: Pick<Parameters<typeof nodeIpamWorkflow>[0], 'degradation'> = {},
): Promise<T> {
  const taskQueue = uniqueTaskQueue(node.nodeName);
  // The worker's own sinks, with the end of each pass also told to the stub (a pass's end is what tests wait for).
  const metrics = createWorkerMetrics().sinks;
  const sinks: typeof metrics = {
    ...metrics,
    eniflowMetrics: {
      ...metrics.eniflowMetrics,
      nodePass: {
        fn: (info, pass) => {
          node.passEnded({ ok: pass.ok, ipamState: pass.ipamState, runId: info.runId });
        },
      },
    },
  };
  // The stub's ECS activities on their actions' queues, where the workflow schedules them.
  const worker = await WorkerGroup.create({
    queues: routeActivities({ taskQueue, activities: node.activities(), callsPerMinute: DEFAULT_CALLS_PER_MINUTE }),
    common: { connection: env.temporal.nativeConnection, namespace: env.temporal.namespace },
    mainOptions: { workflowBundle: env.bundle, sinks },
  });
  return worker.runUntil(async () => {
    const workflow = await env.temporal.client.workflow.start<typeof nodeIpamWorkflow>('nodeIpamWorkflow', {
      taskQueue,
      workflowId: uniqueWorkflowId(node.nodeName),
      args: [{ nodeName: node.nodeName, settings: { ...FAST_SETTINGS, ...settings }, ...start }],
    });
    try {
      return await body(workflow);
    } finally {
      await workflow.terminate('test finished').catch(() => undefined);
    }
  });
}

/** Polls the `state` query until `check` holds; the last state is in the timeout message. */
export async function waitForState(
  workflow: Pick<NodeWorkflowHandle, 'query'>,
  description: string,
  check: (state: NodeWorkflowState) => boolean,
  timeoutMs = 20_000,
): Promise<NodeWorkflowState> {
  let last: NodeWorkflowState | undefined;
  try {
    return await pollUntil(
      async () => {
        last = await workflow.query(stateQuery);
        return check(last) ? last : undefined;
      },
      { description, timeoutMs, intervalMs: 25 },
    );
  } catch (error) {
    throw new Error(`${error instanceof Error ? error.message : String(error)}\nlast state: ${JSON.stringify(last)}`, {
      cause: error,
    });
  }
}
