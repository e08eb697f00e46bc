/**
 * The Temporal failure an ECS activity throws for a classified cloud error: its type, retryability, details, and
 * the delay of its retry (jittered for throttling and 5xx).
 */
import { activityInfo } from '@temporalio/activity';
import type { Info } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';

import { ECS_RETRY_BACKOFF, ecsRetryDelayMs } from '../../ipam/index.js';
import type { EcsFailure } from './ecs-errors.js';

/** The attempt of the running activity (1 outside one), so the workflow can say how many calls failed. */
function currentAttempt(): number {
  try {
    return activityInfo().attempt;
  } catch {
    return 1;
  }
}

/** Failure types whose retry is paced by full jitter here rather than by the activity's retry policy. */
const JITTERED_FAILURES: readonly string[] = ['EcsThrottled', 'EcsTransient'];

/**
 * The Temporal failure for a classified ECS error: its type, retryability and details. A throttled or 5xx call is
 * retried after the cloud's hint, or after a full-jitter delay from the attempt number (ecsRetryDelayMs): the
 * retries of many nodes failing together spread out instead of coming back in step.
 */
export function ecsApplicationFailure(failure: EcsFailure, random: () => number = Math.random): ApplicationFailure {
  const attempt = currentAttempt();
  const jittered = failure.retryable && JITTERED_FAILURES.includes(failure.type);
  const nextRetryDelay =
    jittered || failure.retryAfterMs !== undefined
      ? ecsRetryDelayMs({ attempt, random: random(), retryAfterMs: failure.retryAfterMs, backoff: retryBackoff() })
      : undefined;
  return ApplicationFailure.create({
    type: failure.type,
    message: `${failure.operation}: ${failure.code}${failure.requestId === undefined ? '' : ` (RequestId ${failure.requestId})`}`,
    nonRetryable: !failure.retryable,
    details: [{ ...failure, attempt }],
    ...(nextRetryDelay === undefined ? {} : { nextRetryDelay }),
  });
}

/**
 * The jitter's base and cap: the activity's own retry policy (initial and maximum interval) when running in one, so
 * the policies in activity-policies.ts still say how patient each call is; else ECS_RETRY_BACKOFF.
 */
function retryBackoff(): { baseMs: number; capMs: number; floorMs: number } {
  let policy: Info['retryPolicy'];
  try {
    policy = activityInfo().retryPolicy;
  } catch {
    return ECS_RETRY_BACKOFF;
  }
  const baseMs = msOf(policy?.initialInterval) ?? ECS_RETRY_BACKOFF.baseMs;
  const capMs = msOf(policy?.maximumInterval) ?? ECS_RETRY_BACKOFF.capMs;
  return { baseMs, capMs: Math.max(baseMs, capMs), floorMs: ECS_RETRY_BACKOFF.floorMs };
}

/** The activity's Info carries the policy's durations as milliseconds. */
function msOf(duration: unknown): number | undefined {
  return typeof duration === 'number' && duration > 0 ? duration : undefined;
}
