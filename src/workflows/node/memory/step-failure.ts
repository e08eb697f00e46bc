import { ActivityFailure, ApplicationFailure } from '@temporalio/workflow';

import type { EniAllocationError, EniOutcome, noteFailure, PendingCreate } from '../../../ipam/index.js';
import { ECS_ACTIVITY_APIS } from '../../../shared/ecs-budget.js';

/**
 * A step's failure: which step of a pass failed (and on which ENI), and how, reduced to what the workflow decides on.
 * One of the three names failures go by, with the step's report ({@link StepReport}) and the ledger's entry
 * (`LedgerEntry`, which {@link ledgerFailureOf} makes of it).
 */
export interface StepFailure {
  operation: string;
  eniId?: string;
  failure: {
    type: string;
    message: string;
    code?: string;
    requestId?: string;
    /** The cloud call that failed (ECS action), when the activity said. */
    call?: string;
    /** How many attempts the activity made before giving up. */
    attempts?: number;
  };
}

/**
 * A failed activity as the workflow decides on it. A classified cloud failure keeps its parts apart: `call` (the ECS
 * action), `code`, `requestId`, and as `message` what the cloud said, since the activity's own message
 * (`AttachNetworkInterface: ServiceUnavailable (RequestId …)`) repeats the other parts and would print them twice.
 */
export function failureOf(error: unknown): StepFailure['failure'] {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  if (cause instanceof ApplicationFailure) {
    const details = (cause.details?.[0] ?? {}) as {
      code?: unknown;
      requestId?: unknown;
      operation?: unknown;
      attempt?: unknown;
      message?: unknown;
    };
    const cloudSaid = typeof details.operation === 'string' && typeof details.message === 'string';
    const message = cloudSaid && details.message !== '' ? String(details.message) : cause.message;
    const failure: StepFailure['failure'] = { type: cause.type ?? 'Unknown', message };
    if (typeof details.code === 'string') failure.code = details.code;
    if (typeof details.requestId === 'string') failure.requestId = details.requestId;
    if (typeof details.operation === 'string') failure.call = details.operation;
    if (typeof details.attempt === 'number') failure.attempts = details.attempt;
    return failure;
  }
  return { type: 'Unknown', message: cause instanceof Error ? cause.message : String(cause) };
}

/**
 * The ECS action of each step that makes one call (its failure may not say, e.g. after a timeout): the activity's
 * own action, and the pass's OpenAPI listing step.
 */
const STEP_ACTIONS: Readonly<Record<string, string>> = {
  ...ECS_ACTIVITY_APIS,
  listNodeEnis: ECS_ACTIVITY_APIS.describeNodeEnis,
};

/**
 * The one name a failed step goes by wherever it is shown (the `state` query, the CLI, logs, Events): the ECS action
 * that failed, else the action of a one-call step, else the step (a Kubernetes write, a step of several calls).
 */
export function actionOf(step: Pick<StepFailure, 'operation' | 'failure'>): string {
  return step.failure.call ?? STEP_ACTIONS[step.operation] ?? step.operation;
}

/** A failed step in one line, each part once: `AttachNetworkInterface eni-1: ServiceUnavailable: … (RequestId …)`. */
export function describeStepFailure(step: StepFailure): string {
  const { failure } = step;
  const eni = step.eniId === undefined ? '' : ` ${step.eniId}`;
  const code = failure.code === undefined ? '' : `${failure.code}: `;
  const request = failure.requestId === undefined ? '' : ` (RequestId ${failure.requestId})`;
  return `${actionOf(step)}${eni}: ${code}${failure.message}${request}`;
}

/** The ledger's view of a failed step: keyed by the cloud call when known, else by the step. */
export function ledgerFailureOf(step: StepFailure): Parameters<typeof noteFailure>[0]['failure'] {
  const { failure } = step;
  return {
    operation: actionOf(step),
    code: failure.code ?? failure.type,
    type: failure.type,
    attempts: failure.attempts ?? 1,
    message: failure.message,
    requestId: failure.requestId,
  };
}

/**
 * What one planned step did: the changes to fold into the ENIs, the failures met, and what the next pass needs.
 * Steps never write the node's state: the pass folds their reports in plan order.
 */
export interface StepReport {
  outcomes: EniOutcome[];
  failed: StepFailure[];
  /** Conditions to set on the ENIs the step concerned (`InsufficientIP`, `OperationErr`). */
  eniErrors: { eniId: string; error: EniAllocationError }[];
  /** A create whose outcome is unknown, to be resolved by the next pass (re-issued or listed by its tag). */
  openIntent?: PendingCreate;
  /** Cloud calls that succeeded: only these say that the cloud answers again. */
  succeededCalls: number;
}

export function emptyReport(): StepReport {
  return { outcomes: [], failed: [], eniErrors: [], succeededCalls: 0 };
}

/** Adds what a later step of the same operation reported (its outcomes after `into`'s, in order) to `into`. */
export function appendReport(into: StepReport, from: StepReport): void {
  into.outcomes.push(...from.outcomes);
  into.failed.push(...from.failed);
  into.eniErrors.push(...from.eniErrors);
  into.succeededCalls += from.succeededCalls;
  if (into.openIntent === undefined && from.openIntent !== undefined) into.openIntent = from.openIntent;
}
