import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { takeTurn } from '../../../src/worker/vswitch-wake.js';

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
