import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, it } from 'node:test';
import * as $Ecs from '@alicloud/ecs20140526';
import { CloudModel, DEMO_FIXTURE_PATH, defaultSettings, parseFixture } from '../../src/ecs-emulator/index.js';
import type { EmulatorFixture, Inventory } from '../../src/ecs-emulator/index.js';
import { EmulatorApiError } from '../../src/ecs-emulator/api-error.js';
import { SeededRandom } from '../../src/ecs-emulator/seeded-random.js';
import { DEMO, startEmulatorHarness } from '../support/ecs-emulator.js';

/**
 * The emulator's three invariants, checked against an inventory: no IP is on two ENIs, a vSwitch's available count
 * is its size − 4 − used, and ENIs and addresses per ENI stay within the instance type's quotas.
 */
function assertInvariants(inventory: Inventory, fixture: EmulatorFixture): void {
  const owners = new Map<string, string>();
  for (const ip of inventory.ipAddresses) {
    const owner = owners.get(ip.address);
    assert.equal(owner, undefined, `${ip.address} is on ${owner} and ${ip.eniId}`);
    owners.set(ip.address, ip.eniId);
  }
  for (const vSwitch of inventory.vSwitches) {
    const prefix = Number(vSwitch.cidrBlock.split('/')[1]);
    const used = inventory.ipAddresses.filter(
      (ip) => ip.family === 'ipv4' && ip.vSwitchId === vSwitch.vSwitchId,
    ).length;
    assert.equal(vSwitch.availableIpAddressCount, 2 ** (32 - prefix) - 4 - used, vSwitch.vSwitchId);
  }
  const types = new Map(fixture.instanceTypes.map((type) => [type.instanceTypeId, type]));
  for (const instance of inventory.instances) {
    const type = types.get(instance.instanceType);
    assert.ok(type);
    assert.ok(instance.eniIds.length <= type.eniQuantity, `${instance.instanceId} has ${instance.eniIds.length} ENIs`);
    for (const eni of inventory.networkInterfaces.filter((item) => item.instanceId === instance.instanceId)) {
      assert.ok(1 + eni.secondaryIps.length <= type.eniPrivateIpAddressQuantity, `${eni.eniId} IPv4 over quota`);
      assert.ok(eni.ipv6s.length <= type.eniIpv6AddressQuantity, `${eni.eniId} IPv6 over quota`);
    }
  }
}

function pick<T>(random: SeededRandom, items: readonly T[]): T | undefined {
  return items.length === 0 ? undefined : items[Math.floor(random.next() * items.length)];
}

async function demoFixture(): Promise<EmulatorFixture> {
  return parseFixture(JSON.parse(await readFile(DEMO_FIXTURE_PATH, 'utf8')) as unknown, DEMO_FIXTURE_PATH);
}

