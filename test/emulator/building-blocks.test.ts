import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  formatIpv6,
  Ipv4AddressPool,
  Ipv6AddressPool,
  parseIpv4,
  parseIpv6,
} from '../../src/ecs-emulator/address-pool.js';
import { instanceTypeToWire } from '../../src/ecs-emulator/actions/response-shapes.js';
import { CallLog } from '../../src/ecs-emulator/call-log.js';
import { parseFaultScript } from '../../src/ecs-emulator/fault-rules.js';
import {
  CloudModel,
  defaultSettings,
  loadFixtureFile,
  DEMO_FIXTURE_PATH,
  parseFixture,
} from '../../src/ecs-emulator/index.js';
import { RateLimiter } from '../../src/ecs-emulator/rate-limiter.js';

describe('address pools', () => {
  it('reserves the first and the last three IPv4 addresses and allocates the lowest free one', () => {
    const pool = new Ipv4AddressPool('192.168.1.0/24');
    assert.equal(pool.availableCount, 252);
    for (const reserved of ['192.168.1.0', '192.168.1.253', '192.168.1.254', '192.168.1.255']) {
      assert.equal(pool.claim(reserved), 'outside', reserved);
    }
    assert.equal(pool.allocateLowest(), '192.168.1.1');
    assert.equal(pool.claim('192.168.1.3'), 'claimed');
    assert.equal(pool.claim('192.168.1.3'), 'taken');
    assert.equal(pool.allocateLowest(), '192.168.1.2');
    assert.equal(pool.allocateLowest(), '192.168.1.4');
    pool.release('192.168.1.1');
    assert.equal(pool.allocateLowest(), '192.168.1.1');
    assert.equal(pool.availableCount, 252 - 4);
    const taken: string[] = [];
    for (let ip = pool.allocateLowest(); ip !== undefined; ip = pool.allocateLowest()) taken.push(ip);
    assert.equal(taken.at(-1), '192.168.1.252');
    assert.equal(pool.availableCount, 0);
  });

  it('formats and parses IPv6 canonically and allocates from offset 1', () => {
    assert.equal(formatIpv6(parseIpv6('2408:4005:03f2:0a00:0000:0000:0000:0001') ?? 0n), '2408:4005:3f2:a00::1');
    assert.equal(formatIpv6(parseIpv6('::') ?? 1n), '::');
    assert.equal(parseIpv6('1::2::3'), undefined);
    assert.equal(parseIpv6('fe80::1%eth0'), undefined);
    assert.equal(parseIpv6('::ffff:10.0.0.1'), undefined);
    assert.deepEqual(['10.0.0.1', '010.0.0.1', '10.0.1', '0xa.0.0.1'].map(parseIpv4), [
      0x0a000001,
      undefined,
      undefined,
      undefined,
    ]);
    const pool = new Ipv6AddressPool('2408:4005:3f2:a00::/64');
    assert.equal(pool.allocateLowest(), '2408:4005:3f2:a00::1');
    assert.equal(pool.claim('2408:4005:3f2:a00::2'), 'claimed');
    assert.equal(pool.allocateLowest(), '2408:4005:3f2:a00::3');
    assert.equal(pool.claim('2408:4005:3f2:a01::2'), 'outside');
    assert.throws(() => new Ipv6AddressPool('2408:4005:3f2:a00::1/64'), /host bits/);
  });
});

