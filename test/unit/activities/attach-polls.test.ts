import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { AttachPollSchedule } from '../../../src/activities/ecs/attach-polls.js';

/** Waits for one attach that takes `attachMs` as waitEniStatus does; returns its describes and when it saw it done. */
function waitForAttach(schedule: AttachPollSchedule, attachMs: number): { describes: number; seenMs: number } {
  let atMs = schedule.firstPollMs();
  let describes = 1;
  while (atMs < attachMs) {
    atMs += schedule.nextPollMs(describes);
    describes += 1;
  }
  schedule.observe({ describes, elapsedMs: atMs });
  return { describes, seenMs: atMs };
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
  it('starts at two thirds of the poll interval', () => {
    assert.equal(new AttachPollSchedule(3_000).firstPollMs(), 2_000);
    assert.equal(new AttachPollSchedule(30).firstPollMs(), 20);
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
    schedule.observe({ describes: 2, elapsedMs: 2_600 });
    assert.equal(schedule.firstPollMs(), 2_600);
  });

  it('a hit moves it 2 % earlier', () => {
    const schedule = new AttachPollSchedule(3_000);
    schedule.observe({ describes: 1, elapsedMs: 2_000 });
    assert.equal(schedule.firstPollMs(), 1_960);
  });

  it('stays between a third of the interval and three intervals', () => {
    const fast = new AttachPollSchedule(3_000);
    for (let index = 0; index < 200; index += 1) fast.observe({ describes: 1, elapsedMs: 0 });
    assert.equal(fast.firstPollMs(), 1_000);
    const slow = new AttachPollSchedule(3_000);
    slow.observe({ describes: 9, elapsedMs: 60_000 });
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

  it('the fixed first guess alone would take two describes for a 2.5 s attach', () => {
    const schedule = new AttachPollSchedule(3_000);
    assert.equal(waitForAttach(schedule, 2_500).describes, 2);
  });
});
