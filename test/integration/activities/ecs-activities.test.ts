/**
 * The ECS activities against the ECS/VPC emulator, through the real Alibaba Cloud SDK. Temporal's
 * MockActivityEnvironment provides the activity context (heartbeats, cancellation); nothing else is mocked.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, beforeEach, describe, it } from 'node:test';

import * as $Ecs from '@alicloud/ecs20140526';
import { ApplicationFailure } from '@temporalio/common';
import { pino } from 'pino';

import { AlibabaEcsApi } from '../../../src/activities/ecs/alibaba-ecs-api.js';
import { VSwitchCache } from '../../../src/activities/ecs/vswitch-cache.js';
import { createEcsActivities, ENI_STATUS_PENDING } from '../../../src/activities/ecs-activities.js';
import type { EcsActivities } from '../../../src/activities/ecs-activities.js';
import { applicationFailureOf } from '../../support/application-failure.js';
import {
  DEMO,
  demoFixtureWithTinyVSwitch,
  emulatorConnection,
  startEmulatorHarness,
} from '../../support/ecs-emulator.js';
import type { EmulatorHarness } from '../../support/ecs-emulator.js';
import { quietActivityEnvironment } from '../../support/test-logs.js';

let harness: EmulatorHarness;
let activities: EcsActivities;
let vSwitches: VSwitchCache;
let ecsApi: AlibabaEcsApi;

async function runActivity<R>(fn: () => Promise<R>): Promise<R> {
  return quietActivityEnvironment({ activityType: 'test' }).run(fn);
}

/**
 * Runs `waitEniStatus` as Temporal does: one attempt (one describe) after another while it answers "not there yet"
 * (`EniStatusPending`), after its `nextRetryDelay`, with the heartbeat details of one attempt given to the next.
 */
async function waitStatus(input: Parameters<EcsActivities['waitEniStatus']>[0]): Promise<string> {
  let details: unknown;
  for (let attempt = 1; attempt <= 1_000; attempt += 1) {
    const env = quietActivityEnvironment({ activityType: 'waitEniStatus', attempt, heartbeatDetails: details });
    env.on('heartbeat', (heartbeat: unknown) => {
      details = heartbeat;
    });
    try {
      return await env.run(() => activities.waitEniStatus(input));
    } catch (error) {
      if (!(error instanceof ApplicationFailure) || error.type !== ENI_STATUS_PENDING) throw error;
      // The poll interval is 10 ms: an attach is polled again sooner (attach-polls.ts), anything else after it.
      const delayMs = Number(error.nextRetryDelay);
      if (input.status === 'InUse') assert.ok(delayMs > 0 && delayMs <= 10, `attach poll delay ${String(delayMs)}`);
      else assert.equal(delayMs, 10, 'retried after the poll interval');
      await sleep(delayMs);
    }
  }
  assert.fail('waitEniStatus never finished');
}

before(async () => {
  harness = await startEmulatorHarness({ fixture: await demoFixtureWithTinyVSwitch() });
});
after(async () => {
  await harness.close();
});
beforeEach(async () => {
  await harness.emulator.admin.clearFaults();
  vSwitches = new VSwitchCache();
  ecsApi = new AlibabaEcsApi({
    connection: emulatorConnection(harness.emulator, 2_000),
  });
  activities = createEcsActivities({
    ecs: ecsApi,
    vSwitches,
    logger: pino({ level: 'silent' }),
    eniPollIntervalMs: 10,
  });
});

const createInput = (clientToken: string, overrides: Partial<Parameters<EcsActivities['createEni']>[0]> = {}) => ({
  eniKind: 'secondary' as const,
  eniType: 'Secondary' as const,
  trafficMode: 'Standard' as const,
  vSwitchId: DEMO.vSwitchH,
  securityGroupIds: [DEMO.securityGroup],
  ipv4Count: 3,
  ipv6Count: 2,
  tags: { 'k8s.aliyun.com/node': 'node-a' },
  clientToken,
  ...overrides,
});

