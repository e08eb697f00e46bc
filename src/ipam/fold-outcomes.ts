import { eniConditionsAfterAllocation } from './conditions.js';
import type { EniAllocationError } from './conditions.js';
import { eniKindOf } from './eni-plan.js';
import { cloneNetworkInterfaces } from './eni-records.js';
import { sortedKeys } from './node-model.js';
import type { IpFamily, NetworkInterfaces } from './node-model.js';
import { eniFromCloud } from './openapi-merge.js';
import { forgetPrefixes, recordAssignedPrefixes } from './prefix-records.js';
import type { CloudEni, VSwitchCidrs } from './cloud-eni.js';

/**
 * Records addresses the cloud just assigned to an ENI as `Valid` and idle (the reference's `addIPToMap`): an
 * address already present keeps its pod binding and gets its status back to `Valid`.
 */
export function recordAssignedIps(input: {
  enis: Readonly<NetworkInterfaces>;
  eniId: string;
  family: IpFamily;
  ips: readonly string[];
}): NetworkInterfaces {
  const enis = cloneNetworkInterfaces(input.enis);
  const eni = enis[input.eniId];
  if (eni === undefined) return enis;
  const map = eni[input.family] ?? {};
  for (const ip of input.ips) {
    const existing = map[ip];
    map[ip] = existing === undefined ? { ip, primary: false, status: 'Valid' } : { ...existing, status: 'Valid' };
  }
  eni[input.family] = map;
  return enis;
}

/** Records an ENI the workflow created and attached (InUse), with its vSwitch CIDRs. */
export function recordCreatedEni(input: {
  enis: Readonly<NetworkInterfaces>;
  cloud: CloudEni;
  cidrs?: VSwitchCidrs | undefined;
}): NetworkInterfaces {
  const enis = cloneNetworkInterfaces(input.enis);
  enis[input.cloud.eniId] = eniFromCloud({ cloud: input.cloud, cidrs: input.cidrs });
  return enis;
}

/**
 * Records an ENI the workflow created whose attach failed for now (5xx, timeout): `Available`, as the cloud has it,
 * with an `OperationErr` condition saying why. The daemon hands out addresses of `InUse` ENIs only, so it serves no
 * pod; the next pass that needs an ENI of its kind attaches it, and one with no demand left is released by the GC.
 */
export function recordEniAwaitingAttach(input: {
  enis: Readonly<NetworkInterfaces>;
  cloud: CloudEni;
  cidrs?: VSwitchCidrs | undefined;
  message: string;
  nowRfc3339: string;
}): NetworkInterfaces {
  const enis = cloneNetworkInterfaces(input.enis);
  const eni = eniFromCloud({ cloud: { ...input.cloud, status: 'Available' }, cidrs: input.cidrs });
  eni.conditions = { OperationErr: { observedTime: input.nowRfc3339, message: input.message } };
  enis[input.cloud.eniId] = eni;
  return enis;
}

/**
 * Marks an ENI for GC. Used when a compensating delete failed: the ENI is written into the CR as `Deleting` (a
 * minimal record if the CR never knew it), so no ENI the controller created is ever unknown to the CR.
 */
export function recordEniForDeletion(input: { enis: Readonly<NetworkInterfaces>; eniId: string }): NetworkInterfaces {
  const enis = cloneNetworkInterfaces(input.enis);
  const eni = enis[input.eniId];
  enis[input.eniId] = eni === undefined ? { id: input.eniId, status: 'Deleting' } : { ...eni, status: 'Deleting' };
  return enis;
}

/** Drops an ENI the cloud has deleted. */
export function forgetEni(input: { enis: Readonly<NetworkInterfaces>; eniId: string }): NetworkInterfaces {
  const enis = cloneNetworkInterfaces(input.enis);
  delete enis[input.eniId];
  return enis;
}

/** Drops addresses the cloud has unassigned. */
export function forgetIps(input: {
  enis: Readonly<NetworkInterfaces>;
  eniId: string;
  family: IpFamily;
  ips: readonly string[];
}): NetworkInterfaces {
  const enis = cloneNetworkInterfaces(input.enis);
  const map = enis[input.eniId]?.[input.family];
  if (map !== undefined) for (const ip of input.ips) delete map[ip];
  return enis;
}

