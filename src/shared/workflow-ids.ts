import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/** Default task queue of the worker and the watcher. */
export const DEFAULT_TASK_QUEUE = 'eniflow';

/** Workflow type name of the per-node workflow (the exported function's name). */
export const NODE_WORKFLOW_TYPE = 'nodeIpamWorkflow';

const WORKFLOW_ID_PREFIX = 'eniflow-node/';

/** Workflow type and the one id of the cluster's orphan-ENI janitor. */
export const JANITOR_WORKFLOW_TYPE = 'eniJanitorWorkflow';
export const JANITOR_WORKFLOW_ID = 'eniflow-janitor';

/** The one workflow id of a node: every start and signal for the node goes through it. */
export function nodeWorkflowId(nodeName: string): string {
  return `${WORKFLOW_ID_PREFIX}${nodeName}`;
}

/** A visibility-query string literal: `value` double-quoted, its backslashes and quotes escaped. */
export function queryLiteral(value: string): string {
  return `"${value.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;
}

/**
 * The visibility query of one deployment's running node workflows (its task queue), narrowed by `extra` clauses:
 * the one place the CLI and the worker's wake-ups (cloud recovery, vSwitch wake) find nodes to read or signal.
 */
export function nodeWorkflowsQuery(taskQueue: string, extra: readonly string[] = []): string {
  return [
    `WorkflowType = ${queryLiteral(NODE_WORKFLOW_TYPE)}`,
    'ExecutionStatus = "Running"',
    `TaskQueue = ${queryLiteral(taskQueue)}`,
    ...extra,
  ].join(' AND ');
}

/** Search attributes of node workflows (Keyword), to find a node's workflow in the Web UI or CLI. */
export const NODE_NAME_SEARCH_ATTRIBUTE = defineSearchAttributeKey('NodeName', SearchAttributeType.KEYWORD);
export const INSTANCE_ID_SEARCH_ATTRIBUTE = defineSearchAttributeKey('InstanceId', SearchAttributeType.KEYWORD);
export const IPAM_STATE_SEARCH_ATTRIBUTE = defineSearchAttributeKey('IpamState', SearchAttributeType.KEYWORD);
/**
 * The failure keeping a node from being `Ready` (the cloud's code, else the failure type) and since when it has
 * failed, so `IpamState = "Error" AND EniflowErrorCode = "…"` lists the nodes stuck on one cause; absent when healthy.
 */
export const ERROR_CODE_SEARCH_ATTRIBUTE = defineSearchAttributeKey('EniflowErrorCode', SearchAttributeType.KEYWORD);
export const ERROR_SINCE_SEARCH_ATTRIBUTE = defineSearchAttributeKey('EniflowErrorSince', SearchAttributeType.DATETIME);

/**
 * The vSwitches whose gaining addresses should wake a node stuck on exhausted vSwitches (KeywordList); absent
 * otherwise. The worker finds the nodes to wake with `EniflowExhaustedVSwitches = "vsw-…"`.
 */
export const EXHAUSTED_VSWITCHES_SEARCH_ATTRIBUTE = defineSearchAttributeKey(
  'EniflowExhaustedVSwitches',
  SearchAttributeType.KEYWORD_LIST,
);

/** Every search attribute eniflow needs registered on the Temporal namespace. */
export const SEARCH_ATTRIBUTES = [
  NODE_NAME_SEARCH_ATTRIBUTE,
  INSTANCE_ID_SEARCH_ATTRIBUTE,
  IPAM_STATE_SEARCH_ATTRIBUTE,
  ERROR_CODE_SEARCH_ATTRIBUTE,
  ERROR_SINCE_SEARCH_ATTRIBUTE,
  EXHAUSTED_VSWITCHES_SEARCH_ATTRIBUTE,
];

/** The node a workflow id belongs to (see {@link nodeWorkflowId}); undefined for other workflows (the janitor). */
export function nodeNameOfWorkflowId(workflowId: string): string | undefined {
  return workflowId.startsWith(WORKFLOW_ID_PREFIX) ? workflowId.slice(WORKFLOW_ID_PREFIX.length) : undefined;
}
