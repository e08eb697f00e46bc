/**
 * Idle IP reclaim (Terway v1.16.0, `docs/idle-ip-reclaim.md`, `calculateToDel`): once a node's pool has gone
 * `after` without allocation, every jittered `interval` it releases up to `batchSize` idle addresses more than the
 * usual excess over `maxPoolSize`, never going below `minPoolSize`.
 *
 * Unlike Terway, which polls every pool period, the due time is planned ahead so the workflow can sleep on one
 * durable timer: while the pool is busy the first batch is planned at `lastModifiedTime + after + interval'`, and a
 * pool at `minPoolSize` plans none (no timer). The jitter is a hash of the node name and the time the interval
 * starts, not a random draw: the same on every replay and query, and different from node to node, which is what
 * the jitter is for (nodes idle since the same moment do not reclaim together).
 */

import { parseGoDuration } from './go-duration.js';
import type { PoolSpec } from './node-model.js';
import { jitterOf } from './next-pass.js';

/** Terway daemon's `idle_ip_reclaim_interval` default, used when the CR has no interval. */
export const DEFAULT_RECLAIM_INTERVAL_MS = 10 * 60_000;
/** Terway's `idle_ip_reclaim_jitter_factor` default, used when the CR has none (or zero, as Terway does). */
export const DEFAULT_RECLAIM_JITTER_FACTOR = 0.1;

/** `spec.pool.reclaim`, parsed. */
export interface IdleReclaimPolicy {
  afterMs: number;
  intervalMs: number;
  batchSize: number;
  /** In (0, 1]: each interval is stretched by up to this fraction (Terway's `wait.Jitter`). */
  jitterFactor: number;
}

/** The node's reclaim policy, or undefined when reclaim is off: no `after`, or no positive `batchSize`. */
export function idleReclaimPolicyOf(pool: PoolSpec | undefined): IdleReclaimPolicy | undefined {
  const reclaim = pool?.reclaim;
  const afterMs = reclaim?.after === undefined ? undefined : parseGoDuration(reclaim.after);
  const batchSize = reclaim?.batchSize ?? 0;
  if (afterMs === undefined || afterMs < 0 || batchSize <= 0) return undefined;
  const intervalMs = reclaim?.interval === undefined ? undefined : parseGoDuration(reclaim.interval);
  const factor = reclaim?.jitterFactor === undefined ? Number.NaN : Number(reclaim.jitterFactor);
  return {
    afterMs,
    intervalMs: intervalMs !== undefined && intervalMs > 0 ? intervalMs : DEFAULT_RECLAIM_INTERVAL_MS,
    batchSize,
    jitterFactor: factor > 0 ? Math.min(1, factor) : DEFAULT_RECLAIM_JITTER_FACTOR,
  };
}

/** The interval starting at `startMs`, stretched by a per-node, per-start fraction of `jitterFactor`. */
export function jitteredReclaimIntervalMs(input: {
  policy: IdleReclaimPolicy;
  nodeName: string;
  startMs: number;
}): number {
  const fraction = jitterOf(`${input.nodeName}/idle-reclaim/${input.startMs}`);
  return Math.round(input.policy.intervalMs * (1 + input.policy.jitterFactor * fraction));
}

export interface IdleReclaimInput {
  policy: IdleReclaimPolicy | undefined;
  nodeName: string;
  nowMs: number;
  /** `status.lastModifiedTime` (after this pass's own bump), epoch ms; absent: never modified. */
  lastModifiedMs: number | undefined;
  /** `status.nextIdleIPReclaimTime` as the CR has it, epoch ms. */
  plannedMs: number | undefined;
  /** Idle addresses of the sizing family on schedulable InUse ENIs (`countIdleIps`). */
  idle: number;
  maxPoolSize: number;
  minPoolSize: number;
  /**
   * The fewest idle addresses a release could leave (primary IPs of ENIs that must stay cannot go); default 0.
   * Reclaim stops there as at `minPoolSize`, so a node never wakes for a batch that could release nothing.
   */
  reachableIdleFloor?: number | undefined;
}

export interface IdleReclaimDecision {
  /** Idle addresses to release now on top of the excess over `maxPoolSize`. */
  extraRelease: number;
  /** The next batch's due time (the new `nextIdleIPReclaimTime` and the workflow timer); absent: none planned. */
  nextMs: number | undefined;
}

/**
 * Whether a reclaim batch is due now and when the next one is. Nothing is planned when reclaim is off or the pool,
 * once its excess over `maxPoolSize` is gone, is at `minPoolSize` or below: such a node sets no timer.
 */
export function planIdleReclaim(input: IdleReclaimInput): IdleReclaimDecision {
  const { policy, nowMs } = input;
  const none: IdleReclaimDecision = { extraRelease: 0, nextMs: undefined };
  if (policy === undefined) return none;
  const excess = Math.max(0, input.idle - input.maxPoolSize);
  const reclaimable = input.idle - excess - Math.max(input.minPoolSize, input.reachableIdleFloor ?? 0);
  if (reclaimable <= 0) return none;
  const after = (startMs: number): number =>
    startMs + jitteredReclaimIntervalMs({ policy, nodeName: input.nodeName, startMs });
  const quietFromMs = input.lastModifiedMs === undefined ? undefined : input.lastModifiedMs + policy.afterMs;
  // Still busy: the first batch comes one interval after the pool has been quiet for `after`.
  if (quietFromMs !== undefined && nowMs < quietFromMs) return { extraRelease: 0, nextMs: after(quietFromMs) };
  const planned = input.plannedMs;
  // No batch planned yet (or one planned before the last modification): as Terway, start an interval now.
  if (planned === undefined || (quietFromMs !== undefined && planned < quietFromMs)) {
    return { extraRelease: 0, nextMs: after(nowMs) };
  }
  if (nowMs < planned) return { extraRelease: 0, nextMs: planned };
  const extraRelease = Math.min(policy.batchSize, reclaimable);
  return { extraRelease, nextMs: reclaimable - extraRelease > 0 ? after(nowMs) : undefined };
}