describe('ENI lifecycle activities', () => {
  it('create → attach → wait InUse → describe → detach → wait Available → delete', async () => {
    const { eni, requestId } = await runActivity(() => activities.createEni(createInput('token-lifecycle')));
    assert.match(requestId, /.+/);
    assert.equal(eni.status, 'Available');
    assert.equal(eni.ipv4.length, 3);
    assert.equal(eni.ipv4.filter((ip) => ip.primary).length, 1);
    assert.equal(eni.ipv6.length, 2);
    await runActivity(() => activities.attachEni({ eniId: eni.eniId, instanceId: DEMO.instanceLargeH }));
    assert.equal(await waitStatus({ eniId: eni.eniId, status: 'InUse' }), 'InUse');
    const onNode = await runActivity(() => activities.describeNodeEnis({ instanceId: DEMO.instanceLargeH }));
    const described = onNode.find((e) => e.eniId === eni.eniId);
    assert.equal(described?.status, 'InUse');
    assert.ok(
      onNode.some((e) => e.type === 'Primary'),
      'the instance listing includes its primary ENI',
    );
    const inventory = await harness.emulator.admin.inventory();
    const record = inventory.networkInterfaces.find((e) => e.eniId === eni.eniId);
    assert.equal(record?.tags['creator'], 'eniflow');
    assert.equal(record.tags['k8s.aliyun.com/node'], 'node-a');
    await runActivity(() => activities.attachEni({ eniId: eni.eniId, instanceId: DEMO.instanceLargeH }));
    await runActivity(() => activities.detachEni({ eniId: eni.eniId, instanceId: DEMO.instanceLargeH }));
    await waitStatus({ eniId: eni.eniId, status: 'Available' });
    await runActivity(() => activities.detachEni({ eniId: eni.eniId, instanceId: DEMO.instanceLargeH }));
    await runActivity(() => activities.deleteEni({ eniId: eni.eniId }));
    await harness.waitForStatus(eni.eniId, 'gone');
    await runActivity(() => activities.deleteEni({ eniId: eni.eniId }));
    assert.equal(await waitStatus({ eniId: eni.eniId, status: 'Available', goneIsDone: true }), 'Gone');
  });

  it('a lost create response and a retry with the same token leave exactly one ENI', async () => {
    const before = (await harness.emulator.admin.inventory()).networkInterfaces.length;
    await harness.emulator.admin.addFaults(['CreateNetworkInterface next 1 lost ServiceUnavailable 503']);
    const lost = await applicationFailureOf(() => runActivity(() => activities.createEni(createInput('token-lost'))));
    assert.equal(lost.type, 'EcsTransient');
    assert.equal(lost.nonRetryable, false);
    const { eni } = await runActivity(() => activities.createEni(createInput('token-lost')));
    const enis = (await harness.emulator.admin.inventory()).networkInterfaces;
    assert.equal(enis.length, before + 1, 'the retry did not create a second ENI');
    assert.ok(enis.some((e) => e.eniId === eni.eniId));
    await runActivity(() => activities.deleteEni({ eniId: eni.eniId }));
  });

  it('an attach that fails in the cloud is reported as final by waitEniStatus', async () => {
    const { eni } = await runActivity(() => activities.createEni(createInput('token-attach-fail', { ipv6Count: 0 })));
    await harness.emulator.admin.addFaults(['AttachNetworkInterface next 1 attach-fail']);
    await harness.emulator.admin.updateSettings({ transitionDelays: { attachMs: 50 } });
    try {
      await runActivity(() => activities.attachEni({ eniId: eni.eniId, instanceId: DEMO.instanceLargeH }));
      const failure = await applicationFailureOf(() => waitStatus({ eniId: eni.eniId, status: 'InUse' }));
      assert.equal(failure.type, 'EniAttachFailed');
      assert.equal(failure.nonRetryable, true);
    } finally {
      await harness.emulator.admin.updateSettings({ transitionDelays: { attachMs: 0 } });
      await runActivity(() => activities.deleteEni({ eniId: eni.eniId }));
    }
  });

  it('waiting for an ENI that does not exist fails for good', async () => {
    const failure = await applicationFailureOf(() => waitStatus({ eniId: 'eni-nope', status: 'InUse' }));
    assert.equal(failure.type, 'EcsNotFound');
    assert.equal(failure.nonRetryable, true);
  });

  it('a failed cloud call carries its code and RequestId', async () => {
    await harness.emulator.admin.addFaults(['AttachNetworkInterface next 1 error Throttling.User 400']);
    const failure = await applicationFailureOf(() =>
      runActivity(() => activities.attachEni({ eniId: 'eni-x', instanceId: DEMO.instanceLargeH })),
    );
    assert.equal(failure.type, 'EcsThrottled');
    assert.equal(failure.nonRetryable, false);
    const [details] = failure.details as [{ code: string; requestId?: string }];
    assert.equal(details.code, 'Throttling.User');
    assert.match(details.requestId ?? '', /.+/);
    assert.match(failure.message, /Throttling\.User \(RequestId .+\)/);
  });
});

