import { cloneNetworkInterfaces } from './eni-records.js';
import type { IpFamily, NetworkInterfaces } from './node-model.js';
import { eniFromCloud } from './openapi-merge.js';
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
