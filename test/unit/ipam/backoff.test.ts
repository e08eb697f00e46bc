import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { ecsRetryDelayMs, exponentialCapMs, fullJitterMs, nextPass } from '../../../src/ipam/index.js';
import type { NextPassInput } from '../../../src/ipam/index.js';

describe('exponentialCapMs', () => {
  const table: [attempt: number, baseMs: number, capMs: number, expected: number][] = [
    [1, 1_000, 30_000, 1_000],
    [2, 1_000, 30_000, 2_000],
    [3, 1_000, 30_000, 4_000],
    [5, 1_000, 30_000, 16_000],
    [6, 1_000, 30_000, 30_000],
    [60, 1_000, 30_000, 30_000],
    [0, 1_000, 30_000, 1_000],
    [1, 2_000, 1_000, 1_000],
  ];
  for (const [attempt, baseMs, capMs, expected] of table) {
    it(`attempt ${attempt}, base ${baseMs}, cap ${capMs} → ${expected}`, () => {
      assert.equal(exponentialCapMs({ attempt, baseMs, capMs }), expected);
    });
  }
});

describe('fullJitterMs', () => {
  const table: [capMs: number, random: number, floorMs: number | undefined, expected: number][] = [
    [10_000, 0, undefined, 0],
    [10_000, 0.5, undefined, 5_000],
    [10_000, 0.99999, undefined, 10_000],
    [10_000, 0.25, 1_000, 3_250],
    [10_000, 0, 1_000, 1_000],
    [500, 0.5, 1_000, 500],
    [10_000, -1, undefined, 0],
    [10_000, 7, undefined, 10_000],
  ];
  for (const [capMs, random, floorMs, expected] of table) {
    it(`cap ${capMs}, random ${random}, floor ${String(floorMs)} → ${expected}`, () => {
      assert.equal(fullJitterMs({ capMs, random, ...(floorMs === undefined ? {} : { floorMs }) }), expected);
    });
  }
});

describe('ecsRetryDelayMs', () => {
  const table: [name: string, input: Parameters<typeof ecsRetryDelayMs>[0], expected: number][] = [
    ['first retry, random 0: the floor', { attempt: 1, random: 0 }, 100],
    ['first retry, random 0.5: half of 1 s above the floor', { attempt: 1, random: 0.5 }, 550],
    ['fourth retry, random 1: the 8 s cap', { attempt: 4, random: 1 }, 8_000],
    ['tenth retry: capped at 30 s', { attempt: 10, random: 1 }, 30_000],
    ["the cloud's hint wins", { attempt: 3, random: 0.1, retryAfterMs: 2_500 }, 2_500],
    ['a zero hint is no hint', { attempt: 1, random: 1, retryAfterMs: 0 }, 1_000],
    [
      "the activity policy's base and cap",
      { attempt: 3, random: 1, backoff: { baseMs: 5_000, capMs: 12_000, floorMs: 100 } },
      12_000,
    ],
  ];
  for (const [name, input, expected] of table) {
    it(name, () => {
      assert.equal(ecsRetryDelayMs(input), expected);
    });
  }

  it('spreads 1,000 callers failing together over the whole window, not onto one instant', () => {
    // A seeded sequence stands for the callers' independent random values.
    let seed = 42;
    const random = (): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const perSecond = new Map<number, number>();
    for (let i = 0; i < 1_000; i += 1) {
      const second = Math.floor(ecsRetryDelayMs({ attempt: 5, random: random() }) / 1_000);
      perSecond.set(second, (perSecond.get(second) ?? 0) + 1);
    }
    assert.equal(perSecond.size, 16, 'every second of the 16 s window gets retries');
    assert.ok(
      Math.max(...perSecond.values()) < 100,
      `at most ~1/16 per second, got ${Math.max(...perSecond.values())}`,
    );
  });
});

describe('nextPass failure backoff with full jitter', () => {
  const base: NextPassInput = {
    lastPassEndMs: 1_000_000,
    failureStreak: 4,
    lastFailureTypes: ['EcsThrottled'],
    jitter: 0,
    settings: {
      idleWakeMs: 6 * 3_600_000,
      gcPeriodMs: 120_000,
      maxFailureBackoffMs: 300_000,
      transientFailureBackoffMs: 10_000,
      daemonWaitEventAfterMs: 300_000,
      stuckBackoffMs: 1_800_000,
      pendingPodEventAfterMs: 30_000,
    },
    hasPendingWork: false,
  };
  const table: [name: string, input: Partial<NextPassInput>, delayMs: number][] = [
    ['no random drawn (a new run): the cap itself, 8 s at streak 4 of changing causes', {}, 8_000],
    [
      'random 0.5 of the transient cap at the 4th repeat (80 s)',
      { failureStreak: 8, failureRepeats: 4, backoffRandom: 0.5 },
      40_000,
    ],
    ['random 0.5 of the 10 s transient ceiling', { failureStreak: 6, backoffRandom: 0.5 }, 5_000],
    ['random 0 retries at once (the minimum interval still applies)', { backoffRandom: 0 }, 0],
    [
      'a permanent failure: full jitter under the long cap',
      { failureStreak: 10, lastFailureTypes: ['EcsQuotaExceeded'], backoffRandom: 0.25 },
      75_000,
    ],
  ];
  for (const [name, input, delayMs] of table) {
    it(name, () => {
      const next = nextPass({ ...base, ...input });
      assert.deepEqual(next, { atMs: base.lastPassEndMs + delayMs, reason: 'failureBackoff' });
    });
  }
});
