/**
 * Prefix mode planning (Terway v1.17 `syncPrefixAllocation` + `assignEniPrefixWithOptions`): which prefixes to add to
 * which ENI, which ENIs to create with prefixes, and which `Deleting` prefixes the GC unassigns. Pure and ordered:
 * ENIs in allocation order, prefixes in list order.
 */

import { enabledFamilies, isHighPerformance } from './eni-records.js';
import { eniKindOf, planEniSlots } from './eni-plan.js';
import type { EniAllocation, SlotProblem } from './eni-plan.js';
import type { IpFamily, NetworkInterface, NetworkInterfaces, NodeSpec } from './node-model.js';
import { sortedKeys } from './node-model.js';
import { IPV4_PREFIX_SIZE, countOccupiedPrefixes, countUsablePrefixes, prefixEntries } from './prefix-records.js';
import { chooseVSwitchForSpec } from './vswitch-choice.js';
import type { VSwitchInfo } from './vswitch-choice.js';

/** ECS takes at most this many prefixes in one Assign or Create call (Terway's `maxPrefixPerAPICall`). */
export const MAX_PREFIXES_PER_CALL = 10;

/** Prefixes to add to one existing ENI; the operator sends them in calls of at most {@link MAX_PREFIXES_PER_CALL}. */
export interface PrefixAssign {
  kind: 'assignPrefixes';
  eniId: string;
  ipv4PrefixCount: number;
  ipv6PrefixCount: number;
}

type CreateEni = Extract<EniAllocation, { kind: 'createEni' }>;

export interface PrefixPlan {
  /** In allocation order: adds to existing ENIs first, then new ENIs created with their prefixes. */
  allocations: (PrefixAssign | CreateEni)[];
  problems: SlotProblem[];
  /** Prefixes still wanted after every ENI and every allowed new ENI was used (slots, adapters or vSwitches). */
  unmet: Record<IpFamily, number>;
  /** What the node asks for, and what it has (`Valid` and `Frozen` prefixes on its ENIs). */
  wanted: Record<IpFamily, number>;
  have: Record<IpFamily, number>;
}

/** Calls of at most {@link MAX_PREFIXES_PER_CALL} prefixes adding up to `count`, largest first. */
export function prefixCallBatches(count: number): number[] {
  const batches: number[] = [];
  for (let left = Math.max(0, count); left > 0; left -= MAX_PREFIXES_PER_CALL) {
    batches.push(Math.min(left, MAX_PREFIXES_PER_CALL));
  }
  return batches;
}

export function isPrefixMode(spec: Pick<NodeSpec, 'eni'>): boolean {
  return spec.eni?.enableIPPrefix === true;
}

/** Slots of an ENI prefixes may still take: `ipv4PerAdapter` minus its IPv4 addresses (the primary at least) and prefixes. */
export function freePrefixSlots(eni: Readonly<NetworkInterface>, ipv4PerAdapter: number): number {
  const addresses = Math.max(1, Object.keys(eni.ipv4 ?? {}).length);
  return Math.max(0, ipv4PerAdapter - addresses - countOccupiedPrefixes(eni, 'ipv4'));
}

/** ENIs whose prefixes count for the node and that may get more: schedulable, of a kind eniflow manages, not ERDMA. */
function isPrefixEni(eni: Readonly<NetworkInterface>): boolean {
  return eni.unschedulable !== true && eniKindOf(eni) !== undefined && !isHighPerformance(eni);
}

/**
 * An ENI still on its way in or in use: its `Valid` and `Frozen` prefixes count toward the node's total (Terway
 * counts Attaching).
 */
function countsTowardTotal(eni: Readonly<NetworkInterface>): boolean {
  return isPrefixEni(eni) && (eni.status === 'InUse' || eni.status === 'Attaching' || eni.status === 'Available');
}

