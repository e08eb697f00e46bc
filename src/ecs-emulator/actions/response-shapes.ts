import type { EniRecord, InstanceRecord, VSwitchRecord } from '../model-types.js';
import type { FixtureInstanceType } from '../fixture.js';

/**
 * The PascalCase wire form of an ENI, with the XML-derived wrapper nesting the SDK expects
 * (`PrivateIpSets.PrivateIpSet[]`, `Tags.Tag[]{TagKey,TagValue}`, …), as the real API returns it.
 */
export function eniToWire(eni: EniRecord, ownerId: string): Record<string, unknown> {
  const privateIpSet = [{ PrivateIpAddress: eni.primaryIp, Primary: true }];
  for (const ip of eni.secondaryIps) privateIpSet.push({ PrivateIpAddress: ip, Primary: false });
  return {
    NetworkInterfaceId: eni.eniId,
    Status: eni.status,
    Type: eni.type,
    ...(eni.instanceId === null ? {} : { InstanceId: eni.instanceId }),
    VpcId: eni.vpcId,
    VSwitchId: eni.vSwitchId,
    ZoneId: eni.zoneId,
    MacAddress: eni.macAddress,
    PrivateIpAddress: eni.primaryIp,
    CreationTime: eni.creationTime,
    NetworkInterfaceName: eni.name,
    Description: eni.description,
    DeleteOnRelease: eni.deleteOnRelease,
    NetworkInterfaceTrafficMode: eni.trafficMode,
    OwnerId: ownerId,
    ResourceGroupId: '',
    ServiceManaged: false,
    ...(eni.instanceId === null
      ? {}
      : { Attachment: { InstanceId: eni.instanceId, DeviceIndex: eni.deviceIndex ?? 0 } }),
    PrivateIpSets: { PrivateIpSet: privateIpSet },
    Ipv6Sets: { Ipv6Set: eni.ipv6s.map((ip) => ({ Ipv6Address: ip })) },
    Ipv4PrefixSets: { Ipv4PrefixSet: eni.ipv4Prefixes.map((prefix) => ({ Ipv4Prefix: prefix })) },
    Ipv6PrefixSets: { Ipv6PrefixSet: eni.ipv6Prefixes.map((prefix) => ({ Ipv6Prefix: prefix })) },
    SecurityGroupIds: { SecurityGroupId: eni.securityGroupIds },
    Tags: { Tag: eni.tags.map((tag) => ({ TagKey: tag.key, TagValue: tag.value })) },
  };
}

/** The wire form of a vSwitch (VPC API: `Tags.Tag[]{Key,Value}`, numeric `AvailableIpAddressCount`). */
export function vSwitchToWire(vSwitch: VSwitchRecord, ownerId: string): Record<string, unknown> {
  return {
    VSwitchId: vSwitch.vSwitchId,
    VpcId: vSwitch.vpcId,
    ZoneId: vSwitch.zoneId,
    CidrBlock: vSwitch.cidrBlock,
    ...(vSwitch.ipv6CidrBlock === null ? {} : { Ipv6CidrBlock: vSwitch.ipv6CidrBlock }),
    EnabledIpv6: vSwitch.ipv6CidrBlock !== null,
    AvailableIpAddressCount: vSwitch.ipv4.availableCount,
    Status: 'Available',
    IsDefault: false,
    VSwitchName: vSwitch.name,
    Description: '',
    CreationTime: '2026-01-01T00:00:00Z',
    NetworkAclId: '',
    OwnerId: Number(ownerId),
    ResourceGroupId: '',
    ShareType: 'Sharer',
    RouteTable: { RouteTableId: `vtb-${vSwitch.vpcId.slice(4)}`, RouteTableType: 'System' },
    Tags: { Tag: vSwitch.tags.map((tag) => ({ Key: tag.key, Value: tag.value })) },
  };
}

/** 1 Gbit/s in the Kbit/s that `InstanceBandwidthRx`/`Tx` use (the API counts 1 Gbit/s as 1,024,000 Kbit/s). */
const DEFAULT_BANDWIDTH_KBPS = 1_024_000;

export function instanceTypeToWire(type: FixtureInstanceType): Record<string, unknown> {
  const networkCards = type.networkCardQuantity ?? 1;
  return {
    InstanceTypeId: type.instanceTypeId,
    InstanceTypeFamily: type.instanceTypeFamily,
    CpuCoreCount: type.cpuCoreCount,
    MemorySize: type.memorySize,
    EniQuantity: type.eniQuantity,
    EniPrivateIpAddressQuantity: type.eniPrivateIpAddressQuantity,
    EniIpv6AddressQuantity: type.eniIpv6AddressQuantity,
    EniTotalQuantity: type.eniTotalQuantity ?? type.eniQuantity,
    EniTrunkSupported: type.eniTrunkSupported ?? false,
    EriQuantity: type.eriQuantity ?? 0,
    InstanceBandwidthRx: type.instanceBandwidthRx ?? DEFAULT_BANDWIDTH_KBPS,
    InstanceBandwidthTx: type.instanceBandwidthTx ?? DEFAULT_BANDWIDTH_KBPS,
    NetworkCardQuantity: networkCards,
    NetworkCards: {
      NetworkCardInfo: Array.from({ length: networkCards }, (_, index) => ({ NetworkCardIndex: index })),
    },
  };
}

export function instanceToWire(request: {
  instance: InstanceRecord;
  enis: EniRecord[];
  regionId: string;
}): Record<string, unknown> {
  const { instance, enis } = request;
  const primary = enis.find((eni) => eni.eniId === instance.primaryEniId);
  return {
    InstanceId: instance.instanceId,
    InstanceName: instance.name,
    HostName: instance.name,
    InstanceType: instance.instanceType.instanceTypeId,
    InstanceTypeFamily: instance.instanceType.instanceTypeFamily,
    Cpu: instance.instanceType.cpuCoreCount,
    Memory: instance.instanceType.memorySize * 1024,
    RegionId: request.regionId,
    ZoneId: instance.zoneId,
    Status: instance.status,
    InstanceNetworkType: 'vpc',
    SecurityGroupIds: { SecurityGroupId: instance.securityGroupIds },
    VpcAttributes: {
      VpcId: instance.vpcId,
      VSwitchId: instance.vSwitchId,
      NatIpAddress: '',
      PrivateIpAddress: { IpAddress: primary === undefined ? [] : [primary.primaryIp] },
    },
    NetworkInterfaces: {
      NetworkInterface: enis.map((eni) => ({
        NetworkInterfaceId: eni.eniId,
        Type: eni.type,
        MacAddress: eni.macAddress,
        PrimaryIpAddress: eni.primaryIp,
        PrivateIpSets: {
          PrivateIpSet: [
            { PrivateIpAddress: eni.primaryIp, Primary: true },
            ...eni.secondaryIps.map((ip) => ({ PrivateIpAddress: ip, Primary: false })),
          ],
        },
        Ipv6Sets: { Ipv6Set: eni.ipv6s.map((ip) => ({ Ipv6Address: ip })) },
      })),
    },
  };
}
