import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { batchGapMs, nextBusyStreak, passDelayMs } from '../../../src/ipam/index.js';
import type { BatchPacing } from '../../../src/ipam/index.js';

const PACING: BatchPacing = { baseMs: 1_000, maxMs: 4_000 };

describe('batchGapMs', () => {
  const cases: { streak: number; gapMs: number }[] = [
    { streak: -1, gapMs: 0 },
    { streak: 0, gapMs: 0 },
    { streak: 1, gapMs: 2_000 },
    { streak: 2, gapMs: 4_000 },
    { streak: 3, gapMs: 4_000 },
    { streak: 1_000, gapMs: 4_000 },
  ];
  for (const { streak, gapMs } of cases) {
    it(`a busy streak of ${streak} waits ${gapMs} ms`, () => {
      assert.equal(batchGapMs(PACING, streak), gapMs);
    });
  }
  it('a cap below the base never shortens the base', () => {
    assert.equal(batchGapMs({ baseMs: 1_000, maxMs: 500 }, 1), 1_000);
  });
});

describe('nextBusyStreak', () => {
  const cases: { name: string; streak: number; lastEndMs: number | undefined; changeMs: number; next: number }[] = [
    { name: 'the first change ever', streak: 0, lastEndMs: undefined, changeMs: 5_000, next: 0 },
    { name: 'a change soon after the last pass', streak: 0, lastEndMs: 10_000, changeMs: 10_500, next: 1 },
    { name: 'the backlog goes on', streak: 2, lastEndMs: 10_000, changeMs: 13_999, next: 3 },
    { name: 'a change after a quiet spell', streak: 3, lastEndMs: 10_000, changeMs: 14_000, next: 0 },
  ];
  for (const { name, streak, lastEndMs, changeMs, next } of cases) {
    it(name, () => {
      assert.equal(nextBusyStreak({ pacing: PACING, streak, lastEndMs, changeMs }), next);
    });
  }
});

describe('passDelayMs', () => {
  const cases: {
    name: string;
    nowMs: number;
    streak: number;
    lastPass: { startMs: number; endMs: number } | undefined;
    delayMs: number;
  }[] = [
    { name: 'no pass yet: at once', nowMs: 100, streak: 0, lastPass: undefined, delayMs: 0 },
    {
      name: 'a lone change on a quiet node: at once',
      nowMs: 60_000,
      streak: 0,
      lastPass: { startMs: 10_000, endMs: 10_300 },
      delayMs: 0,
    },
    {
      name: 'not busy, soon after a pass: the minimum interval after its start',
      nowMs: 10_500,
      streak: 0,
      lastPass: { startMs: 10_000, endMs: 10_300 },
      delayMs: 500,
    },
    {
      name: 'busy after a short pass: the streak gap after its start',
      nowMs: 10_500,
      streak: 1,
      lastPass: { startMs: 10_000, endMs: 10_300 },
      delayMs: 1_500,
    },
    {
      name: 'busier: a longer gap, capped',
      nowMs: 10_500,
      streak: 5,
      lastPass: { startMs: 10_000, endMs: 10_300 },
      delayMs: 3_500,
    },
    {
      name: 'busy after a long pass (it gathered its batch): at once',
      nowMs: 15_000,
      streak: 2,
      lastPass: { startMs: 10_000, endMs: 15_000 },
      delayMs: 0,
    },
    {
      name: 'not busy, after a pass longer than the minimum interval (it waited for an attach): at once',
      nowMs: 13_000,
      streak: 0,
      lastPass: { startMs: 10_000, endMs: 13_000 },
      delayMs: 0,
    },
    {
      name: 'a pass of 0.8 s: the rest of the minimum interval',
      nowMs: 10_800,
      streak: 0,
      lastPass: { startMs: 10_000, endMs: 10_800 },
      delayMs: 200,
    },
  ];
  for (const { name, nowMs, streak, lastPass, delayMs } of cases) {
    it(name, () => {
      assert.equal(passDelayMs({ nowMs, minIntervalMs: 1_000, pacing: PACING, streak, lastPass }), delayMs);
    });
  }
});
