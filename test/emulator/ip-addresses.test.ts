import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import * as $Ecs from '@alicloud/ecs20140526';
import * as $OpenApi from '@alicloud/openapi-core';
import * as $Vpc from '@alicloud/vpc20160428';
import { captureError, DEMO, startEmulatorHarness } from '../support/ecs-emulator.js';
import type { EmulatorHarness } from '../support/ecs-emulator.js';

describe('secondary IPv4 and IPv6 addresses', () => {
  let harness: EmulatorHarness;
  const assign = (request: ConstructorParameters<typeof $Ecs.AssignPrivateIpAddressesRequest>[0]) =>
    harness.ecs.assignPrivateIpAddresses(
      new $Ecs.AssignPrivateIpAddressesRequest({ regionId: DEMO.regionId, ...request }),
    );
  const unassign = (eniId: string, privateIpAddress: string[]) =>
    harness.ecs.unassignPrivateIpAddresses(
      new $Ecs.UnassignPrivateIpAddressesRequest({
        regionId: DEMO.regionId,
        networkInterfaceId: eniId,
        privateIpAddress,
      }),
    );
  const assignV6 = (request: ConstructorParameters<typeof $Ecs.AssignIpv6AddressesRequest>[0]) =>
    harness.ecs.assignIpv6Addresses(new $Ecs.AssignIpv6AddressesRequest({ regionId: DEMO.regionId, ...request }));
  const unassignV6 = (eniId: string, ipv6Address: string[]) =>
    harness.ecs.unassignIpv6Addresses(
      new $Ecs.UnassignIpv6AddressesRequest({ regionId: DEMO.regionId, networkInterfaceId: eniId, ipv6Address }),
    );
  const available = async (vSwitchId: string) => {
    const response = await harness.vpc.describeVSwitchAttributes(
      new $Vpc.DescribeVSwitchAttributesRequest({ regionId: DEMO.regionId, vSwitchId }),
    );
    return response.body?.availableIpAddressCount;
  };
  const attachNow = async (eniId: string, instanceId: string) => {
    await harness.ecs.attachNetworkInterface(
      new $Ecs.AttachNetworkInterfaceRequest({ regionId: DEMO.regionId, networkInterfaceId: eniId, instanceId }),
    );
  };

  before(async () => {
    harness = await startEmulatorHarness();
  });
  beforeEach(async () => {
    await harness.emulator.admin.reset();
  });
  after(async () => {
    await harness.close();
  });

  it('assigns the lowest free addresses, answers the string-array shape and updates AvailableIpAddressCount', async () => {
    const before = await available(DEMO.vSwitchH);
    // /20 = 4096 addresses, 4 reserved, two primaries of the fixture's instances in zone h.
    assert.equal(before, 4096 - 4 - 2);
    const eniId = await harness.createEni();
    const response = await assign({ networkInterfaceId: eniId, secondaryPrivateIpAddressCount: 3 });
    const set = response.body?.assignedPrivateIpAddressesSet;
    assert.equal(set?.networkInterfaceId, eniId);
    assert.deepEqual(set?.privateIpSet?.privateIpAddress, ['10.10.0.4', '10.10.0.5', '10.10.0.6']);
    assert.equal(await available(DEMO.vSwitchH), 4096 - 4 - 2 - 4);
    await unassign(eniId, ['10.10.0.5']);
    assert.equal(await available(DEMO.vSwitchH), 4096 - 4 - 2 - 3);
    // The released address is the lowest free one again.
    const again = await assign({ networkInterfaceId: eniId, secondaryPrivateIpAddressCount: 1 });
    assert.deepEqual(again.body?.assignedPrivateIpAddressesSet?.privateIpSet?.privateIpAddress, ['10.10.0.5']);
    const explicit = await assign({ networkInterfaceId: eniId, privateIpAddress: ['10.10.0.100'] });
    assert.deepEqual(explicit.body?.assignedPrivateIpAddressesSet?.privateIpSet?.privateIpAddress, ['10.10.0.100']);
  });

  it('refuses more than 10 addresses per call, conflicting parameters and foreign or taken addresses', async () => {
    const eniId = await harness.createEni();
    const tooMany = await captureError(() => assign({ networkInterfaceId: eniId, secondaryPrivateIpAddressCount: 11 }));
    assert.equal(tooMany.code, 'InvalidParameter');
    const both = await captureError(() =>
      assign({ networkInterfaceId: eniId, secondaryPrivateIpAddressCount: 1, privateIpAddress: ['10.10.0.50'] }),
    );
    assert.equal(both.code, 'InvalidParameter.Conflict');
    const outside = await captureError(() => assign({ networkInterfaceId: eniId, privateIpAddress: ['10.99.0.7'] }));
    assert.equal(outside.code, 'InvalidVSwitchId.IpInvalid');
    const reserved = await captureError(() =>
      assign({ networkInterfaceId: eniId, privateIpAddress: ['10.10.15.255'] }),
    );
    assert.equal(reserved.code, 'InvalidVSwitchId.IpInvalid');
    const taken = await captureError(() => assign({ networkInterfaceId: eniId, privateIpAddress: ['10.10.0.1'] }));
    assert.equal(taken.code, 'InvalidPrivateIpAddress.Duplicated');
    const missing = await captureError(() =>
      assign({ networkInterfaceId: 'eni-nope', secondaryPrivateIpAddressCount: 1 }),
    );
    assert.equal(missing.code, 'InvalidEniId.NotFound');
  });

  it('caps IPv4 per attached ENI at EniPrivateIpAddressQuantity (InvalidOperation.Ipv4CountExceeded, 403)', async () => {
    const eniId = await harness.createEni({ secondaryPrivateIpAddressCount: 2 });
    await attachNow(eniId, DEMO.instanceLargeH);
    await assign({ networkInterfaceId: eniId, secondaryPrivateIpAddressCount: 3 });
    // ecs.g7.large: 6 IPv4 per ENI including the primary; the ENI has 6 now.
    const error = await captureError(() => assign({ networkInterfaceId: eniId, secondaryPrivateIpAddressCount: 1 }));
    assert.ok(error instanceof $OpenApi.ClientError);
    assert.equal(error.code, 'InvalidOperation.Ipv4CountExceeded');
    assert.equal(error.statusCode, 403);
    // An ENI with more addresses than the type allows cannot be attached either.
    const big = await harness.createEni({ secondaryPrivateIpAddressCount: 10 });
    const attachBig = await captureError(() => attachNow(big, DEMO.instanceLargeH));
    assert.equal(attachBig.code, 'InvalidOperation.Ipv4CountExceeded');
  });

  it('answers QuotaExceeded.PrivateIpAddress (400) when the vSwitch runs out during an assign', async () => {
    for (let i = 0; i < 5; i++)
      await harness.createEni({ vSwitchId: DEMO.vSwitchHSmall, secondaryPrivateIpAddressCount: 49 });
    const last = await harness.createEni({ vSwitchId: DEMO.vSwitchHSmall });
    await assign({ networkInterfaceId: last, secondaryPrivateIpAddressCount: 1 });
    assert.equal(await available(DEMO.vSwitchHSmall), 0);
    const error = await captureError(() => assign({ networkInterfaceId: last, secondaryPrivateIpAddressCount: 1 }));
    assert.ok(error instanceof $OpenApi.ClientError);
    assert.equal(error.code, 'QuotaExceeded.PrivateIpAddress');
    assert.equal(error.statusCode, 400);
  });

  it('unassigns only secondary addresses of the ENI (InvalidIp.IpUnassigned otherwise), all or nothing', async () => {
    const eniId = await harness.createEni({ secondaryPrivateIpAddressCount: 2 });
    const primary = await captureError(() => unassign(eniId, ['10.10.0.3']));
    assert.equal(primary.code, 'InvalidIp.IpUnassigned');
    const mixed = await captureError(() => unassign(eniId, ['10.10.0.4', '10.10.0.200']));
    assert.equal(mixed.code, 'InvalidIp.IpUnassigned');
    const inventory = await harness.emulator.admin.inventory();
    assert.deepEqual(inventory.networkInterfaces.find((eni) => eni.eniId === eniId)?.secondaryIps, [
      '10.10.0.4',
      '10.10.0.5',
    ]);
  });

  it('replays AssignPrivateIpAddresses for the same ClientToken without taking new addresses', async () => {
    const eniId = await harness.createEni();
    const request = { networkInterfaceId: eniId, secondaryPrivateIpAddressCount: 2, clientToken: 'assign-1' };
    const first = await assign(request);
    const second = await assign(request);
    assert.deepEqual(
      second.body?.assignedPrivateIpAddressesSet?.privateIpSet?.privateIpAddress,
      first.body?.assignedPrivateIpAddressesSet?.privateIpSet?.privateIpAddress,
    );
    assert.notEqual(second.body?.requestId, first.body?.requestId);
    const inventory = await harness.emulator.admin.inventory();
    assert.equal(inventory.networkInterfaces.find((eni) => eni.eniId === eniId)?.secondaryIps.length, 2);
  });

  it('assigns and unassigns IPv6, capped per ENI and refused on a vSwitch without IPv6', async () => {
    const eniId = await harness.createEni();
    const response = await assignV6({ networkInterfaceId: eniId, ipv6AddressCount: 2, clientToken: 'v6-1' });
    assert.equal(response.body?.networkInterfaceId, eniId);
    assert.deepEqual(response.body?.ipv6Sets?.ipv6Address, ['2408:4005:3f2:a00::1', '2408:4005:3f2:a00::2']);
    const replay = await assignV6({ networkInterfaceId: eniId, ipv6AddressCount: 2, clientToken: 'v6-1' });
    assert.deepEqual(replay.body?.ipv6Sets?.ipv6Address, response.body?.ipv6Sets?.ipv6Address);
    await unassignV6(eniId, ['2408:4005:3f2:a00:0:0:0:1']);
    const notThere = await captureError(() => unassignV6(eniId, ['2408:4005:3f2:a00::1']));
    assert.equal(notThere.code, 'InvalidIp.IpUnassigned');
    await attachNow(eniId, DEMO.instanceLargeH);
    await assignV6({ networkInterfaceId: eniId, ipv6AddressCount: 5 });
    // ecs.g7.large: 6 IPv6 per ENI.
    const exceeded = await captureError(() => assignV6({ networkInterfaceId: eniId, ipv6AddressCount: 1 }));
    assert.ok(exceeded instanceof $OpenApi.ClientError);
    assert.equal(exceeded.code, 'InvalidOperation.Ipv6CountExceeded');
    assert.equal(exceeded.statusCode, 403);
    const v4only = await harness.createEni({ vSwitchId: DEMO.vSwitchIIpv4Only });
    const noV6 = await captureError(() => assignV6({ networkInterfaceId: v4only, ipv6AddressCount: 1 }));
    assert.equal(noV6.code, 'InvalidVSwitch.Ipv6NotTurnOn');
  });

  it('refuses address changes while the ENI is in a transition state', async () => {
    await harness.emulator.admin.updateSettings({ transitionDelays: { attachMs: 5_000 } });
    const eniId = await harness.createEni();
    await attachNow(eniId, DEMO.instanceLargeH);
    const error = await captureError(() => assign({ networkInterfaceId: eniId, secondaryPrivateIpAddressCount: 1 }));
    assert.equal(error.code, 'InvalidOperation.InvalidEniState');
    await harness.emulator.admin.updateSettings({ transitionDelays: { attachMs: 0 } });
  });
});

