import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { compareResourceVersions, mergeSeenVersions } from '../../src/ipam/index.js';

void describe('resource versions', () => {
  const rows: { a: string; b: string; expected: -1 | 0 | 1 | undefined }[] = [
    { a: '9', b: '10', expected: -1 },
    { a: '10', b: '10', expected: 0 },
    { a: '100000000000000000001', b: '100000000000000000000', expected: 1 },
    { a: '', b: '10', expected: undefined },
    { a: 'abc', b: '10', expected: undefined },
  ];
  for (const row of rows) {
    void it(`compares ${JSON.stringify(row.a)} with ${JSON.stringify(row.b)} numerically`, () => {
      assert.equal(compareResourceVersions(row.a, row.b), row.expected);
    });
  }

  void it('merges seen versions keeping the newest per informer, in key order', () => {
    const merged = mergeSeenVersions({ pods: '120', 'node-crs': '7' }, { pods: '99', 'core-nodes': '5' });
    assert.deepEqual(merged, { 'core-nodes': '5', 'node-crs': '7', pods: '120' });
    assert.deepEqual(Object.keys(merged), ['core-nodes', 'node-crs', 'pods']);
    assert.deepEqual(mergeSeenVersions(undefined, { pods: 'x' }), { pods: 'x' });
  });
});
