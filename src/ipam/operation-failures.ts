import type { NodeConditionSnapshot } from './conditions.js';
import { PENDING_REASONS } from './pending-reasons.js';
import type { PendingReason } from './pending-reasons.js';
import { formatRfc3339, parseRfc3339 } from './rfc3339.js';
import { CONDITION_REASONS } from './event-reasons.js';
import type { EniOperationsReason } from './event-reasons.js';

/**
 * One cause of failure that keeps coming back: a cloud call (`AttachNetworkInterface`) answered with one code
 * (`ServiceUnavailable`), counted over consecutive passes so events and conditions can say how long and how often.
 * An entry of the node's failure ledger (failure-ledger.ts).
 */
export interface LedgerEntry {
  /** The cloud call (ECS action name) or, for Kubernetes and the workflow's own steps, the step's name. */
  operation: string;
  /** The cloud's error code, or the failure type when the cloud gave none. */
  code: string;
  /** The failure type (`EcsTransient`, `EcsVSwitchExhausted`, …). */
  type: string;
  /** Calls made that failed this way (activity attempts, retries included). */
  attempts: number;
  /** Passes in a row in which it failed (absent in ledgers from before it was counted: 1). */
  passes?: number;
  sinceMs: number;
  lastMs: number;
  /** The latest failure's message, and the cloud's RequestId when it gave one. */
  message: string;
  requestId?: string;
}

/**
 * The one record of "what fails, since when" for a node, carried across passes and runs: its entries by
 * {@link failureKey}, in key order (see failure-ledger.ts).
 */
export type FailureLedger = Record<string, LedgerEntry>;

/** Failure types that say the node lacks capacity (the `SufficientIP` condition's business), not that calls fail. */
export const CAPACITY_FAILURE_TYPES: readonly string[] = ['EcsVSwitchExhausted', 'EcsQuotaExceeded'];

/** Failure types a later try may fix on its own: the pass after them is retried on the short schedule. */
export const TRANSIENT_FAILURE_TYPES: readonly string[] = [
  'EcsTransient',
  'EcsThrottled',
  'EcsUnknown',
  'EcsInvalidState',
  'KubeTransient',
  'KubeConflict',
];

/** Whether a failure type comes from a cloud call (ECS/VPC), as opposed to Kubernetes or the workflow itself. */
export function isCloudFailureType(type: string): boolean {
  return type.startsWith('Ecs') || type === 'EniAttachFailed';
}

export function failureKey(failure: { operation: string; code: string }): string {
  return `${failure.operation}/${failure.code}`;
}

/**
 * Which of two causes explains more: a failing cloud call first, then a capacity answer, then Kubernetes or the
 * workflow's own steps; within a rank the most attempts, then the oldest, then the key.
 */
export function byImportance(a: LedgerEntry, b: LedgerEntry): number {
  const rank = (failure: LedgerEntry): number =>
    !isCloudFailureType(failure.type) ? 2 : CAPACITY_FAILURE_TYPES.includes(failure.type) ? 1 : 0;
  return (
    rank(a) - rank(b) || b.attempts - a.attempts || a.sinceMs - b.sinceMs || failureKey(a).localeCompare(failureKey(b))
  );
}

/** The cloud cause that explains the most (see {@link byImportance}). */
export function mainFailure(failing: FailureLedger): LedgerEntry | undefined {
  return Object.values(failing)
    .filter((failure) => isCloudFailureType(failure.type))
    .sort(byImportance)[0];
}

/** `AttachNetworkInterface failed with ServiceUnavailable: 15 attempts since 2026-12-03T09:40:12Z`. */
export function describeFailure(failure: LedgerEntry): string {
  const attempts = `${failure.attempts} attempt${failure.attempts === 1 ? '' : 's'}`;
  return `${failure.operation} failed with ${failure.code}: ${attempts} since ${formatRfc3339(failure.sinceMs)}`;
}

/**
 * Why a pod waits, in words and as a series key: the failing call when one is the cause (whatever the plan hoped
 * for), else the plan's reason. The series changes only when the cause does, so one cause is one Event whose count
 * grows.
 */
