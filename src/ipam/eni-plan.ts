import { countAvailable, enabledFamilies, isHighPerformance, primaryFamilyOf } from './eni-records.js';
import { sortEnisForAllocation } from './eni-records.js';
import { sortedKeys } from './node-model.js';
import type { EniTrafficMode, IpFamily, NetworkInterface, NetworkInterfaces, NodeSpec } from './node-model.js';
import type { UnsatisfiedPod } from './local-pool.js';
import { assignCallCount, planHeadroom } from './create-headroom.js';
import type { CreateHeadroom } from './create-headroom.js';
import { chooseVSwitchForSpec } from './vswitch-choice.js';
import type { VSwitchInfo } from './vswitch-choice.js';

/**
 * Most addresses of one family eniflow asks for in one assign or unassign call (Terway's `batchSize`; the 2021 ECS
 * reference caps an assign at 10). An ENI still grows to its quota in one pass: its assign is made in calls of this size.
 */
export const MAX_IPS_PER_CALL = 10;
/** Most secondary IPv4 addresses `CreateNetworkInterface` takes (`SecondaryPrivateIpAddressCount`, 1–49). */
export const MAX_SECONDARY_IPV4_AT_CREATE = 49;
/** Most IPv6 addresses `CreateNetworkInterface` takes (`Ipv6AddressCount`, 1–10). */
export const MAX_IPV6_AT_CREATE = 10;

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

/**
 * A cloud operation the plan asks for, with counts per family. An assign may exceed {@link MAX_IPS_PER_CALL}: it is
 * made in calls of at most that many (`assignCalls`). A create carries what ECS takes at creation; `fillTo` says
 * what the ENI is to hold once attached when that is more.
 */
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
      /**
       * Addresses (primary included) the new ENI is to hold once attached, when the create cannot carry them all (at
       * most {@link MAX_SECONDARY_IPV4_AT_CREATE} + 1 IPv4 and {@link MAX_IPV6_AT_CREATE} IPv6): the rest is assigned
       * on that ENI as soon as it is attached, in the same run, instead of opening another ENI. Absent: the counts.
       */
      fillTo?: { ipv4Count: number; ipv6Count: number };
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
  // Up to the quota in one pass (in calls of ten), so no new ENI opens while this one still has room.
  const addable = (family: IpFamily, quota: number): number =>
    Math.min(Math.max(0, quota), family === 'ipv4' ? (vSwitchFree ?? Infinity) : Infinity);
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
 * pending pod can be served and `minPoolSize` idle IPs remain, and no more than that is asked for. Each ENI is taken
 * to its quota before the next slot is used: an existing ENI by one assign of any size (made in calls of ten), a new
 * one by a create sized for what is still wanted and, for waiting pods, some headroom ({@link createHeadroomOf}: the
 * pods arriving next need no assign) — what the create cannot carry is assigned once it is attached —, so a
 * node opens only the ENIs its demand needs; Terway's ten per ENI per pass opens a second ENI while the first has room.
 * On a dual-stack node demand is counted in IPv4+IPv6 pairs on the same ENI, because a pod's
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
  const demand = demandOf(input, families);
  const run: PlanRun = {
    spec,
    limits,
    randomValue: input.randomValue,
    remaining: { ...demand },
    createHeadroom: headroomOf(input, families, demand),
    vSwitches: copyVSwitches(input.vSwitches),
    allocations: [],
    problems: [],
    hasAllocatableEni: false,
    hasIdleIp: false,
  };
  for (const slot of planEniSlots({ spec, enis: input.enis })) {
    if (slot.eniId === undefined) planNewEni(run, slot.kind);
    else planExistingEni(run, { kind: slot.kind, eni: input.enis[slot.eniId] });
  }
  return {
    allocations: run.allocations,
    problems: run.problems,
    unmetDemand: run.remaining,
    capacity: { hasIdleIp: run.hasIdleIp, hasAllocatableEni: run.hasAllocatableEni },
    demand,
  };
}

interface Pools {
  normal: number;
  erdma: number;
}

/** The state of one planning run, slot after slot. */
interface PlanRun {
  spec: NodeSpec;
  limits: FamilyLimits;
  randomValue: number;
  /** Pairs still wanted per pool. */
  remaining: Pools;
  /** Pairs the plan's creates and assigns may carry beyond `remaining` (see `planHeadroom`); used up by them. */
  createHeadroom: CreateHeadroom;
  /** The vSwitches with what the allocations planned so far leave them. */
  vSwitches: Record<string, VSwitchInfo>;
  allocations: EniAllocation[];
  problems: SlotProblem[];
  hasAllocatableEni: boolean;
  hasIdleIp: boolean;
}

