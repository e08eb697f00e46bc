/** `eniflow status`: the deployment's nodes by IPAM state, pods waiting for an IP, stuck nodes. */
import {
  ERROR_CODE_SEARCH_ATTRIBUTE,
  ERROR_SINCE_SEARCH_ATTRIBUTE,
  IPAM_STATE_SEARCH_ATTRIBUTE,
} from '../shared/workflow-ids.js';
import { stateQuery } from '../workflows/messages.js';
import { mapLimited } from '../shared/map-limited.js';
import { CliError, listNodeWorkflows, nodeNameOf } from './cli-context.js';
import type { CliContext, Parsed } from './cli-context.js';

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

export async function status(context: CliContext, parsed: Parsed): Promise<void> {
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