/** An ENI kept in the CR but out of every plan, with the reason as its `OperationErr` condition. */
export function keepEniUntouched(input: {
  enis: Readonly<NetworkInterfaces>;
  eniId: string;
  message: string;
  nowRfc3339: string;
}): NetworkInterfaces {
  const enis = cloneNetworkInterfaces(input.enis);
  const base = enis[input.eniId] ?? { id: input.eniId, status: 'Deleting' as const };
  enis[input.eniId] = {
    ...base,
    unschedulable: true,
    conditions: { ...base.conditions, OperationErr: { observedTime: input.nowRfc3339, message: input.message } },
  };
  return enis;
}

/** What one cloud step did to the node's ENIs, as the CR must learn it. */
export type EniOutcome =
  | { kind: 'ipsAssigned'; eniId: string; family: IpFamily; ips: string[] }
  | { kind: 'eniCreated'; cloud: CloudEni; cidrs?: VSwitchCidrs | undefined }
  | {
      kind: 'eniAwaitingAttach';
      cloud: CloudEni;
      cidrs?: VSwitchCidrs | undefined;
      message: string;
      nowRfc3339: string;
    }
  | { kind: 'eniLeftForGc'; eniId: string }
  | { kind: 'eniRemoved'; eniId: string }
  | { kind: 'ipsReleased'; eniId: string; family: IpFamily; ips: string[] }
  | { kind: 'prefixesAssigned'; eniId: string; family: IpFamily; prefixes: string[] }
  | { kind: 'prefixesReleased'; eniId: string; family: IpFamily; prefixes: string[] }
  | { kind: 'eniKeptUntouched'; eniId: string; message: string; nowRfc3339: string };

export function applyEniOutcome(enis: Readonly<NetworkInterfaces>, outcome: EniOutcome): NetworkInterfaces {
  switch (outcome.kind) {
    case 'ipsAssigned':
      return recordAssignedIps({ enis, eniId: outcome.eniId, family: outcome.family, ips: outcome.ips });
    case 'eniCreated':
      return recordCreatedEni({ enis, cloud: outcome.cloud, cidrs: outcome.cidrs });
    case 'eniAwaitingAttach':
      return recordEniAwaitingAttach({
        enis,
        cloud: outcome.cloud,
        cidrs: outcome.cidrs,
        message: outcome.message,
        nowRfc3339: outcome.nowRfc3339,
      });
    case 'eniLeftForGc':
      return recordEniForDeletion({ enis, eniId: outcome.eniId });
    case 'eniRemoved':
      return forgetEni({ enis, eniId: outcome.eniId });
    case 'ipsReleased':
      return forgetIps({ enis, eniId: outcome.eniId, family: outcome.family, ips: outcome.ips });
    case 'prefixesAssigned':
      return recordAssignedPrefixes({ enis, eniId: outcome.eniId, family: outcome.family, prefixes: outcome.prefixes });
    case 'prefixesReleased':
      return forgetPrefixes({ enis, eniId: outcome.eniId, family: outcome.family, prefixes: outcome.prefixes });
    case 'eniKeptUntouched':
      return keepEniUntouched({ enis, eniId: outcome.eniId, message: outcome.message, nowRfc3339: outcome.nowRfc3339 });
  }
}

/**
 * The ENIs after a pass's cloud steps, folded in plan order (never in the order the calls happened to finish), so
 * the status written is the same whatever the timing, and the same on replay.
 */
export function foldEniOutcomes(enis: Readonly<NetworkInterfaces>, outcomes: readonly EniOutcome[]): NetworkInterfaces {
  return outcomes.reduce<NetworkInterfaces>(
    (folded, outcome) => applyEniOutcome(folded, outcome),
    cloneNetworkInterfaces(enis),
  );
}

/**
 * The ENIs' `InsufficientIP`/`OperationErr` conditions after a pass's allocations: set from the errors each ENI
 * met, cleared from an ENI that met none. Only InUse ENIs eniflow manages carry them.
 */
export function applyAllocationConditions(input: {
  enis: Readonly<NetworkInterfaces>;
  errors: readonly { eniId: string; error: EniAllocationError }[];
  nowMs: number;
}): NetworkInterfaces {
  const enis = cloneNetworkInterfaces(input.enis);
  for (const eniId of sortedKeys(enis)) {
    const eni = enis[eniId];
    if (eni?.status !== 'InUse' || eniKindOf(eni) === undefined || eni.unschedulable === true) continue;
    const conditions = eniConditionsAfterAllocation({
      current: eni.conditions,
      errors: input.errors.filter((entry) => entry.eniId === eniId).map((entry) => entry.error),
      nowMs: input.nowMs,
    });
    if (conditions === undefined) delete eni.conditions;
    else eni.conditions = conditions;
  }
  return enis;
}
