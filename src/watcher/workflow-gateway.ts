import { TypedSearchAttributes } from '@temporalio/common';
import type { Client } from '@temporalio/client';

import { IPAM_STATES, reconcileSignal } from '../workflows/messages.js';
import type { IpamState, NodeIpamSettings } from '../workflows/messages.js';
import type { JanitorSettings } from '../shared/janitor-settings.js';
import type { nodeIpamWorkflow } from '../workflows/node-ipam-workflow.js';
import {
  JANITOR_WORKFLOW_ID,
  JANITOR_WORKFLOW_TYPE,
  IPAM_STATE_SEARCH_ATTRIBUTE,
  NODE_NAME_SEARCH_ATTRIBUTE,
  NODE_WORKFLOW_TYPE,
  nodeWorkflowId,
  nodeWorkflowsQuery,
  queryLiteral,
} from '../shared/workflow-ids.js';
import type { NodeSignal } from './coalescer.js';

/** The watcher's one way into Temporal: wake (and if needed start) a node's workflow. */
export interface WorkflowGateway {
  signalNode(signal: NodeSignal): Promise<void>;
  /** Starts the cluster's orphan-ENI janitor unless it runs already. */
  ensureJanitor?(): Promise<void>;
  /** Running node workflows by their `IpamState` search attribute (`Unknown`: not published yet). */
  countNodesByState?(): Promise<Record<string, number>>;
}

/**
 * The Web UI's fixed summary and details of a node's workflow (Temporal user metadata, set at start). What changes
 * (state, instance, errors, next pass) is in the workflow's current details and search attributes.
 */
export function nodeUserMetadata(
  nodeName: string,
  instanceId?: string,
): { staticSummary: string; staticDetails: string } {
  const id = nodeWorkflowId(nodeName);
  return {
    staticSummary: `eniflow IPAM of node ${nodeName}${instanceId === undefined ? '' : ` (instance ${instanceId})`}`,
    staticDetails: [
      `Pod IPs (multi-IP ENIs) of Kubernetes node \`${nodeName}\`: one long-lived workflow, woken by the watcher.`,
      '',
      `- state: \`npm run eniflow -- node ${nodeName}\` or \`temporal workflow query --workflow-id ${id} --type state\``,
      `- GC now: \`npm run eniflow -- gc ${nodeName}\`; resync with the cloud: \`npm run eniflow -- resync ${nodeName}\``,
      `- Node CR: \`kubectl get nodes.network.alibabacloud.com ${nodeName} -o yaml\``,
      '- search attributes: `NodeName`, `InstanceId`, `IpamState`, `EniflowErrorCode`, `EniflowErrorSince`, `EniflowExhaustedVSwitches`',
    ].join('\n'),
  };
}

/**
 * {@link WorkflowGateway} over the Temporal client: `signalWithStart` of the node's workflow (id from
 * `nodeWorkflowId`), so a node without a running workflow gets one.
 */
export class TemporalWorkflowGateway implements WorkflowGateway {
  private readonly client: Client;
  private readonly taskQueue: string;
  private readonly nodeSettings: NodeIpamSettings;
  private readonly janitorSettings: JanitorSettings;
  private readonly instanceOf: (nodeName: string) => string | undefined;

  /**
   * `nodeSettings` are recorded in every node workflow started here, `janitorSettings` in the janitor (both in
   * full, with the cluster id); `instanceOf` names a node's ECS instance for the workflow's static summary.
   */
  constructor(options: {
    client: Client;
    taskQueue: string;
    nodeSettings: NodeIpamSettings;
    janitorSettings: JanitorSettings;
    instanceOf?: (nodeName: string) => string | undefined;
  }) {
    this.client = options.client;
    this.taskQueue = options.taskQueue;
    this.nodeSettings = options.nodeSettings;
    this.janitorSettings = options.janitorSettings;
    this.instanceOf = options.instanceOf ?? (() => undefined);
  }

  async signalNode(signal: NodeSignal): Promise<void> {
    await this.client.workflow.signalWithStart<typeof nodeIpamWorkflow, [typeof signal.reason]>(NODE_WORKFLOW_TYPE, {
      workflowId: nodeWorkflowId(signal.nodeName),
      taskQueue: this.taskQueue,
      // The settings are recorded input: a later change of a default never alters what this run replays.
      args: [{ nodeName: signal.nodeName, settings: this.nodeSettings }],
      signal: reconcileSignal,
      signalArgs: [signal.reason],
      // IpamState is set at start, so a node is listed as Starting before its first pass ends.
      typedSearchAttributes: new TypedSearchAttributes([
        { key: NODE_NAME_SEARCH_ATTRIBUTE, value: signal.nodeName },
        { key: IPAM_STATE_SEARCH_ATTRIBUTE, value: 'Starting' satisfies IpamState },
      ]),
      ...nodeUserMetadata(signal.nodeName, this.instanceOf(signal.nodeName)),
    });
  }

  /**
   * One visibility count per state (plus the total): eleven cheap calls, and unlike `GROUP BY` (which SQL
   * visibility allows only on `ExecutionStatus`) they work on every Temporal persistence.
   */
  async countNodesByState(): Promise<Record<string, number>> {
    const total = (await this.client.workflow.count(nodeWorkflowsQuery(this.taskQueue))).count;
    const counts: Record<string, number> = {};
    let known = 0;
    for (const state of IPAM_STATES) {
      const count = (
        await this.client.workflow.count(
          nodeWorkflowsQuery(this.taskQueue, [`${IPAM_STATE_SEARCH_ATTRIBUTE.name} = ${queryLiteral(state)}`]),
        )
      ).count;
      counts[state] = count;
      known += count;
    }
    counts['Unknown'] = Math.max(0, total - known);
    return counts;
  }

  async ensureJanitor(): Promise<void> {
    await this.client.workflow.start(JANITOR_WORKFLOW_TYPE, {
      workflowId: JANITOR_WORKFLOW_ID,
      taskQueue: this.taskQueue,
      // In full, like the node workflows' settings: a later default never changes what a running janitor replays.
      args: [{ settings: this.janitorSettings }],
      workflowIdConflictPolicy: 'USE_EXISTING',
    });
  }
}
