/**
 * Shared by the watcher's integration tests: a watcher config for the test servers, reading the `reconcile`
 * signals a node's workflow received (from its history: no worker runs, so signals just accumulate), and cleanup.
 */
import { defaultPayloadConverter } from '@temporalio/common';
import type { Client } from '@temporalio/client';

import { pollUntil } from '../../../scripts/lib/poll-until.js';
import type { WatcherConfig } from '../../../src/watcher/run-watcher.js';
import { DEFAULT_JANITOR_SETTINGS } from '../../../src/shared/janitor-settings.js';
import { DEFAULT_NODE_SETTINGS } from '../../../src/workflows/messages.js';
import type { ReconcileReason } from '../../../src/workflows/messages.js';
import { nodeWorkflowId } from '../../../src/shared/workflow-ids.js';
import { TEST_CLUSTER_ID, uniqueName } from '../../support/kube-env.js';

export interface TestWatcherConfigInput {
  taskQueue: string;
  temporalAddress: string;
  temporalNamespace: string;
  leaseNamespace: string;
  leaseName: string;
  identity: string;
}

/** Short lease timings so failover takes seconds; the 200 ms coalescing window is the default. */
export function testWatcherConfig(input: TestWatcherConfigInput): WatcherConfig {
  return {
    temporal: { address: input.temporalAddress, namespace: input.temporalNamespace, taskQueue: input.taskQueue },
    lease: {
      namespace: input.leaseNamespace,
      name: input.leaseName,
      identity: input.identity,
      durationMs: 3_000,
      renewDeadlineMs: 2_000,
      retryPeriodMs: 250,
    },
    coalesceWindowMs: 200,
    coalesceMaxDelayMs: 2_000,
    startSweepNodesPerSecond: 20,
    watch: { serverTimeoutSeconds: 60, idleTimeoutMs: 90_000, listTimeoutMs: 60_000 },
    logLevel: process.env['TEST_LOG_LEVEL'] ?? 'warn',
    nodeSettings: { ...DEFAULT_NODE_SETTINGS, clusterId: TEST_CLUSTER_ID },
    janitorSettings: { ...DEFAULT_JANITOR_SETTINGS, clusterId: TEST_CLUSTER_ID },
  };
}

/** The `reconcile` signals the node's workflow has recorded, oldest first ([] if it was never started). */
export async function reconcileSignalsOf(client: Client, nodeName: string): Promise<ReconcileReason[]> {
  let history;
  try {
    history = await client.workflow.getHandle(nodeWorkflowId(nodeName)).fetchHistory();
  } catch (error) {
    // Not started yet: the client's WorkflowNotFoundError, or the raw gRPC NOT_FOUND (code 5) fetchHistory throws.
    if (
      error instanceof Error &&
      (error.name === 'WorkflowNotFoundError' || (error as { code?: unknown }).code === 5)
    ) {
      return [];
    }
    throw error;
  }
  const reasons: ReconcileReason[] = [];
  for (const event of history.events ?? []) {
    const attributes = event.workflowExecutionSignaledEventAttributes;
    if (attributes?.signalName !== 'reconcile') continue;
    const payload = attributes.input?.payloads?.[0];
    if (payload == null) continue;
    reasons.push(defaultPayloadConverter.fromPayload<ReconcileReason>(payload));
  }
  return reasons;
}

/** Polls until the node's workflow has signals satisfying `accept`, then returns them. */
export async function waitForSignals(input: {
  client: Client;
  nodeName: string;
  description: string;
  accept: (signals: ReconcileReason[]) => boolean;
  timeoutMs?: number;
}): Promise<ReconcileReason[]> {
  return pollUntil(
    async () => {
      const signals = await reconcileSignalsOf(input.client, input.nodeName);
      return input.accept(signals) ? signals : undefined;
    },
    { description: input.description, timeoutMs: input.timeoutMs ?? 30_000, intervalMs: 150 },
  );
}

/** Every reason word in these signals (a coalesced signal joins several with commas). */
export function reasonWords(signals: readonly ReconcileReason[]): Set<string> {
  return new Set(signals.flatMap((signal) => signal.reason.split(',')));
}

/** Sum of the pod changes summarised in these signals. */
export function podChangeTotals(signals: readonly ReconcileReason[]): {
  added: number;
  updated: number;
  deleted: number;
} {
  const totals = { added: 0, updated: 0, deleted: 0 };
  for (const signal of signals) {
    totals.added += signal.podChanges?.added ?? 0;
    totals.updated += signal.podChanges?.updated ?? 0;
    totals.deleted += signal.podChanges?.deleted ?? 0;
  }
  return totals;
}

/** Terminates every workflow the watcher started on this test's task queue (none has a worker). */
export async function terminateWorkflowsOn(client: Client, taskQueue: string): Promise<void> {
  for await (const execution of client.workflow.list({ query: `TaskQueue = '${taskQueue}'` })) {
    if (execution.status.name !== 'RUNNING') continue;
    try {
      await client.workflow.getHandle(execution.workflowId, execution.runId).terminate('watcher test cleanup');
    } catch {
      // Already closed.
    }
  }
}

export function uniqueNodeName(prefix: string): string {
  return uniqueName(prefix);
}
