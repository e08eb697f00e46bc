import { setTimeout as sleep } from 'node:timers/promises';

import type { EcsOperation } from './ecs-operations.js';

/**
 * One token bucket per ECS operation (calls per minute, burst equal to the per-minute rate, as Terway's
 * `rate.NewLimiter(v/60, v)`), shared by every activity in the worker process. Only for calls no task queue budgets
 * (the local vSwitch read, see LOCAL_ECS_ACTIVITIES in src/shared/ecs-budget.ts): an operation without a rate here,
 * or with a rate of 0, is not limited.
 */
export class EcsRateLimiter {
  private readonly buckets = new Map<EcsOperation, { tokens: number; updatedMs: number }>();
  private readonly callsPerMinute: Readonly<Partial<Record<EcsOperation, number>>>;
  private readonly nowMs: () => number;

  constructor(options: { callsPerMinute: Readonly<Partial<Record<EcsOperation, number>>>; nowMs?: () => number }) {
    this.callsPerMinute = options.callsPerMinute;
    this.nowMs = options.nowMs ?? (() => performance.now());
  }

  /** Takes a token if one is there; otherwise says how long until one will be. */
  tryTake(operation: EcsOperation): { ok: true } | { ok: false; waitMs: number } {
    const rate = this.callsPerMinute[operation] ?? 0;
    if (rate <= 0) return { ok: true };
    const now = this.nowMs();
    const bucket = this.buckets.get(operation) ?? { tokens: rate, updatedMs: now };
    bucket.tokens = Math.min(rate, bucket.tokens + ((now - bucket.updatedMs) * rate) / 60_000);
    bucket.updatedMs = now;
    this.buckets.set(operation, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { ok: true };
    }
    return { ok: false, waitMs: Math.ceil(((1 - bucket.tokens) * 60_000) / rate) };
  }

  /** Waits for a token, giving up early when `signal` aborts (the activity was cancelled). */
  async take(operation: EcsOperation, signal?: AbortSignal): Promise<void> {
    for (;;) {
      const taken = this.tryTake(operation);
      if (taken.ok) return;
      await sleep(taken.waitMs, undefined, signal === undefined ? {} : { signal });
    }
  }
}