/**
 * The node's prefix plan. IPv4: `ipv4PrefixCount` is the node's total of `Valid` and `Frozen` prefixes (Terway's
 * count: both hold a slot, and a `Frozen` one returns to `Valid`); the shortfall is added to
 * InUse ENIs in allocation order, each filled up to its free slots (`ipv4PerAdapter − 1` for an ENI with only its
 * primary IP; secondary IPs and `Valid`/`Frozen`/`Deleting` prefixes share the slots), and only what they cannot take
 * goes to new ENIs, each created with `min(left, ipv4PerAdapter − 1, 10)` prefixes: filling an existing ENI costs one
 * call per 10 prefixes, a new ENI a create, an attach and an adapter. New ENIs stay within the flavor and adapter
 * limits `planEniSlots` sets. IPv6: on a dual-stack node every ENI holding (or getting) IPv4 prefixes gets exactly one
 * IPv6 prefix; on an IPv6-only node `ipv6PrefixCount` (0 or 1) is the node's total. A surplus is left alone: like
 * Terway, the controller never removes prefixes on its own; the daemon marks the ones it gives up `Deleting`.
 */
export function planPrefixAllocations(input: {
  spec: NodeSpec;
  enis: Readonly<NetworkInterfaces>;
  vSwitches: Readonly<Record<string, VSwitchInfo>>;
  /** In [0, 1): the random draw for the `random` vSwitch policy. */
  randomValue: number;
}): PrefixPlan {
  const { spec } = input;
  const families = enabledFamilies(spec.eni ?? {});
  const dualStack = families.length === 2;
  const ipv4 = families.includes('ipv4');
  const wanted: Record<IpFamily, number> = {
    ipv4: ipv4 ? (spec.eni?.ipv4PrefixCount ?? 0) : 0,
    ipv6: !ipv4 && families.includes('ipv6') ? Math.min(1, spec.eni?.ipv6PrefixCount ?? 0) : 0,
  };
  const empty: PrefixPlan = {
    allocations: [],
    problems: [],
    unmet: { ipv4: 0, ipv6: 0 },
    wanted,
    have: { ipv4: 0, ipv6: 0 },
  };
  if (!isPrefixMode(spec)) return empty;
  const counted = sortedKeys(input.enis)
    .flatMap((id) => input.enis[id] ?? [])
    .filter(countsTowardTotal);
  const have: Record<IpFamily, number> = {
    ipv4: counted.reduce((sum, eni) => sum + countUsablePrefixes(eni, 'ipv4'), 0),
    ipv6: counted.reduce((sum, eni) => sum + countUsablePrefixes(eni, 'ipv6'), 0),
  };
  const left: Record<IpFamily, number> = {
    ipv4: Math.max(0, wanted.ipv4 - have.ipv4),
    ipv6: Math.max(0, wanted.ipv6 - have.ipv6),
  };
  const perAdapter = spec.nodeCap?.ipv4PerAdapter ?? 0;
  const vSwitches: Record<string, VSwitchInfo> = {};
  for (const id of sortedKeys(input.vSwitches)) {
    const info = input.vSwitches[id];
    if (info !== undefined) vSwitches[id] = { ...info };
  }
  const allocations: (PrefixAssign | CreateEni)[] = [];
  const problems: SlotProblem[] = [];

  for (const slot of planEniSlots({ spec, enis: input.enis })) {
    if (slot.kind === 'erdma') continue;
    if (slot.eniId !== undefined) {
      const eni = input.enis[slot.eniId];
      if (eni?.status !== 'InUse' || !isPrefixEni(eni)) continue;
      const vSwitch = eni.vSwitchID === undefined ? undefined : vSwitches[eni.vSwitchID];
      const room = vSwitch === undefined ? Infinity : Math.floor(vSwitch.availableIpCount / IPV4_PREFIX_SIZE);
      const wantsV4 = Math.min(left.ipv4, freePrefixSlots(eni, perAdapter));
      if (wantsV4 > 0 && vSwitch !== undefined && room <= 0) {
        problems.push({ kind: 'vSwitchExhausted', eniId: eni.id, vSwitchId: vSwitch.vSwitchId });
      }
      const add4 = Math.min(wantsV4, room);
      const hasV6 = countUsablePrefixes(eni, 'ipv6') > 0;
      let add6 = 0;
      if (dualStack) add6 = !hasV6 && countUsablePrefixes(eni, 'ipv4') + add4 > 0 ? 1 : 0;
      else if (!ipv4 && left.ipv6 > 0 && !hasV6) add6 = 1;
      if (add4 + add6 === 0) continue;
      left.ipv4 -= add4;
      if (!dualStack) left.ipv6 -= add6;
      if (vSwitch !== undefined) vSwitch.availableIpCount -= add4 * IPV4_PREFIX_SIZE;
      allocations.push({ kind: 'assignPrefixes', eniId: eni.id, ipv4PrefixCount: add4, ipv6PrefixCount: add6 });
      continue;
    }
    if (slot.kind !== 'secondary' || left.ipv4 + left.ipv6 <= 0) continue;
    const choice = chooseVSwitchForSpec(spec, vSwitches, input.randomValue);
    if (!choice.ok) {
      problems.push({ kind: 'noVSwitchForNewEni', eniKind: slot.kind, message: choice.message });
      continue;
    }
    // The new ENI's primary address takes one slot and one address of the vSwitch.
    const room = Math.floor((choice.vSwitch.availableIpCount - 1) / IPV4_PREFIX_SIZE);
    const add4 = Math.max(0, Math.min(left.ipv4, perAdapter - 1, MAX_PREFIXES_PER_CALL, room));
    const add6 = dualStack ? (add4 > 0 ? 1 : 0) : !ipv4 && left.ipv6 > 0 ? 1 : 0;
    if (add4 + add6 === 0) continue;
    left.ipv4 -= add4;
    if (!dualStack) left.ipv6 -= add6;
    const chosen = vSwitches[choice.vSwitch.vSwitchId];
    if (chosen !== undefined) chosen.availableIpCount -= 1 + add4 * IPV4_PREFIX_SIZE;
    allocations.push({
      kind: 'createEni',
      eniKind: 'secondary',
      vSwitchId: choice.vSwitch.vSwitchId,
      // Only the primary address: ECS takes secondary addresses or prefixes in one create, not both.
      ipv4Count: 1,
      ipv6Count: 0,
      ...(add4 > 0 ? { ipv4PrefixCount: add4 } : {}),
      ...(add6 > 0 ? { ipv6PrefixCount: add6 } : {}),
    });
  }
  return { allocations, problems, unmet: left, wanted, have };
}

