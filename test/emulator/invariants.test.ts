import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, it } from 'node:test';
import * as $Ecs from '@alicloud/ecs20140526';
import { CloudModel, DEMO_FIXTURE_PATH, defaultSettings, parseFixture } from '../../src/ecs-emulator/index.js';
import type { EmulatorFixture, Inventory } from '../../src/ecs-emulator/index.js';
import { parseIpv4, parseIpv6 } from '../../src/ecs-emulator/address-pool.js';
import { EmulatorApiError } from '../../src/ecs-emulator/api-error.js';
import { SeededRandom } from '../../src/ecs-emulator/seeded-random.js';
import { DEMO, startEmulatorHarness } from '../support/ecs-emulator.js';

/** The /28 block number of an IPv4 address or prefix (its value / 16). */
function ipv4Block(text: string): number {
  const value = parseIpv4(text.split('/')[0] ?? '');
  assert.ok(value !== undefined, `${text} is no IPv4 address`);
  return Math.floor(value / 16);
}

/** Whether `inside` (an address or a prefix) lies in the CIDR `cidr`. */
function ipv6Within(inside: string, cidr: string): boolean {
  const [base, length] = cidr.split('/');
  const shift = BigInt(128 - Number(length));
  return ipv6Value(inside) >> shift === ipv6Value(base ?? '') >> shift;
}

function ipv6Value(text: string): bigint {
  const value = parseIpv6(text.split('/')[0] ?? '');
  assert.ok(value !== undefined, `${text} is no IPv6 address`);
  return value;
}

/**
 * The emulator's invariants, checked against an inventory: no IP is on two ENIs nor inside a prefix, prefixes do
 * not overlap, a vSwitch's available count is its size − 4 − used addresses − 16 per IPv4 prefix, and ENIs,
 * addresses and prefixes per ENI stay within the instance type's quotas (prefixes share the address slots).
 */
