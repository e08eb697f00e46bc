import { cloneNetworkInterfaces, countAvailable, enabledFamilies, ipEntries, isAvailable } from './eni-records.js';
import { isHighPerformance, isTrunk, primaryFamilyOf, sortEnisForAllocation } from './eni-records.js';
import { mayRemoveEni } from './eni-ownership.js';
import { sortedKeys } from './node-model.js';
import type { IpFamily, NetworkInterface, NetworkInterfaces, NodeSpec } from './node-model.js';

export interface ReleasePlan {
  enis: NetworkInterfaces;
  /** Idle IPs (of the pool-sizing family, on InUse ENIs) before and after the plan. */
  idleBefore: number;
  idleAfter: number;
  /** ENIs marked `Deleting` as a whole. */
  enisToDelete: string[];
  /** Addresses marked `Deleting`, per ENI and family. */
  ipsToRelease: { eniId: string; family: IpFamily; ips: string[] }[];
}

/**
 * Idle IPs of the pool-sizing family over schedulable InUse ENIs: what `maxPoolSize` bounds (primary IPs count, as
 * in Terway).
 */
export function countIdleIps(input: { enis: Readonly<NetworkInterfaces>; family: IpFamily }): number {
  return sortedKeys(input.enis)
    .flatMap((id) => input.enis[id] ?? [])
    .filter((eni) => eni.status === 'InUse' && eni.unschedulable !== true)
    .reduce((sum, eni) => sum + countAvailable(eni, input.family), 0);
}

function canDeleteWhole(eni: Readonly<NetworkInterface>): boolean {
  if (eni.networkInterfaceType !== 'Secondary' || isHighPerformance(eni) || isTrunk(eni)) return false;
  return mayRemoveEni(eni);
}

/**
 * Releases from one victim ENI (the reference's `releaseUnUsedIP`) and returns how many idle IPs of the sizing
 * family it gave back. The whole ENI goes when no pod holds any of its IPs, it is a Standard Secondary ENI, and
 * its idle IPs of the sizing family do not exceed what must go (the seed's strict `<` on raw entry counts is
 * relaxed to `<=` on idle IPs, so an ENI exactly the size of the surplus is deleted rather than stripped down to
 * its primary IP). Otherwise idle non-primary IPs are marked `Deleting`, highest address first, and the other
 * family is trimmed to the same idle count (the seed balances on the larger family, which can leave the pool
 * above `maxPoolSize`).
 */
function releaseFromEni(
  eni: NetworkInterface,
  release: { toRelease: number; families: readonly IpFamily[]; sizing: IpFamily },
): { released: number; wholeEni: boolean; ips: { family: IpFamily; ips: string[] }[] } {
  const idle = Object.fromEntries(release.families.map((family) => [family, countAvailable(eni, family)])) as Record<
    IpFamily,
    number
  >;
  const idleSizing = idle[release.sizing];
  if (canDeleteWhole(eni) && idleSizing <= release.toRelease) {
    eni.status = 'Deleting';
    return { released: idleSizing, wholeEni: true, ips: [] };
  }
  // Every family is brought down to the idle count the sizing family ends at, so pairs stay balanced.
  const leftover = idleSizing - release.toRelease;
  const ips: { family: IpFamily; ips: string[] }[] = [];
  let released = 0;
  for (const family of release.families) {
    const wanted = idle[family] - leftover;
    const victims = ipEntries(eni, family)
      .filter((entry) => isAvailable(entry) && !entry.primary)
      .reverse()
      .slice(0, Math.max(0, wanted));
    for (const entry of victims) entry.status = 'Deleting';
    if (victims.length > 0) ips.push({ family, ips: victims.map((entry) => entry.ip) });
    if (family === release.sizing) released = victims.length;
  }
  return { released, wholeEni: false, ips };
}

/**
 * Shrinks the pool to `maxPoolSize` idle IPs (the reference's `adjustPool`): victims are InUse ENIs taken from
 * the end of the allocation order (non-trunk, non-HighPerformance, fewest IPs first), so the ENIs that fill
 * first are the ones kept. Only marks `Deleting`; the GC plan turns the marks into cloud calls. Idle primary
 * IPs of ENIs that must stay cannot be released, so a pool may stay above `maxPoolSize` by those alone.
 */
export function planPoolRelease(input: {
  spec: NodeSpec;
  enis: Readonly<NetworkInterfaces>;
  /** Idle IPs to release beyond the excess over `maxPoolSize`: an idle reclaim batch (`planIdleReclaim`). */
  extraRelease?: number;
}): ReleasePlan {
  const enis = cloneNetworkInterfaces(input.enis);
  const eniSpec = input.spec.eni ?? {};
  const sizing = primaryFamilyOf(eniSpec);
  const families = enabledFamilies(eniSpec);
  const idleBefore = countIdleIps({ enis, family: sizing });
  const plan: ReleasePlan = { enis, idleBefore, idleAfter: idleBefore, enisToDelete: [], ipsToRelease: [] };
  const excess = Math.max(0, idleBefore - (input.spec.pool?.maxPoolSize ?? idleBefore));
  let toRelease = excess + Math.max(0, input.extraRelease ?? 0);
  if (toRelease <= 0 || families.length === 0) return plan;
  const victims = sortEnisForAllocation({
    enis: sortedKeys(enis).flatMap((id) => enis[id] ?? []),
    primaryFamily: sizing,
  })
    .filter((eni) => eni.status === 'InUse' && eni.unschedulable !== true)
    .reverse();
  for (const eni of victims) {
    if (toRelease <= 0) break;
    const result = releaseFromEni(eni, { toRelease, families, sizing });
    toRelease -= result.released;
    if (result.wholeEni) plan.enisToDelete.push(eni.id);
    for (const released of result.ips) plan.ipsToRelease.push({ eniId: eni.id, ...released });
  }
  plan.idleAfter = countIdleIps({ enis, family: sizing });
  return plan;
}

/**
 * Whether a pass shrinks the pool to `maxPoolSize`, and when the node's pool period starts again (the carried
 * `lastGcMs`). The excess goes once per pool period (the reference's `adjustPool` gate), or at once when an operator
 * asks for a GC or an idle reclaim batch is due. A pass in which warm-up got addresses starts the period instead of
 * shrinking: what warm-up allocates above `maxPoolSize` stays warm for a whole period after its last allocation,
 * as Terway keeps it until its next pool pass, for the pods its users schedule right after the node joins.
 */
export function poolShrinkGate(input: {
  nowMs: number;
  /** The node's pool period (`poolPeriodMs`). */
  periodMs: number;
  /** When the period last started; undefined before the first shrink. */
  periodStartMs: number | undefined;
  gcRequested: boolean;
  reclaimBatch: number;
  warmUpGotAddresses: boolean;
  /** False while the degradation switch holds back releases. */
  mayRelease: boolean;
}): { shrink: boolean; periodStartMs: number | undefined } {
  const { nowMs, periodStartMs } = input;
  const periodDue = periodStartMs === undefined || nowMs - periodStartMs >= input.periodMs;
  const shrink =
    input.mayRelease && (input.gcRequested || input.reclaimBatch > 0 || (periodDue && !input.warmUpGotAddresses));
  return { shrink, periodStartMs: shrink || input.warmUpGotAddresses ? nowMs : periodStartMs };
}
