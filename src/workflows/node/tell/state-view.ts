import { headlineFailure, NEXT_PASS_REASONS, sortedKeys, STUCK_CAUSES } from '../../../ipam/index.js';
import type { NextPassReason, StuckCause, VSwitchInfo } from '../../../ipam/index.js';
import type { GcResult, IpamState, NodeWorkflowState, PendingOperation } from '../../messages.js';
import type { CarriedState } from '../memory/carried-state.js';

/** What the last pass found, as the `state` query and the Web UI show it (run-local, rebuilt by the next pass). */
export interface PassSummary {
  ipamState: IpamState;
  skipReason?: string;
  instanceId?: string;
  lastPassEndMs?: number;
  lastPlan: NodeWorkflowState['lastPlan'];
  pods: NodeWorkflowState['pods'];
  /** Pods the last ready pass gave their IPs (what a `Recovered` Event counts). */
  podsServed?: number;
  enis: NodeWorkflowState['enis'];
  unschedulableEnis: string[];
  awaitingCniDelete: number;
  blockedVSwitches: { vSwitchId: string; blockedForMs: number }[];
  /** Every vSwitch of the node (its options and its ENIs'), as the last ready pass read them. */
  vSwitchIds?: string[];
  /** The node's vSwitches without a free address in the last ready pass's view (blocked or described so). */
  exhaustedVSwitches: string[];
  /** Set when the last pass found its waiting pods stuck (see `stuckWaitOf`). */
  stuck?: StuckCause | undefined;
}

export function initialPassSummary(): PassSummary {
  return {
    ipamState: 'Starting',
    lastPlan: { allocations: [], gc: [], unmetDemand: { normal: 0, erdma: 0 } },
    pods: { total: 0, withIp: 0, pending: 0 },
    enis: { total: 0, idleIps: 0 },
    unschedulableEnis: [],
    awaitingCniDelete: 0,
    blockedVSwitches: [],
    exhaustedVSwitches: [],
  };
}

/** The vSwitches without a free address as the worker reports them: blocked, or described with none. */
export function exhaustedVSwitchesOf(vSwitches: Record<string, VSwitchInfo>): string[] {
  return sortedKeys(vSwitches).filter((vSwitchId) => {
    const info = vSwitches[vSwitchId];
    return info !== undefined && (info.blockedForMs !== undefined || info.availableIpCount <= 0);
  });
}

/**
 * The vSwitches whose gaining addresses should wake the node (the `EniflowExhaustedVSwitches` search attribute):
 * while it is stuck on exhausted vSwitches, those it saw exhausted (all of its vSwitches when it saw none so, as
 * when the cloud's answer came after the pass read them); none otherwise.
 */
export function wakeOnVSwitchesOf(summary: Pick<PassSummary, 'stuck' | 'exhaustedVSwitches'>, all: string[]): string[] {
  if (summary.stuck !== 'vSwitchExhausted') return [];
  return summary.exhaustedVSwitches.length > 0 ? [...summary.exhaustedVSwitches] : [...all];
}

