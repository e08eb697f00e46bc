/**
 * Per-action token buckets refilled continuously: `perMinute` calls per minute with a burst of `perMinute`, the
 * same shape as Terway's client-side limiter. Actions without a limit pass freely.
 */
export class RateLimiter {
  private limits: Record<string, number> = {};
  private readonly buckets = new Map<string, { tokens: number; updatedAtMs: number }>();

  /** Replaces every limit (`*` = default for actions without their own); buckets start full. */
  configure(limitsPerMinute: Record<string, number>): void {
    this.limits = { ...limitsPerMinute };
    this.buckets.clear();
  }

  /** Takes one token for `action`; when none is left, returns how long until one is (ms). */
  take(request: { action: string; nowMs: number }): { allowed: true } | { allowed: false; retryAfterMs: number } {
    const perMinute = this.limits[request.action] ?? this.limits['*'];
    if (perMinute === undefined) return { allowed: true };
    const refillPerMs = perMinute / 60_000;
    let bucket = this.buckets.get(request.action);
    if (bucket === undefined) {
      bucket = { tokens: perMinute, updatedAtMs: request.nowMs };
      this.buckets.set(request.action, bucket);
    }
    bucket.tokens = Math.min(perMinute, bucket.tokens + (request.nowMs - bucket.updatedAtMs) * refillPerMs);
    bucket.updatedAtMs = request.nowMs;
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { allowed: true };
    }
    const retryAfterMs = refillPerMs > 0 ? Math.ceil((1 - bucket.tokens) / refillPerMs) : 60_000;
    return { allowed: false, retryAfterMs };
  }
}
