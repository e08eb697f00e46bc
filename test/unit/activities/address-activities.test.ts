/**
 * The address activities from their two factories (assign, unassign by family and unit) and the one vSwitch rule
 * every ask for addresses follows, against a scripted ECS client and the real vSwitch cache.
 */
import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';

import { createEcsActivities } from '../../../src/activities/ecs-activities.js';
import type { EcsActivities } from '../../../src/activities/ecs-activities.js';
import type { EcsApi } from '../../../src/activities/ecs/ecs-api.js';
import { EcsCallError } from '../../../src/activities/ecs/ecs-errors.js';
import type { EcsFailure } from '../../../src/activities/ecs/ecs-errors.js';
import { VSwitchCache } from '../../../src/activities/ecs/vswitch-cache.js';
import type { VSwitchInfo } from '../../../src/ipam/index.js';
import { IPV4_PREFIX_SIZE } from '../../../src/ipam/index.js';
import { createLogger } from '../../../src/logger.js';
import { applicationFailureOf } from '../../support/application-failure.js';
import { quietActivityEnvironment } from '../../support/test-logs.js';

/** The activities' signatures as workflow histories know them: a factory must not change one. */
interface RecordedSignatures {
  assignIpv4(input: { eniId: string; vSwitchId?: string; count: number; clientToken: string }): Promise<{
    ips: string[];
  }>;
  assignIpv6(input: { eniId: string; vSwitchId?: string; count: number; clientToken: string }): Promise<{
    ips: string[];
  }>;
  assignIpv4Prefixes(input: { eniId: string; vSwitchId?: string; count: number; clientToken: string }): Promise<{
    prefixes: string[];
  }>;
  assignIpv6Prefixes(input: { eniId: string; vSwitchId?: string; count: number; clientToken: string }): Promise<{
    prefixes: string[];
  }>;
  unassignIpv4(input: { eniId: string; ips: string[] }): Promise<void>;
  unassignIpv6(input: { eniId: string; ips: string[] }): Promise<void>;
  unassignIpv4Prefixes(input: { eniId: string; prefixes: string[] }): Promise<void>;
  unassignIpv6Prefixes(input: { eniId: string; prefixes: string[] }): Promise<void>;
}
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const signaturesKept: Same<Pick<EcsActivities, keyof RecordedSignatures>, RecordedSignatures> = true;

const VSW = 'vsw-a';
const exhausted = (operation: EcsFailure['operation']): EcsFailure => ({
  type: 'EcsVSwitchExhausted',
  operation,
  code: 'InvalidVSwitchId.IpNotEnough',
  message: 'not enough',
  retryable: false,
});
const unassigned = (operation: EcsFailure['operation']): EcsFailure => ({
  type: 'EcsInvalidRequest',
  operation,
  code: 'InvalidIp.IpUnassigned',
  message: 'already unassigned',
  retryable: false,
});

/** An ECS client that records every call and answers from `answers` (a failure is thrown as `EcsCallError`). */
function scriptedEcs(answers: Partial<Record<keyof EcsApi, unknown>>) {
  const calls: { method: string; input: unknown }[] = [];
  const answer = (method: keyof EcsApi) => (input: unknown) => {
    calls.push({ method, input });
    const reply = answers[method];
    if (reply !== undefined && typeof reply === 'object' && reply !== null && 'retryable' in reply) {
      return Promise.reject(new EcsCallError(reply as EcsFailure));
    }
    return Promise.resolve(reply);
  };
  const methods: (keyof EcsApi)[] = [
    'createEni',
    'assignIpv4',
    'assignIpv6',
    'assignIpv4Prefixes',
    'assignIpv6Prefixes',
    'unassignIpv4',
    'unassignIpv6',
    'unassignIpv4Prefixes',
    'unassignIpv6Prefixes',
    'describeVSwitch',
  ];
  const ecs = Object.fromEntries(methods.map((method) => [method, answer(method)])) as unknown as EcsApi;
  return { ecs, calls, methods: () => calls.map((call) => call.method) };
}

let vSwitches: VSwitchCache;
let unblocked: string[];

/** The cached vSwitch with `available` free addresses, blocked when `blocked`. */
async function cached(available: number, blocked = false): Promise<void> {
  await vSwitches.get(VSW, () => Promise.resolve({ vSwitchId: VSW, zoneId: 'z', availableIpCount: available }));
  if (blocked) vSwitches.block(VSW);
}
const cachedInfo = (): VSwitchInfo | undefined => vSwitches.peek([VSW])?.[VSW];