describe('IP activities', () => {
  let eniId: string;
  before(async () => {
    const { eni } = await runActivity(() =>
      activities.createEni(createInput('token-ips', { ipv4Count: 1, ipv6Count: 0 })),
    );
    eniId = eni.eniId;
    await runActivity(() => activities.attachEni({ eniId, instanceId: DEMO.instanceLargeH }));
    await waitStatus({ eniId, status: 'InUse' });
  });

  it('assigns and unassigns IPv4 and IPv6; unassigning twice is fine', async () => {
    const v4 = await runActivity(() => activities.assignIpv4({ eniId, count: 2, clientToken: 'tok-v4-a' }));
    const v6 = await runActivity(() => activities.assignIpv6({ eniId, count: 2, clientToken: 'tok-v6-a' }));
    assert.equal(v4.ips.length, 2);
    assert.equal(v6.ips.length, 2);
    let [described] = await ecsApi.describeEnis({ eniIds: [eniId] });
    assert.deepEqual(
      [...v4.ips].sort(),
      (described?.ipv4 ?? [])
        .filter((ip) => !ip.primary)
        .map((ip) => ip.ip)
        .sort(),
    );
    await runActivity(() => activities.unassignIpv4({ eniId, ips: v4.ips }));
    await runActivity(() => activities.unassignIpv4({ eniId, ips: v4.ips }));
    await runActivity(() => activities.unassignIpv6({ eniId, ips: v6.ips }));
    await runActivity(() => activities.unassignIpv6({ eniId, ips: [] }));
    [described] = await ecsApi.describeEnis({ eniIds: [eniId] });
    assert.equal(described?.ipv4.length, 1);
    assert.equal(described?.ipv6.length, 0);
  });

  it('a lost assign response retried with the same token assigns no extra addresses', async () => {
    await harness.emulator.admin.addFaults(['AssignPrivateIpAddresses next 1 lost drop']);
    const lost = await applicationFailureOf(() =>
      runActivity(() => activities.assignIpv4({ eniId, count: 2, clientToken: 'tok-lost' })),
    );
    assert.equal(lost.nonRetryable, false);
    const retried = await runActivity(() => activities.assignIpv4({ eniId, count: 2, clientToken: 'tok-lost' }));
    const [described] = await ecsApi.describeEnis({ eniIds: [eniId] });
    const secondaries = (described?.ipv4 ?? [])
      .filter((ip) => !ip.primary)
      .map((ip) => ip.ip)
      .sort();
    assert.deepEqual(secondaries, [...retried.ips].sort());
    await runActivity(() => activities.unassignIpv4({ eniId, ips: retried.ips }));
  });

  it('asking for more IPs than the ENI may hold is a non-retryable quota failure', async () => {
    const failure = await applicationFailureOf(() =>
      runActivity(() => activities.assignIpv4({ eniId, count: 10, clientToken: 'tok-over' })),
    );
    assert.equal(failure.type, 'EcsQuotaExceeded');
    assert.equal(failure.nonRetryable, true);
  });
});

