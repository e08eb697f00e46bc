import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { AttachPollSchedule } from '../../../src/activities/ecs/attach-polls.js';

/** Waits for one attach that takes `attachMs` as waitEniStatus does; returns its describes and when it saw it done. */
function waitForAttach(schedule: AttachPollSchedule, attachMs: number): { describes: number; seenMs: number } {
  const seen = describeUntilDone(schedule, attachMs, schedule.firstPollMs());
  schedule.observe(seen);
  return seen;
}

/** The describes of one attach whose first describe waited `firstPollMs`, without telling the schedule yet. */
function describeUntilDone(
  schedule: AttachPollSchedule,
  attachMs: number,
  firstPollMs: number,
): { describes: number; seenMs: number; elapsedMs: number; firstPollMs: number } {
  let atMs = firstPollMs;
  let describes = 1;
  while (atMs < attachMs) {
    atMs += schedule.nextPollMs(describes);
    describes += 1;
  }
  return { describes, seenMs: atMs, elapsedMs: atMs, firstPollMs };
}

/**
 * `count` attaches of `attachMs` started together (a scale-out): all take the same first guess, and the schedule
 * hears of them only as they are seen done. Returns the describes each took.
 */
function waitForBurst(schedule: AttachPollSchedule, attachMs: number, count: number): number[] {
  const firstPollMs = schedule.firstPollMs();
  const seen = Array.from({ length: count }, () => describeUntilDone(schedule, attachMs, firstPollMs));
  for (const one of seen) schedule.observe(one);
  return seen.map((one) => one.describes);
}

/** The mean describes per attach and the mean time from done to seen, over `count` attaches after a warm-up. */
function steadyState(attachMs: number, count = 200): { describes: number; lateMs: number } {
  const schedule = new AttachPollSchedule(3_000);
  for (let index = 0; index < 20; index += 1) waitForAttach(schedule, attachMs);
  let describes = 0;
  let lateMs = 0;
  for (let index = 0; index < count; index += 1) {
    const seen = waitForAttach(schedule, attachMs);
    describes += seen.describes;
    lateMs += seen.seenMs - attachMs;
  }
  return { describes: describes / count, lateMs: lateMs / count };
}

