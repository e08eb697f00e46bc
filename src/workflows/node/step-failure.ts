import { ActivityFailure, ApplicationFailure } from '@temporalio/workflow';

import type { EniAllocationError, EniOutcome, LedgerFailure, PendingCreate } from '../../ipam/index.js';

/** A failure of one activity, reduced to what the workflow decides on. */
export interface StepFailure {
  type: string;
  message: string;
  code?: string;
  requestId?: string;
  /** The cloud call that failed (ECS action), when the activity said. */
  call?: string;
  /** How many attempts the activity made before giving up. */
  attempts?: number;
}

export function stepFailure(error: unknown): StepFailure {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  if (cause instanceof ApplicationFailure) {
    const details = (cause.details?.[0] ?? {}) as {
      code?: unknown;
      requestId?: unknown;
      operation?: unknown;
      attempt?: unknown;
    };
    const failure: StepFailure = { type: cause.type ?? 'Unknown', message: cause.message };
    if (typeof details.code === 'string') failure.code = details.code;
    if (typeof details.requestId === 'string') failure.requestId = details.requestId;
    if (typeof details.operation === 'string') failure.call = details.operation;
    if (typeof details.attempt === 'number') failure.attempts = details.attempt;
    return failure;
  }
  return { type: 'Unknown', message: cause instanceof Error ? cause.message : String(cause) };
}

/** A failed step of a pass: which step (and ENI), and how it failed. */
export interface FailedStep {
  operation: string;
  eniId?: string;
  failure: StepFailure;
}

/** The ledger's view of a failed step: keyed by the cloud call when known, else by the step. */
export function ledgerFailureOf(step: FailedStep): LedgerFailure {
  const { failure } = step;
  return {
    operation: failure.call ?? step.operation,
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
  failed: FailedStep[];
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