function usable(eni: Readonly<NetworkInterface>): boolean {
  return eni.status === 'InUse' && eni.unschedulable !== true;
}

/**
 * The pairs the plan covers per pool. Warm-up counts every address the cloud returns, those the waiting pods take
 * included, so the plan asks for what pods and minPoolSize need or for what warm-up still lacks, whichever is more:
 * every create and assign of the pass counts toward the target. Terway's `podDemand + max(minPoolDemand, warmUpRest)`
 * adds the two, which its one call of ≤ 10 per pass, recomputed after each, mostly hides; asked for in one pass, it
 * overshoots by the pods.
 */
function demandOf(
  input: Pick<Parameters<typeof planEniAllocations>[0], 'spec' | 'enis' | 'unsatisfied' | 'warmUpDemand'>,
  families: readonly IpFamily[],
): Pools {
  const waiting = (erdma: boolean): number =>
    input.unsatisfied.filter((pod) => pod.reason === 'noIdleIp' && pod.request.requireErdma === erdma).length;
  const idleNormal = sortedKeys(input.enis)
    .flatMap((id) => input.enis[id] ?? [])
    .filter((eni) => usable(eni) && !isHighPerformance(eni) && eniKindOf(eni) !== undefined)
    .reduce((sum, eni) => sum + idlePairs(eni, families), 0);
  const minPoolTopUp = Math.max(0, (input.spec.pool?.minPoolSize ?? 0) - idleNormal);
  return { normal: Math.max(waiting(false) + minPoolTopUp, input.warmUpDemand ?? 0), erdma: waiting(true) };
}

/** The inputs of `planHeadroom`, read from the node: its usable normal ENIs and the pods waiting. */
function headroomOf(
  input: Pick<Parameters<typeof planEniAllocations>[0], 'spec' | 'enis' | 'unsatisfied' | 'warmUpDemand'>,
  families: readonly IpFamily[],
  demand: Pools,
): CreateHeadroom {
  const normalEnis = sortedKeys(input.enis)
    .flatMap((id) => input.enis[id] ?? [])
    .filter((eni) => usable(eni) && !isHighPerformance(eni) && eniKindOf(eni) !== undefined);
  return planHeadroom({
    hasNormalEni: normalEnis.length > 0,
    idleNow: normalEnis.reduce((sum, eni) => sum + idlePairs(eni, families), 0),
    waiting: input.unsatisfied.filter((pod) => pod.reason === 'noIdleIp' && !pod.request.requireErdma).length,
    demand: demand.normal,
    minPoolSize: input.spec.pool?.minPoolSize ?? 0,
    maxPoolSize: input.spec.pool?.maxPoolSize ?? 0,
    warmUpDemand: input.warmUpDemand ?? 0,
  });
}

function copyVSwitches(vSwitches: Readonly<Record<string, VSwitchInfo>>): Record<string, VSwitchInfo> {
  const copy: Record<string, VSwitchInfo> = {};
  for (const id of sortedKeys(vSwitches)) {
    const info = vSwitches[id];
    if (info !== undefined) copy[id] = { ...info };
  }
  return copy;
}

