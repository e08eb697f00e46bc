import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  countIdleIps,
  DEFAULT_RECLAIM_INTERVAL_MS,
  idleReclaimPolicyOf,
  jitteredReclaimIntervalMs,
  parseGoDuration,
  planIdleReclaim,
  planPoolRelease,
} from '../../../src/ipam/index.js';
import type { IdleReclaimInput, IdleReclaimPolicy, NetworkInterfaces, PoolSpec } from '../../../src/ipam/index.js';
import { aSpec, anEni, anIp, enisOf, v4Range } from './builders.js';

const MIN = 60_000;
const T0 = Date.parse('2026-12-01T00:00:00Z');
const POLICY: IdleReclaimPolicy = { afterMs: 30 * MIN, intervalMs: 10 * MIN, batchSize: 3, jitterFactor: 0.1 };

describe('parseGoDuration', () => {
  const cases: [string, number | undefined][] = [
    ['300s', 300_000],
    ['5m', 300_000],
    ['1h30m', 5_400_000],
    ['1.5m', 90_000],
    ['.5s', 500],
    ['250ms', 250],
    ['1500us', 2],
    ['-2m', -120_000],
    ['+1s', 1_000],
    ['0', 0],
    ['0s', 0],
    ['', undefined],
    ['5', undefined],
    ['5 m', undefined],
    ['1d', undefined],
    ['m', undefined],
    ['.s', undefined],
    ['1h-5m', undefined],
  ];
  for (const [text, expected] of cases) {
    it(`${JSON.stringify(text)} → ${String(expected)}`, () => {
      assert.equal(parseGoDuration(text), expected);
    });
  }
});

describe('idleReclaimPolicyOf', () => {
  const pool = (reclaim: PoolSpec['reclaim']): PoolSpec => ({
    maxPoolSize: 10,
    minPoolSize: 2,
    ...(reclaim ? { reclaim } : {}),
  });
  it('is off without reclaim, without after, or without a positive batchSize', () => {
    assert.equal(idleReclaimPolicyOf(undefined), undefined);
    assert.equal(idleReclaimPolicyOf(pool(undefined)), undefined);
    assert.equal(idleReclaimPolicyOf(pool({ interval: '1m', batchSize: 5 })), undefined);
    assert.equal(idleReclaimPolicyOf(pool({ after: '1m', batchSize: 0 })), undefined);
    assert.equal(idleReclaimPolicyOf(pool({ after: '1m' })), undefined);
  });
  it('takes Terway’s defaults for a missing interval and a missing or zero jitter factor', () => {
    assert.deepEqual(idleReclaimPolicyOf(pool({ after: '30m', batchSize: 5 })), {
      afterMs: 30 * MIN,
      intervalMs: DEFAULT_RECLAIM_INTERVAL_MS,
      batchSize: 5,
      jitterFactor: 0.1,
    });
    assert.equal(idleReclaimPolicyOf(pool({ after: '0s', batchSize: 1, jitterFactor: '0' }))?.jitterFactor, 0.1);
    assert.deepEqual(idleReclaimPolicyOf(pool({ after: '1m', interval: '20s', batchSize: 2, jitterFactor: '0.5' })), {
      afterMs: MIN,
      intervalMs: 20_000,
      batchSize: 2,
      jitterFactor: 0.5,
    });
  });
});

describe('jitteredReclaimIntervalMs', () => {
  it('stays within [interval, interval·(1 + factor)), is stable per node and start, and spreads nodes', () => {
    const seen = new Set<number>();
    for (let node = 0; node < 200; node += 1) {
      const ms = jitteredReclaimIntervalMs({ policy: POLICY, nodeName: `node-${node}`, startMs: T0 });
      assert.ok(ms >= POLICY.intervalMs && ms < POLICY.intervalMs * 1.1 + 1, `${ms} out of bounds`);
      assert.equal(ms, jitteredReclaimIntervalMs({ policy: POLICY, nodeName: `node-${node}`, startMs: T0 }));
      seen.add(ms);
    }
    assert.ok(seen.size > 150, `only ${seen.size} distinct intervals over 200 nodes`);
    const full = { ...POLICY, jitterFactor: 1 };
    const ms = jitteredReclaimIntervalMs({ policy: full, nodeName: 'node-1', startMs: T0 });
    assert.ok(ms >= full.intervalMs && ms < 2 * full.intervalMs);
  });
});

function input(overrides: Partial<IdleReclaimInput>): IdleReclaimInput {
  return {
    policy: POLICY,
    nodeName: 'node-a',
    nowMs: T0,
    lastModifiedMs: T0 - 60 * MIN,
    plannedMs: undefined,
    idle: 10,
    maxPoolSize: 10,
    minPoolSize: 2,
    reachableIdleFloor: 0,
    ...overrides,
  };
}

const jitter = (startMs: number): number => jitteredReclaimIntervalMs({ policy: POLICY, nodeName: 'node-a', startMs });