describe('IP prefix activities', () => {
  let eniId: string;
  before(async () => {
    const { eni } = await runActivity(() =>
      activities.createEni(
        createInput('token-prefixes', { ipv4Count: 1, ipv6Count: 0, ipv4PrefixCount: 2, ipv6PrefixCount: 1 }),
      ),
    );
    eniId = eni.eniId;
    // The create answer already carries the prefixes, sorted, and only the primary address.
    assert.equal(eni.ipv4.length, 1);
    assert.equal(eni.ipv4Prefixes.length, 2);
    assert.deepEqual(eni.ipv4Prefixes, [...eni.ipv4Prefixes].sort());
    assert.equal(eni.ipv6Prefixes.length, 1);
    await runActivity(() => activities.attachEni({ eniId, instanceId: DEMO.instance2xlH }));
    await waitStatus({ eniId, status: 'InUse' });
  });

  it('assigns and unassigns IPv4 and IPv6 prefixes, seen by describe; unassigning twice is fine', async () => {
    const v4 = await runActivity(() =>
      activities.assignIpv4Prefixes({ eniId, vSwitchId: DEMO.vSwitchH, count: 3, clientToken: 'tok-p4-a' }),
    );
    const v6 = await runActivity(() =>
      activities.assignIpv6Prefixes({ eniId, vSwitchId: DEMO.vSwitchH, count: 1, clientToken: 'tok-p6-a' }),
    );
    assert.equal(v4.prefixes.length, 3);
    for (const prefix of v4.prefixes) assert.match(prefix, /^10\.10\.\d+\.\d+\/28$/);
    assert.equal(v6.prefixes.length, 1);
    assert.match(v6.prefixes[0] ?? '', /\/80$/);
    const onNode = await runActivity(() => activities.describeNodeEnis({ instanceId: DEMO.instance2xlH }));
    const described = onNode.find((eni) => eni.eniId === eniId);
    assert.equal(described?.ipv4Prefixes.length, 5);
    assert.deepEqual(described.ipv4Prefixes, [...described.ipv4Prefixes].sort());
    for (const prefix of v4.prefixes) assert.ok(described.ipv4Prefixes.includes(prefix));
    assert.equal(described.ipv6Prefixes.length, 2);
    assert.ok(described.ipv6Prefixes.includes(v6.prefixes[0] ?? ''));
    // Primary ENIs and address-mode ENIs report no prefixes, not a missing field.
    assert.deepEqual(
      onNode.find((eni) => eni.type === 'Primary'),
      { ...onNode.find((eni) => eni.type === 'Primary'), ipv4Prefixes: [], ipv6Prefixes: [] },
    );

    await runActivity(() => activities.unassignIpv4Prefixes({ eniId, prefixes: v4.prefixes }));
    await runActivity(() => activities.unassignIpv4Prefixes({ eniId, prefixes: v4.prefixes }));
    await runActivity(() => activities.unassignIpv6Prefixes({ eniId, prefixes: v6.prefixes }));
    await runActivity(() => activities.unassignIpv6Prefixes({ eniId, prefixes: [] }));
    const [after] = await ecsApi.describeEnis({ eniIds: [eniId] });
    assert.equal(after?.ipv4Prefixes.length, 2);
    assert.equal(after?.ipv6Prefixes.length, 1);
  });

  it('reads prefixes in code-unit order whatever order the cloud lists them in', async () => {
    const { eni } = await runActivity(() =>
      activities.createEni(createInput('token-prefix-order', { ipv4Count: 1, ipv6Count: 0 })),
    );
    try {
      const explicit = ['10.10.9.0/28', '10.10.10.0/28', '10.10.8.0/28'];
      await harness.ecs.assignPrivateIpAddresses(
        new $Ecs.AssignPrivateIpAddressesRequest({
          regionId: DEMO.regionId,
          networkInterfaceId: eni.eniId,
          ipv4Prefix: explicit,
        }),
      );
      const [described] = await ecsApi.describeEnis({ eniIds: [eni.eniId] });
      assert.deepEqual(described?.ipv4Prefixes, ['10.10.10.0/28', '10.10.8.0/28', '10.10.9.0/28']);
      assert.deepEqual(described.ipv6Prefixes, []);
    } finally {
      await runActivity(() => activities.deleteEni({ eniId: eni.eniId }));
    }
  });

  it('a lost prefix assign retried with the same token assigns no extra prefixes', async () => {
    const [before] = await ecsApi.describeEnis({ eniIds: [eniId] });
    await harness.emulator.admin.addFaults(['AssignPrivateIpAddresses next 1 lost drop']);
    const lost = await applicationFailureOf(() =>
      runActivity(() => activities.assignIpv4Prefixes({ eniId, count: 2, clientToken: 'tok-p4-lost' })),
    );
    assert.equal(lost.nonRetryable, false);
    const retried = await runActivity(() =>
      activities.assignIpv4Prefixes({ eniId, count: 2, clientToken: 'tok-p4-lost' }),
    );
    const [after] = await ecsApi.describeEnis({ eniIds: [eniId] });
    assert.deepEqual(after?.ipv4Prefixes, [...(before?.ipv4Prefixes ?? []), ...retried.prefixes].sort());
    await runActivity(() => activities.unassignIpv4Prefixes({ eniId, prefixes: retried.prefixes }));
  });

  it('prefixes beyond the ENI slots are a non-retryable quota failure; prefixes mixed with IPs are refused', async () => {
    // ecs.g7.2xlarge: 15 IPv4 slots; the primary and 2 prefixes hold 3, 10 more make 13.
    await runActivity(() => activities.assignIpv4Prefixes({ eniId, count: 10, clientToken: 'tok-p4-fill' }));
    const full = await applicationFailureOf(() =>
      runActivity(() => activities.assignIpv4Prefixes({ eniId, count: 3, clientToken: 'tok-p4-over' })),
    );
    assert.deepEqual([full.type, full.nonRetryable], ['EcsQuotaExceeded', true]);
    await runActivity(() => activities.assignIpv4Prefixes({ eniId, count: 2, clientToken: 'tok-p4-last' }));
    const mixed = await applicationFailureOf(() =>
      runActivity(() =>
        activities.createEni(createInput('token-mixed', { ipv4Count: 3, ipv6Count: 0, ipv4PrefixCount: 1 })),
      ),
    );
    assert.deepEqual([mixed.type, mixed.nonRetryable], ['EcsInvalidRequest', true]);
  });

  it('a vSwitch without a free /28 fails the prefix assign for good and is blocked in the cache', async () => {
    const { eni } = await runActivity(() =>
      activities.createEni(
        createInput('token-prefix-tiny', { vSwitchId: DEMO.vSwitchHSmall, ipv4Count: 1, ipv6Count: 0 }),
      ),
    );
    try {
      const failure = await applicationFailureOf(() =>
        runActivity(() =>
          activities.assignIpv4Prefixes({
            eniId: eni.eniId,
            vSwitchId: DEMO.vSwitchHSmall,
            count: 1,
            clientToken: 'tok-p4-tiny',
          }),
        ),
      );
      assert.deepEqual([failure.type, failure.nonRetryable], ['EcsVSwitchExhausted', true]);
      const blocked = await runActivity(() => activities.describeVSwitches({ vSwitchIds: [DEMO.vSwitchHSmall] }));
      assert.equal(blocked[DEMO.vSwitchHSmall]?.availableIpCount, 0);
    } finally {
      await runActivity(() => activities.deleteEni({ eniId: eni.eniId }));
    }
  });
});

