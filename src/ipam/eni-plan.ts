import { countAvailable, enabledFamilies, isHighPerformance, primaryFamilyOf } from './eni-records.js';
import { sortEnisForAllocation } from './eni-records.js';
import { sortedKeys } from './node-model.js';
import type { EniTrafficMode, IpFamily, NetworkInterface, NetworkInterfaces, NodeSpec } from './node-model.js';
import type { UnsatisfiedPod } from './local-pool.js';
import { chooseVSwitchForSpec } from './vswitch-choice.js';
import type { VSwitchInfo } from './vswitch-choice.js';

/** ECS refuses more than this many addresses in one assign call; the reference also caps a new ENI at it. */
export const MAX_IPS_PER_CALL = 10;

/** The three kinds of ENI the controller manages, as (type, traffic mode) pairs. */
export const ENI_KINDS = ['secondary', 'trunk', 'erdma'] as const;
export type EniKind = (typeof ENI_KINDS)[number];

export const ENI_KIND_SHAPE: Readonly<Record<EniKind, { type: 'Secondary' | 'Trunk'; trafficMode: EniTrafficMode }>> = {
  secondary: { type: 'Secondary', trafficMode: 'Standard' },
  trunk: { type: 'Trunk', trafficMode: 'Standard' },
  erdma: { type: 'Secondary', trafficMode: 'HighPerformance' },
};

/** The kind of an existing ENI, or undefined for kinds this controller does not manage (Primary, Member). */
export function eniKindOf(eni: Readonly<NetworkInterface>): EniKind | undefined {
  const mode = eni.networkInterfaceTrafficMode === 'HighPerformance' ? 'HighPerformance' : 'Standard';
  for (const kind of ENI_KINDS) {
    const shape = ENI_KIND_SHAPE[kind];
    if (shape.type === eni.networkInterfaceType && shape.trafficMode === mode) return kind;
  }
  return undefined;
}

/** One allocation slot of the node (the reference's `eniOptions`): an existing ENI, or room for a new one. */
export type EniSlot = { kind: EniKind; eniId: string } | { kind: EniKind; eniId?: never };

/**
 * The ordered slot list (the reference's `getEniOptions`): new trunk slots, new ERDMA slots, every existing ENI
 * of a managed kind in allocation order, then new secondary slots. New slots never take the node past the
 * flavor total or the instance's adapter count (the primary ENI uses one); unlike the seed, a surplus of
 * existing trunk ENIs cannot raise the limit, and ERDMA slots use it up like the others.
 */
export function planEniSlots(input: { spec: NodeSpec; enis: Readonly<NetworkInterfaces> }): EniSlot[] {
  const { spec } = input;
  const wanted: Record<EniKind, number> = { secondary: 0, trunk: 0, erdma: 0 };
  for (const entry of spec.flavor ?? []) {
    const kind = ENI_KINDS.find(
      (k) =>
        ENI_KIND_SHAPE[k].type === entry.networkInterfaceType &&
        ENI_KIND_SHAPE[k].trafficMode === entry.networkInterfaceTrafficMode,
    );
    if (kind !== undefined) wanted[kind] += Math.max(0, entry.count);
  }
  const total = wanted.secondary + wanted.trunk + wanted.erdma;
  const attached = sortedKeys(input.enis).flatMap((id) => input.enis[id] ?? []);
  // Unschedulable ENIs use an adapter of the instance but are no slot of ours: never grown, never counted as a kind.
  const existing = sortEnisForAllocation({
    enis: attached.filter((eni) => eni.unschedulable !== true),
    primaryFamily: primaryFamilyOf(spec.eni ?? {}),
  });
  for (const eni of existing) {
    const kind = eniKindOf(eni);
    if (kind !== undefined) wanted[kind] -= 1;
  }
  const adapterRoom = spec.nodeCap?.adapters === undefined ? Infinity : spec.nodeCap.adapters - 1 - attached.length;
  let newLimit = Math.max(0, Math.min(total - existing.length, adapterRoom));
  const slots: EniSlot[] = [];
  const addNew = (kind: EniKind, wantedCount: number): void => {
    const count = Math.max(0, Math.min(wantedCount, newLimit));
    for (let i = 0; i < count; i += 1) slots.push({ kind });
    newLimit -= count;
  };
  if (spec.eni?.enableTrunk === true) addNew('trunk', wanted.trunk);
  if (spec.eni?.enableERDMA === true) addNew('erdma', wanted.erdma);
  for (const eni of existing) {
    const kind = eniKindOf(eni);
    if (kind !== undefined) slots.push({ kind, eniId: eni.id });
  }
  addNew('secondary', wanted.secondary);
  return slots;
}

