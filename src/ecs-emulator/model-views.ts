import type { CloudState } from './cloud-state.js';
import type { Inventory, StateSnapshot } from './model-types.js';

/** Every ENI and address with owner, tags and status, as leak audits and benchmarks read it. */
export function inventoryOf(model: CloudState): Inventory {
  const networkInterfaces: Inventory['networkInterfaces'] = [];
  const ipAddresses: Inventory['ipAddresses'] = [];
  const ipPrefixes: Inventory['ipPrefixes'] = [];
  for (const eni of model.listEnis()) {
    const { tags, ...rest } = eni;
    networkInterfaces.push({
      ...structuredClone(rest),
      tags: Object.fromEntries(tags.map((tag) => [tag.key, tag.value])),
    });
    const owner = { eniId: eni.eniId, instanceId: eni.instanceId, vSwitchId: eni.vSwitchId };
    ipAddresses.push({ address: eni.primaryIp, family: 'ipv4', primary: true, ...owner });
    for (const ip of eni.secondaryIps) ipAddresses.push({ address: ip, family: 'ipv4', primary: false, ...owner });
    for (const ip of eni.ipv6s) ipAddresses.push({ address: ip, family: 'ipv6', primary: false, ...owner });
    for (const prefix of eni.ipv4Prefixes) ipPrefixes.push({ prefix, family: 'ipv4', ...owner });
    for (const prefix of eni.ipv6Prefixes) ipPrefixes.push({ prefix, family: 'ipv6', ...owner });
  }
  return {
    regionId: model.regionId,
    vSwitches: [...model.listVSwitches()].map((v) => ({
      vSwitchId: v.vSwitchId,
      vpcId: v.vpcId,
      zoneId: v.zoneId,
      cidrBlock: v.cidrBlock,
      ipv6CidrBlock: v.ipv6CidrBlock,
      availableIpAddressCount: v.ipv4.availableCount,
      usedIpv4Count: v.ipv4.usedCount,
      usedIpv6Count: v.ipv6?.usedCount ?? 0,
      ipv6PrefixCount: v.ipv6?.prefixCount ?? 0,
    })),
    instances: [...model.listInstances()].map((instance) => ({
      instanceId: instance.instanceId,
      instanceType: instance.instanceType.instanceTypeId,
      zoneId: instance.zoneId,
      status: instance.status,
      eniIds: model.enisOfInstance(instance.instanceId).map((eni) => eni.eniId),
    })),
    networkInterfaces,
    ipAddresses,
    ipPrefixes,
  };
}

/** The whole cloud state as JSON; pending transitions are stored with the time they still need. */
export function snapshotOf(model: CloudState): StateSnapshot {
  const enis = [...model.listEnis()];
  const now = model.now();
  return {
    format: 'eniflow-ecs-emulator-state/1',
    savedAt: new Date(now).toISOString(),
    regionId: model.regionId,
    ownerId: model.ownerId,
    topology: {
      vSwitches: [...model.listVSwitches()].map((v) => ({
        vSwitchId: v.vSwitchId,
        vpcId: v.vpcId,
        zoneId: v.zoneId,
        cidrBlock: v.cidrBlock,
        ...(v.ipv6CidrBlock === null ? {} : { ipv6CidrBlock: v.ipv6CidrBlock }),
        vSwitchName: v.name,
        tags: Object.fromEntries(v.tags.map((tag) => [tag.key, tag.value])),
      })),
      securityGroups: model.listSecurityGroups(),
      instanceTypes: [...model.listInstanceTypes()],
      instances: [...model.listInstances()].map((instance) => ({
        instanceId: instance.instanceId,
        instanceType: instance.instanceType.instanceTypeId,
        vSwitchId: instance.vSwitchId,
        securityGroupIds: instance.securityGroupIds,
        status: instance.status,
        instanceName: instance.name,
        primaryEniId: instance.primaryEniId,
      })),
    },
    nextEniNumber: model.eniNumberCounter,
    networkInterfaces: enis.map((eni) => {
      const copy = structuredClone(eni);
      if (copy.pending !== null) copy.pending.dueAtMs = Math.max(0, copy.pending.dueAtMs - now);
      return copy;
    }),
  };
}
