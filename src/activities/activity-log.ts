import { activityInfo } from '@temporalio/activity';
import type { Info } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';

import type { Logger } from '../logger.js';
import { nodeNameOfWorkflowId } from '../shared/workflow-ids.js';

/**
 * The logger of the running activity: every line names the node, the workflow, the activity and the attempt, so
 * an operator can follow one node (`nodeName`) or one retried call (`attempt`) through the worker's logs.
 */
export function activityLogger(base: Logger, fields: Record<string, string> = {}): Logger {
  const info = activityInfo();
  const workflowId = info.workflowExecution?.workflowId ?? '';
  const nodeName = nodeNameOfWorkflowId(workflowId);
  return base.child({
    ...(nodeName === undefined ? {} : { nodeName }),
    workflowId,
    activity: info.activityType,
    attempt: info.attempt,
    ...fields,
  });
}

function durationMs(duration: unknown): number | undefined {
  return typeof duration === 'number' ? duration : undefined;
}

/** The failure type the server matches against `nonRetryableErrorTypes` (the SDK uses an Error's name). */
function failureType(error: unknown): string | undefined {
  if (error instanceof ApplicationFailure) return error.type ?? undefined;
  return error instanceof Error ? error.name : undefined;
}

/**
 * Whether the server will run another attempt after this one fails with `error` — the same rules it applies: a
 * non-retryable failure or type ends the activity, so does the last allowed attempt, and so does a next retry that
 * would start after the schedule-to-close deadline. A failure that will be retried is routine (logged at debug);
 * one that ends the activity is what the workflow then sees.
 */
export function attemptWillBeRetried(
  info: Pick<Info, 'attempt' | 'retryPolicy' | 'scheduledTimestampMs' | 'scheduleToCloseTimeoutMs'>,
  error: unknown,
  nowMs: number = Date.now(),
): boolean {
  if (error instanceof ApplicationFailure && error.nonRetryable) return false;
  const policy = info.retryPolicy;
  const type = failureType(error);
  if (type !== undefined && (policy?.nonRetryableErrorTypes ?? []).includes(type)) return false;
  const maximumAttempts = policy?.maximumAttempts ?? 0;
  if (maximumAttempts > 0 && info.attempt >= maximumAttempts) return false;
  if (info.scheduleToCloseTimeoutMs > 0) {
    const initial = durationMs(policy?.initialInterval) ?? 1_000;
    const backoff = initial * (policy?.backoffCoefficient ?? 2) ** (info.attempt - 1);
    const hinted = error instanceof ApplicationFailure ? durationMs(error.nextRetryDelay) : undefined;
    const delay = hinted ?? Math.min(backoff, durationMs(policy?.maximumInterval) ?? 100 * initial);
    if (nowMs + delay >= info.scheduledTimestampMs + info.scheduleToCloseTimeoutMs) return false;
  }
  return true;
}