function activitiesWith(answers: Partial<Record<keyof EcsApi, unknown>>) {
  const scripted = scriptedEcs(answers);
  const activities = createEcsActivities({
    ecs: scripted.ecs,
    vSwitches,
    logger: createLogger({ name: 'test', level: 'silent' }),
  });
  return { activities, ...scripted };
}

/** Calls one assign activity by name (the eight share a shape: the table's rows name them). */
const assign = (activities: EcsActivities, name: (typeof ASSIGNS)[number]['name'], input: object) =>
  (activities[name] as (input: object) => Promise<Record<string, string[]>>)(input);

const run = <R>(activityType: string, fn: () => Promise<R>): Promise<R> =>
  quietActivityEnvironment({ activityType }).run(fn);

beforeEach(() => {
  vSwitches = new VSwitchCache();
  unblocked = [];
  vSwitches.onUnblocked((vSwitchId) => unblocked.push(vSwitchId));
});

const ASSIGNS = [
  { name: 'assignIpv4', field: 'ips', operation: 'AssignPrivateIpAddresses', perUnit: 1, sized: true },
  { name: 'assignIpv6', field: 'ips', operation: 'AssignIpv6Addresses', perUnit: 0, sized: false },
  {
    name: 'assignIpv4Prefixes',
    field: 'prefixes',
    operation: 'AssignPrivateIpAddresses',
    perUnit: IPV4_PREFIX_SIZE,
    sized: false,
  },
  { name: 'assignIpv6Prefixes', field: 'prefixes', operation: 'AssignIpv6Addresses', perUnit: 0, sized: false },
] as const;

describe('assign activities (one factory by family and unit)', () => {
  it('keep the signatures workflow histories record', () => {
    assert.equal(signaturesKept, true);
  });

  for (const row of ASSIGNS) {
    const input = { eniId: 'eni-1', vSwitchId: VSW, count: 2, clientToken: 'token-1' };

    it(`${row.name}: calls its own ECS action with the input and answers {${row.field}}`, async () => {
      const { activities, calls } = activitiesWith({ [row.name]: { requestId: 'R', [row.field]: ['a', 'b'] } });
      const reply = await run(row.name, () => assign(activities, row.name, input));
      assert.deepEqual(reply, { [row.field]: ['a', 'b'] });
      assert.deepEqual(calls, [{ method: row.name, input }]);
    });

    it(`${row.name}: granted units lift a block, else take ${String(row.perUnit)} free IPv4 each`, async () => {
      const { activities } = activitiesWith({ [row.name]: { requestId: 'R', [row.field]: ['a', 'b'] } });
      await cached(100);
      await run(row.name, () => assign(activities, row.name, input));
      assert.equal(cachedInfo()?.availableIpCount, 100 - 2 * row.perUnit);
      assert.deepEqual(unblocked, []);
      vSwitches.block(VSW);
      await run(row.name, () => assign(activities, row.name, input));
      assert.deepEqual(unblocked, [VSW], 'the block is lifted');
      assert.equal(cachedInfo(), undefined, 'the next lookup asks the cloud');
    });

    it(`${row.name}: nothing granted leaves the cache alone`, async () => {
      const { activities } = activitiesWith({ [row.name]: { requestId: 'R', [row.field]: [] } });
      await cached(100, true);
      assert.deepEqual(await run(row.name, () => assign(activities, row.name, input)), { [row.field]: [] });
      assert.deepEqual(unblocked, []);
      assert.equal(cachedInfo()?.availableIpCount, 0, 'still blocked');
    });

    it(`${row.name}: an exhausted vSwitch ${row.sized ? 'is described and its count revised' : 'is blocked'}`, async () => {
      const { activities, methods } = activitiesWith({
        [row.name]: exhausted(row.operation),
        describeVSwitch: { vSwitchId: VSW, zoneId: 'z', availableIpCount: 1 },
      });
      await cached(100);
      const failure = await applicationFailureOf(() => run(row.name, () => assign(activities, row.name, input)));
      assert.equal(failure.type, 'EcsVSwitchExhausted');
      assert.equal(failure.nonRetryable, true);
      if (row.sized) {
        assert.deepEqual(methods(), [row.name, 'describeVSwitch']);
        assert.equal(cachedInfo()?.availableIpCount, 1, 'the next ask takes what is left');
        assert.equal(vSwitches.blocked().length, 0, 'fewer than asked for is no block');
      } else {
        assert.deepEqual(methods(), [row.name], 'no describe');
        assert.deepEqual(
          vSwitches.blocked().map((block) => block.vSwitchId),
          [VSW],
        );
      }
    });

    it(`${row.name}: other failures, or no vSwitch named, leave the cache alone`, async () => {
      const throttled: EcsFailure = { ...exhausted(row.operation), type: 'EcsThrottled', retryable: true };
      const { activities } = activitiesWith({ [row.name]: throttled });
      await cached(100);
      assert.equal(
        (await applicationFailureOf(() => run(row.name, () => assign(activities, row.name, input)))).type,
        'EcsThrottled',
      );
      const refused = activitiesWith({ [row.name]: exhausted(row.operation) });
      const withoutVSwitch = { eniId: input.eniId, count: input.count, clientToken: input.clientToken };
      await applicationFailureOf(() => run(row.name, () => assign(refused.activities, row.name, withoutVSwitch)));
      assert.deepEqual(refused.methods(), [row.name]);
      assert.deepEqual(vSwitches.blocked(), []);
      assert.equal(cachedInfo()?.availableIpCount, 100);
    });
  }
});

