/**
 * The pool bookkeeping a ready pass writes to the Node CR status: warm-up progress, `lastModifiedTime` and the
 * idle reclaim plan (`nextIdleIPReclaimTime`). Times are whole seconds, as `metav1.Time` keeps them, so what a pass
 * computes is what the next pass reads back: an idle node computes the same fields again and writes nothing.
 */

import { idleReclaimPolicyOf, planIdleReclaim } from './idle-reclaim.js';
import type { NodeSpec, NodeStatus } from './node-model.js';
import { formatRfc3339, parseRfc3339 } from './rfc3339.js';
import { advanceWarmUp, warmUpDemand } from './warm-up.js';
import type { WarmUpStatus } from './warm-up.js';

/** The status fields of warm-up and idle reclaim. */
export type PoolStatusFields = Pick<
  NodeStatus,
  'lastModifiedTime' | 'nextIdleIPReclaimTime' | 'warmUpTarget' | 'warmUpAllocatedCount' | 'warmUpCompleted'
>;

export const POOL_STATUS_FIELDS = [
  'lastModifiedTime',
  'nextIdleIPReclaimTime',
  'warmUpTarget',
  'warmUpAllocatedCount',
  'warmUpCompleted',
] as const satisfies readonly (keyof PoolStatusFields)[];

/** The pool fields of a status, and only those. */
export function poolStatusOf(status: NodeStatus | undefined): PoolStatusFields {
  return {
    ...(status?.lastModifiedTime === undefined ? {} : { lastModifiedTime: status.lastModifiedTime }),
    ...(status?.nextIdleIPReclaimTime === undefined ? {} : { nextIdleIPReclaimTime: status.nextIdleIPReclaimTime }),
    ...(status?.warmUpTarget === undefined ? {} : { warmUpTarget: status.warmUpTarget }),
    ...(status?.warmUpAllocatedCount === undefined ? {} : { warmUpAllocatedCount: status.warmUpAllocatedCount }),
    ...(status?.warmUpCompleted === undefined ? {} : { warmUpCompleted: status.warmUpCompleted }),
  };
}

export interface PoolStatusPlan {
  fields: PoolStatusFields;
  /** Idle addresses to release now beyond the excess over `maxPoolSize` (an idle reclaim batch). */
  extraRelease: number;
  /** When the next reclaim batch is due (whole seconds, as written); absent: no timer. */
  nextReclaimMs: number | undefined;
  /**
   * Warm-up got addresses in this pass and still wants more (a new ENI takes at most 10, the rest is assigned by the
   * next pass): the next pass follows at once. A pass that got nothing sets no follow-up, so a warm-up the node
   * cannot complete (instance or vSwitch full) does not spin.
   */
  warmUpContinues: boolean;
  /** Warm-up counted addresses in this pass: the pool period starts again (see `poolShrinkGate`). */
  warmUpGotAddresses: boolean;
}

/**
 * What a ready pass writes after allocating: warm-up counts the addresses the cloud returned, `lastModifiedTime`
 * moves to now when a pod took a pool IP or an allocation started, and the idle reclaim plan follows from both.
 */
export function planPoolStatus(input: {
  nodeName: string;
  spec: NodeSpec;
  /** The status as the pass read it. */
  current: NodeStatus | undefined;
  nowMs: number;
  /** Warm-up as set at first sight (`initialWarmUp`), before this pass's results. */
  warmUp: WarmUpStatus;
  returnedAddresses: number;
  /** A pod took a pool IP, or an allocation started, in this pass. */
  poolTouched: boolean;
  /** Idle addresses after allocation, before any release (`countIdleIps`). */
  idle: number;
  /** The fewest idle addresses a release could leave (`planPoolRelease` asked for everything). */
  reachableIdleFloor?: number | undefined;
}): PoolStatusPlan {
  const { current, nowMs } = input;
  const nowSecondMs = Math.floor(nowMs / 1000) * 1000;
  const lastModifiedTime = input.poolTouched ? formatRfc3339(nowSecondMs) : current?.lastModifiedTime;
  const lastModifiedMs = lastModifiedTime === undefined ? undefined : parseRfc3339(lastModifiedTime);
  const planned = current?.nextIdleIPReclaimTime;
  const reclaim = planIdleReclaim({
    policy: idleReclaimPolicyOf(input.spec.pool),
    nodeName: input.nodeName,
    nowMs,
    lastModifiedMs,
    plannedMs: planned === undefined ? undefined : parseRfc3339(planned),
    idle: input.idle,
    maxPoolSize: input.spec.pool?.maxPoolSize ?? input.idle,
    minPoolSize: input.spec.pool?.minPoolSize ?? 0,
    reachableIdleFloor: input.reachableIdleFloor,
  });
  // Rounded up to the second it is written as, so the timer never fires before the time the next pass reads.
  const nextReclaimMs = reclaim.nextMs === undefined ? undefined : Math.ceil(reclaim.nextMs / 1000) * 1000;
  const warmUp = advanceWarmUp(input.warmUp, input.returnedAddresses);
  const fields: PoolStatusFields = {
    ...(lastModifiedTime === undefined ? {} : { lastModifiedTime }),
    ...(nextReclaimMs === undefined ? {} : { nextIdleIPReclaimTime: formatRfc3339(nextReclaimMs) }),
    ...warmUp,
  };
  const warmUpContinues = input.returnedAddresses > 0 && warmUpDemand(warmUp) > 0;
  const warmUpGotAddresses = (warmUp.warmUpAllocatedCount ?? 0) > (input.warmUp.warmUpAllocatedCount ?? 0);
  return { fields, extraRelease: reclaim.extraRelease, nextReclaimMs, warmUpContinues, warmUpGotAddresses };
}
