import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { seenAfterWake, takeTurn, WaitMemory } from '../../../src/worker/vswitch-wake.js';

describe('takeTurn (the vSwitch wake describes at most a few vSwitches per poll, each in its turn)', () => {
  const ids = ['a', 'b', 'c', 'd', 'e'];
  const cases: { name: string; cursor: number; max: number; items: string[]; next: number }[] = [
    { name: 'all of them when they fit', cursor: 3, max: 5, items: ids, next: 0 },
    { name: 'the first turn', cursor: 0, max: 2, items: ['a', 'b'], next: 2 },
    { name: 'a turn wraps around', cursor: 4, max: 2, items: ['e', 'a'], next: 1 },
    { name: 'a cursor past a shrunk list starts within it', cursor: 12, max: 2, items: ['c', 'd'], next: 4 },
  ];
  for (const entry of cases) {
    it(entry.name, () => {
      assert.deepEqual(takeTurn(ids, entry.cursor, entry.max), { items: entry.items, next: entry.next });
    });
  }
});

describe('WaitMemory (which stuck nodes a vSwitch poll wakes)', () => {
  const waiting = (entries: Record<string, string[]>) => new Map(Object.entries(entries));

  it('wakes a node that got stuck on a vSwitch whose free count the poll had already seen', () => {
    const memory = new WaitMemory();
    // Poll 1: node-a waits on vsw-a, which has 8 free addresses: woken (its first look), and its pass takes them.
    memory.named(waiting({ 'vsw-a': ['node-a'] }));
    assert.deepEqual(memory.toWake('vsw-a', ['node-a'], 8), ['node-a']);
    memory.saw('vsw-a', ['node-a'], 8);
    // Poll 2: node-b now waits on vsw-a too (its worker's cache said exhausted), with the same 8 free: node-b is woken,
    // node-a (already woken for 8) is not.
    memory.named(waiting({ 'vsw-a': ['node-a', 'node-b'] }));
    assert.deepEqual(memory.toWake('vsw-a', ['node-a', 'node-b'], 8), ['node-b']);
  });

  it('does not wake again for a count that calls refused, but does once the count drops and grows again', () => {
    const memory = new WaitMemory();
    const poll = (free: number): string[] => {
      memory.named(waiting({ 'vsw-a': ['node-a'] }));
      const woken = memory.toWake('vsw-a', ['node-a'], free);
      memory.saw('vsw-a', ['node-a'], free);
      return woken;
    };
    assert.deepEqual(poll(8), ['node-a'], 'first look with addresses');
    assert.deepEqual(poll(8), [], 'the same 8 (refused by the cloud): no wake storm');
    assert.deepEqual(poll(0), [], 'none free: nothing to take');
    assert.deepEqual(poll(3), ['node-a'], 'some free again');
    assert.deepEqual(poll(5), ['node-a'], 'more free');
  });

  it('does not wake on an exhausted vSwitch, and forgets a node no longer named after a few polls', () => {
    const memory = new WaitMemory();
    memory.named(waiting({ 'vsw-a': ['node-a'] }));
    assert.deepEqual(memory.toWake('vsw-a', ['node-a'], 0), []);
    memory.saw('vsw-a', ['node-a'], 4);
    // node-a stops waiting for a few polls: still remembered (a node that flaps is not a first look every time).
    for (let i = 0; i < 4; i += 1) memory.named(waiting({}));
    assert.deepEqual(memory.toWake('vsw-a', ['node-a'], 4), []);
    // ... then forgotten: a later wait on the vSwitch is a first look again.
    memory.named(waiting({}));
    assert.deepEqual(memory.toWake('vsw-a', ['node-a'], 4), ['node-a']);
  });
});

describe('seenAfterWake (a node cut from a wake keeps its turn)', () => {
  it('records as seen only the nodes it signalled, not those cut by the wake bound', () => {
    const seen = seenAfterWake({
      waiting: ['node-a', 'node-b', 'node-c', 'node-d'],
      toWake: ['node-b', 'node-c', 'node-d'],
      signalled: ['node-b', 'node-c'],
    });
    assert.deepEqual(seen, ['node-a', 'node-b', 'node-c']);
  });

  it('records none of those it meant to wake when the rate bound held the wake back', () => {
    const seen = seenAfterWake({ waiting: ['node-a', 'node-b'], toWake: ['node-b'], signalled: undefined });
    assert.deepEqual(seen, ['node-a']);
  });
});
