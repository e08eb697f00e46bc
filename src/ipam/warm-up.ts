/**
 * Warm-up (Terway v1.16.4, `docs/warm-up.md`): a node allocates `spec.pool.warmUpSize` addresses once, when it is
 * first seen; pods waiting meanwhile take theirs from them. Progress counts the addresses the cloud returned, not the
 * pool's size, so pods taking and freeing addresses during warm-up neither restart nor stretch it. What it leaves
 * above `maxPoolSize` stays warm for a pool period (see `poolShrinkGate`).
 */

import type { EniOutcome } from './fold-outcomes.js';
import type { IpFamily, NodeStatus } from './node-model.js';

/** The status fields warm-up owns. */
export type WarmUpStatus = Pick<NodeStatus, 'warmUpTarget' | 'warmUpAllocatedCount' | 'warmUpCompleted'>;

/**
 * Warm-up as set at first sight: a node that already has a target or is complete keeps its fields (the spec is
 * never re-read, so a later `warmUpSize` change does nothing); a new node with `warmUpSize` > 0 starts at count 0;
 * any other node is marked complete at once, so a `warmUpSize` set later never warms an old node up.
 */
export function initialWarmUp(input: { status: WarmUpStatus; warmUpSize: number | undefined }): WarmUpStatus {
  const { status } = input;
  if ((status.warmUpTarget ?? 0) > 0 || status.warmUpCompleted === true) return pickWarmUp(status);
  const size = input.warmUpSize ?? 0;
  if (size <= 0) return { warmUpCompleted: true };
  return { warmUpTarget: size, warmUpAllocatedCount: 0, warmUpCompleted: false };
}

/** Addresses warm-up still asks for: `target − count` while it runs, 0 once complete or without a target. */
export function warmUpDemand(status: WarmUpStatus): number {
  if (status.warmUpCompleted === true) return 0;
  const target = status.warmUpTarget ?? 0;
  if (target <= 0) return 0;
  return Math.max(0, target - (status.warmUpAllocatedCount ?? 0));
}

/**
 * Counts addresses the cloud returned in this pass (assign and create results) and completes warm-up once the
 * count reaches the target. Complete is final: nothing is counted afterwards.
 */
export function advanceWarmUp(status: WarmUpStatus, returnedAddresses: number): WarmUpStatus {
  const target = status.warmUpTarget ?? 0;
  if (status.warmUpCompleted === true || target <= 0) return pickWarmUp(status);
  const count = (status.warmUpAllocatedCount ?? 0) + Math.max(0, returnedAddresses);
  return { warmUpTarget: target, warmUpAllocatedCount: count, warmUpCompleted: count >= target };
}

function pickWarmUp(status: WarmUpStatus): WarmUpStatus {
  return {
    ...(status.warmUpTarget === undefined ? {} : { warmUpTarget: status.warmUpTarget }),
    ...(status.warmUpAllocatedCount === undefined ? {} : { warmUpAllocatedCount: status.warmUpAllocatedCount }),
    ...(status.warmUpCompleted === undefined ? {} : { warmUpCompleted: status.warmUpCompleted }),
  };
}

/**
 * Addresses of the sizing family the cloud handed over in a pass's outcomes: assigned IPs, and the addresses of each
 * ENI that became usable (created and attached, its primary IP included). An ENI created but not yet attached is
 * counted when a later pass attaches it, so no address is counted twice.
 */
export function addressesReturnedBy(outcomes: readonly EniOutcome[], family: IpFamily): number {
  let count = 0;
  for (const outcome of outcomes) {
    if (outcome.kind === 'ipsAssigned' && outcome.family === family) count += outcome.ips.length;
    if (outcome.kind === 'eniCreated')
      count += family === 'ipv4' ? outcome.cloud.ipv4.length : outcome.cloud.ipv6.length;
  }
  return count;
}