describe('attach poll schedule', () => {
  it("starts at the poll interval: Terway's fixed 3 s by default", () => {
    assert.equal(new AttachPollSchedule(3_000).firstPollMs(), 3_000);
    assert.equal(new AttachPollSchedule(30).firstPollMs(), 30);
  });

  // Issue 29: the first guess was two thirds of the interval (2 s), so every first describe of a 2.5 s attach missed.
  const firstAttaches = [
    { attachMs: 1_200, describes: 1 },
    { attachMs: 2_500, describes: 1 },
    { attachMs: 3_000, describes: 1 },
    { attachMs: 3_200, describes: 2 },
  ];
  for (const { attachMs, describes } of firstAttaches) {
    it(`a new process finds a ${attachMs} ms attach with ${describes} describe(s)`, () => {
      assert.equal(waitForAttach(new AttachPollSchedule(3_000), attachMs).describes, describes);
    });
  }

  it('a burst of 2.5 s attaches started together is found by each first describe, wave after wave', () => {
    const schedule = new AttachPollSchedule(3_000);
    for (let wave = 0; wave < 5; wave += 1) {
      const describes = waitForBurst(schedule, 2_500, 80);
      assert.deepEqual(new Set(describes), new Set([1]), `wave ${wave}: ${describes.join(',')}`);
    }
    // Eighty hits with one guess are one step down, not eighty.
    assert.equal(schedule.firstPollMs(), Math.round(3_000 * 0.98 ** 5));
  });

  it('a hit with an older guess does not move the current one', () => {
    const schedule = new AttachPollSchedule(3_000);
    schedule.observe({ describes: 2, elapsedMs: 2_600, firstPollMs: 3_000 });
    schedule.observe({ describes: 1, elapsedMs: 3_000, firstPollMs: 3_000 });
    assert.equal(schedule.firstPollMs(), 2_600);
  });

  it('polls again soon after a miss, half as long again each time, up to the interval', () => {
    const schedule = new AttachPollSchedule(3_000);
    assert.deepEqual(
      [1, 2, 3, 4, 5, 6, 10].map((describes) => schedule.nextPollMs(describes)),
      [500, 750, 1_125, 1_688, 2_531, 3_000, 3_000],
    );
  });

  it('a miss moves the first describe to when the attach was seen done', () => {
    const schedule = new AttachPollSchedule(3_000);
    schedule.observe({ describes: 2, elapsedMs: 2_600, firstPollMs: 3_000 });
    assert.equal(schedule.firstPollMs(), 2_600);
  });

  it('a hit moves it 2 % earlier', () => {
    const schedule = new AttachPollSchedule(3_000);
    schedule.observe({ describes: 1, elapsedMs: 3_000, firstPollMs: 3_000 });
    assert.equal(schedule.firstPollMs(), 2_940);
  });

  it('stays between a third of the interval and three intervals', () => {
    const fast = new AttachPollSchedule(3_000);
    for (let index = 0; index < 200; index += 1) {
      fast.observe({ describes: 1, elapsedMs: 0, firstPollMs: fast.firstPollMs() });
    }
    assert.equal(fast.firstPollMs(), 1_000);
    const slow = new AttachPollSchedule(3_000);
    slow.observe({ describes: 9, elapsedMs: 60_000, firstPollMs: 3_000 });
    assert.equal(slow.firstPollMs(), 9_000);
  });

  const cases = [
    { attachMs: 1_200, maxDescribes: 1.3, maxLateMs: 300 },
    { attachMs: 2_000, maxDescribes: 1.3, maxLateMs: 300 },
    { attachMs: 2_500, maxDescribes: 1.3, maxLateMs: 300 },
    { attachMs: 6_000, maxDescribes: 1.3, maxLateMs: 400 },
  ];
  for (const { attachMs, maxDescribes, maxLateMs } of cases) {
    it(`learns a steady ${attachMs} ms attach: about one describe, seen soon after it is done`, () => {
      const steady = steadyState(attachMs);
      assert.ok(steady.describes <= maxDescribes, `describes per attach ${steady.describes}`);
      assert.ok(steady.lateMs <= maxLateMs, `seen ${steady.lateMs} ms after done`);
    });
  }
});

describe('attach poll schedule: counted from the attach call', () => {
  it('a wait counts from the attach call this process made, once; a later wait from its own start', () => {
    const schedule = new AttachPollSchedule(3_000);
    schedule.attachSent('eni-a', 10_000);
    // The wait starts 900 ms after the attach (a workflow task and a dispatch): its first describe is 2.1 s away.
    assert.equal(schedule.waitStartMs('eni-a', 10_900), 10_000);
    assert.equal(schedule.waitStartMs('eni-a', 20_000), 20_000, 'collected by the first wait');
  });

  it('an attach made elsewhere (another process, before a restart) counts from the wait', () => {
    assert.equal(new AttachPollSchedule(3_000).waitStartMs('eni-b', 5_000), 5_000);
  });

  it('an attach time in the future of the wait (clock step) counts from the wait', () => {
    const schedule = new AttachPollSchedule(3_000);
    schedule.attachSent('eni-c', 9_000);
    assert.equal(schedule.waitStartMs('eni-c', 8_000), 8_000);
  });

  it('a re-attach replaces the earlier time; entries no wait collects are dropped oldest first', () => {
    const schedule = new AttachPollSchedule(3_000);
    schedule.attachSent('eni-d', 1_000);
    schedule.attachSent('eni-d', 2_000);
    assert.equal(schedule.waitStartMs('eni-d', 2_500), 2_000);
    for (let index = 0; index <= 10_000; index += 1) schedule.attachSent(`eni-${String(index)}`, index);
    assert.equal(schedule.waitStartMs('eni-0', 50_000), 50_000, 'the oldest entry was dropped');
    assert.equal(schedule.waitStartMs('eni-10000', 50_000), 10_000);
  });
});
