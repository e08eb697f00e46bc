/**
 * The `eniflow` operator commands, over the Temporal client only: read node workflows (search attributes, the
 * `state` query), poke them (signals, the `gc` update) and drive the orphan-ENI janitor.
 */
import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import type { Client, WorkflowExecutionInfo } from '@temporalio/client';

import { janitorReportQuery, runJanitorUpdate } from '../workflows/janitor-workflow.js';
import type { JanitorReport } from '../workflows/janitor-workflow.js';
import { gcSignal, gcUpdate, reconcileSignal, resyncSignal, stateQuery } from '../workflows/messages.js';
import type { GcResult, NodeWorkflowState } from '../workflows/messages.js';
import {
  ERROR_CODE_SEARCH_ATTRIBUTE,
  ERROR_SINCE_SEARCH_ATTRIBUTE,
  IPAM_STATE_SEARCH_ATTRIBUTE,
  JANITOR_WORKFLOW_ID,
  NODE_NAME_SEARCH_ATTRIBUTE,
  NODE_WORKFLOW_TYPE,
  nodeWorkflowId,
} from '../shared/workflow-ids.js';

export const CLI_USAGE = `usage: eniflow <command> [options]

  status                         nodes by IPAM state, pods waiting for an IP, the oldest wait, stuck nodes
  node <name>                    one node's state (the workflow's state query), with a Web UI link
  gc <name>                      release idle IPs above maxPoolSize now and print what was released
  resync <name>                  force a full OpenAPI sync of the node's ENIs on its next pass
  reconcile <name>               wake a reconcile pass now
  gc|resync|reconcile --all-failing
                                 signal every node whose IpamState is Error
  janitor                        the orphan-ENI janitor's last report
  janitor --dry-run              run a janitor pass that deletes nothing, print what it would delete
  janitor --delete               run a janitor pass now (deletes orphan ENIs; refused if the janitor runs dry)

options: --json (machine-readable output of status, node, gc, janitor)
environment: TEMPORAL_* as for the worker and watcher (address, namespace, TLS, API key, task queue);
             TEMPORAL_UI_URL (e.g. http://127.0.0.1:8233) adds Web UI links`;

/** What a command needs: a connected client, where its output goes, and the deployment's names. */
export interface CliContext {
  client: Client;
  namespace: string;
  /** Only node workflows on this task queue are listed (one deployment's). */
  taskQueue: string;
  /** Base URL of the Temporal Web UI, for links. */
  uiUrl?: string;
  /** The janitor's workflow id (default {@link JANITOR_WORKFLOW_ID}). */
  janitorWorkflowId?: string;
  out: (line: string) => void;
}

/** A usage or lookup problem, reported as one line with exit code 2 (usage) or 1. */
export class CliError extends Error {
  readonly exitCode: number;

  constructor(message: string, exitCode = 1) {
    super(message);
    this.name = 'CliError';
    this.exitCode = exitCode;
  }
}

interface Parsed {
  command: string;
  args: string[];
  flags: Set<string>;
}

/** The commands {@link runCli} knows. */
export const CLI_COMMANDS = ['help', 'status', 'node', 'gc', 'resync', 'reconcile', 'janitor'] as const;

const FLAGS = ['--json', '--all-failing', '--dry-run', '--delete'] as const;

function parseArgs(argv: readonly string[]): Parsed {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    return { command: 'help', args: [], flags: new Set() };
  }
  const flags = new Set<string>();
  const args: string[] = [];
  for (const arg of rest) {
    if (arg.startsWith('--')) {
      if (!(FLAGS as readonly string[]).includes(arg)) throw new CliError(`unknown option ${arg}\n${CLI_USAGE}`, 2);
      flags.add(arg);
    } else {
      args.push(arg);
    }
  }
  return { command, args, flags };
}

/** Runs one command; returns the process exit code (0 ok, 1 failed, 2 usage). */
export async function runCli(argv: readonly string[], context: CliContext): Promise<number> {
  try {
    const parsed = parseArgs(argv);
    switch (parsed.command) {
      case 'help':
        context.out(CLI_USAGE);
        return 0;
      case 'status':
        await status(context, parsed);
        return 0;
      case 'node':
        await node(context, parsed);
        return 0;
      case 'gc':
      case 'resync':
      case 'reconcile':
        return await poke(context, { ...parsed, command: parsed.command });
      case 'janitor':
        await janitor(context, parsed);
        return 0;
      default:
        throw new CliError(`unknown command "${parsed.command}"\n${CLI_USAGE}`, 2);
    }
  } catch (error) {
    if (error instanceof CliError) {
      context.out(`eniflow: ${error.message}`);
      return error.exitCode;
    }
    if (error instanceof WorkflowNotFoundError) {
      context.out(`eniflow: no running workflow ${error.workflowId} (is the node known to the watcher?)`);
      return 1;
    }
    throw error;
  }
}

