/** What every `eniflow` command shares: the context, the error type, parsed arguments and the node-workflow list. */
import type { Client, WorkflowExecutionInfo } from '@temporalio/client';

import { NODE_NAME_SEARCH_ATTRIBUTE, nodeWorkflowsQuery } from '../shared/workflow-ids.js';
import type { ControlStore } from './control-store.js';

/** What a command needs: a connected client, where its output goes, and the deployment's names. */
export interface CliContext {
  client: Client;
  namespace: string;
  /** Only node workflows on this task queue are listed (one deployment's). */
  taskQueue: string;
  /** Base URL of the Temporal Web UI, for links. */
  uiUrl?: string;
  /** The janitor's workflow id (default `JANITOR_WORKFLOW_ID`, src/shared/workflow-ids.ts). */
  janitorWorkflowId?: string;
  /** The control ConfigMap (`degradation` command only; it needs Kubernetes access). */
  control?: ControlStore;
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

export interface Parsed {
  command: string;
  args: string[];
  flags: Set<string>;
}

export function oneNodeName(parsed: Parsed): string {
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

export async function listNodeWorkflows(
  context: CliContext,
  extra: readonly string[] = [],
): Promise<WorkflowExecutionInfo[]> {
  const found: WorkflowExecutionInfo[] = [];
  for await (const info of context.client.workflow.list({ query: nodeWorkflowsQuery(context.taskQueue, extra) })) {
    found.push(info);
  }
  return found.sort((a, b) => a.workflowId.localeCompare(b.workflowId));
}

export function nodeNameOf(info: WorkflowExecutionInfo): string {
  return info.typedSearchAttributes.get(NODE_NAME_SEARCH_ATTRIBUTE) ?? info.workflowId;
}
