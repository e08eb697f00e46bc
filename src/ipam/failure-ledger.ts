import {
  byImportance,
  CAPACITY_FAILURE_TYPES,
  failureKey,
  isCloudFailureType,
  WATCHED_CALL_FAILURE_TYPES,
} from './operation-failures.js';
import type { FailureLedger, LedgerEntry } from './operation-failures.js';

/*
 * The failure ledger (`FailureLedger`, operation-failures.ts): the pod and node Events, the core Node's
 * `ENIOperationsFailing` condition, the `state` query, the `EniflowErrorCode`/`EniflowErrorSince` search attributes
 * and the CLI all read it, so they always agree on the cause and on its since-when.
 *
 * An entry is keyed by operation and code. A new code for an operation that already fails keeps the operation's
 * since-when: a call throttled at 10:00 that answers 503 from 10:02 has been failing since 10:00.
 */

/** One failure as a pass met it: a ledger entry's own fields, before they are counted. */
type NotedFailure = Pick<LedgerEntry, 'operation' | 'code' | 'type' | 'attempts' | 'message'> & {
  requestId?: string | undefined;
};

function sortedLedger(entries: [string, LedgerEntry][]): FailureLedger {
  return Object.fromEntries(entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/**
 * Adds one failure: the same cause grows its count; a new code of a failing operation keeps the operation's since.
 * With the pass's start, the cause's first failure in a pass counts one more pass in a row (`passes`).
 */
export function noteFailure(input: {
  ledger: FailureLedger;
  failure: NotedFailure;
  nowMs: number;
  passStartMs?: number | undefined;
}): FailureLedger {
  const { failure, ledger } = input;
  const key = failureKey(failure);
  const previous = ledger[key];
  const operationSince = Object.values(ledger)
    .filter((entry) => entry.operation === failure.operation)
    .reduce((since, entry) => Math.min(since, entry.sinceMs), input.nowMs);
  const next: LedgerEntry = {
    operation: failure.operation,
    code: failure.code,
    type: failure.type,
    attempts: (previous?.attempts ?? 0) + Math.max(1, failure.attempts),
    sinceMs: previous?.sinceMs ?? operationSince,
    lastMs: input.nowMs,
    message: failure.message,
  };
  const passes = previous === undefined ? 1 : (previous.passes ?? 1);
  const newPass = previous !== undefined && input.passStartMs !== undefined && previous.lastMs < input.passStartMs;
  next.passes = newPass ? passes + 1 : passes;
  if (failure.requestId !== undefined) next.requestId = failure.requestId;
  return sortedLedger([...Object.entries(ledger).filter(([k]) => k !== key), [key, next]]);
}

/**
 * After a pass, the causes that are over. A pass that ran to its end tried everything it needed, so what did not
 * fail again is over (it succeeded, or is no longer needed). A pass that stopped early (node not ready, invalid
 * spec, daemon not ready) read the node but made no cloud call: only the Kubernetes and workflow causes that did
 * not fail again are over; cloud causes wait for a pass that tries them. A pass that threw settles nothing.
 */
export function settleFailures(input: {
  ledger: FailureLedger;
  passStartMs: number;
  scope: 'completed' | 'stoppedBeforeCloud' | 'threw';
}): FailureLedger {
  if (input.scope === 'threw') return input.ledger;
  return sortedLedger(
    Object.entries(input.ledger).filter(
      ([, entry]) =>
        entry.lastMs >= input.passStartMs || (input.scope === 'stoppedBeforeCloud' && isCloudFailureType(entry.type)),
    ),
  );
}

/** Whether cloud calls fail (capacity answers excluded): what `ENIOperationsFailing` and `Recovered` are about. */
export function hasFailingCalls(ledger: FailureLedger): boolean {
  return Object.values(ledger).some(
    (entry) => isCloudFailureType(entry.type) && !CAPACITY_FAILURE_TYPES.includes(entry.type),
  );
}

/** The one cause a node is shown stuck on: the ledger's most important entry (see `byImportance`). */
export function headlineFailure(ledger: FailureLedger): LedgerEntry | undefined {
  return Object.values(ledger).sort(byImportance)[0];
}

/** The failure types met since `sinceMs` (the last pass's), which decide how long the node backs off. */
export function failureTypesSince(ledger: FailureLedger, sinceMs: number): string[] {
  return [
    ...new Set(
      Object.values(ledger)
        .filter((entry) => entry.lastMs >= sinceMs)
        .map((entry) => entry.type),
    ),
  ].sort();
}

/**
 * How many passes in a row the last pass's most repeated cause has failed (its entries met since `sinceMs`), at
 * least 1: what lengthens the backoff of a failure that keeps coming back.
 */
export function failureRepeatsSince(ledger: FailureLedger, sinceMs: number): number {
  return Object.values(ledger)
    .filter((entry) => entry.lastMs >= sinceMs)
    .reduce((most, entry) => Math.max(most, entry.passes ?? 1), 1);
}

/**
 * The cloud calls (ECS actions) the ledger has failing with a retryable error (5xx, throttling), sorted: a pass
 * makes one attempt of them instead of the activity's retries, since the node already knows they fail.
 */
export function callsFailingRetryably(ledger: FailureLedger): string[] {
  return [
    ...new Set(
      Object.values(ledger)
        .filter((entry) => WATCHED_CALL_FAILURE_TYPES.includes(entry.type))
        .map((entry) => entry.operation),
    ),
  ].sort();
}
