import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import * as $Ecs from '@alicloud/ecs20140526';
import * as $Vpc from '@alicloud/vpc20160428';
import { captureError, DEMO, demoFixtureWithTinyVSwitch, startEmulatorHarness } from '../support/ecs-emulator.js';
import type { EmulatorHarness } from '../support/ecs-emulator.js';

/** IP prefixes through the official Node SDK: create, assign, describe, unassign, quotas and exhaustion. */
describe('IP prefixes', () => {
  let harness: EmulatorHarness;
  const assign = (request: ConstructorParameters<typeof $Ecs.AssignPrivateIpAddressesRequest>[0]) =>
    harness.ecs.assignPrivateIpAddresses(
      new $Ecs.AssignPrivateIpAddressesRequest({ regionId: DEMO.regionId, ...request }),
    );
  const unassign = (request: ConstructorParameters<typeof $Ecs.UnassignPrivateIpAddressesRequest>[0]) =>
    harness.ecs.unassignPrivateIpAddresses(
      new $Ecs.UnassignPrivateIpAddressesRequest({ regionId: DEMO.regionId, ...request }),
    );
  const assignV6 = (request: ConstructorParameters<typeof $Ecs.AssignIpv6AddressesRequest>[0]) =>
    harness.ecs.assignIpv6Addresses(new $Ecs.AssignIpv6AddressesRequest({ regionId: DEMO.regionId, ...request }));
  const unassignV6 = (request: ConstructorParameters<typeof $Ecs.UnassignIpv6AddressesRequest>[0]) =>
    harness.ecs.unassignIpv6Addresses(new $Ecs.UnassignIpv6AddressesRequest({ regionId: DEMO.regionId, ...request }));
  const describeEni = async (eniId: string) => {
    const response = await harness.ecs.describeNetworkInterfaces(
      new $Ecs.DescribeNetworkInterfacesRequest({ regionId: DEMO.regionId, networkInterfaceId: [eniId] }),
    );
    const eni = response.body?.networkInterfaceSets?.networkInterfaceSet?.[0];
    assert.ok(eni, `${eniId} not described`);
    return {
      ipv4: (eni.privateIpSets?.privateIpSet ?? []).map((set) => set.privateIpAddress),
      ipv4Prefixes: (eni.ipv4PrefixSets?.ipv4PrefixSet ?? []).map((set) => set.ipv4Prefix),
      ipv6Prefixes: (eni.ipv6PrefixSets?.ipv6PrefixSet ?? []).map((set) => set.ipv6Prefix),
    };
  };
  const available = async (vSwitchId: string) => {
    const response = await harness.vpc.describeVSwitchAttributes(
      new $Vpc.DescribeVSwitchAttributesRequest({ regionId: DEMO.regionId, vSwitchId }),
    );
    return response.body?.availableIpAddressCount ?? -1;
  };
  const attach = async (eniId: string, instanceId: string) => {
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

  it('creates an ENI with /28 and /80 prefixes, each /28 taking 16 available addresses, and describes them', async () => {
    const before = await available(DEMO.vSwitchH);
    const created = await harness.ecs.createNetworkInterface(
      new $Ecs.CreateNetworkInterfaceRequest({
        regionId: DEMO.regionId,
        vSwitchId: DEMO.vSwitchH,
        securityGroupIds: [DEMO.securityGroup],
        ipv4PrefixCount: 2,
        ipv6PrefixCount: 1,
      }),
    );
    const eniId = created.body?.networkInterfaceId ?? '';
    // The first /28 holds the network address and the instances' primaries: the lowest free blocks come after it.
    const v4 = ['10.10.0.16/28', '10.10.0.32/28'];
    const v6 = ['2408:4005:3f2:a00:1::/80'];
    assert.deepEqual(
      created.body?.ipv4PrefixSets?.ipv4PrefixSet?.map((set) => set.ipv4Prefix),
      v4,
    );
    assert.deepEqual(
      created.body?.ipv6PrefixSets?.ipv6PrefixSet?.map((set) => set.ipv6Prefix),
      v6,
    );
    assert.equal(await available(DEMO.vSwitchH), before - 1 - 2 * 16);
    const described = await describeEni(eniId);
    assert.deepEqual(described.ipv4Prefixes, v4);
    assert.deepEqual(described.ipv6Prefixes, v6);
    assert.equal(described.ipv4.length, 1, 'only the primary address');
  });

  it('assigns and unassigns prefixes, answering the documented sets, and hands a freed /28 out again', async () => {
    const eniId = await harness.createEni();
    const before = await available(DEMO.vSwitchH);
    const assigned = await assign({ networkInterfaceId: eniId, ipv4PrefixCount: 3, clientToken: 'prefix-a' });
    const set = assigned.body?.assignedPrivateIpAddressesSet;
    const prefixes = set?.ipv4PrefixSet?.ipv4Prefixes ?? [];
    assert.deepEqual(prefixes, ['10.10.0.16/28', '10.10.0.32/28', '10.10.0.48/28']);
    assert.deepEqual(set?.privateIpSet?.privateIpAddress ?? [], []);
    assert.equal(await available(DEMO.vSwitchH), before - 48);

    const v6 = await assignV6({ networkInterfaceId: eniId, ipv6PrefixCount: 2, clientToken: 'prefix-v6-a' });
    assert.deepEqual(v6.body?.ipv6PrefixSets?.ipv6Prefix, ['2408:4005:3f2:a00:1::/80', '2408:4005:3f2:a00:2::/80']);
    assert.deepEqual(v6.body?.ipv6Sets?.ipv6Address ?? [], []);

    await unassign({ networkInterfaceId: eniId, ipv4Prefix: ['10.10.0.32/28'] });
    await unassignV6({ networkInterfaceId: eniId, ipv6Prefix: ['2408:4005:3f2:a00:1::/80'] });
    assert.equal(await available(DEMO.vSwitchH), before - 32);
    const described = await describeEni(eniId);
    assert.deepEqual(described.ipv4Prefixes, ['10.10.0.16/28', '10.10.0.48/28']);
    assert.deepEqual(described.ipv6Prefixes, ['2408:4005:3f2:a00:2::/80']);

    const again = await assign({ networkInterfaceId: eniId, ipv4PrefixCount: 1 });
    assert.deepEqual(again.body?.assignedPrivateIpAddressesSet?.ipv4PrefixSet?.ipv4Prefixes, ['10.10.0.32/28']);
    // A prefix that is not (or no longer) on the ENI answers the unassigned-IP code, so retries count as done.
    const gone = await captureError(() =>
      unassignV6({ networkInterfaceId: eniId, ipv6Prefix: ['2408:4005:3f2:a00:1::/80'] }),
    );
    assert.equal(gone.code, 'InvalidIp.IpUnassigned');
  });

  it('replays a prefix assign under its ClientToken and refuses the token with other parameters', async () => {
    const eniId = await harness.createEni();
    const first = await assign({ networkInterfaceId: eniId, ipv4PrefixCount: 2, clientToken: 'tok-prefix' });
    const before = await available(DEMO.vSwitchH);
    const replay = await assign({ networkInterfaceId: eniId, ipv4PrefixCount: 2, clientToken: 'tok-prefix' });
    assert.deepEqual(
      replay.body?.assignedPrivateIpAddressesSet?.ipv4PrefixSet?.ipv4Prefixes,
      first.body?.assignedPrivateIpAddressesSet?.ipv4PrefixSet?.ipv4Prefixes,
    );
    assert.equal(await available(DEMO.vSwitchH), before, 'the replay took nothing');
    assert.equal((await describeEni(eniId)).ipv4Prefixes.length, 2);
    const mismatch = await captureError(() =>
      assign({ networkInterfaceId: eniId, ipv4PrefixCount: 3, clientToken: 'tok-prefix' }),
    );
    assert.equal(mismatch.code, 'IdempotentParameterMismatch');
  });

  it('refuses more than 10 prefixes per call, addresses mixed with prefixes, and bad or taken prefixes', async () => {
    const eniId = await harness.createEni();
    const codeOf = async (call: () => Promise<unknown>) => (await captureError(call)).code;
    assert.equal(await codeOf(() => assign({ networkInterfaceId: eniId, ipv4PrefixCount: 11 })), 'InvalidParameter');
    assert.equal(
      await codeOf(() => assign({ networkInterfaceId: eniId, ipv4PrefixCount: 1, secondaryPrivateIpAddressCount: 1 })),
      'InvalidParameter.Conflict',
    );
    assert.equal(
      await codeOf(() => assign({ networkInterfaceId: eniId, ipv4PrefixCount: 1, ipv4Prefix: ['10.10.1.0/28'] })),
      'InvalidParameter.Conflict',
    );
    assert.equal(
      await codeOf(() => assignV6({ networkInterfaceId: eniId, ipv6PrefixCount: 1, ipv6AddressCount: 1 })),
      'InvalidParameter.Conflict',
    );
    assert.equal(
      await codeOf(() => harness.createEni({ secondaryPrivateIpAddressCount: 1, ipv4PrefixCount: 1 })),
      'InvalidParameter.Conflict',
    );
    assert.equal(
      await codeOf(() =>
        unassign({ networkInterfaceId: eniId, ipv4Prefix: ['10.10.1.0/28'], privateIpAddress: ['10.10.0.9'] }),
      ),
      'InvalidParameter.Conflict',
    );
    // Not on a /28 boundary, not a /28, outside the vSwitch, overlapping addresses in use.
    assert.equal(
      await codeOf(() => assign({ networkInterfaceId: eniId, ipv4Prefix: ['10.10.1.8/28'] })),
      'InvalidParameter',
    );
    assert.equal(
      await codeOf(() => assign({ networkInterfaceId: eniId, ipv4Prefix: ['10.10.1.0/27'] })),
      'InvalidParameter',
    );
    assert.equal(
      await codeOf(() => assign({ networkInterfaceId: eniId, ipv4Prefix: ['10.99.0.0/28'] })),
      'InvalidVSwitchId.IpInvalid',
    );
    assert.equal(
      await codeOf(() => assign({ networkInterfaceId: eniId, ipv4Prefix: ['10.10.0.0/28'] })),
      'InvalidVSwitchId.IpInvalid',
      'the first /28 holds the reserved network address',
    );
    await assign({ networkInterfaceId: eniId, privateIpAddress: ['10.10.2.5'] });
    assert.equal(
      await codeOf(() => assign({ networkInterfaceId: eniId, ipv4Prefix: ['10.10.2.0/28'] })),
      'InvalidPrivateIpAddress.Duplicated',
    );
    // And the other way round: an address inside a prefix is taken.
    const explicit = await assign({ networkInterfaceId: eniId, ipv4Prefix: ['10.10.3.0/28'] });
    assert.deepEqual(explicit.body?.assignedPrivateIpAddressesSet?.ipv4PrefixSet?.ipv4Prefixes, ['10.10.3.0/28']);
    assert.equal(
      await codeOf(() => assign({ networkInterfaceId: eniId, privateIpAddress: ['10.10.3.7'] })),
      'InvalidPrivateIpAddress.Duplicated',
    );
    const ipv4Only = await harness.createEni({ vSwitchId: DEMO.vSwitchIIpv4Only });
    assert.equal(
      await codeOf(() => assignV6({ networkInterfaceId: ipv4Only, ipv6PrefixCount: 1 })),
      'InvalidVSwitch.Ipv6NotTurnOn',
    );
  });

  it('counts the primary, secondary addresses and prefixes against EniPrivateIpAddressQuantity', async () => {
    // ecs.g7.large: 6 IPv4 and 6 IPv6 slots per ENI.
    const eniId = await harness.createEni({ vSwitchId: DEMO.vSwitchH, secondaryPrivateIpAddressCount: 2 });
    await attach(eniId, DEMO.instanceLargeH);
    await harness.waitForStatus(eniId, 'InUse');
    const over = await captureError(() => assign({ networkInterfaceId: eniId, ipv4PrefixCount: 4 }));
    assert.equal(over.code, 'InvalidOperation.Ipv4CountExceeded');
    await assign({ networkInterfaceId: eniId, ipv4PrefixCount: 3 });
    const full = await captureError(() => assign({ networkInterfaceId: eniId, secondaryPrivateIpAddressCount: 1 }));
    assert.equal(full.code, 'InvalidOperation.Ipv4CountExceeded');
    await assignV6({ networkInterfaceId: eniId, ipv6AddressCount: 2 });
    const overV6 = await captureError(() => assignV6({ networkInterfaceId: eniId, ipv6PrefixCount: 5 }));
    assert.equal(overV6.code, 'InvalidOperation.Ipv6CountExceeded');
    await assignV6({ networkInterfaceId: eniId, ipv6PrefixCount: 4 });

    // A detached ENI holding more than the instance type allows cannot be attached to it.
    const big = await harness.createEni({ ipv4PrefixCount: 6 });
    const refused = await captureError(() => attach(big, DEMO.instanceLargeH));
    assert.equal(refused.code, 'InvalidOperation.Ipv4CountExceeded');
  });

  it('answers InvalidVSwitchId.IpNotEnough when no free /28 is left, taking nothing, and frees prefixes on delete', async () => {
    // 10.10.16.0/24: 16 blocks, the first and last hold reserved addresses, the primary sits in the first.
    const first = await harness.createEni({ vSwitchId: DEMO.vSwitchHSmall, ipv4PrefixCount: 10 });
    const before = await available(DEMO.vSwitchHSmall);
    assert.equal(before, 256 - 4 - 1 - 160);
    const short = await captureError(() => harness.createEni({ vSwitchId: DEMO.vSwitchHSmall, ipv4PrefixCount: 5 }));
    assert.equal(short.code, 'InvalidVSwitchId.IpNotEnough');
    assert.equal(await available(DEMO.vSwitchHSmall), before, 'a refused create takes nothing');
    const last = await captureError(() => assign({ networkInterfaceId: first, ipv4PrefixCount: 5 }));
    assert.equal(last.code, 'InvalidVSwitchId.IpNotEnough');
    assert.equal((await describeEni(first)).ipv4Prefixes.length, 10);
    // Addresses are still there (the last block and the rest of the first): prefixes ran out first.
    assert.ok(before > 0);

    await harness.ecs.deleteNetworkInterface(
      new $Ecs.DeleteNetworkInterfaceRequest({ regionId: DEMO.regionId, networkInterfaceId: first }),
    );
    await harness.waitForStatus(first, 'gone');
    assert.equal(await available(DEMO.vSwitchHSmall), 256 - 4);
  });

  it('keeps prefixes through a state snapshot round trip', async () => {
    const eniId = await harness.createEni({ ipv4PrefixCount: 2, ipv6PrefixCount: 1 });
    const snapshot = await harness.emulator.admin.saveState();
    const before = await available(DEMO.vSwitchH);
    await harness.emulator.admin.reset();
    await harness.emulator.admin.loadState(snapshot);
    assert.equal(await available(DEMO.vSwitchH), before);
    const described = await describeEni(eniId);
    assert.equal(described.ipv4Prefixes.length, 2);
    assert.equal(described.ipv6Prefixes.length, 1);
    // The restored prefixes are claimed: the next one comes after them.
    const next = await assign({ networkInterfaceId: eniId, ipv4PrefixCount: 1 });
    assert.ok(
      !described.ipv4Prefixes.includes(next.body?.assignedPrivateIpAddressesSet?.ipv4PrefixSet?.ipv4Prefixes?.[0]),
    );
  });

  it('starts fixture ENIs with the prefixes they ask for', async () => {
    const fixture = await demoFixtureWithTinyVSwitch();
    fixture.networkInterfaces = [
      {
        networkInterfaceId: 'eni-fixture-prefixes',
        vSwitchId: DEMO.vSwitchH,
        securityGroupIds: [DEMO.securityGroup],
        instanceId: DEMO.instanceLargeH,
        ipv4PrefixCount: 2,
        ipv6PrefixCount: 1,
      },
    ];
    const started = await startEmulatorHarness({ fixture });
    try {
      const inventory = await started.emulator.admin.inventory();
      assert.deepEqual(
        inventory.ipPrefixes.map((item) => [item.prefix, item.family, item.eniId, item.instanceId]),
        [
          ['10.10.0.16/28', 'ipv4', 'eni-fixture-prefixes', DEMO.instanceLargeH],
          ['10.10.0.32/28', 'ipv4', 'eni-fixture-prefixes', DEMO.instanceLargeH],
          ['2408:4005:3f2:a00:1::/80', 'ipv6', 'eni-fixture-prefixes', DEMO.instanceLargeH],
        ],
      );
    } finally {
      await started.close();
    }
  });

  it('has no /28 in a vSwitch narrower than one', async () => {
    const tiny = await startEmulatorHarness({ fixture: await demoFixtureWithTinyVSwitch() });
    try {
      const refused = await captureError(() => tiny.createEni({ vSwitchId: DEMO.vSwitchHSmall, ipv4PrefixCount: 1 }));
      assert.equal(refused.code, 'InvalidVSwitchId.IpNotEnough');
    } finally {
      await tiny.close();
    }
  });
});