function oneNodeName(parsed: Parsed): string {
  const [name, ...extra] = parsed.args;
  if (name === undefined || extra.length > 0) throw new CliError(`${parsed.command} takes one node name`, 2);
  return name;
}

/** The Web UI page of a workflow, when the UI's address is known. */
export function webUiLink(context: Pick<CliContext, 'uiUrl' | 'namespace'>, workflowId: string): string | undefined {
  if (context.uiUrl === undefined || context.uiUrl === '') return undefined;
  const base = context.uiUrl.replace(/\/+$/, '');
  return `${base}/namespaces/${encodeURIComponent(context.namespace)}/workflows/${encodeURIComponent(workflowId)}`;
}

function quote(value: string): string {
  return `"${value.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;
}

/** The visibility query of this deployment's running node workflows, narrowed by `extra` clauses. */
export function nodeWorkflowsQuery(taskQueue: string, extra: readonly string[] = []): string {
  return [
    `WorkflowType = ${quote(NODE_WORKFLOW_TYPE)}`,
    'ExecutionStatus = "Running"',
    `TaskQueue = ${quote(taskQueue)}`,
    ...extra,
  ].join(' AND ');
}

async function listNodeWorkflows(context: CliContext, extra: readonly string[] = []): Promise<WorkflowExecutionInfo[]> {
  const found: WorkflowExecutionInfo[] = [];
  for await (const info of context.client.workflow.list({ query: nodeWorkflowsQuery(context.taskQueue, extra) })) {
    found.push(info);
  }
  return found.sort((a, b) => a.workflowId.localeCompare(b.workflowId));
}

function nodeNameOf(info: WorkflowExecutionInfo): string {
  return info.typedSearchAttributes.get(NODE_NAME_SEARCH_ATTRIBUTE) ?? info.workflowId;
}

/** Runs `fn` over `items` with at most `limit` at once (a query per node must not flood the frontend). */
async function mapLimited<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const index = next;
      next += 1;
      results[index] = await fn(items[index] as T);
    }
  });
  await Promise.all(lanes);
  return results;
}

/** One node as `status` reports it. */
export interface NodeSummary {
  node: string;
  workflowId: string;
  ipamState: string;
  errorCode?: string;
  errorSince?: string;
  podsWaiting?: number;
  oldestPendingSince?: string;
  /** Why the state query failed (worker down, workflow stuck on a task). */
  queryError?: string;
}

/** What `status --json` prints. */
export interface StatusReport {
  nodes: number;
  byState: Record<string, number>;
  podsWaiting: number;
  nodesWithPodsWaiting: number;
  oldestWait?: { node: string; since: string };
  stuck: NodeSummary[];
  unanswered: NodeSummary[];
}

async function status(context: CliContext, parsed: Parsed): Promise<void> {
  if (parsed.args.length > 0) throw new CliError('status takes no argument', 2);
  const workflows = await listNodeWorkflows(context);
  const summaries = await mapLimited(workflows, 16, async (info): Promise<NodeSummary> => {
    const summary: NodeSummary = {
      node: nodeNameOf(info),
      workflowId: info.workflowId,
      ipamState: info.typedSearchAttributes.get(IPAM_STATE_SEARCH_ATTRIBUTE) ?? 'unknown',
    };
    const code = info.typedSearchAttributes.get(ERROR_CODE_SEARCH_ATTRIBUTE);
    const since = info.typedSearchAttributes.get(ERROR_SINCE_SEARCH_ATTRIBUTE);
    if (code !== undefined) summary.errorCode = code;
    if (since !== undefined) summary.errorSince = since.toISOString();
    try {
      const state = await context.client.workflow.getHandle(info.workflowId).query(stateQuery);
      summary.podsWaiting = state.pods.pending;
      if (state.oldestPendingSince !== undefined) summary.oldestPendingSince = state.oldestPendingSince;
    } catch (error) {
      summary.queryError = error instanceof Error ? error.message : String(error);
    }
    return summary;
  });
  const report: StatusReport = {
    nodes: summaries.length,
    byState: {},
    podsWaiting: 0,
    nodesWithPodsWaiting: 0,
    stuck: summaries.filter((node) => node.ipamState === 'Error' || node.errorCode !== undefined),
    unanswered: summaries.filter((node) => node.queryError !== undefined),
  };
  for (const node of summaries) {
    report.byState[node.ipamState] = (report.byState[node.ipamState] ?? 0) + 1;
    if ((node.podsWaiting ?? 0) > 0) {
      report.podsWaiting += node.podsWaiting ?? 0;
      report.nodesWithPodsWaiting += 1;
    }
    const since = node.oldestPendingSince;
    if (since !== undefined && (report.oldestWait === undefined || since < report.oldestWait.since)) {
      report.oldestWait = { node: node.node, since };
    }
  }
  if (parsed.flags.has('--json')) {
    context.out(JSON.stringify(report, null, 2));
    return;
  }
  const states = Object.entries(report.byState)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([state, count]) => `${state} ${count}`);
  context.out(`${report.nodes} node(s)${states.length === 0 ? '' : `: ${states.join(', ')}`}`);
  context.out(
    `pods waiting for an IP: ${report.podsWaiting}` +
      (report.nodesWithPodsWaiting === 0 ? '' : ` on ${report.nodesWithPodsWaiting} node(s)`) +
      (report.oldestWait === undefined
        ? ''
        : `; oldest waiting since ${report.oldestWait.since} (${report.oldestWait.node})`),
  );
  if (report.stuck.length > 0) {
    context.out('stuck:');
    for (const node of report.stuck) {
      const cause = node.errorCode === undefined ? '' : ` ${node.errorCode}`;
      const since = node.errorSince === undefined ? '' : ` since ${node.errorSince}`;
      context.out(`  ${node.node}  ${node.ipamState}${cause}${since}`);
    }
  }
  for (const node of report.unanswered) context.out(`  ${node.node}: state query failed: ${node.queryError ?? ''}`);
}

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
    lines.push(
      `in flight: ${operation.kind}${operation.eniId === undefined ? '' : ` ${operation.eniId}`} ${operation.detail}` +
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

async function node(context: CliContext, parsed: Parsed): Promise<void> {
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
    lines.push(`  failed ${failure.action.kind} ${failure.action.eniId}: ${failure.error} (retried next pass)`);
  }
  return lines;
}

async function poke(context: CliContext, parsed: Parsed & { command: 'gc' | 'resync' | 'reconcile' }): Promise<number> {
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

/** A janitor report, for people. */
export function formatJanitorReport(report: JanitorReport): string[] {
  const lines = [
    `janitor pass at ${report.at}${report.dryRun ? ' (dry run: nothing deleted)' : ''}: ` +
      `${report.checked} ENI(s) of cluster ${report.clusterId} checked, ${report.orphans.length} orphan(s)`,
  ];
  for (const orphan of report.orphans) {
    const deleted = report.deleted.includes(orphan.eniId) ? ' — deleted' : '';
    lines.push(
      `  ${orphan.eniId} created ${orphan.createdAt}${orphan.node === undefined ? '' : ` for ${orphan.node}`}${deleted}`,
    );
  }
  for (const spared of report.spared) lines.push(`  ${spared.eniId}: spared by the last check (${spared.reason})`);
  for (const failure of report.failed) lines.push(`  ${failure.eniId}: delete failed: ${failure.error}`);
  if (report.unowned.length > 0) {
    lines.push(
      `${report.unowned.length} eniflow ENI(s) without a cluster tag and in no Node CR (never deleted; check by hand):`,
    );
    for (const eni of report.unowned) {
      lines.push(`  ${eni.eniId} ${eni.status}${eni.node === undefined ? '' : ` for ${eni.node}`}`);
    }
  }
  if (report.adopted > 0) lines.push(`adopted: ${report.adopted} eniflow ENI(s) without a cluster tag, listed in a CR`);
  const kept = Object.entries(report.kept).map(([reason, count]) => `${reason} ${count}`);
  if (kept.length > 0) lines.push(`kept: ${kept.join(', ')}`);
  return lines;
}

async function janitor(context: CliContext, parsed: Parsed): Promise<void> {
  if (parsed.args.length > 0) throw new CliError('janitor takes no argument', 2);
  if (parsed.flags.has('--dry-run') && parsed.flags.has('--delete')) {
    throw new CliError('janitor: --dry-run or --delete, not both', 2);
  }
  const handle = context.client.workflow.getHandle(context.janitorWorkflowId ?? JANITOR_WORKFLOW_ID);
  let report: JanitorReport | undefined;
  if (parsed.flags.has('--dry-run') || parsed.flags.has('--delete')) {
    try {
      report = await handle.executeUpdate(runJanitorUpdate, { args: [{ dryRun: parsed.flags.has('--dry-run') }] });
    } catch (error) {
      // The janitor refuses deletes its recorded settings do not allow: say why, not a stack trace.
      if (error instanceof WorkflowUpdateFailedError) {
        throw new CliError(`janitor: ${error.cause instanceof Error ? error.cause.message : error.message}`, 1);
      }
      throw error;
    }
  } else {
    report = await handle.query(janitorReportQuery);
  }
  if (parsed.flags.has('--json')) {
    context.out(JSON.stringify(report ?? null, null, 2));
    return;
  }
  if (report === undefined) {
    context.out('the janitor has not run a pass yet (eniflow janitor --dry-run runs one)');
    return;
  }
  for (const line of formatJanitorReport(report)) context.out(line);
}
