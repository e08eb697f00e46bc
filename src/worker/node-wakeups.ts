import type { Client, WorkflowExecutionInfo } from '@temporalio/client';

import type { Logger } from '../logger.js';
import { nodeWorkflowsQuery } from '../shared/workflow-ids.js';
import { reconcileSignal } from '../workflows/messages.js';
import type { ReconcileReason } from '../workflows/messages.js';

/**
 * What the worker's wake-ups share (cloud-recovery.ts, vswitch-wake.ts): find running node workflows of the
 * worker's task queue by a visibility query, at most `max` of them, and signal them `reconcile`.
 */

/** Every running node workflow of `taskQueue` that matches the `extra` clauses, listed `pageSize` a page. */
export function runningNodes(input: {
  client: Client;
  taskQueue: string;
  extra: readonly string[];
  pageSize: number;
}): AsyncIterable<WorkflowExecutionInfo> {
  const query = nodeWorkflowsQuery(input.taskQueue, input.extra);
  return input.client.workflow.list({ query, pageSize: input.pageSize });
}

/** The running node workflows of `taskQueue` that match the `extra` clauses, at most `max` (one page). */
export async function listRunningNodes(input: {
  client: Client;
  taskQueue: string;
  extra: readonly string[];
  max: number;
}): Promise<WorkflowExecutionInfo[]> {
  const found: WorkflowExecutionInfo[] = [];
  for await (const execution of runningNodes({ ...input, pageSize: input.max })) {
    found.push(execution);
    if (found.length >= input.max) break;
  }
  return found;
}

/** Signals `reconcile` to each workflow, one after another; one that ended meanwhile is skipped (debug log). */
export async function signalReconcile(input: {
  client: Client;
  workflowIds: readonly string[];
  reason: ReconcileReason;
  logger: Logger;
}): Promise<void> {
  for (const workflowId of input.workflowIds) {
    try {
      await input.client.workflow.getHandle(workflowId).signal(reconcileSignal, input.reason);
    } catch (error) {
      // Ended meanwhile: nothing to wake.
      input.logger.debug({ err: error, workflowId }, 'Could not signal a node');
    }
  }
}