describe('prefix blocks in the address pools', () => {
  it('hands out aligned IPv4 /28s that hold no reserved or used address, 16 addresses each', () => {
    const pool = new Ipv4AddressPool('10.0.0.0/24');
    assert.equal(pool.allocateLowest(), '10.0.0.1');
    const prefixes: string[] = [];
    for (let prefix = pool.allocatePrefix(); prefix !== undefined; prefix = pool.allocatePrefix()) {
      prefixes.push(prefix);
    }
    // 16 blocks in a /24: the first holds the network address (and .1), the last the three reserved ones.
    assert.equal(prefixes.length, 14);
    assert.deepEqual([prefixes[0], prefixes[13]], ['10.0.0.16/28', '10.0.0.224/28']);
    assert.equal(pool.availableCount, 252 - 1 - 14 * 16);
    assert.equal(pool.claim('10.0.0.17'), 'taken', 'an address inside a prefix is not free');
    assert.equal(pool.allocateLowest(), '10.0.0.2', 'single addresses still come from the first block');
    pool.releasePrefix('10.0.0.32/28');
    assert.equal(pool.availableCount, 252 - 2 - 13 * 16);
    assert.equal(pool.claimPrefix('10.0.0.32/28'), 'claimed');
    assert.deepEqual(
      ['10.0.0.0/28', '10.0.0.240/28', '10.0.0.8/28', '10.0.1.0/28', '10.0.0.48/28'].map((prefix) =>
        pool.claimPrefix(prefix),
      ),
      ['outside', 'outside', 'outside', 'outside', 'taken'],
    );
    assert.equal(Ipv4AddressPool.normalizePrefix('10.0.0.16/28'), '10.0.0.16/28');
    assert.equal(Ipv4AddressPool.normalizePrefix('10.0.0.17/28'), undefined);
    assert.equal(Ipv4AddressPool.normalizePrefix('10.0.0.16/27'), undefined);
  });

  it('hands out IPv6 /80s after the first, never over an assigned address, and none in a CIDR narrower than /80', () => {
    const pool = new Ipv6AddressPool('2408:4005:3f2:a00::/64');
    assert.equal(pool.allocatePrefix(), '2408:4005:3f2:a00:1::/80');
    assert.equal(pool.claim('2408:4005:3f2:a00:2::5'), 'claimed');
    assert.equal(pool.claimPrefix('2408:4005:3f2:a00:2::/80'), 'taken', 'an assigned address is inside');
    assert.equal(pool.allocatePrefix(), '2408:4005:3f2:a00:3::/80', 'the block holding an address is skipped');
    assert.equal(pool.claim('2408:4005:3f2:a00:1::9'), 'taken', 'an address inside a prefix is not free');
    assert.equal(pool.claimPrefix('2408:4005:3f2:a00::/80'), 'outside', 'the first /80 holds the reserved offset 0');
    assert.equal(pool.prefixCount, 2);
    pool.releasePrefix('2408:4005:3f2:a00:1::/80');
    assert.equal(pool.allocatePrefix(), '2408:4005:3f2:a00:1::/80');
    assert.equal(Ipv6AddressPool.normalizePrefix('2408:4005:03f2:0a00:0001:0:0:0/80'), '2408:4005:3f2:a00:1::/80');
    assert.equal(Ipv6AddressPool.normalizePrefix('2408:4005:3f2:a00:1::1/80'), undefined);
    const narrow = new Ipv6AddressPool('2408:4005:3f2:a00::/120');
    assert.equal(narrow.allocatePrefix(), undefined);
    assert.equal(narrow.claimPrefix('2408:4005:3f2:a00::/80'), 'outside');
  });
});