/** An existing ENI's slot: grown to its quota (or what its vSwitch has left) for what is still wanted. */
function planExistingEni(run: PlanRun, slot: { kind: EniKind; eni: Readonly<NetworkInterface> | undefined }): void {
  const { eni } = slot;
  if (eni === undefined || !usable(eni)) return;
  const pool = slot.kind === 'erdma' ? 'erdma' : 'normal';
  if (countAvailable(eni, 'ipv4') > 0) run.hasIdleIp = true;
  const vSwitch = eni.vSwitchID === undefined ? undefined : run.vSwitches[eni.vSwitchID];
  if (vSwitch !== undefined && vSwitch.availableIpCount <= 0) {
    run.problems.push({ kind: 'vSwitchExhausted', eniId: eni.id, vSwitchId: vSwitch.vSwitchId });
    return;
  }
  const grown = growExistingEni(eni, run.limits, {
    pairs: run.remaining[pool],
    vSwitchFree: vSwitch?.availableIpCount,
  });
  if (!grown.isFull) run.hasAllocatableEni = true;
  if (grown.pairs === 0) return;
  run.remaining[pool] -= grown.pairs;
  // Headroom rides along only as far as it adds no call: the last call of ten has room.
  let chosen = grown;
  for (let extra = pool === 'normal' ? run.createHeadroom.idle : 0; extra > 0; extra -= 1) {
    const more = growExistingEni(eni, run.limits, {
      pairs: grown.pairs + extra,
      vSwitchFree: vSwitch?.availableIpCount,
    });
    if (
      more.pairs > grown.pairs &&
      assignCallCount(more.counts, MAX_IPS_PER_CALL) === assignCallCount(grown.counts, MAX_IPS_PER_CALL)
    ) {
      chosen = more;
      break;
    }
  }
  run.createHeadroom.idle -= chosen.pairs - grown.pairs;
  run.allocations.push({
    kind: 'assignIps',
    eniId: eni.id,
    ipv4Count: chosen.counts.ipv4,
    ipv6Count: chosen.counts.ipv6,
  });
  if (vSwitch !== undefined) vSwitch.availableIpCount -= chosen.counts.ipv4;
}

/**
 * A new ENI's slot: one create sized for what is still wanted plus the plan's headroom, up to the ENI's quota and its
 * vSwitch's free addresses. A trunk ENI is created even without demand (pods of trunk mode need it), with at least one of each family.
 */
function planNewEni(run: PlanRun, kind: EniKind): void {
  const pool = kind === 'erdma' ? 'erdma' : 'normal';
  const choice = chooseVSwitchForSpec(run.spec, run.vSwitches, run.randomValue);
  if (!choice.ok) {
    if (run.remaining[pool] > 0 || kind === 'trunk') {
      run.problems.push({ kind: 'noVSwitchForNewEni', eniKind: kind, message: choice.message });
    }
    return;
  }
  run.hasAllocatableEni = true;
  const { families, perAdapter } = run.limits;
  const quota = Math.min(...families.map((family) => perAdapter[family]));
  const pairs = Math.min(run.remaining[pool], quota, choice.vSwitch.availableIpCount);
  // Only an ENI the demand opens carries headroom: the create is made anyway, the extra addresses cost no call.
  const room = run.createHeadroom;
  const headroom =
    pool === 'normal' && pairs > 0
      ? Math.max(
          0,
          Math.min(room.fillFirst ? quota : room.idle, quota - pairs, choice.vSwitch.availableIpCount - pairs),
        )
      : 0;
  const count = Math.max(kind === 'trunk' ? 1 : 0, pairs + headroom);
  if (count === 0 || quota <= 0) return;
  run.remaining[pool] = Math.max(0, run.remaining[pool] - pairs);
  if (pool === 'normal' && pairs > 0) {
    // The first ENI's fill counts toward the idle the pool may keep: later creates of the plan carry only the rest.
    room.fillFirst = false;
    room.idle = Math.max(0, room.idle - headroom);
  }
  run.allocations.push(newEniAllocation({ eniKind: kind, vSwitchId: choice.vSwitch.vSwitchId, families, count }));
  const chosen = run.vSwitches[choice.vSwitch.vSwitchId];
  if (chosen !== undefined) chosen.availableIpCount -= families.includes('ipv4') ? count : 0;
}

/** The create of a new ENI holding `count` pairs: what ECS takes at creation, and the rest as its `fillTo`. */
function newEniAllocation(input: {
  eniKind: EniKind;
  vSwitchId: string;
  families: readonly IpFamily[];
  count: number;
}): EniAllocation {
  const ipv4 = input.families.includes('ipv4') ? input.count : 0;
  const ipv6 = input.families.includes('ipv6') ? input.count : 0;
  const ipv4Count = Math.min(ipv4, MAX_SECONDARY_IPV4_AT_CREATE + 1);
  const ipv6Count = Math.min(ipv6, MAX_IPV6_AT_CREATE);
  const fill = ipv4Count < ipv4 || ipv6Count < ipv6 ? { fillTo: { ipv4Count: ipv4, ipv6Count: ipv6 } } : {};
  return { kind: 'createEni', eniKind: input.eniKind, vSwitchId: input.vSwitchId, ipv4Count, ipv6Count, ...fill };
}
