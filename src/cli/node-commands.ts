/** The per-node commands: `node` (the state query), `gc`, `resync` and `reconcile` (one node or every failing one). */
import type { Client } from '@temporalio/client';

import { nodeWorkflowId } from '../shared/workflow-ids.js';
import { gcSignal, gcUpdate, reconcileSignal, resyncSignal, stateQuery } from '../workflows/messages.js';
import type { GcResult, NodeWorkflowState } from '../workflows/messages.js';
import { mapLimited } from '../shared/map-limited.js';
import { CliError, listNodeWorkflows, nodeNameOf, oneNodeName, webUiLink } from './cli-context.js';
import type { CliContext, Parsed } from './cli-context.js';

/** The `state` query result, for people. */
export function formatNodeState(state: NodeWorkflowState, link: string | undefined): string[] {
  const lines: string[] = [];
  lines.push(
    `node ${state.nodeName}${state.instanceId === undefined ? '' : ` (instance ${state.instanceId})`}: ` +
      `${state.ipamState}${state.skipReason === undefined ? '' : ` — ${state.skipReason}`}`,
  );
  if (state.lastReconcileAt !== undefined) {
    lines.push(`last pass: #${state.reconcileCount} ended ${state.lastReconcileAt}`);
  }
  if (state.nextPass !== undefined) lines.push(`next pass: by ${state.nextPass.at} (${state.nextPass.reason})`);
  lines.push(
    `pods: ${state.pods.total}, ${state.pods.withIp} with IP, ${state.pods.pending} waiting` +
      (state.oldestPendingSince === undefined ? '' : ` (oldest since ${state.oldestPendingSince})`),
  );
  lines.push(`ENIs: ${state.enis.total}, idle IPs: ${state.enis.idleIps}`);
  if (state.stuckOn !== undefined) {
    lines.push(
      `stuck on: ${state.stuckOn.code} since ${state.stuckOn.since}` +
        (state.stuckOn.operation === '' ? '' : ` in ${state.stuckOn.operation}: ${state.stuckOn.message}`),
    );
  }
  if ((state.failedPasses ?? 0) > 0) lines.push(`failed passes in a row: ${state.failedPasses ?? 0}`);
  const plan = state.lastPlan;
  if (plan.allocations.length + plan.gc.length > 0 || plan.unmetDemand.normal + plan.unmetDemand.erdma > 0) {
    lines.push(
      `last plan: ${plan.allocations.length} allocation(s), ${plan.gc.length} GC action(s), unmet demand ` +
        `${plan.unmetDemand.normal} (+${plan.unmetDemand.erdma} ERDMA)`,
    );
  }
  for (const operation of state.pendingOperations) {
    // A worker of an earlier version names no action: its step then stands in.
    const action = (operation as { action?: string }).action ?? operation.kind;
    lines.push(
      `in flight: ${action}${operation.eniId === undefined ? '' : ` ${operation.eniId}`} (${operation.detail})` +
        ` since ${operation.startedAt ?? new Date(operation.startedAtMs).toISOString()}`,
    );
  }
  if (state.pendingCreates !== undefined) lines.push(`creates of unknown outcome to re-issue: ${state.pendingCreates}`);
  if (state.podsAwaitingCniDelete !== undefined) {
    lines.push(`gone pods awaiting the CNI delete: ${state.podsAwaitingCniDelete}`);
  }
  if (state.unschedulableEnis !== undefined) lines.push(`unschedulable ENIs: ${state.unschedulableEnis.join(', ')}`);
  const errors = state.lastErrors.slice(-5);
  if (errors.length > 0) {
    lines.push(`last errors (${errors.length} of ${state.lastErrors.length}, latest last):`);
    for (const error of errors) {
      const at = error.at ?? new Date(error.atMs).toISOString();
      const code = error.code === undefined ? '' : ` ${error.code}`;
      const eni = error.eniId === undefined ? '' : ` ${error.eniId}`;
      const request = error.requestId === undefined ? '' : ` (RequestId ${error.requestId})`;
      lines.push(`  ${at} ${error.operation}${eni}: ${error.type}${code}: ${error.message}${request}`);
    }
  }
  if (state.ignoredSignals !== undefined) {
    lines.push(`ignored unknown signals: ${state.ignoredSignals.map((signal) => signal.name).join(', ')}`);
  }
  if (link !== undefined) lines.push(`Web UI: ${link}`);
  return lines;
}

export async function node(context: CliContext, parsed: Parsed): Promise<void> {
  const name = oneNodeName(parsed);
  const workflowId = nodeWorkflowId(name);
  const state = await context.client.workflow.getHandle(workflowId).query(stateQuery);
  if (parsed.flags.has('--json')) {
    context.out(JSON.stringify(state, null, 2));
    return;
  }
  for (const line of formatNodeState(state, webUiLink(context, workflowId))) context.out(line);
}

/** A GC result, for people. */
export function formatGcResult(result: GcResult): string[] {
  if (result.deferred !== undefined) return [result.deferred];
  const ips = result.releasedIps.reduce((sum, entry) => sum + entry.ips.length, 0);
  const lines = [`GC released ${ips} IP(s) and removed ${result.removedEnis.length} ENI(s)`];
  for (const entry of result.releasedIps) lines.push(`  ${entry.eniId} ${entry.family}: ${entry.ips.join(', ')}`);
  for (const eniId of result.removedEnis) lines.push(`  removed ${eniId}`);
  for (const failure of result.failed) {
    lines.push(`  failed: ${failure.error} (retried next pass)`);
  }
  return lines;
}

export async function poke(
  context: CliContext,
  parsed: Parsed & { command: 'gc' | 'resync' | 'reconcile' },
): Promise<number> {
  if (parsed.flags.has('--all-failing')) {
    if (parsed.args.length > 0) throw new CliError(`${parsed.command} takes a node name or --all-failing`, 2);
    const failing = await listNodeWorkflows(context, ['IpamState = "Error"']);
    let failed = 0;
    // A batch only signals: the gc update would wait for each node's pass in turn.
    await mapLimited(failing, 16, async (info) => {
      const handle = context.client.workflow.getHandle(info.workflowId);
      try {
        await signalOne(handle, parsed.command);
        context.out(`${parsed.command} → ${nodeNameOf(info)}`);
      } catch (error) {
        failed += 1;
        context.out(
          `${parsed.command} → ${nodeNameOf(info)} failed: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
    });
    context.out(`${parsed.command} signalled to ${failing.length - failed} failing node(s)`);
    return failed === 0 ? 0 : 1;
  }
  const name = oneNodeName(parsed);
  const handle = context.client.workflow.getHandle(nodeWorkflowId(name));
  if (parsed.command === 'gc') {
    const result = await handle.executeUpdate(gcUpdate);
    if (parsed.flags.has('--json')) context.out(JSON.stringify(result, null, 2));
    else for (const line of formatGcResult(result)) context.out(line);
    return 0;
  }
  await signalOne(handle, parsed.command);
  context.out(`${parsed.command} signalled to ${name}`);
  return 0;
}

async function signalOne(
  handle: ReturnType<Client['workflow']['getHandle']>,
  command: 'gc' | 'resync' | 'reconcile',
): Promise<void> {
  switch (command) {
    case 'gc':
      await handle.signal(gcSignal);
      return;
    case 'resync':
      await handle.signal(resyncSignal);
      return;
    case 'reconcile':
      await handle.signal(reconcileSignal, { reason: 'cli' });
      return;
  }
}
