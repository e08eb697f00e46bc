import { CAPACITY_FAILURE_TYPES, WATCHED_CALL_FAILURE_TYPES } from './operation-failures.js';

/**
 * Why a node's waiting pods will not get an IP until something outside the node changes: its vSwitches have no
 * free address, its instance has no ENI slot and no IP room left, or the account's quota refuses. Retrying on a
 * timer cannot help; what helps is a pod leaving, the spec changing, a vSwitch gaining addresses, or an operator.
 */
export type StuckCause =
  'vSwitchExhausted' | 'instanceEniLimit' | 'quotaExceeded' | 'instanceNotFound' | 'cloudCallsFailing';

/** What wakes a node stuck on each cause, besides pod and spec changes (the watcher's signals) and `resync`. */
export const STUCK_CAUSES: Readonly<Record<StuckCause, string>> = {
  vSwitchExhausted:
    'its vSwitches have no free address; woken when one has free addresses for what this node waits for',
  instanceEniLimit: 'the instance has no ENI slot or IP room left; woken when a pod goes',
  quotaExceeded: 'the cloud refuses on a quota; woken by a resync once the quota is raised',
  instanceNotFound:
    "the node's instance (spec.nodeMetadata.instanceID) does not exist; woken by a spec change or a resync",
  cloudCallsFailing:
    'a cloud call keeps failing with a retryable error; woken when the worker sees that call answer again',
};

/**
 * Passes in a row a cloud call must fail with the same retryable error (5xx, throttling) before the node counts as
 * stuck on it: the retries before (within `transientFailureBackoffMs`, doubling) serve a blip; after them it is an
 * outage, which the worker watches for the whole cluster (`CloudRecoveryNotifier` and its probe).
 */
export const STUCK_AFTER_REPEATED_CALL_FAILURES = 4;

/**
 * Passes in a row that failed on capacity answers alone before the node counts as stuck: the first answers block
 * the vSwitch or ask for a resync, and the passes right after them may find another vSwitch or the missing ENIs.
 */
export const STUCK_AFTER_FAILED_PASSES = 3;

export interface StuckWaitInput {
  /** Pods still waiting for a new IP after the pass. */
  waitingPods: number;
  /** Allocations the pass planned (assigns, creates): a pass that acted may go further on the next. */
  plannedAllocations: number;
  /** Problems of the plan: an ENI's vSwitch, or every vSwitch for a new ENI, without free addresses. */
  planProblems: number;
  /** Demand the plan could not place (the instance's ENI and IP limits). */
  unmetDemand: number;
  /** Failure types of the pass; empty when it succeeded. */
  failureTypes: readonly string[];
  /** Passes failed in a row, this one included. */
  failureStreak: number;
  /** Passes in a row the pass's most repeated failure (same call, same code) failed, this one included. */
  failureRepeats?: number | undefined;
  /** Work the GC period retries besides waiting pods (IPs awaiting the daemon's CNI delete, GC, idle IPs above max). */
  otherWork: boolean;
  /** Creates whose outcome is unknown: the next pass must re-issue them soon. */
  openIntents: number;
}

/**
 * Whether the node's wait resolves by itself (`undefined`: keep the short retries) or is stuck, and on what. A pass
 * that planned nothing it could do while pods wait, and has nothing else pending, is stuck: another pass on a timer
 * would plan the same nothing. A pass failing on capacity answers alone is stuck once the short retries right
 * after the first answers ({@link STUCK_AFTER_FAILED_PASSES}) have had their chance; one that found the instance
 * missing is stuck at once (each retry would only meet the same answer). A pass failing only on retryable errors of
 * cloud calls the worker watches is stuck once the same error has come back {@link STUCK_AFTER_REPEATED_CALL_FAILURES}
 * times: the worker wakes it when the call answers again. Any other failure (a Kubernetes error, an ENI in a wrong
 * state) keeps its failure backoff.
 */
export function stuckWaitOf(input: StuckWaitInput): StuckCause | undefined {
  if (input.waitingPods === 0 || input.otherWork || input.openIntents > 0) return undefined;
  if (input.failureTypes.length > 0) return stuckOnFailures(input);
  if (input.plannedAllocations > 0) return undefined;
  if (input.planProblems > 0) return 'vSwitchExhausted';
  if (input.unmetDemand > 0) return 'instanceEniLimit';
  return undefined;
}

function stuckOnFailures(input: StuckWaitInput): StuckCause | undefined {
  const types = input.failureTypes;
  if (types.every((type) => WATCHED_CALL_FAILURE_TYPES.includes(type))) {
    return (input.failureRepeats ?? 1) >= STUCK_AFTER_REPEATED_CALL_FAILURES ? 'cloudCallsFailing' : undefined;
  }
  const persistent = types.every((type) => CAPACITY_FAILURE_TYPES.includes(type) || type === 'EcsInstanceNotFound');
  if (!persistent) return undefined;
  if (types.includes('EcsInstanceNotFound')) return 'instanceNotFound';
  if (input.failureStreak < STUCK_AFTER_FAILED_PASSES) return undefined;
  return types.includes('EcsQuotaExceeded') ? 'quotaExceeded' : 'vSwitchExhausted';
}

/**
 * When the next waiting pod is due its first Warning Event (`eventAfterMs` after it was first seen waiting), if one
 * is still to come after `afterMs`: a stuck node sleeping long must still tell its pods why in time.
 */
export function nextPendingPodEventMs(input: {
  pendingSince: Readonly<Record<string, number>>;
  eventAfterMs: number;
  afterMs: number;
}): number | undefined {
  let next: number | undefined;
  for (const since of Object.values(input.pendingSince)) {
    const due = since + input.eventAfterMs;
    if (due > input.afterMs && (next === undefined || due < next)) next = due;
  }
  return next;
}