/** A cloud operation the plan asks for; counts are per family and never above {@link MAX_IPS_PER_CALL}. */
export type EniAllocation =
  | { kind: 'assignIps'; eniId: string; ipv4Count: number; ipv6Count: number }
  | {
      kind: 'createEni';
      eniKind: EniKind;
      vSwitchId: string;
      /** Addresses of the new ENI, its primary IPv4 included (ECS takes `SecondaryPrivateIpAddressCount` = this − 1). */
      ipv4Count: number;
      ipv6Count: number;
      /** Prefix mode: IPv4 /28 and IPv6 /80 prefixes the ENI is created with (at most 10 each); absent: none. */
      ipv4PrefixCount?: number;
      ipv6PrefixCount?: number;
    };

/** Why a slot could not take part; feeds the ENI `InsufficientIP` condition and per-pod events. */
export type SlotProblem =
  | { kind: 'vSwitchExhausted'; eniId: string; vSwitchId: string }
  | { kind: 'noVSwitchForNewEni'; eniKind: EniKind; message: string };

export interface EniAllocationPlan {
  allocations: EniAllocation[];
  problems: SlotProblem[];
  /** IPs (pairs, on a dual-stack node) still wanted after every slot was used: quota or vSwitch limits. */
  unmetDemand: { normal: number; erdma: number };
  /** Inputs of the core Node `SufficientIP` condition. */
  capacity: { hasIdleIp: boolean; hasAllocatableEni: boolean };
  /**
   * What the plan tried to cover: pending pods plus the `minPoolSize` top-up, or the warm-up rest when that is more
   * (pairs on dual-stack nodes).
   */
  demand: { normal: number; erdma: number };
}

interface FamilyLimits {
  families: IpFamily[];
  perAdapter: Record<IpFamily, number>;
}

/**
 * How many more address pairs an existing ENI can offer, and the per-family counts to request for `pairs`. The IPv4
 * ask is capped by the free addresses its vSwitch is known to have (`vSwitchFree`; unknown: no cap): ECS refuses an
 * assign larger than what is left, and would then serve none of the pods the smaller ask could.
 */
function growExistingEni(
  eni: Readonly<NetworkInterface>,
  limits: FamilyLimits,
  want: { pairs: number; vSwitchFree: number | undefined },
) {
  const { vSwitchFree } = want;
  const free = limits.families.map((family) => countAvailable(eni, family));
  const quotaLeft = limits.families.map((family) => limits.perAdapter[family] - Object.keys(eni[family] ?? {}).length);
  const pairsBefore = Math.min(...free);
  const addable = (family: IpFamily, quota: number): number =>
    Math.min(Math.max(0, quota), MAX_IPS_PER_CALL, family === 'ipv4' ? (vSwitchFree ?? Infinity) : Infinity);
  const reachable = Math.min(
    ...limits.families.map((family, i) => (free[i] ?? 0) + addable(family, quotaLeft[i] ?? 0)),
  );
  const pairs = Math.max(0, Math.min(want.pairs, reachable - pairsBefore));
  const counts: Record<IpFamily, number> = { ipv4: 0, ipv6: 0 };
  limits.families.forEach((family, i) => {
    counts[family] = Math.max(0, pairsBefore + pairs - (free[i] ?? 0));
  });
  const isFull = quotaLeft.some((left) => left <= 0);
  return { pairs, counts, isFull };
}

function idlePairs(eni: Readonly<NetworkInterface>, families: readonly IpFamily[]): number {
  return Math.min(...families.map((family) => countAvailable(eni, family)));
}

/**
 * Decides how many IPs to add per ENI and which ENIs to create (the reference's `addIP` planning), so that every
 * pending pod can be served and `minPoolSize` idle IPs remain, and no more than that is asked for (up to the
 * 10-per-call limit). On a dual-stack node demand is counted in IPv4+IPv6 pairs on the same ENI, because a pod's
 * two addresses must share one ENI. ERDMA pods are served only by HighPerformance ENIs and do not count toward
 * the pool size. Existing ENIs are used only when `InUse` and their vSwitch still has addresses. No assign or create
 * asks a vSwitch for more IPv4 addresses than it is known to have left (Terway asks for the full count and, refused,
 * blocks the vSwitch for 20 min): what it lacks goes to the next slot, whose new ENI may use another vSwitch.
 */