describe('fault scripts, rate limiter, call log and fixture validation', () => {
  it('parses every fault script form', () => {
    assert.deepEqual(parseFaultScript('AttachNetworkInterface next 3 error ServiceUnavailable'), {
      action: 'AttachNetworkInterface',
      count: 3,
      effect: { kind: 'error', code: 'ServiceUnavailable' },
    });
    assert.deepEqual(parseFaultScript('* rate 0.25 error Throttling 429'), {
      action: '*',
      rate: 0.25,
      effect: { kind: 'error', code: 'Throttling', status: 429 },
    });
    assert.deepEqual(parseFaultScript('CreateNetworkInterface skip 2 next 1 lost InternalError'), {
      action: 'CreateNetworkInterface',
      skip: 2,
      count: 1,
      effect: { kind: 'lostResponse', code: 'InternalError' },
    });
    assert.deepEqual(parseFaultScript('X always lost drop').effect, { kind: 'dropConnection', afterApply: true });
    assert.deepEqual(parseFaultScript('X next 1 drop').effect, { kind: 'dropConnection', afterApply: false });
    assert.deepEqual(parseFaultScript('X next 1 delay 2500').effect, { kind: 'delay', ms: 2500 });
    assert.deepEqual(parseFaultScript('X next 1 attach-fail').effect, { kind: 'attachFailure' });
    assert.throws(() => parseFaultScript('X next 0 drop'), /next needs/);
    assert.throws(() => parseFaultScript('X rate 2 drop'), /probability/);
    assert.throws(() => parseFaultScript('X next 1 error Code 200'), /bad status/);
  });

  it('refills rate-limit buckets continuously at the per-minute rate', () => {
    const limiter = new RateLimiter();
    limiter.configure({ Attach: 60 });
    for (let i = 0; i < 60; i++) assert.deepEqual(limiter.take({ action: 'Attach', nowMs: 0 }), { allowed: true });
    assert.deepEqual(limiter.take({ action: 'Attach', nowMs: 0 }), { allowed: false, retryAfterMs: 1000 });
    assert.deepEqual(limiter.take({ action: 'Attach', nowMs: 1000 }), { allowed: true });
    assert.deepEqual(limiter.take({ action: 'Other', nowMs: 0 }), { allowed: true });
  });

  it('keeps the newest entries when the call log is resized', () => {
    const log = new CallLog(3);
    for (let i = 0; i < 5; i++) {
      log.append({
        time: '',
        action: `A${i}`,
        params: {},
        httpStatus: 200,
        code: 'Success',
        requestId: '',
        latencyMs: 0,
        applied: true,
        fault: null,
      });
    }
    assert.deepEqual(
      log.list().map((entry) => entry.action),
      ['A2', 'A3', 'A4'],
    );
    log.resize(2);
    assert.deepEqual(
      log.list().map((entry) => entry.seq),
      [4, 5],
    );
    assert.equal(log.totalRecorded, 5);
  });

  it("creates the fixture's initial ENIs, attached ones InUse, with their ids, tags and addresses", async () => {
    const demo = await loadFixtureFile(DEMO_FIXTURE_PATH);
    const model = CloudModel.fromFixture(
      {
        ...demo,
        networkInterfaces: [
          {
            networkInterfaceId: 'eni-preexisting',
            vSwitchId: 'vsw-bp1emuh00000000000a',
            securityGroupIds: ['sg-bp1emu00000000000001'],
            instanceId: 'i-bp1emu00000000000001',
            secondaryIpCount: 2,
            ipv6Count: 1,
            tags: { creator: 'terway' },
          },
          { vSwitchId: 'vsw-bp1emui00000000000b', securityGroupIds: ['sg-bp1emu00000000000001'] },
        ],
      },
      { clock: () => 0, limits: defaultSettings().limits, transitionDelays: defaultSettings().transitionDelays },
    );
    const inventory = model.inventory();
    const attached = inventory.networkInterfaces.find((eni) => eni.eniId === 'eni-preexisting');
    assert.deepEqual(
      [attached?.status, attached?.instanceId, attached?.deviceIndex, attached?.tags, attached?.secondaryIps.length],
      ['InUse', 'i-bp1emu00000000000001', 1, { creator: 'terway' }, 2],
    );
    assert.equal(inventory.networkInterfaces.filter((eni) => eni.status === 'Available').length, 1);
    assert.equal(inventory.instances[0]?.eniIds.length, 2);
  });

  it('reports bandwidth and one NetworkCardInfo per network card, with defaults for older fixtures', () => {
    const base = {
      instanceTypeId: 'ecs.ebmgn7ex.32xlarge',
      instanceTypeFamily: 'ecs.ebmgn7ex',
      cpuCoreCount: 128,
      memorySize: 1024,
      eniQuantity: 32,
      eniPrivateIpAddressQuantity: 15,
      eniIpv6AddressQuantity: 15,
    };
    const multiCard = instanceTypeToWire({
      ...base,
      instanceBandwidthRx: 65_536_000,
      instanceBandwidthTx: 65_536_000,
      networkCardQuantity: 2,
    });
    assert.deepEqual(
      [multiCard['InstanceBandwidthRx'], multiCard['NetworkCardQuantity'], multiCard['NetworkCards']],
      [65_536_000, 2, { NetworkCardInfo: [{ NetworkCardIndex: 0 }, { NetworkCardIndex: 1 }] }],
    );
    const defaults = instanceTypeToWire(base);
    assert.deepEqual(
      [defaults['InstanceBandwidthRx'], defaults['InstanceBandwidthTx'], defaults['NetworkCards']],
      [1_024_000, 1_024_000, { NetworkCardInfo: [{ NetworkCardIndex: 0 }] }],
    );
  });

  it('reports every fixture problem at once', () => {
    assert.throws(
      () =>
        parseFixture(
          {
            regionId: 'r',
            accessKeys: [{ accessKeyId: 'a' }],
            vSwitches: [],
            securityGroups: [],
            instanceTypes: [],
            instances: [{ instanceId: 'i', instanceType: 't', vSwitchId: 'v', securityGroupIds: [], status: 'Gone' }],
          },
          'test',
        ),
      /accessKeys\[0\]\.accessKeySecret.*instances\[0\]\.status/,
    );
  });
});
