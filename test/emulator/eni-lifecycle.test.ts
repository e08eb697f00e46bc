import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import * as $Ecs from '@alicloud/ecs20140526';
import * as $OpenApi from '@alicloud/openapi-core';
import * as $Vpc from '@alicloud/vpc20160428';
import { captureError, DEMO, startEmulatorHarness } from '../support/ecs-emulator.js';
import type { EmulatorHarness } from '../support/ecs-emulator.js';

describe('ENI lifecycle', () => {
  let harness: EmulatorHarness;
  const attach = (eniId: string, instanceId: string) =>
    harness.ecs.attachNetworkInterface(
      new $Ecs.AttachNetworkInterfaceRequest({ regionId: DEMO.regionId, networkInterfaceId: eniId, instanceId }),
    );
  const detach = (eniId: string, instanceId: string) =>
    harness.ecs.detachNetworkInterface(
      new $Ecs.DetachNetworkInterfaceRequest({ regionId: DEMO.regionId, networkInterfaceId: eniId, instanceId }),
    );
  const remove = (eniId: string) =>
    harness.ecs.deleteNetworkInterface(
      new $Ecs.DeleteNetworkInterfaceRequest({ regionId: DEMO.regionId, networkInterfaceId: eniId }),
    );
  const describeEnis = async (request: ConstructorParameters<typeof $Ecs.DescribeNetworkInterfacesRequest>[0]) => {
    const response = await harness.ecs.describeNetworkInterfaces(
      new $Ecs.DescribeNetworkInterfacesRequest({ regionId: DEMO.regionId, ...request }),
    );
    assert.ok(response.body);
    return response.body;
  };

  before(async () => {
    harness = await startEmulatorHarness();
  });
  beforeEach(async () => {
    await harness.emulator.admin.reset();
    await harness.emulator.admin.updateSettings({ transitionDelays: { attachMs: 0, detachMs: 0, deleteMs: 0 } });
  });
  after(async () => {
    await harness.close();
  });

  it('creates an Available Secondary ENI with its primary IP, secondaries, IPv6, tags and security groups', async () => {
    const response = await harness.ecs.createNetworkInterface(
      new $Ecs.CreateNetworkInterfaceRequest({
        regionId: DEMO.regionId,
        vSwitchId: DEMO.vSwitchH,
        securityGroupIds: [DEMO.securityGroup],
        secondaryPrivateIpAddressCount: 2,
        ipv6AddressCount: 1,
        description: 'managed by test',
        tag: [new $Ecs.CreateNetworkInterfaceRequestTag({ key: 'creator', value: 'eniflow' })],
      }),
    );
    const body = response.body;
    assert.ok(body);
    assert.match(body.networkInterfaceId ?? '', /^eni-/);
    assert.equal(body.status, 'Available');
    assert.equal(body.type, 'Secondary');
    assert.equal(body.vpcId, DEMO.vpcId);
    assert.equal(body.zoneId, DEMO.zoneH);
    assert.match(body.macAddress ?? '', /^00:16:3e(:[0-9a-f]{2}){3}$/);
    // The four instances' primary ENIs took .1 and .2 in this vSwitch; the lowest free addresses follow.
    assert.equal(body.privateIpAddress, '10.10.0.3');
    assert.deepEqual(
      body.privateIpSets?.privateIpSet?.map((ip) => [ip.privateIpAddress, ip.primary]),
      [
        ['10.10.0.3', true],
        ['10.10.0.4', false],
        ['10.10.0.5', false],
      ],
    );
    assert.deepEqual(
      body.tags?.tag?.map((tag) => `${tag.tagKey}=${tag.tagValue}`),
      ['creator=eniflow'],
    );
    assert.equal(body.description, 'managed by test');
    const described = await describeEnis({ networkInterfaceId: [body.networkInterfaceId ?? ''] });
    const eni = described.networkInterfaceSets?.networkInterfaceSet?.[0];
    assert.equal(eni?.ipv6Sets?.ipv6Set?.[0]?.ipv6Address, '2408:4005:3f2:a00::1');
  });

  it('goes Available → Attaching → InUse → Detaching → Available → Deleting → gone with transition delays', async () => {
    await harness.emulator.admin.updateSettings({ transitionDelays: { attachMs: 150, detachMs: 150, deleteMs: 150 } });
    const eniId = await harness.createEni();
    await attach(eniId, DEMO.instanceLargeH);
    let eni = (await describeEnis({ networkInterfaceId: [eniId] })).networkInterfaceSets?.networkInterfaceSet?.[0];
    assert.equal(eni?.status, 'Attaching');
    assert.equal(eni?.instanceId, DEMO.instanceLargeH);
    await harness.waitForStatus(eniId, 'InUse');
    eni = (await describeEnis({ networkInterfaceId: [eniId] })).networkInterfaceSets?.networkInterfaceSet?.[0];
    assert.equal(eni?.attachment?.deviceIndex, 1);
    await detach(eniId, DEMO.instanceLargeH);
    assert.equal(
      (await describeEnis({ networkInterfaceId: [eniId] })).networkInterfaceSets?.networkInterfaceSet?.[0]?.status,
      'Detaching',
    );
    // Re-issuing a detach while Detaching is accepted, as by ECS.
    await detach(eniId, DEMO.instanceLargeH);
    await harness.waitForStatus(eniId, 'Available');
    await remove(eniId);
    assert.equal(
      (await describeEnis({ networkInterfaceId: [eniId] })).networkInterfaceSets?.networkInterfaceSet?.[0]?.status,
      'Deleting',
    );
    await harness.waitForStatus(eniId, 'gone');
    const notFound = await captureError(() => remove(eniId));
    assert.ok(notFound instanceof $OpenApi.ClientError);
    assert.equal(notFound.code, 'InvalidEniId.NotFound');
  });

  it('refuses wrong transitions with InvalidOperation.InvalidEniState and protects the primary ENI', async () => {
    const eniId = await harness.createEni();
    const detachAvailable = await captureError(() => detach(eniId, DEMO.instanceLargeH));
    assert.ok(detachAvailable instanceof $OpenApi.ClientError);
    assert.equal(detachAvailable.code, 'InvalidOperation.InvalidEniState');
    assert.equal(detachAvailable.statusCode, 400);
    await attach(eniId, DEMO.instanceLargeH);
    const attachTwice = await captureError(() => attach(eniId, DEMO.instanceLargeH));
    assert.equal(attachTwice.code, 'InvalidOperation.InvalidEniState');
    const deleteInUse = await captureError(() => remove(eniId));
    assert.equal(deleteInUse.code, 'InvalidOperation.InvalidEniState');
    const primary = (await describeEnis({ instanceId: DEMO.instanceLargeH, type: 'Primary' })).networkInterfaceSets
      ?.networkInterfaceSet?.[0];
    assert.ok(primary?.networkInterfaceId);
    const detachPrimary = await captureError(() => detach(primary.networkInterfaceId ?? '', DEMO.instanceLargeH));
    assert.equal(detachPrimary.code, 'InvalidOperation.DetachPrimaryEniNotAllowed');
    const spare = await harness.createEni();
    const unknownInstance = await captureError(() => attach(spare, 'i-missing'));
    assert.equal(unknownInstance.code, 'InvalidEcsId.NotFound');
    assert.equal(unknownInstance.statusCode, 404);
  });

  it('enforces EniQuantity including the primary ENI (EniPerInstanceLimitExceeded, 403)', async () => {
    // ecs.g7.large: EniQuantity 3 = primary + 2 secondary.
    await attach(await harness.createEni(), DEMO.instanceLargeH);
    await attach(await harness.createEni(), DEMO.instanceLargeH);
    const error = await captureError(async () => attach(await harness.createEni(), DEMO.instanceLargeH));
    assert.ok(error instanceof $OpenApi.ClientError);
    assert.equal(error.code, 'EniPerInstanceLimitExceeded');
    assert.equal(error.statusCode, 403);
    const inventory = await harness.emulator.admin.inventory();
    assert.equal(inventory.instances.find((i) => i.instanceId === DEMO.instanceLargeH)?.eniIds.length, 3);
  });

  it('refuses a zone mismatch, a trunk ENI on a non-trunk type, and eRDMA beyond EriQuantity', async () => {
    const zoneMismatch = await captureError(async () => attach(await harness.createEni(), DEMO.instanceLargeI));
    assert.equal(zoneMismatch.code, 'InvalidOperation.AvailabilityZoneMismatch');
    const trunk = await harness.createEni({ instanceType: 'Trunk' });
    const trunkRefused = await captureError(() => attach(trunk, DEMO.instanceLargeH));
    assert.equal(trunkRefused.code, 'InvalidOperation.InvalidEniType');
    await attach(trunk, DEMO.instance2xlH);
    const erdma = () => harness.createEni({ vSwitchId: DEMO.vSwitchI, networkInterfaceTrafficMode: 'HighPerformance' });
    const onStandardType = await captureError(async () => attach(await erdma(), DEMO.instanceLargeI));
    assert.equal(onStandardType.code, 'EniPerInstanceLimitExceeded');
    await attach(await erdma(), DEMO.instanceErdmaI);
    await attach(await erdma(), DEMO.instanceErdmaI);
    const third = await captureError(async () => attach(await erdma(), DEMO.instanceErdmaI));
    assert.equal(third.code, 'EniPerInstanceLimitExceeded');
    const modes = (
      await describeEnis({ instanceId: DEMO.instanceErdmaI })
    ).networkInterfaceSets?.networkInterfaceSet?.map((eni) => eni.networkInterfaceTrafficMode);
    assert.deepEqual(modes, ['Standard', 'HighPerformance', 'HighPerformance']);
  });

  it('replays CreateNetworkInterface for the same ClientToken and refuses it with other parameters', async () => {
    const request = {
      vSwitchId: DEMO.vSwitchH,
      secondaryPrivateIpAddressCount: 1,
      clientToken: 'token-create-1',
    };
    const first = await harness.createEni(request);
    const second = await harness.createEni(request);
    assert.equal(second, first);
    const inventory = await harness.emulator.admin.inventory();
    assert.equal(inventory.networkInterfaces.filter((eni) => eni.type === 'Secondary').length, 1);
    const mismatch = await captureError(() => harness.createEni({ ...request, secondaryPrivateIpAddressCount: 2 }));
    assert.equal(mismatch.code, 'IdempotentParameterMismatch');
    assert.equal(mismatch.statusCode, 400);
  });

  it('answers InvalidVSwitchId.IpNotEnough (403) when the vSwitch cannot hold the new ENI', async () => {
    // 10.10.16.0/24 has 252 usable addresses: five ENIs of 50 plus one of 2 fill it exactly.
    for (let i = 0; i < 5; i++)
      await harness.createEni({ vSwitchId: DEMO.vSwitchHSmall, secondaryPrivateIpAddressCount: 49 });
    await harness.createEni({ vSwitchId: DEMO.vSwitchHSmall, secondaryPrivateIpAddressCount: 1 });
    const attributes = await harness.vpc.describeVSwitchAttributes(
      new $Vpc.DescribeVSwitchAttributesRequest({
        regionId: DEMO.regionId,
        vSwitchId: DEMO.vSwitchHSmall,
      }),
    );
    assert.equal(attributes.body?.availableIpAddressCount, 0);
    const error = await captureError(() => harness.createEni({ vSwitchId: DEMO.vSwitchHSmall }));
    assert.ok(error instanceof $OpenApi.ClientError);
    assert.equal(error.code, 'InvalidVSwitchId.IpNotEnough');
    assert.equal(error.statusCode, 403);
  });

  it('pages DescribeNetworkInterfaces by MaxResults/NextToken and by PageNumber/PageSize', async () => {
    const created: string[] = [];
    for (let i = 0; i < 23; i++) created.push(await harness.createEni({ vSwitchId: DEMO.vSwitchI }));
    const seen: string[] = [];
    let nextToken: string | undefined;
    let pages = 0;
    do {
      const body = await describeEnis({
        vSwitchId: DEMO.vSwitchI,
        type: 'Secondary',
        maxResults: 10,
        ...(nextToken === undefined ? {} : { nextToken }),
      });
      const items = body.networkInterfaceSets?.networkInterfaceSet ?? [];
      seen.push(...items.map((eni) => eni.networkInterfaceId ?? ''));
      nextToken = body.nextToken === '' ? undefined : body.nextToken;
      pages++;
    } while (nextToken !== undefined);
    assert.equal(pages, 3);
    assert.deepEqual(seen, created);
    const third = await describeEnis({ vSwitchId: DEMO.vSwitchI, type: 'Secondary', pageNumber: 3, pageSize: 10 });
    assert.equal(third.totalCount, 23);
    assert.equal(third.networkInterfaceSets?.networkInterfaceSet?.length, 3);
    // MaxResults below 10 is raised to 10, as by ECS.
    const clamped = await describeEnis({ vSwitchId: DEMO.vSwitchI, maxResults: 2 });
    assert.equal(clamped.networkInterfaceSets?.networkInterfaceSet?.length, 10);
  });

  it('filters DescribeNetworkInterfaces by instance, ids, type, status, vSwitch and tags', async () => {
    const tagged = await harness.createEni({
      tag: [new $Ecs.CreateNetworkInterfaceRequestTag({ key: 'cluster', value: 'a' })],
    });
    const other = await harness.createEni({
      vSwitchId: DEMO.vSwitchHSmall,
      tag: [new $Ecs.CreateNetworkInterfaceRequestTag({ key: 'cluster', value: 'b' })],
    });
    await attach(other, DEMO.instanceLargeH);
    const ids = (body: Awaited<ReturnType<typeof describeEnis>>) =>
      (body.networkInterfaceSets?.networkInterfaceSet ?? []).map((eni) => eni.networkInterfaceId);
    const byTag = await describeEnis({
      tag: [new $Ecs.DescribeNetworkInterfacesRequestTag({ key: 'cluster', value: 'a' })],
    });
    assert.deepEqual(ids(byTag), [tagged]);
    const byInstance = await describeEnis({ instanceId: DEMO.instanceLargeH });
    assert.equal(ids(byInstance).length, 2);
    assert.ok(ids(byInstance).includes(other));
    assert.deepEqual(ids(await describeEnis({ instanceId: DEMO.instanceLargeH, type: 'Secondary' })), [other]);
    assert.deepEqual(ids(await describeEnis({ status: 'Available' })), [tagged]);
    assert.deepEqual(ids(await describeEnis({ vSwitchId: DEMO.vSwitchHSmall })), [other]);
    assert.deepEqual(ids(await describeEnis({ networkInterfaceId: [other, tagged] })), [tagged, other]);
  });

  it('tags ENIs with TagResources: adds or overwrites keys, keeps the others, and tags nothing if one id is unknown', async () => {
    const first = await harness.createEni({
      tag: [new $Ecs.CreateNetworkInterfaceRequestTag({ key: 'creator', value: 'terway' })],
    });
    const second = await harness.createEni({
      tag: [new $Ecs.CreateNetworkInterfaceRequestTag({ key: 'eniflow.io/cluster-id', value: 'old' })],
    });
    const tagResources = (resourceId: string[], resourceType = 'eni') =>
      harness.ecs.tagResources(
        new $Ecs.TagResourcesRequest({
          regionId: DEMO.regionId,
          resourceType,
          resourceId,
          tag: [new $Ecs.TagResourcesRequestTag({ key: 'eniflow.io/cluster-id', value: 'c-1' })],
        }),
      );
    const tagsOf = async (eniId: string) =>
      (await harness.emulator.admin.inventory()).networkInterfaces.find((eni) => eni.eniId === eniId)?.tags;

    const unknown = await captureError(() => tagResources([first, 'eni-missing00000000000']));
    assert.ok(unknown instanceof $OpenApi.ClientError);
    assert.equal(unknown.code, 'InvalidResourceId.NotFound');
    assert.deepEqual(await tagsOf(first), { creator: 'terway' }, 'nothing tagged');
    const wrongType = await captureError(() => tagResources([first], 'instance'));
    assert.equal((wrongType as $OpenApi.ClientError).code, 'InvalidResourceType.NotFound');

    await tagResources([first, second]);
    assert.deepEqual(await tagsOf(first), { creator: 'terway', 'eniflow.io/cluster-id': 'c-1' });
    assert.deepEqual(await tagsOf(second), { 'eniflow.io/cluster-id': 'c-1' });
    const listed = await describeEnis({
      tag: [new $Ecs.DescribeNetworkInterfacesRequestTag({ key: 'eniflow.io/cluster-id', value: 'c-1' })],
    });
    const listedIds = (listed.networkInterfaceSets?.networkInterfaceSet ?? []).map((eni) => eni.networkInterfaceId);
    assert.deepEqual(listedIds.sort(), [first, second].sort());
  });
});