describe('instance, instance-type and vSwitch reads', () => {
  let harness: EmulatorHarness;
  before(async () => {
    harness = await startEmulatorHarness();
  });
  after(async () => {
    await harness.close();
  });

  it('describes instance types with the ENI quotas, bandwidth and network cards, filtered and paged', async () => {
    const all = await harness.ecs.describeInstanceTypes(new $Ecs.DescribeInstanceTypesRequest({}));
    assert.equal(all.body?.instanceTypes?.instanceType?.length, 3);
    assert.equal(all.body?.nextToken, '');
    const one = await harness.ecs.describeInstanceTypes(
      new $Ecs.DescribeInstanceTypesRequest({ instanceTypes: ['ecs.g8ae.2xlarge'] }),
    );
    const type = one.body?.instanceTypes?.instanceType?.[0];
    assert.deepEqual(
      [type?.instanceTypeId, type?.eniQuantity, type?.eniPrivateIpAddressQuantity, type?.eniIpv6AddressQuantity],
      ['ecs.g8ae.2xlarge', 4, 15, 15],
    );
    assert.equal(type?.eriQuantity, 2);
    assert.equal(type?.eniTotalQuantity, 34);
    assert.equal(type?.eniTrunkSupported, true);
    assert.deepEqual([type?.instanceBandwidthRx, type?.instanceBandwidthTx], [4_096_000, 4_096_000]);
    assert.equal(type?.networkCardQuantity, 1);
    assert.deepEqual(
      type?.networkCards?.networkCardInfo?.map((card) => card.networkCardIndex),
      [0],
    );
    const first = await harness.ecs.describeInstanceTypes(new $Ecs.DescribeInstanceTypesRequest({ maxResults: 2 }));
    assert.equal(first.body?.instanceTypes?.instanceType?.length, 2);
    const second = await harness.ecs.describeInstanceTypes(
      new $Ecs.DescribeInstanceTypesRequest({ maxResults: 2, nextToken: first.body?.nextToken ?? '' }),
    );
    assert.deepEqual(
      second.body?.instanceTypes?.instanceType?.map((t) => t.instanceTypeId),
      ['ecs.g8ae.2xlarge'],
    );
  });

  it('describes instances by InstanceIds (a JSON array) with their ENIs', async () => {
    const response = await harness.ecs.describeInstances(
      new $Ecs.DescribeInstancesRequest({
        regionId: DEMO.regionId,
        instanceIds: JSON.stringify([DEMO.instanceLargeH, DEMO.instanceErdmaI]),
      }),
    );
    const instances = response.body?.instances?.instance ?? [];
    assert.deepEqual(
      instances.map((i) => [i.instanceId, i.instanceType, i.zoneId, i.status]),
      [
        [DEMO.instanceLargeH, 'ecs.g7.large', DEMO.zoneH, 'Running'],
        [DEMO.instanceErdmaI, 'ecs.g8ae.2xlarge', DEMO.zoneI, 'Running'],
      ],
    );
    assert.equal(instances[0]?.vpcAttributes?.vSwitchId, DEMO.vSwitchH);
    assert.equal(instances[0]?.networkInterfaces?.networkInterface?.[0]?.type, 'Primary');
    assert.equal(instances[0]?.vpcAttributes?.privateIpAddress?.ipAddress?.[0], '10.10.0.1');
  });

  it('describes vSwitches with CIDR, IPv6 and available count, filtered and paged (VPC API)', async () => {
    const byZone = await harness.vpc.describeVSwitches(
      new $Vpc.DescribeVSwitchesRequest({ regionId: DEMO.regionId, zoneId: DEMO.zoneI }),
    );
    const items = byZone.body?.vSwitches?.vSwitch ?? [];
    assert.deepEqual(
      items.map((v) => v.vSwitchId),
      [DEMO.vSwitchI, DEMO.vSwitchIIpv4Only],
    );
    assert.equal(items[0]?.ipv6CidrBlock, '2408:4005:3f2:a02::/64');
    assert.equal(items[1]?.enabledIpv6, false);
    assert.equal(items[1]?.availableIpAddressCount, 252);
    const page = await harness.vpc.describeVSwitches(
      new $Vpc.DescribeVSwitchesRequest({ regionId: DEMO.regionId, pageSize: 3, pageNumber: 2 }),
    );
    assert.equal(page.body?.totalCount, 4);
    assert.equal(page.body?.vSwitches?.vSwitch?.length, 1);
    const missing = await captureError(() =>
      harness.vpc.describeVSwitchAttributes(
        new $Vpc.DescribeVSwitchAttributesRequest({ regionId: DEMO.regionId, vSwitchId: 'vsw-none' }),
      ),
    );
    assert.equal(missing.code, 'InvalidVSwitchId.NotFound');
  });
});