function assertInvariants(inventory: Inventory, fixture: EmulatorFixture): void {
  const owners = new Map<string, string>();
  for (const ip of inventory.ipAddresses) {
    const owner = owners.get(ip.address);
    assert.equal(owner, undefined, `${ip.address} is on ${owner} and ${ip.eniId}`);
    owners.set(ip.address, ip.eniId);
  }
  const ipv4PrefixBlocks = new Map<number, string>();
  const ipv6Prefixes = new Map<string, string>();
  for (const item of inventory.ipPrefixes) {
    const vSwitch = inventory.vSwitches.find((v) => v.vSwitchId === item.vSwitchId);
    assert.ok(vSwitch);
    if (item.family === 'ipv4') {
      assert.ok(item.prefix.endsWith('/28') && parseIpv4(item.prefix.slice(0, -3))! % 16 === 0, item.prefix);
      const block = ipv4Block(item.prefix);
      const owner = ipv4PrefixBlocks.get(block);
      assert.equal(owner, undefined, `${item.prefix} is on ${owner} and ${item.eniId}`);
      ipv4PrefixBlocks.set(block, item.eniId);
    } else {
      assert.ok(item.prefix.endsWith('/80'), `${item.prefix} is not a /80`);
      assert.ok(ipv6Within(item.prefix, vSwitch.ipv6CidrBlock ?? '::/128'), `${item.prefix} outside its vSwitch`);
      assert.equal(ipv6Prefixes.get(item.prefix), undefined, `${item.prefix} is on two ENIs`);
      ipv6Prefixes.set(item.prefix, item.eniId);
    }
  }
  for (const ip of inventory.ipAddresses.filter((address) => address.family === 'ipv4')) {
    const owner = ipv4PrefixBlocks.get(ipv4Block(ip.address));
    assert.equal(owner, undefined, `${ip.address} of ${ip.eniId} is inside a prefix of ${owner}`);
  }
  const ipv6PrefixBlocks = new Set([...ipv6Prefixes.keys()].map((prefix) => ipv6Value(prefix) >> 48n));
  for (const ip of inventory.ipAddresses.filter((address) => address.family === 'ipv6')) {
    assert.ok(!ipv6PrefixBlocks.has(ipv6Value(ip.address) >> 48n), `${ip.address} is inside a prefix`);
  }
  for (const vSwitch of inventory.vSwitches) {
    const prefix = Number(vSwitch.cidrBlock.split('/')[1]);
    const used = inventory.ipAddresses.filter(
      (ip) => ip.family === 'ipv4' && ip.vSwitchId === vSwitch.vSwitchId,
    ).length;
    const prefixes = inventory.ipPrefixes.filter(
      (item) => item.family === 'ipv4' && item.vSwitchId === vSwitch.vSwitchId,
    ).length;
    assert.equal(vSwitch.availableIpAddressCount, 2 ** (32 - prefix) - 4 - used - 16 * prefixes, vSwitch.vSwitchId);
  }
  const types = new Map(fixture.instanceTypes.map((type) => [type.instanceTypeId, type]));
  for (const instance of inventory.instances) {
    const type = types.get(instance.instanceType);
    assert.ok(type);
    assert.ok(instance.eniIds.length <= type.eniQuantity, `${instance.instanceId} has ${instance.eniIds.length} ENIs`);
    for (const eni of inventory.networkInterfaces.filter((item) => item.instanceId === instance.instanceId)) {
      const ipv4Slots = 1 + eni.secondaryIps.length + eni.ipv4Prefixes.length;
      assert.ok(ipv4Slots <= type.eniPrivateIpAddressQuantity, `${eni.eniId} IPv4 over quota`);
      const ipv6Slots = eni.ipv6s.length + eni.ipv6Prefixes.length;
      assert.ok(ipv6Slots <= type.eniIpv6AddressQuantity, `${eni.eniId} IPv6 over quota`);
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
        // A third of the address operations work on prefixes instead.
        const prefixes = random.next() < 0.33;
        if (roll < 0.15) {
          operation = prefixes ? 'createWithPrefixes' : 'create';
          model.createEni({
            vSwitchId: pick(random, vSwitchIds) ?? '',
            securityGroupIds: [DEMO.securityGroup],
            ...(prefixes
              ? {
                  ipv4PrefixCount: random.integer({ min: 0, max: 6 }),
                  ipv6PrefixCount: random.integer({ min: 0, max: 2 }),
                }
              : { secondaryCount: random.integer({ min: 0, max: 14 }), ipv6Count: random.integer({ min: 0, max: 3 }) }),
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
        } else if (roll < 0.72 && prefixes) {
          operation = 'assignIpv4Prefixes';
          model.assignIpv4Prefixes({ eniId, count: random.integer({ min: 1, max: 11 }) });
        } else if (roll < 0.72) {
          operation = 'assign';
          model.assignIpv4({ eniId, count: random.integer({ min: 1, max: 11 }) });
        } else if (roll < 0.84 && prefixes) {
          operation = 'unassignIpv4Prefixes';
          const held = model.findEni(eniId)?.ipv4Prefixes ?? [];
          model.unassignIpv4Prefixes({ eniId, prefixes: held.filter(() => random.next() < 0.5).slice(0, 10) });
        } else if (roll < 0.84) {
          operation = 'unassign';
          const secondaries = model.findEni(eniId)?.secondaryIps ?? [];
          model.unassignIpv4({ eniId, addresses: secondaries.filter(() => random.next() < 0.5).slice(0, 10) });
        } else if (roll < 0.93 && prefixes) {
          operation = 'assignIpv6Prefixes';
          model.assignIpv6Prefixes({ eniId, count: random.integer({ min: 1, max: 3 }) });
        } else if (roll < 0.93) {
          operation = 'assignIpv6';
          model.assignIpv6({ eniId, count: random.integer({ min: 1, max: 4 }) });
        } else if (prefixes) {
          operation = 'unassignIpv6Prefixes';
          const held = model.findEni(eniId)?.ipv6Prefixes ?? [];
          model.unassignIpv6Prefixes({ eniId, prefixes: held.slice(0, random.integer({ min: 1, max: 2 })) });
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
      'createWithPrefixes:Success',
      'assignIpv4Prefixes:Success',
      'unassignIpv4Prefixes:Success',
      'assignIpv6Prefixes:Success',
      'unassignIpv6Prefixes:Success',
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
          if (roll < 0.74) {
            return harness.ecs.assignPrivateIpAddresses(
              new $Ecs.AssignPrivateIpAddressesRequest({
                ...region,
                networkInterfaceId: eniId,
                ipv4PrefixCount: random.integer({ min: 1, max: 4 }),
              }),
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