describe('invariants under randomized load', () => {
  it('hold over 10,000 seeded mixed operations on the model', async () => {
    const demo = await demoFixture();
    // Shrink the small vSwitch to a /27 (28 usable addresses) so exhaustion happens often.
    const fixture: EmulatorFixture = {
      ...demo,
      vSwitches: demo.vSwitches.map((v) =>
        v.vSwitchId === DEMO.vSwitchHSmall ? { ...v, cidrBlock: '10.10.16.0/27' } : v,
      ),
    };
    let nowMs = 1_800_000_000_000;
    const model = CloudModel.fromFixture(fixture, {
      clock: () => nowMs,
      limits: defaultSettings().limits,
      transitionDelays: { attachMs: 100, detachMs: 100, deleteMs: 100 },
    });
    const random = new SeededRandom(20261202);
    const vSwitchIds = fixture.vSwitches.map((v) => v.vSwitchId);
    const instanceIds = fixture.instances.map((i) => i.instanceId);
    const outcomes = new Map<string, number>();
    const eniIds = () => [...model.listEnis()].filter((eni) => eni.type !== 'Primary').map((eni) => eni.eniId);
    for (let step = 0; step < 10_000; step++) {
      nowMs += random.integer({ min: 0, max: 60 });
      const roll = random.next();
      const eniId = pick(random, eniIds()) ?? 'eni-none';
      let operation: string;
      try {
        if (roll < 0.15) {
          operation = 'create';
          model.createEni({
            vSwitchId: pick(random, vSwitchIds) ?? '',
            securityGroupIds: [DEMO.securityGroup],
            secondaryCount: random.integer({ min: 0, max: 14 }),
            ipv6Count: random.integer({ min: 0, max: 3 }),
            trafficMode: random.next() < 0.1 ? 'HighPerformance' : 'Standard',
          });
        } else if (roll < 0.3) {
          operation = 'attach';
          model.attachEni({ eniId, instanceId: pick(random, instanceIds) ?? '' });
        } else if (roll < 0.4) {
          operation = 'detach';
          model.detachEni({ eniId, instanceId: model.findEni(eniId)?.instanceId ?? pick(random, instanceIds) ?? '' });
        } else if (roll < 0.55) {
          operation = 'delete';
          model.deleteEni(eniId);
        } else if (roll < 0.72) {
          operation = 'assign';
          model.assignIpv4({ eniId, count: random.integer({ min: 1, max: 11 }) });
        } else if (roll < 0.84) {
          operation = 'unassign';
          const secondaries = model.findEni(eniId)?.secondaryIps ?? [];
          model.unassignIpv4({ eniId, addresses: secondaries.filter(() => random.next() < 0.5).slice(0, 10) });
        } else if (roll < 0.93) {
          operation = 'assignIpv6';
          model.assignIpv6({ eniId, count: random.integer({ min: 1, max: 4 }) });
        } else {
          operation = 'unassignIpv6';
          const ipv6s = model.findEni(eniId)?.ipv6s ?? [];
          model.unassignIpv6({ eniId, addresses: ipv6s.slice(0, random.integer({ min: 1, max: 3 })) });
        }
        outcomes.set(`${operation}:Success`, (outcomes.get(`${operation}:Success`) ?? 0) + 1);
      } catch (error) {
        if (!(error instanceof EmulatorApiError)) throw error;
        outcomes.set(error.code, (outcomes.get(error.code) ?? 0) + 1);
      }
      assertInvariants(model.inventory(), fixture);
    }
    // The run must have exercised the rules, not only the happy path.
    for (const expected of [
      'create:Success',
      'attach:Success',
      'detach:Success',
      'delete:Success',
      'assign:Success',
      'unassign:Success',
      'assignIpv6:Success',
      'EniPerInstanceLimitExceeded',
      'InvalidOperation.InvalidEniState',
      'InvalidOperation.Ipv4CountExceeded',
      'InvalidParameter',
    ]) {
      assert.ok((outcomes.get(expected) ?? 0) > 0, `${expected} never happened: ${JSON.stringify([...outcomes])}`);
    }
    const exhausted =
      (outcomes.get('InvalidVSwitchId.IpNotEnough') ?? 0) + (outcomes.get('QuotaExceeded.PrivateIpAddress') ?? 0);
    assert.ok(exhausted > 0, 'the small vSwitch never ran out');
  });

  it('hold after 600 seeded mixed calls through the real SDK', async () => {
    const fixture = await demoFixture();
    const harness = await startEmulatorHarness({
      settings: { transitionDelays: { attachMs: 5, detachMs: 5, deleteMs: 5 } },
    });
    try {
      const random = new SeededRandom(7);
      const region = { regionId: DEMO.regionId };
      const codes = new Map<string, number>();
      const known: string[] = [];
      for (let step = 0; step < 600; step++) {
        const roll = random.next();
        const eniId = pick(random, known) ?? 'eni-none';
        const instanceId =
          pick(
            random,
            fixture.instances.map((i) => i.instanceId),
          ) ?? '';
        const call = async (): Promise<unknown> => {
          if (roll < 0.2) {
            known.push(
              await harness.createEni({
                vSwitchId: pick(random, [DEMO.vSwitchH, DEMO.vSwitchHSmall, DEMO.vSwitchI]) ?? DEMO.vSwitchH,
                secondaryPrivateIpAddressCount: random.integer({ min: 1, max: 8 }),
              }),
            );
            return undefined;
          }
          if (roll < 0.4) {
            return harness.ecs.attachNetworkInterface(
              new $Ecs.AttachNetworkInterfaceRequest({ ...region, networkInterfaceId: eniId, instanceId }),
            );
          }
          if (roll < 0.5) {
            return harness.ecs.detachNetworkInterface(
              new $Ecs.DetachNetworkInterfaceRequest({ ...region, networkInterfaceId: eniId, instanceId }),
            );
          }
          if (roll < 0.62) {
            return harness.ecs.deleteNetworkInterface(
              new $Ecs.DeleteNetworkInterfaceRequest({ ...region, networkInterfaceId: eniId }),
            );
          }
          if (roll < 0.85) {
            return harness.ecs.assignPrivateIpAddresses(
              new $Ecs.AssignPrivateIpAddressesRequest({
                ...region,
                networkInterfaceId: eniId,
                secondaryPrivateIpAddressCount: random.integer({ min: 1, max: 10 }),
              }),
            );
          }
          return harness.ecs.describeNetworkInterfaces(
            new $Ecs.DescribeNetworkInterfacesRequest({ ...region, instanceId, maxResults: 100 }),
          );
        };
        const code = await call().then(
          () => 'Success',
          (error: unknown) => String((error as { code?: unknown }).code),
        );
        codes.set(code, (codes.get(code) ?? 0) + 1);
        if (step % 50 === 0) await new Promise((resolve) => setTimeout(resolve, 6));
      }
      assertInvariants(await harness.emulator.admin.inventory(), fixture);
      assert.ok((codes.get('Success') ?? 0) > 200, JSON.stringify([...codes]));
      assert.ok((codes.get('EniPerInstanceLimitExceeded') ?? 0) > 0, JSON.stringify([...codes]));
      const unexpected = [...codes.keys()].filter((code) => code === 'InternalError' || code === 'undefined');
      assert.deepEqual(unexpected, []);
    } finally {
      await harness.close();
    }
  });
});