/** The vSwitches the worker holds as exhausted, and for how long still. */
export function blockedVSwitchesOf(
  vSwitches: Record<string, VSwitchInfo>,
): { vSwitchId: string; blockedForMs: number }[] {
  return sortedKeys(vSwitches).flatMap((vSwitchId) => {
    const blockedForMs = vSwitches[vSwitchId]?.blockedForMs;
    return blockedForMs === undefined ? [] : [{ vSwitchId, blockedForMs }];
  });
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** The failure a node is shown stuck on: the ledger's headline, the same wherever it is shown. */
export function stuckOnOf(state: Pick<CarriedState, 'failures'>): NodeWorkflowState['stuckOn'] {
  const headline = headlineFailure(state.failures ?? {});
  if (headline === undefined) return undefined;
  return {
    code: headline.code,
    since: iso(headline.sinceMs),
    operation: headline.operation,
    message: headline.message,
  };
}

/** The node's one query view: the last pass, the carried state, what is in flight and when the next pass is due. */
export function buildNodeView(input: {
  nodeName: string;
  summary: PassSummary;
  state: CarriedState;
  pendingOperations: readonly PendingOperation[];
  nextPass: { atMs: number; reason: NextPassReason } | undefined;
  ignoredSignals: readonly { name: string; at: string }[];
}): NodeWorkflowState {
  const { summary, state } = input;
  const view: NodeWorkflowState = {
    nodeName: input.nodeName,
    ipamState: summary.ipamState,
    reconcileCount: state.reconcileCount,
    signalsReceived: state.signalsReceived,
    lastPlan: summary.lastPlan,
    pods: { ...summary.pods },
    enis: { ...summary.enis },
    pendingOperations: input.pendingOperations.map((operation) => ({
      ...operation,
      startedAt: iso(operation.startedAtMs),
    })),
    lastErrors: state.lastErrors.map((error) => ({ ...error, at: iso(error.atMs) })),
    failedPasses: state.failureStreak,
  };
  if (summary.instanceId !== undefined) view.instanceId = summary.instanceId;
  if (summary.skipReason !== undefined) view.skipReason = summary.skipReason;
  if (summary.lastPassEndMs !== undefined) {
    view.lastReconcileMs = summary.lastPassEndMs;
    view.lastReconcileAt = iso(summary.lastPassEndMs);
  }
  if (input.nextPass !== undefined) {
    const reason =
      input.nextPass.reason === 'failureBackoff'
        ? `retry after ${state.failureStreak} failed pass(es) (backoff)`
        : NEXT_PASS_REASONS[input.nextPass.reason];
    view.nextPass = { at: iso(input.nextPass.atMs), reason };
  }
  const stuckOn = stuckOnOf(state);
  if (stuckOn !== undefined) view.stuckOn = stuckOn;
  const waitingSince = Object.values(state.pendingSince ?? {});
  if (waitingSince.length > 0) view.oldestPendingSince = iso(Math.min(...waitingSince));
  if (input.ignoredSignals.length > 0) view.ignoredSignals = [...input.ignoredSignals];
  if (state.unlistedEnis !== undefined) view.unlistedEnis = [...state.unlistedEnis];
  if (summary.unschedulableEnis.length > 0) view.unschedulableEnis = [...summary.unschedulableEnis];
  if (summary.awaitingCniDelete > 0) view.podsAwaitingCniDelete = summary.awaitingCniDelete;
  const intents = state.pendingCreates?.length ?? 0;
  if (intents > 0) view.pendingCreates = intents;
  const failing = Object.values(state.failures ?? {});
  if (failing.length > 0) view.failingOperations = failing.map((failure) => ({ ...failure }));
  if (summary.blockedVSwitches.length > 0) view.blockedVSwitches = summary.blockedVSwitches.map((b) => ({ ...b }));
  // Stuck means pods wait: once a pass has served them (shown before that pass ends and re-judges the wait), the
  // last pass's verdict no longer holds.
  if (summary.stuck !== undefined && summary.pods.pending > 0) {
    view.stuckWait = { cause: summary.stuck, message: STUCK_CAUSES[summary.stuck] };
    const wakeOn = wakeOnVSwitchesOf(summary, summary.vSwitchIds ?? []);
    if (wakeOn.length > 0) view.stuckWait.wakeOnVSwitches = wakeOn;
  }
  return view;
}

/**
 * A `gc` update on a node in failure backoff is answered at once: a pass would only meet the same failure, and the
 * caller would wait out the backoff to learn nothing new. The GC still runs with the next pass.
 */
export function gcDeferral(view: NodeWorkflowState): GcResult | undefined {
  const failed = view.failedPasses ?? 0;
  if (failed === 0) return undefined;
  const stuck = view.stuckOn;
  const cause =
    stuck === undefined
      ? ''
      : ` since ${stuck.since} on ${stuck.code}${stuck.operation === '' ? '' : ` (${stuck.operation})`}`;
  return {
    releasedIps: [],
    removedEnis: [],
    failed: [],
    deferred: `GC deferred: node in failure backoff${cause} after ${failed} failed pass(es); it runs with the next pass`,
  };
}