describe('planIdleReclaim', () => {
  const cases: { name: string; input: IdleReclaimInput; extraRelease: number; nextMs: number | undefined }[] = [
    { name: 'reclaim off: nothing, no timer', input: input({ policy: undefined }), extraRelease: 0, nextMs: undefined },
    {
      name: 'pool at minPoolSize: nothing, no timer',
      input: input({ idle: 2 }),
      extraRelease: 0,
      nextMs: undefined,
    },
    {
      name: 'the excess over maxPoolSize alone left at minPoolSize: no timer',
      input: input({ idle: 14, maxPoolSize: 2, minPoolSize: 2 }),
      extraRelease: 0,
      nextMs: undefined,
    },
    {
      name: 'busy pool (modified within after): first batch planned one interval after the pool goes quiet',
      input: input({ lastModifiedMs: T0 - 5 * MIN }),
      extraRelease: 0,
      nextMs: T0 + 25 * MIN + jitter(T0 + 25 * MIN),
    },
    {
      name: 'quiet pool without a plan (never modified): an interval starts now, as Terway',
      input: input({ lastModifiedMs: undefined }),
      extraRelease: 0,
      nextMs: T0 + jitter(T0),
    },
    {
      name: 'quiet pool, batch not due yet: the plan is kept',
      input: input({ plannedMs: T0 + MIN }),
      extraRelease: 0,
      nextMs: T0 + MIN,
    },
    {
      name: 'a plan from before the last modification is replaced',
      input: input({ lastModifiedMs: T0 - 40 * MIN, plannedMs: T0 - 20 * MIN }),
      extraRelease: 0,
      nextMs: T0 + jitter(T0),
    },
    {
      name: 'batch due: batchSize more, next interval from now',
      input: input({ plannedMs: T0 - 1 }),
      extraRelease: 3,
      nextMs: T0 + jitter(T0),
    },
    {
      name: 'batch due near the floor: only down to minPoolSize, then no timer',
      input: input({ plannedMs: T0, idle: 4 }),
      extraRelease: 2,
      nextMs: undefined,
    },
    {
      name: 'idle addresses no release can reach (primaries of ENIs that stay) set no timer',
      input: input({ idle: 4, minPoolSize: 1, reachableIdleFloor: 4 }),
      extraRelease: 0,
      nextMs: undefined,
    },
    {
      name: 'a batch stops at the reachable floor when it is above minPoolSize',
      input: input({ plannedMs: T0, idle: 6, minPoolSize: 1, reachableIdleFloor: 4 }),
      extraRelease: 2,
      nextMs: undefined,
    },
    {
      name: 'batch due above maxPoolSize: the extra comes on top of the excess, floor counted after it',
      input: input({ plannedMs: T0, idle: 13, maxPoolSize: 4, minPoolSize: 2 }),
      extraRelease: 2,
      nextMs: undefined,
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      assert.deepEqual(planIdleReclaim(c.input), { extraRelease: c.extraRelease, nextMs: c.nextMs });
    });
  }

  it('batches a quiet pool down to minPoolSize, and an allocation resets the clock', () => {
    // 10 idle, min 2, batch 3: batches of 3, 3, 2, then no timer.
    let idle = 10;
    let planned: number | undefined = T0 - 1;
    let now = T0;
    const batches: number[] = [];
    for (let pass = 0; pass < 10 && planned !== undefined; pass += 1) {
      now = Math.max(now, planned);
      const decision = planIdleReclaim(input({ nowMs: now, plannedMs: planned, idle }));
      if (decision.extraRelease > 0) batches.push(decision.extraRelease);
      idle -= decision.extraRelease;
      planned = decision.nextMs;
    }
    assert.deepEqual(batches, [3, 3, 2]);
    assert.equal(idle, 2);
    // A pod takes a pool IP (lastModifiedTime bumped): nothing is due until after + interval from then.
    const reset = planIdleReclaim(input({ nowMs: now, lastModifiedMs: now, plannedMs: now - 1, idle: 8 }));
    assert.equal(reset.extraRelease, 0);
    assert.ok(reset.nextMs !== undefined && reset.nextMs >= now + POLICY.afterMs + POLICY.intervalMs);
  });
});

describe('planPoolRelease with an idle reclaim batch', () => {
  const idleEnis = (): NetworkInterfaces =>
    enisOf(
      anEni('eni-1', { ipv4: [...v4Range('10.0.0', { count: 6 }), anIp('10.0.0.99', { pod: 'ns/a' })] }),
      anEni('eni-2', { ipv4: v4Range('10.0.1', { count: 4 }), unschedulable: true }),
    );
  it('releases the extra on top of the excess; unschedulable ENIs neither count nor give', () => {
    const spec = aSpec({ pool: { minPoolSize: 1, maxPoolSize: 5 } });
    assert.equal(countIdleIps({ enis: idleEnis(), family: 'ipv4' }), 6);
    const plan = planPoolRelease({ spec, enis: idleEnis(), extraRelease: 2 });
    assert.equal(plan.idleAfter, 3);
    assert.deepEqual(plan.ipsToRelease, [
      { eniId: 'eni-1', family: 'ipv4', ips: ['10.0.0.15', '10.0.0.14', '10.0.0.13'] },
    ]);
  });
  it('without an extra it releases the excess only', () => {
    const spec = aSpec({ pool: { minPoolSize: 1, maxPoolSize: 5 } });
    assert.equal(planPoolRelease({ spec, enis: idleEnis() }).idleAfter, 5);
  });
});
