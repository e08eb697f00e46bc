import { log, patched, setCurrentDetails, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { SearchAttributeUpdatePair } from '@temporalio/common';

import type { GcResult, IpamState, NodeWorkflowState, RecordedError } from './messages.js';
import {
  ERROR_CODE_SEARCH_ATTRIBUTE,
  ERROR_SINCE_SEARCH_ATTRIBUTE,
  INSTANCE_ID_SEARCH_ATTRIBUTE,
  IPAM_STATE_SEARCH_ATTRIBUTE,
  NODE_NAME_SEARCH_ATTRIBUTE,
} from '../shared/workflow-ids.js';

/**
 * Guards the commands added so the Web UI tells a node's story: `IpamState` at start, the error search attributes,
 * and the `gc` update answered at once in backoff. Histories recorded before it replay the old command sequence.
 */
const NODE_STORY_PATCH = 'node-story';

/** Unknown signal names kept for the `state` query. */
const MAX_IGNORED_SIGNALS = 5;

/** What the reconciler shows of itself, as the story needs it. */
interface StorySource {
  view(): NodeWorkflowState;
  currentIpamState(): IpamState;
  currentInstanceId(): string | undefined;
  failedPasses(): number;
}

/** The failure a node is stuck on, as published. */
interface StuckOn {
  code: string;
  sinceMs: number;
  operation: string;
  message: string;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** The error a failed pass is summed up by: the first with a cloud code, else the first. */
function headlineError(errors: readonly RecordedError[]): RecordedError | undefined {
  return errors.find((error) => error.code !== undefined) ?? errors[0];
}

/**
 * A node workflow's face in the Web UI and the `state` query: search attributes (`IpamState`, `InstanceId`,
 * `EniflowErrorCode`, `EniflowErrorSince`) upserted only when they change, since each upsert is a history event;
 * the current details (markdown, served by query, never written to history) refreshed at every pass; the unknown
 * signals received.
 */
export class NodeStory {
  private readonly nodeName: string;
  private readonly source: StorySource;
  private publishedState: IpamState | undefined;
  private publishedInstance: string | undefined;
  private stuckOn: StuckOn | undefined;
  private readonly ignoredSignals: { name: string; at: string }[] = [];
  /** Start of the pass in progress, if one is. */
  private passStartMs: number | undefined;

  constructor(input: { nodeName: string; source: StorySource }) {
    this.nodeName = input.nodeName;
    this.source = input.source;
    // A continued run inherits the previous run's search attributes: the story goes on where it was.
    const attributes = workflowInfo().typedSearchAttributes;
    this.publishedState = attributes.get(IPAM_STATE_SEARCH_ATTRIBUTE) as IpamState | undefined;
    this.publishedInstance = attributes.get(INSTANCE_ID_SEARCH_ATTRIBUTE);
    const code = attributes.get(ERROR_CODE_SEARCH_ATTRIBUTE);
    const since = attributes.get(ERROR_SINCE_SEARCH_ATTRIBUTE);
    if (code !== undefined && since !== undefined) {
      this.stuckOn = { code, sinceMs: since.getTime(), operation: '', message: '' };
    }
  }

  /** Before the first pass: `NodeName`, and `IpamState = Starting` unless the starter set it. */
  atStart(): void {
    const attributes = workflowInfo().typedSearchAttributes;
    const name: SearchAttributeUpdatePair[] =
      attributes.get(NODE_NAME_SEARCH_ATTRIBUTE) === this.nodeName
        ? []
        : [{ key: NODE_NAME_SEARCH_ATTRIBUTE, value: this.nodeName }];
    if (this.publishedState === undefined && patched(NODE_STORY_PATCH)) {
      upsertSearchAttributes([...name, { key: IPAM_STATE_SEARCH_ATTRIBUTE, value: 'Starting' }]);
      this.publishedState = 'Starting';
    } else if (name.length > 0) {
      upsertSearchAttributes(name);
    }
    this.refreshDetails();
  }

  passStarting(): void {
    this.passStartMs = Date.now();
    this.refreshDetails();
  }

  /** After a pass: publishes what changed; `passStartMs` tells the pass's own errors from older ones. */
  passEnded(passStartMs: number): void {
    this.passStartMs = undefined;
    const state = this.source.currentIpamState();
    const instanceId = this.source.currentInstanceId();
    const stateChange: SearchAttributeUpdatePair[] =
      state === this.publishedState ? [] : [{ key: IPAM_STATE_SEARCH_ATTRIBUTE, value: state }];
    const instanceChange: SearchAttributeUpdatePair[] =
      instanceId !== undefined && instanceId !== '' && instanceId !== this.publishedInstance
        ? [{ key: INSTANCE_ID_SEARCH_ATTRIBUTE, value: instanceId }]
        : [];
    const errorChange = this.nextStuckOn({ state, passStartMs });
    if (errorChange.changed && patched(NODE_STORY_PATCH)) {
      // One upsert for everything that changed: one history event.
      const stuck = errorChange.stuckOn;
      upsertSearchAttributes([
        ...stateChange,
        ...instanceChange,
        { key: ERROR_CODE_SEARCH_ATTRIBUTE, value: stuck?.code ?? null },
        { key: ERROR_SINCE_SEARCH_ATTRIBUTE, value: stuck === undefined ? null : new Date(stuck.sinceMs) },
      ]);
      this.stuckOn = stuck;
    } else {
      // The sequence recorded before the patch: state, then instance, each its own upsert.
      if (stateChange.length > 0) upsertSearchAttributes(stateChange);
      if (instanceChange.length > 0) upsertSearchAttributes(instanceChange);
      if (!errorChange.changed) this.stuckOn = errorChange.stuckOn;
    }
    this.publishedState = state;
    if (instanceChange.length > 0) this.publishedInstance = instanceId;
    this.refreshDetails();
  }

  /**
   * The failure to publish after a pass: none when the node is neither `Error` nor `InsufficientIP` or the pass
   * recorded no error; the since-when stays while passes keep failing, whatever the code.
   */
  private nextStuckOn(input: { state: IpamState; passStartMs: number }): {
    changed: boolean;
    stuckOn: StuckOn | undefined;
  } {
    const current = this.stuckOn;
    const failing = input.state === 'Error' || input.state === 'InsufficientIP';
    const passErrors = failing ? this.source.view().lastErrors.filter((error) => error.atMs >= input.passStartMs) : [];
    const headline = headlineError(passErrors);
    if (headline === undefined) return { changed: current !== undefined, stuckOn: undefined };
    const next: StuckOn = {
      code: headline.code ?? headline.type,
      sinceMs: current?.sinceMs ?? headline.atMs,
      operation: headline.operation,
      message: headline.message,
    };
    return { changed: current?.code !== next.code || current.sinceMs !== next.sinceMs, stuckOn: next };
  }

  /** A signal no handler knows: logged and kept for the `state` query, never acted on. */
  noteIgnoredSignal(name: string): void {
    log.warn('signal with an unknown name ignored', { signalName: name, nodeName: this.nodeName });
    this.ignoredSignals.push({ name, at: iso(Date.now()) });
    if (this.ignoredSignals.length > MAX_IGNORED_SIGNALS) this.ignoredSignals.shift();
    this.refreshDetails();
  }

  /** Whether a `gc` update should be answered at once: the node is in failure backoff (guarded by the patch). */
  gcDeferral(): GcResult | undefined {
    const failed = this.source.failedPasses();
    if (failed === 0 || !patched(NODE_STORY_PATCH)) return undefined;
    const stuck = this.stuckOn;
    const cause =
      stuck === undefined
        ? ''
        : ` since ${iso(stuck.sinceMs)} on ${stuck.code}${stuck.operation === '' ? '' : ` (${stuck.operation})`}`;
    return {
      releasedIps: [],
      removedEnis: [],
      failed: [],
      deferred: `GC deferred: node in failure backoff${cause} after ${failed} failed pass(es); it runs with the next pass`,
    };
  }

  /** The reconciler's view plus what only the story knows. */
  view(): NodeWorkflowState {
    const view = this.source.view();
    const stuck = this.stuckOn;
    if (stuck !== undefined) {
      view.stuckOn = {
        code: stuck.code,
        since: iso(stuck.sinceMs),
        operation: stuck.operation,
        message: stuck.message,
      };
    }
    if (this.ignoredSignals.length > 0) view.ignoredSignals = [...this.ignoredSignals];
    return view;
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
