import { log, setCurrentDetails, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { SearchAttributeUpdatePair } from '@temporalio/common';

import type { NodeWorkflowState } from '../../messages.js';
import {
  ERROR_CODE_SEARCH_ATTRIBUTE,
  ERROR_SINCE_SEARCH_ATTRIBUTE,
  EXHAUSTED_VSWITCHES_SEARCH_ATTRIBUTE,
  INSTANCE_ID_SEARCH_ATTRIBUTE,
  IPAM_STATE_SEARCH_ATTRIBUTE,
  NODE_NAME_SEARCH_ATTRIBUTE,
} from '../../../shared/workflow-ids.js';

/** Unknown signal names kept for the `state` query. */
const MAX_IGNORED_SIGNALS = 5;

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/**
 * A node workflow's face in the Web UI: search attributes (`NodeName`, `IpamState`, `InstanceId`,
 * `EniflowErrorCode`, `EniflowErrorSince`) upserted only when they change, since each upsert is a history event;
 * the current details (markdown, served by query, never written to history) refreshed at every pass; and the
 * unknown signals received.
 */
export class NodeStory {
  private readonly nodeName: string;
  private readonly view: () => NodeWorkflowState;
  private published: {
    state?: string;
    instanceId?: string;
    errorCode?: string;
    errorSinceMs?: number;
    /** `EniflowExhaustedVSwitches`, joined: `''` when absent. */
    exhaustedVSwitches?: string;
  };
  readonly ignoredSignals: { name: string; at: string }[] = [];
  /** Start of the pass in progress, if one is. */
  private passStartMs: number | undefined;

  constructor(input: { nodeName: string; view: () => NodeWorkflowState }) {
    this.nodeName = input.nodeName;
    this.view = input.view;
    // A continued run inherits the previous run's search attributes: only changes from those are upserted.
    const attributes = workflowInfo().typedSearchAttributes;
    const since = attributes.get(ERROR_SINCE_SEARCH_ATTRIBUTE);
    this.published = {};
    const state = attributes.get(IPAM_STATE_SEARCH_ATTRIBUTE);
    const instanceId = attributes.get(INSTANCE_ID_SEARCH_ATTRIBUTE);
    const errorCode = attributes.get(ERROR_CODE_SEARCH_ATTRIBUTE);
    if (state !== undefined) this.published.state = state;
    if (instanceId !== undefined) this.published.instanceId = instanceId;
    if (errorCode !== undefined) this.published.errorCode = errorCode;
    if (since !== undefined) this.published.errorSinceMs = since.getTime();
    this.published.exhaustedVSwitches = (attributes.get(EXHAUSTED_VSWITCHES_SEARCH_ATTRIBUTE) ?? []).join(',');
  }

  /** Before the first pass: `NodeName`, and `IpamState = Starting` unless the starter set it. */
  atStart(): void {
    const updates: SearchAttributeUpdatePair[] = [];
    if (workflowInfo().typedSearchAttributes.get(NODE_NAME_SEARCH_ATTRIBUTE) !== this.nodeName) {
      updates.push({ key: NODE_NAME_SEARCH_ATTRIBUTE, value: this.nodeName });
    }
    if (this.published.state === undefined) {
      updates.push({ key: IPAM_STATE_SEARCH_ATTRIBUTE, value: 'Starting' });
      this.published.state = 'Starting';
    }
    if (updates.length > 0) upsertSearchAttributes(updates);
    this.refreshDetails();
  }

  passStarting(): void {
    this.passStartMs = Date.now();
    this.refreshDetails();
  }

  /**
   * A cloud call of the running pass failed: the node shows `IpamState = Error` now, not when the pass ends (its
   * compensation, status write and notices may take seconds more). One upsert when the node turns to Error, none
   * while it already shows it, and none on a healthy node.
   */
  callFailed(): void {
    if (this.published.state === 'Error') return;
    upsertSearchAttributes([{ key: IPAM_STATE_SEARCH_ATTRIBUTE, value: 'Error' }]);
    this.published.state = 'Error';
  }

  /** After a pass: one upsert of whatever changed (one history event), none when nothing did. */
  passEnded(): void {
    this.passStartMs = undefined;
    const view = this.view();
    const updates: SearchAttributeUpdatePair[] = [];
    if (view.ipamState !== this.published.state) {
      updates.push({ key: IPAM_STATE_SEARCH_ATTRIBUTE, value: view.ipamState });
      this.published.state = view.ipamState;
    }
    const instanceId = view.instanceId;
    if (instanceId !== undefined && instanceId !== '' && instanceId !== this.published.instanceId) {
      updates.push({ key: INSTANCE_ID_SEARCH_ATTRIBUTE, value: instanceId });
      this.published.instanceId = instanceId;
    }
    const stuck = view.stuckOn;
    const sinceMs = stuck === undefined ? undefined : Date.parse(stuck.since);
    if (stuck?.code !== this.published.errorCode || sinceMs !== this.published.errorSinceMs) {
      updates.push(
        { key: ERROR_CODE_SEARCH_ATTRIBUTE, value: stuck?.code ?? null },
        { key: ERROR_SINCE_SEARCH_ATTRIBUTE, value: sinceMs === undefined ? null : new Date(sinceMs) },
      );
      this.published = { ...this.published };
      delete this.published.errorCode;
      delete this.published.errorSinceMs;
      if (stuck !== undefined && sinceMs !== undefined) {
        this.published.errorCode = stuck.code;
        this.published.errorSinceMs = sinceMs;
      }
    }
    // What the worker's vSwitch watch looks for: the vSwitches whose gaining addresses should wake this node.
    const wakeOn = view.stuckWait?.wakeOnVSwitches ?? [];
    if (wakeOn.join(',') !== (this.published.exhaustedVSwitches ?? '')) {
      updates.push({ key: EXHAUSTED_VSWITCHES_SEARCH_ATTRIBUTE, value: wakeOn.length > 0 ? wakeOn : null });
      this.published.exhaustedVSwitches = wakeOn.join(',');
    }
    if (updates.length > 0) upsertSearchAttributes(updates);
    this.refreshDetails();
  }

  /** A signal no handler knows: logged and kept for the `state` query, never acted on. */
  noteIgnoredSignal(name: string): void {
    log.warn('signal with an unknown name ignored', { signalName: name, nodeName: this.nodeName });
    this.ignoredSignals.push({ name, at: iso(Date.now()) });
    if (this.ignoredSignals.length > MAX_IGNORED_SIGNALS) this.ignoredSignals.shift();
    this.refreshDetails();
  }

  private refreshDetails(): void {
    setCurrentDetails(
      nodeDetails({ view: this.view(), ...(this.passStartMs === undefined ? {} : { passStartMs: this.passStartMs }) }),
    );
  }
}

/** The current details of a node workflow: markdown, a few lines, most telling first. */
export function nodeDetails(input: { view: NodeWorkflowState; passStartMs?: number }): string {
  const { view } = input;
  const lines: string[] = [];
  const pods =
    view.pods.pending > 0
      ? `${view.pods.total} pods, **${view.pods.pending} waiting for an IP**` +
        (view.oldestPendingSince === undefined ? '' : ` (oldest since ${view.oldestPendingSince})`)
      : `${view.pods.total} pods, none waiting`;
  lines.push(
    `**${view.ipamState}**${view.instanceId === undefined ? '' : ` on \`${view.instanceId}\``} · ${pods} · ` +
      `${view.enis.total} ENIs, ${view.enis.idleIps} idle IPs`,
  );
  if (view.skipReason !== undefined) lines.push(`Waiting: ${view.skipReason}`);
  if (view.stuckOn !== undefined) {
    const where = view.stuckOn.operation === '' ? '' : ` in ${view.stuckOn.operation}`;
    const message = view.stuckOn.message === '' ? '' : `: ${view.stuckOn.message.slice(0, 200)}`;
    lines.push(`Error \`${view.stuckOn.code}\`${where} since ${view.stuckOn.since}${message}`);
  }
  if (view.stuckWait !== undefined) {
    const on = view.stuckWait.wakeOnVSwitches;
    lines.push(`Pods stuck: ${view.stuckWait.message}${on === undefined ? '' : ` (${on.join(', ')})`}`);
  }
  if ((view.failedPasses ?? 0) > 0) lines.push(`${view.failedPasses ?? 0} failed pass(es) in a row`);
  if (input.passStartMs !== undefined) {
    lines.push(`Pass running since ${iso(input.passStartMs)}`);
  } else if (view.nextPass !== undefined) {
    lines.push(`Next pass by ${view.nextPass.at}: ${view.nextPass.reason}`);
  }
  if (view.lastReconcileAt !== undefined) lines.push(`Last pass #${view.reconcileCount} ended ${view.lastReconcileAt}`);
  if (view.ignoredSignals !== undefined) {
    lines.push(`Ignored unknown signals: ${view.ignoredSignals.map((signal) => `\`${signal.name}\``).join(', ')}`);
  }
  return lines.join('\n');
}