describe('vSwitch activities', () => {
  it('a create refused for lack of addresses fails for good; the cache then holds what is left, or a block', async () => {
    const small = DEMO.vSwitchHSmall;
    const fresh = await runActivity(() => activities.describeVSwitches({ vSwitchIds: [small, DEMO.vSwitchH] }));
    assert.equal(fresh[small]?.availableIpCount, 4);
    assert.equal(fresh[small]?.ipv4Cidr, '10.10.16.0/29');
    const createOn = (token: string, ipv4Count: number) =>
      runActivity(() => activities.createEni(createInput(token, { vSwitchId: small, ipv4Count, ipv6Count: 0 })));
    const failure = await applicationFailureOf(() => createOn('token-exhaust', 6));
    assert.equal(failure.type, 'EcsVSwitchExhausted');
    assert.equal(failure.nonRetryable, true);
    // Fewer than asked for, but some: not blocked, so the next plan asks for what is there.
    const revised = await runActivity(() => activities.describeVSwitches({ vSwitchIds: [small] }));
    assert.deepEqual([revised[small]?.availableIpCount, revised[small]?.blockedForMs], [4, undefined]);
    const { eni } = await createOn('token-takes-the-rest', 4);
    try {
      // The cache counts the 4 taken: no plan asks the vSwitch again (and gets refused) until it gains addresses.
      const taken = await runActivity(() => activities.describeVSwitches({ vSwitchIds: [small] }));
      assert.equal(taken[small]?.availableIpCount, 0);
      assert.equal((await applicationFailureOf(() => createOn('token-none-left', 1))).type, 'EcsVSwitchExhausted');
      const blocked = await runActivity(() => activities.describeVSwitches({ vSwitchIds: [small] }));
      assert.equal(blocked[small]?.availableIpCount, 0);
      assert.ok((blocked[small]?.blockedForMs ?? 0) > 0, 'none left: blocked');
    } finally {
      await runActivity(() => activities.deleteEni({ eniId: eni.eniId }));
    }
    const unknown = await runActivity(() => activities.describeVSwitches({ vSwitchIds: ['vsw-unknown'] }));
    assert.deepEqual(unknown, {});
  });

  it('an assign refused for lack of addresses leaves the count of what is left for the next ask', async () => {
    const small = DEMO.vSwitchHSmall;
    const { eni } = await runActivity(() =>
      activities.createEni(createInput('token-assign-host', { vSwitchId: small, ipv4Count: 1, ipv6Count: 0 })),
    );
    try {
      const assign = (clientToken: string, count: number) =>
        runActivity(() => activities.assignIpv4({ eniId: eni.eniId, vSwitchId: small, count, clientToken }));
      assert.equal((await applicationFailureOf(() => assign('tok-too-many', 5))).type, 'EcsVSwitchExhausted');
      const left = await runActivity(() => activities.describeVSwitches({ vSwitchIds: [small] }));
      assert.deepEqual([left[small]?.availableIpCount, left[small]?.blockedForMs], [3, undefined]);
      assert.equal((await assign('tok-what-is-left', 3)).ips.length, 3);
    } finally {
      await runActivity(() => activities.deleteEni({ eniId: eni.eniId }));
    }
  });
});