const UNASSIGNS = [
  { name: 'unassignIpv4', field: 'ips', operation: 'UnassignPrivateIpAddresses' },
  { name: 'unassignIpv6', field: 'ips', operation: 'UnassignIpv6Addresses' },
  { name: 'unassignIpv4Prefixes', field: 'prefixes', operation: 'UnassignPrivateIpAddresses' },
  { name: 'unassignIpv6Prefixes', field: 'prefixes', operation: 'UnassignIpv6Addresses' },
] as const;

describe('unassign activities (one factory by family and unit)', () => {
  for (const row of UNASSIGNS) {
    const input = { eniId: 'eni-1', [row.field]: ['a', 'b'] } as { eniId: string; ips: string[] } & {
      eniId: string;
      prefixes: string[];
    };
    const call = (activities: EcsActivities, given: typeof input) =>
      run(row.name, () => (activities[row.name] as (input: unknown) => Promise<void>)(given));

    it(`${row.name}: calls its own ECS action; nothing to take is no call`, async () => {
      const { activities, calls } = activitiesWith({ [row.name]: { requestId: 'R' } });
      await call(activities, input);
      assert.deepEqual(calls, [{ method: row.name, input }]);
      await call(activities, { ...input, [row.field]: [] });
      assert.equal(calls.length, 1);
    });

    it(`${row.name}: units already gone count as done; other failures fail`, async () => {
      const done = activitiesWith({ [row.name]: unassigned(row.operation) });
      await call(done.activities, input);
      const throttled: EcsFailure = { ...unassigned(row.operation), type: 'EcsThrottled', code: 'Throttling' };
      const failing = activitiesWith({ [row.name]: throttled });
      assert.equal((await applicationFailureOf(() => call(failing.activities, input))).type, 'EcsThrottled');
    });
  }
});

describe('createEni follows the same vSwitch rule', () => {
  const create = {
    eniKind: 'secondary' as const,
    vSwitchId: VSW,
    securityGroupIds: ['sg-1'],
    eniType: 'Secondary' as const,
    trafficMode: 'Standard' as const,
    ipv4Count: 3,
    ipv6Count: 0,
    tags: {},
    clientToken: 'token-1',
    description: '',
  };
  const eni = { requestId: 'R', eni: { eniId: 'eni-1' } };

  it('takes its IPv4 addresses and prefixes from the cached count, or lifts a block', async () => {
    const { activities } = activitiesWith({ createEni: eni });
    await cached(100);
    await run('createEni', () => activities.createEni({ ...create, ipv4Count: 1, ipv4PrefixCount: 2 }));
    assert.equal(cachedInfo()?.availableIpCount, 100 - 1 - 2 * IPV4_PREFIX_SIZE);
    vSwitches.block(VSW);
    await run('createEni', () => activities.createEni(create));
    assert.deepEqual(unblocked, [VSW]);
  });

  it('an address create refused is described and revised; a prefix create refused blocks', async () => {
    const answers = {
      createEni: exhausted('CreateNetworkInterface'),
      describeVSwitch: { vSwitchId: VSW, zoneId: 'z', availableIpCount: 2 },
    };
    const sized = activitiesWith(answers);
    await cached(100);
    await applicationFailureOf(() => run('createEni', () => sized.activities.createEni(create)));
    assert.deepEqual(sized.methods(), ['createEni', 'describeVSwitch']);
    assert.equal(cachedInfo()?.availableIpCount, 2);
    const prefix = activitiesWith(answers);
    await applicationFailureOf(() =>
      run('createEni', () => prefix.activities.createEni({ ...create, ipv4Count: 1, ipv4PrefixCount: 1 })),
    );
    assert.deepEqual(prefix.methods(), ['createEni']);
    assert.deepEqual(
      vSwitches.blocked().map((block) => block.vSwitchId),
      [VSW],
    );
  });
});
