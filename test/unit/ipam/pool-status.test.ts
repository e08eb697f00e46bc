import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { initialWarmUp, planPoolStatus, poolStatusOf } from '../../../src/ipam/index.js';
import type { NodeStatus } from '../../../src/ipam/index.js';
import { aSpec } from './builders.js';

const T0 = Date.parse('2026-12-01T00:00:00Z');
const MIN = 60_000;
const spec = aSpec({
  pool: {
    minPoolSize: 2,
    maxPoolSize: 10,
    warmUpSize: 20,
    reclaim: { after: '5m', interval: '1m', batchSize: 3, jitterFactor: '0.1' },
  },
});

function pass(
  current: NodeStatus,
  overrides: { nowMs: number; poolTouched?: boolean; returned?: number; idle: number },
) {
  return planPoolStatus({
    nodeName: 'node-a',
    spec,
    current,
    nowMs: overrides.nowMs,
    warmUp: initialWarmUp({ status: current, warmUpSize: spec.pool?.warmUpSize }),
    returnedAddresses: overrides.returned ?? 0,
    poolTouched: overrides.poolTouched ?? false,
    idle: overrides.idle,
  });
}

describe('planPoolStatus', () => {
  it('an allocating pass bumps lastModifiedTime, counts warm-up and plans the first batch after the quiet period', () => {
    const first = pass({}, { nowMs: T0 + 1_234, poolTouched: true, returned: 10, idle: 10 });
    assert.equal(first.fields.lastModifiedTime, '2026-12-01T00:00:01Z');
    assert.deepEqual(
      [first.fields.warmUpTarget, first.fields.warmUpAllocatedCount, first.fields.warmUpCompleted],
      [20, 10, false],
    );
    assert.equal(first.extraRelease, 0);
    assert.equal(first.warmUpContinues, true, 'warm-up got addresses and wants 10 more: the next pass follows');
    const next = first.nextReclaimMs ?? 0;
    assert.ok(next >= T0 + 1_000 + 6 * MIN && next <= T0 + 1_000 + 6.1 * MIN + 1_000, String(next));
    assert.equal(next % 1000, 0, 'whole seconds, as written');
    assert.equal(first.fields.nextIdleIPReclaimTime, new Date(next).toISOString().replace('.000Z', 'Z'));
  });

  it('an idle node computes the same fields again (nothing to write) until the batch is due', () => {
    const first = pass({}, { nowMs: T0, poolTouched: true, returned: 20, idle: 10 });
    const written: NodeStatus = { ...first.fields };
    for (const nowMs of [T0 + MIN, T0 + 5 * MIN, (first.nextReclaimMs ?? 0) - 1]) {
      const again = pass(written, { nowMs, idle: 10 });
      assert.deepEqual(again.fields, first.fields, `at +${(nowMs - T0) / 1000}s`);
      assert.equal(again.extraRelease, 0);
      assert.equal(again.nextReclaimMs, first.nextReclaimMs);
    }
    const due = pass(written, { nowMs: first.nextReclaimMs ?? 0, idle: 10 });
    assert.equal(due.extraRelease, 3);
    assert.equal(due.fields.lastModifiedTime, first.fields.lastModifiedTime, 'a release is no modification');
    assert.ok((due.nextReclaimMs ?? 0) > (first.nextReclaimMs ?? 0));
  });

  it('at minPoolSize no reclaim time is written and no timer set; warm-up once complete stays so', () => {
    const current: NodeStatus = {
      lastModifiedTime: '2026-11-30T00:00:00Z',
      nextIdleIPReclaimTime: '2026-11-30T01:00:00Z',
      warmUpTarget: 20,
      warmUpAllocatedCount: 20,
      warmUpCompleted: true,
    };
    const result = pass(current, { nowMs: T0, idle: 2, returned: 4 });
    assert.equal(result.nextReclaimMs, undefined);
    assert.equal(result.warmUpContinues, false);
    assert.deepEqual(result.fields, {
      lastModifiedTime: '2026-11-30T00:00:00Z',
      warmUpTarget: 20,
      warmUpAllocatedCount: 20,
      warmUpCompleted: true,
    });
  });

  it('poolStatusOf picks the pool fields only', () => {
    assert.deepEqual(poolStatusOf({ lastSyncOpenAPITime: 'x', warmUpCompleted: true, networkInterfaces: {} }), {
      warmUpCompleted: true,
    });
    assert.deepEqual(poolStatusOf(undefined), {});
  });
});

describe('warm-up follow-up', () => {
  it('a pass that got nothing sets no follow-up, so a warm-up the node cannot complete does not spin', () => {
    const running: NodeStatus = { warmUpTarget: 20, warmUpAllocatedCount: 10, warmUpCompleted: false };
    assert.equal(pass(running, { nowMs: T0, idle: 10, returned: 0 }).warmUpContinues, false);
    assert.equal(pass(running, { nowMs: T0, idle: 10, returned: 5 }).warmUpContinues, true);
    assert.equal(pass(running, { nowMs: T0, idle: 10, returned: 10 }).warmUpContinues, false, 'complete');
  });
});