/** A GC clean-up of prefixes: unassign at most {@link MAX_PREFIXES_PER_CALL} `Deleting` prefixes of one InUse ENI. */
export interface PrefixGcAction {
  kind: 'unassignPrefixes';
  eniId: string;
  family: IpFamily;
  prefixes: string[];
}

/**
 * `Deleting` prefixes to unassign, in ENI id then list order, IPv4 before IPv6, ten per call, as for addresses:
 * only on InUse ENIs eniflow may touch (never an unschedulable one). The daemon marks a prefix `Deleting` only once
 * no pod uses it; the controller never marks one itself.
 */
export function planPrefixGc(input: { enis: Readonly<NetworkInterfaces> }): PrefixGcAction[] {
  const actions: PrefixGcAction[] = [];
  for (const eniId of sortedKeys(input.enis)) {
    const eni = input.enis[eniId];
    if (eni?.status !== 'InUse' || eni.unschedulable === true) continue;
    for (const family of ['ipv4', 'ipv6'] as const) {
      const prefixes = prefixEntries(eni, family)
        .filter((entry) => entry.status === 'Deleting')
        .map((entry) => entry.prefix);
      for (let start = 0; start < prefixes.length; start += MAX_PREFIXES_PER_CALL) {
        actions.push({
          kind: 'unassignPrefixes',
          eniId,
          family,
          prefixes: prefixes.slice(start, start + MAX_PREFIXES_PER_CALL),
        });
      }
    }
  }
  return actions;
}
