import { TypedSearchAttributes } from '@temporalio/common';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { Client } from '@temporalio/client';

import { NO_DEGRADATION } from '../ipam/index.js';
import type { DegradationSetting } from '../ipam/index.js';
import { mapLimited } from '../shared/map-limited.js';
import { degradationSignal, reconcileSignal } from '../workflows/messages.js';
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
import { countNodesByState } from './state-counts.js';

/** The watcher's one way into Temporal: wake (and if needed start) a node's workflow. */
export interface WorkflowGateway {
  signalNode(signal: NodeSignal): Promise<void>;
  /** Starts the cluster's orphan-ENI janitor unless it runs already. */
  ensureJanitor?(): Promise<void>;
  /** Running node workflows by their `IpamState` search attribute (`Unknown`: not published yet). */
  countNodesByState?(): Promise<Record<string, number>>;
  /**
   * Signals `degradation` to every running node workflow (those of `nodeNames` and those Temporal lists) and the
   * janitor; workflows that are not running are skipped.
   */
  broadcastDegradation?(setting: DegradationSetting, nodeNames: readonly string[]): Promise<BroadcastResult>;
}

/** What a degradation broadcast reached. */
export interface BroadcastResult {
  signalled: number;
  /** Workflows that were not running (a node without one, the janitor not started). */
  notRunning: number;
  /** Workflow ids whose signal failed (to retry). */
  failed: string[];
}

/** Signals in flight at once in a broadcast: 200 nodes take a few round trips, not 200. */
const BROADCAST_CONCURRENCY = 32;

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
  private readonly degradation: () => DegradationSetting;
  /** With `workerInProcess`: the nodes whose workflow's sticky queue this process has reset. */
  private readonly stickyReset: Set<string> | undefined;

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
    /** The cluster's degradation setting now: carried by every start and signal (see `ReconcileReason`). */
    degradation?: () => DegradationSetting;
    /**
     * The worker runs in this process (`npm start -- --role all`). A node workflow's sticky queue, if it has one, is
     * then most likely the previous life's of this process, dead with it: its next task would wait out the sticky
     * timeout (3 s) before any worker could take it. So the first signal to each node resets the workflow's sticky
     * queue first (one extra call per node per process life; a live replica's cache costs one replay).
     */
    workerInProcess?: boolean;
  }) {
    this.client = options.client;
    this.taskQueue = options.taskQueue;
    this.nodeSettings = options.nodeSettings;
    this.janitorSettings = options.janitorSettings;
    this.instanceOf = options.instanceOf ?? (() => undefined);
    this.degradation = options.degradation ?? (() => NO_DEGRADATION);
    this.stickyReset = options.workerInProcess === true ? new Set() : undefined;
  }

  /** See `workerInProcess`. Best effort: without the reset the task only waits out the sticky timeout. */
  private async resetStickyOnce(nodeName: string): Promise<void> {
    if (this.stickyReset === undefined || this.stickyReset.has(nodeName)) return;
    this.stickyReset.add(nodeName);
    await this.client.workflowService
      .resetStickyTaskQueue({
        namespace: this.client.options.namespace,
        execution: { workflowId: nodeWorkflowId(nodeName) },
      })
      .catch(() => undefined);
  }

  async signalNode(signal: NodeSignal): Promise<void> {
    await this.resetStickyOnce(signal.nodeName);
    const degradation = this.degradation();
    await this.client.workflow.signalWithStart<typeof nodeIpamWorkflow, [typeof signal.reason]>(NODE_WORKFLOW_TYPE, {
      workflowId: nodeWorkflowId(signal.nodeName),
      taskQueue: this.taskQueue,
      // The settings are recorded input: a later change of a default never alters what this run replays.
      args: [{ nodeName: signal.nodeName, settings: this.nodeSettings, degradation }],
      signal: reconcileSignal,
      // The degradation rides along: a workflow that missed a broadcast is put right by its next signal.
      signalArgs: [{ ...signal.reason, degradation }],
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
    return countNodesByState(async (state) => {
      const clauses = state === undefined ? [] : [`${IPAM_STATE_SEARCH_ATTRIBUTE.name} = ${queryLiteral(state)}`];
      return (await this.client.workflow.count(nodeWorkflowsQuery(this.taskQueue, clauses))).count;
    });
  }

  async ensureJanitor(): Promise<void> {
    await this.client.workflow.start(JANITOR_WORKFLOW_TYPE, {
      workflowId: JANITOR_WORKFLOW_ID,
      taskQueue: this.taskQueue,
      // In full, like the node workflows' settings: a later default never changes what a running janitor replays.
      args: [{ settings: this.janitorSettings, degradation: this.degradation() }],
      workflowIdConflictPolicy: 'USE_EXISTING',
    });
  }

  async broadcastDegradation(setting: DegradationSetting, nodeNames: readonly string[]): Promise<BroadcastResult> {
    const ids = new Set(nodeNames.map((nodeName) => nodeWorkflowId(nodeName)));
    // Visibility may lag a start by a second; the informers' node names cover the newest nodes.
    for await (const execution of this.client.workflow.list({ query: nodeWorkflowsQuery(this.taskQueue) })) {
      ids.add(execution.workflowId);
    }
    ids.add(JANITOR_WORKFLOW_ID);
    const outcomes = await mapLimited([...ids].sort(), BROADCAST_CONCURRENCY, async (workflowId) => {
      try {
        await this.client.workflow.getHandle(workflowId).signal(degradationSignal, setting);
        return 'signalled' as const;
      } catch (error) {
        return error instanceof WorkflowNotFoundError ? ('notRunning' as const) : workflowId;
      }
    });
    return {
      signalled: outcomes.filter((outcome) => outcome === 'signalled').length,
      notRunning: outcomes.filter((outcome) => outcome === 'notRunning').length,
      failed: outcomes.filter((outcome) => outcome !== 'signalled' && outcome !== 'notRunning'),
    };
  }
}