export function pendingCause(input: { reason: PendingReason; failing: FailureLedger }): {
  cause: string;
  series: string;
} {
  const failure = mainFailure(input.failing);
  if (failure === undefined || input.reason === 'nodeNotReady' || input.reason === 'foreignIp') {
    return { cause: PENDING_REASONS[input.reason], series: input.reason };
  }
  const series = `${input.reason}:${failureKey(failure)}`;
  if (CAPACITY_FAILURE_TYPES.includes(failure.type)) {
    return { cause: `${PENDING_REASONS[input.reason]}; ${describeFailure(failure)}`, series };
  }
  const retry = TRANSIENT_FAILURE_TYPES.includes(failure.type) ? 'retried automatically' : 'retried on the next passes';
  return { cause: `${describeFailure(failure)}; ${retry}`, series };
}

/**
 * What a waiting pod's event says: its {@link pendingCause}, and always the node's workflow, where the whole story
 * is.
 */
export function pendingPodNotice(input: { reason: PendingReason; failing: FailureLedger; workflowId: string }): {
  message: string;
  series: string;
} {
  const { cause, series } = pendingCause(input);
  return { message: `no IP yet: ${cause} (workflow ${input.workflowId})`, series };
}

/** The cloud calls that fail (capacity answers are `SufficientIP`'s business), in key order. */
function failingCalls(failing: FailureLedger): LedgerEntry[] {
  return Object.values(failing).filter(
    (failure) => isCloudFailureType(failure.type) && !CAPACITY_FAILURE_TYPES.includes(failure.type),
  );
}

/** The node-level Warning about calls that fail, one series per set of causes. */
export function operationFailureNotice(input: {
  failing: FailureLedger;
  workflowId: string;
}): { message: string; series: string } | undefined {
  const calls = failingCalls(input.failing);
  if (calls.length === 0) return undefined;
  return {
    message: `${calls.map(describeFailure).join('; ')} (workflow ${input.workflowId})`,
    series: calls.map(failureKey).join(','),
  };
}

/**
 * The `Recovered` Event of the pass that ended a run of failing calls: what that pass served and what still waits,
 * so the newest Events do not read as pods still waiting once they are served.
 */
export function recoveredNotice(input: {
  pods: { total: number; withIp: number; pending: number; served: number };
  workflowId: string;
}): { message: string; series: string } {
  const { total, withIp, pending, served } = input.pods;
  const waiting = pending === 0 ? '' : `; ${pending} still wait`;
  return {
    message:
      `ENI and IP operations succeed again: this pass gave ${served} pod${served === 1 ? '' : 's'} their IPs, ` +
      `${withIp} of ${total} pods hold theirs${waiting} (workflow ${input.workflowId})`,
    series: 'recovery',
  };
}

export const ENI_OPERATIONS_CONDITION_TYPE = 'ENIOperationsFailing';

/** eniflow's `ENIOperationsFailing` condition on the core Node. */
export interface EniOperationsCondition {
  type: typeof ENI_OPERATIONS_CONDITION_TYPE;
  status: 'True' | 'False';
  reason: EniOperationsReason;
  message: string;
  lastHeartbeatTime: string;
  lastTransitionTime: string;
}

/** The condition is rewritten at most this often while its status is unchanged and its message still holds. */
const HEARTBEAT_MS = 5 * 60_000;

/** A shown attempt count is stale once the ledger counts this many times as many: a rewrite per doubling. */
const ATTEMPTS_GROWTH_FACTOR = 2;

/**
 * Whether a `True` condition's message no longer tells the ledger's story: a cause it does not name (or names no
 * more), another "since" (the failures stopped and started again), or attempts that have grown
 * {@link ATTEMPTS_GROWTH_FACTOR}-fold since it was written. Read back from the message itself (see
 * {@link describeFailure}), so it holds across restarts with nothing carried.
 */
function conditionMisleads(message: string, calls: readonly LedgerEntry[]): boolean {
  const shown = [...message.matchAll(/(\S+) failed with (\S+): (\d+) attempts? since ([0-9TZ:.+-]+)/g)];
  if (shown.length !== calls.length) return true;
  return calls.some((call) => {
    const match = shown.find(([, operation, code]) => operation === call.operation && code === call.code);
    if (match === undefined) return true;
    const [, , , attempts = '0', since] = match;
    return since !== formatRfc3339(call.sinceMs) || call.attempts >= Number(attempts) * ATTEMPTS_GROWTH_FACTOR;
  });
}

