/**
 * Full-jitter backoff (AWS Architecture Blog, "Exponential Backoff And Jitter"): wait a uniformly random time between
 * 0 and the exponential cap. Under an account-wide `Throttling` every node and every activity fails at once; with a
 * fixed backoff they all come back in the same second, and the cloud throttles them again. Drawn uniformly, the
 * retries of N callers spread over the whole window. The random value is an input, so workflows pass their seeded
 * `Math.random()` (the same on replay) and tables test the arithmetic.
 */

/** The exponential cap of retry `attempt` (1 = the first retry): `baseMs · 2^(attempt−1)`, at most `capMs`. */
export function exponentialCapMs(input: { attempt: number; baseMs: number; capMs: number }): number {
  const exponent = Math.min(Math.max(0, input.attempt - 1), 30);
  return Math.min(input.capMs, input.baseMs * 2 ** exponent);
}

/**
 * A full-jitter delay: `floorMs + random · (capMs − floorMs)`, rounded to a millisecond. `random` is in [0, 1); a
 * value outside is clamped, so a bad input cannot make a negative or longer-than-cap wait.
 */
export function fullJitterMs(input: { capMs: number; random: number; floorMs?: number }): number {
  const floor = Math.min(input.floorMs ?? 0, input.capMs);
  const random = Math.min(Math.max(input.random, 0), 1);
  return Math.round(floor + random * (input.capMs - floor));
}

/** Base and cap of the retry delay of a throttled or 5xx ECS call (the activity's `nextRetryDelay`). */
export const ECS_RETRY_BACKOFF = { baseMs: 1_000, capMs: 30_000, floorMs: 100 } as const;

/**
 * The delay before retrying a cloud call that failed on attempt `attempt` (Temporal's 1-based attempt): the cloud's
 * own hint when it gave one (`x-acs-retry-after`), else full jitter under `base · 2^(attempt−1)` capped. The floor
 * keeps a retry from landing in the same instant as the failure that caused it.
 */
export function ecsRetryDelayMs(input: {
  attempt: number;
  random: number;
  retryAfterMs?: number | undefined;
  backoff?: { baseMs: number; capMs: number; floorMs: number };
}): number {
  if (input.retryAfterMs !== undefined && input.retryAfterMs > 0) return Math.round(input.retryAfterMs);
  const backoff = input.backoff ?? ECS_RETRY_BACKOFF;
  const capMs = exponentialCapMs({ attempt: input.attempt, baseMs: backoff.baseMs, capMs: backoff.capMs });
  return fullJitterMs({ capMs, random: input.random, floorMs: backoff.floorMs });
}