export function planEniAllocations(input: {
  spec: NodeSpec;
  enis: Readonly<NetworkInterfaces>;
  unsatisfied: readonly UnsatisfiedPod[];
  vSwitches: Readonly<Record<string, VSwitchInfo>>;
  /** In [0, 1): the random draw for the `random` vSwitch policy, supplied by the (deterministic) caller. */
  randomValue: number;
  /** Addresses warm-up still asks for (`warmUpDemand`): the waiting pods and the `minPoolSize` top-up take part of them. */
  warmUpDemand?: number;
}): EniAllocationPlan {
  const { spec } = input;
  const families = enabledFamilies(spec.eni ?? {});
  const limits: FamilyLimits = {
    families,
    perAdapter: { ipv4: spec.nodeCap?.ipv4PerAdapter ?? 0, ipv6: spec.nodeCap?.ipv6PerAdapter ?? 0 },
  };
  const demandOf = (erdma: boolean): number =>
    input.unsatisfied.filter((pod) => pod.reason === 'noIdleIp' && pod.request.requireErdma === erdma).length;
  const usable = (eni: Readonly<NetworkInterface>): boolean => eni.status === 'InUse' && eni.unschedulable !== true;
  const idleNormal = sortedKeys(input.enis)
    .flatMap((id) => input.enis[id] ?? [])
    .filter((eni) => usable(eni) && !isHighPerformance(eni) && eniKindOf(eni) !== undefined)
    .reduce((sum, eni) => sum + idlePairs(eni, families), 0);
  const minPoolTopUp = Math.max(0, (spec.pool?.minPoolSize ?? 0) - idleNormal);
  // Warm-up counts every address the cloud returns, those the waiting pods take included, so the plan asks for what
  // pods and minPoolSize need or for what warm-up still lacks, whichever is more: every create and assign of the
  // pass counts toward the target. Terway's `podDemand + max(minPoolDemand, warmUpRest)` adds the two, which its one
  // call of ≤ 10 per pass, recomputed after each, mostly hides; asked for in one pass, it overshoots by the pods.
  const normal = Math.max(demandOf(false) + minPoolTopUp, input.warmUpDemand ?? 0);
  const demand = { normal, erdma: demandOf(true) };
  const remaining = { ...demand };

  const allocations: EniAllocation[] = [];
  const problems: SlotProblem[] = [];
  let hasAllocatableEni = false;
  let hasIdleIp = false;
  const vSwitches: Record<string, VSwitchInfo> = {};
  for (const id of sortedKeys(input.vSwitches)) {
    const info = input.vSwitches[id];
    if (info !== undefined) vSwitches[id] = { ...info };
  }

  for (const slot of planEniSlots({ spec, enis: input.enis })) {
    const pool = slot.kind === 'erdma' ? 'erdma' : 'normal';
    if (slot.eniId !== undefined) {
      const eni = input.enis[slot.eniId];
      if (eni === undefined || !usable(eni)) continue;
      if (countAvailable(eni, 'ipv4') > 0) hasIdleIp = true;
      const vSwitch = eni.vSwitchID === undefined ? undefined : vSwitches[eni.vSwitchID];
      if (vSwitch !== undefined && vSwitch.availableIpCount <= 0) {
        problems.push({ kind: 'vSwitchExhausted', eniId: eni.id, vSwitchId: vSwitch.vSwitchId });
        continue;
      }
      const grown = growExistingEni(eni, limits, { pairs: remaining[pool], vSwitchFree: vSwitch?.availableIpCount });
      if (!grown.isFull) hasAllocatableEni = true;
      if (grown.pairs === 0) continue;
      remaining[pool] -= grown.pairs;
      allocations.push({
        kind: 'assignIps',
        eniId: eni.id,
        ipv4Count: grown.counts.ipv4,
        ipv6Count: grown.counts.ipv6,
      });
      if (vSwitch !== undefined) vSwitch.availableIpCount -= grown.counts.ipv4;
      continue;
    }
    const choice = chooseVSwitchForSpec(spec, vSwitches, input.randomValue);
    if (!choice.ok) {
      if (remaining[pool] > 0 || slot.kind === 'trunk') {
        problems.push({ kind: 'noVSwitchForNewEni', eniKind: slot.kind, message: choice.message });
      }
      continue;
    }
    hasAllocatableEni = true;
    // A trunk ENI is created even without demand (pods of trunk mode need it), with at least one of each family.
    const floor = slot.kind === 'trunk' ? 1 : 0;
    const capacity = Math.min(...families.map((family) => Math.min(limits.perAdapter[family], MAX_IPS_PER_CALL)));
    const pairs = Math.min(remaining[pool], capacity, choice.vSwitch.availableIpCount);
    const count = Math.max(floor, pairs);
    if (count === 0 || capacity <= 0) continue;
    remaining[pool] = Math.max(0, remaining[pool] - pairs);
    allocations.push({
      kind: 'createEni',
      eniKind: slot.kind,
      vSwitchId: choice.vSwitch.vSwitchId,
      ipv4Count: families.includes('ipv4') ? count : 0,
      ipv6Count: families.includes('ipv6') ? count : 0,
    });
    const chosen = vSwitches[choice.vSwitch.vSwitchId];
    if (chosen !== undefined) chosen.availableIpCount -= families.includes('ipv4') ? count : 0;
  }
  return { allocations, problems, unmetDemand: remaining, capacity: { hasIdleIp, hasAllocatableEni }, demand };
}