/**
 * The core Node's `ENIOperationsFailing` condition after a pass that reached the cloud: `True` while cloud calls
 * fail (capacity answers excluded: those set `SufficientIP` to `False`), `False` once they succeed again. A node
 * that never had it set gets none (nothing to say); `undefined` means there is nothing to patch. While calls keep
 * failing the message is rewritten only when it would mislead (another cause or "since", attempts grown twofold:
 * a handful of patches in an hour's outage) or with the heartbeat, so the Node is not patched on every pass.
 */
export function eniOperationsCondition(input: {
  failing: FailureLedger;
  existing: NodeConditionSnapshot | undefined;
  workflowId: string;
  nowMs: number;
}): EniOperationsCondition | undefined {
  const notice = operationFailureNotice({ failing: input.failing, workflowId: input.workflowId });
  const status = notice === undefined ? 'False' : 'True';
  const existing = input.existing;
  if (status === 'False' && existing?.status !== 'True') return undefined;
  const heartbeat = existing?.lastHeartbeatTime === undefined ? undefined : parseRfc3339(existing.lastHeartbeatTime);
  const same = existing?.status === status;
  const fresh = heartbeat !== undefined && input.nowMs - heartbeat < HEARTBEAT_MS;
  const holds = status === 'False' || !conditionMisleads(existing?.message ?? '', failingCalls(input.failing));
  if (same && fresh && holds) return undefined;
  const now = formatRfc3339(input.nowMs);
  return {
    type: ENI_OPERATIONS_CONDITION_TYPE,
    status,
    reason: (notice === undefined ? CONDITION_REASONS.CloudCallsSucceed : CONDITION_REASONS.CloudCallsFailing).reason,
    message: notice?.message ?? 'no ENI or IP operation is failing',
    lastHeartbeatTime: now,
    lastTransitionTime: same && existing.lastTransitionTime !== undefined ? existing.lastTransitionTime : now,
  };
}

/**
 * Failure types of a cloud call the worker sees answer again (`CloudRecoveryNotifier`: a success of the same call,
 * or its probe): a node failing on them alone may wait long, since the worker wakes it when the cloud answers.
 */
export const WATCHED_CALL_FAILURE_TYPES: readonly string[] = ['EcsTransient', 'EcsThrottled', 'EcsUnknown'];

/**
 * Delay cap before the pass after `streak` failed ones: 1 s doubling per failed pass, up to `maxMs`. When every
 * failure of the last pass may fix itself (a 5xx, throttling), that doubling is also capped by `transientMaxMs`, and
 * each repeat of the same failure (`repeats`: passes in a row in which the same call failed with the same code, from
 * the failure ledger) doubles that cap: a blip is retried soon, an outage is not hammered (the worker wakes the node
 * when the cloud answers again).
 */
export function failureBackoffMs(input: {
  streak: number;
  /** Passes in a row the last pass's most repeated failure failed, this one included (at least 1). */
  repeats?: number | undefined;
  maxMs: number;
  transientMaxMs?: number | undefined;
  lastFailureTypes: readonly string[];
}): number {
  const base = 1_000 * 2 ** Math.min(30, Math.max(0, input.streak - 1));
  const transient =
    input.transientMaxMs !== undefined &&
    input.lastFailureTypes.length > 0 &&
    input.lastFailureTypes.every((type) => TRANSIENT_FAILURE_TYPES.includes(type));
  if (!transient || input.transientMaxMs === undefined) return Math.min(input.maxMs, base);
  // A blip is retried as soon as before (the failed-pass doubling under `transientMaxMs`); only a repeat of the same
  // call and code lifts the cap, so causes that keep changing never wait past `transientMaxMs`.
  const doublings = Math.min(30, Math.max(0, (input.repeats ?? 1) - 1));
  return Math.min(input.maxMs, base, input.transientMaxMs * 2 ** doublings);
}
