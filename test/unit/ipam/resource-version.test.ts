import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { compareResourceVersions, mergeSeenVersions, seenVersionsCover } from '../../../src/ipam/index.js';

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

  const coverRows: {
    name: string;
    read: Record<string, string> | undefined;
    signal: Record<string, string> | undefined;
    covered: boolean;
  }[] = [
    { name: 'an older pod change', read: { pods: '120', 'node-crs': '7' }, signal: { pods: '119' }, covered: true },
    { name: 'the same version', read: { pods: '120' }, signal: { pods: '120' }, covered: true },
    { name: 'a newer pod change', read: { pods: '120' }, signal: { pods: '121' }, covered: false },
    {
      name: 'every informer of the signal, one newer',
      read: { pods: '120', 'node-crs': '7' },
      signal: { pods: '100', 'node-crs': '8' },
      covered: false,
    },
    {
      name: 'an informer the read did not report',
      read: { pods: '120' },
      signal: { 'core-nodes': '3' },
      covered: false,
    },
    { name: 'no read versions (live read, new run)', read: undefined, signal: { pods: '1' }, covered: false },
    { name: 'a signal without versions', read: { pods: '120' }, signal: undefined, covered: false },
    { name: 'an empty signal', read: { pods: '120' }, signal: {}, covered: false },
    { name: 'versions that do not compare', read: { pods: 'abc' }, signal: { pods: '1' }, covered: false },
  ];
  for (const row of coverRows) {
    void it(`a read covers a signal: ${row.name} → ${row.covered}`, () => {
      assert.equal(seenVersionsCover(row.read, row.signal), row.covered);
    });
  }
});
