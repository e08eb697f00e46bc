import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { admitEvent, eventKey, isOpenApiSyncDue, syncTimesOf, trackPendingPods } from '../../../src/ipam/index.js';

const NOW = Date.UTC(2026, 11, 3, 10, 0, 0);

describe('event de-duplication', () => {
  it('keys an Event by object, reason and series', () => {
    assert.equal(eventKey({ reason: 'AllocIPFailed', series: 'capacity' }), 'AllocIPFailed:capacity');
    assert.equal(eventKey({ podId: 'ns/a', reason: 'IPAllocationPending', series: 's' }), 'ns/a:IPAllocationPending:s');
  });

  const cases: {
    name: string;
    recent: Record<string, number>;
    key: string;
    admitted: boolean;
    recentAfter: Record<string, number>;
  }[] = [
    { name: 'a first Event is written', recent: {}, key: 'k', admitted: true, recentAfter: { k: NOW } },
    {
      name: 'a repeat within the window is held back (entries past the window are forgotten all the same)',
      recent: { k: NOW - 59_000, old: NOW - 120_000 },
      key: 'k',
      admitted: false,
      recentAfter: { k: NOW - 59_000 },
    },
    {
      name: 'a repeat after the window is written again',
      recent: { k: NOW - 60_000 },
      key: 'k',
      admitted: true,
      recentAfter: { k: NOW },
    },
    {
      name: 'writing forgets entries past the window and keeps key order',
      recent: { z: NOW - 10_000, old: NOW - 120_000 },
      key: 'a',
      admitted: true,
      recentAfter: { a: NOW, z: NOW - 10_000 },
    },
  ];
  for (const entry of cases) {
    it(entry.name, () => {
      const result = admitEvent({ recent: entry.recent, key: entry.key, nowMs: NOW, repeatMs: 60_000 });
      assert.equal(result.admitted, entry.admitted);
      assert.deepEqual(result.recent, entry.recentAfter);
      assert.deepEqual(Object.keys(result.recent), Object.keys(entry.recentAfter).sort());
    });
  }
});

describe('trackPendingPods', () => {
  it('keeps the first time a pod was seen waiting, forgets served pods, and names those due, in pod order', () => {
    const result = trackPendingPods({
      previous: { 'ns/b': NOW - 40_000, 'ns/served': NOW - 90_000, 'ns/a': NOW - 10_000 },
      waitingPodIds: ['ns/c', 'ns/b', 'ns/a', 'ns/b'],
      nowMs: NOW,
      eventAfterMs: 30_000,
    });
    assert.deepEqual(result.since, { 'ns/a': NOW - 10_000, 'ns/b': NOW - 40_000, 'ns/c': NOW });
    assert.deepEqual(result.due, ['ns/b']);
  });

  it('with no delay every waiting pod is due at once', () => {
    const result = trackPendingPods({ previous: {}, waitingPodIds: ['ns/b', 'ns/a'], nowMs: NOW, eventAfterMs: 0 });
    assert.deepEqual(result.due, ['ns/a', 'ns/b']);
  });
});

describe('OpenAPI sync schedule', () => {
  it('reads the sync times the CR records', () => {
    assert.deepEqual(
      syncTimesOf({ lastSyncOpenAPITime: '2026-12-03T10:00:00Z', nextSyncOpenAPITime: '2026-12-03T22:00:00Z' }),
      { lastSyncMs: NOW, nextSyncMs: NOW + 12 * 3_600_000 },
    );
    assert.deepEqual(syncTimesOf(undefined), {});
  });

  const synced = { needResync: false, lastSyncMs: NOW - 1_000, nextSyncMs: NOW + 1_000, podCount: 3, eniCount: 1 };
  const cases: { name: string; input: Partial<Parameters<typeof isOpenApiSyncDue>[0]>; due: boolean }[] = [
    { name: 'not before the due time', input: {}, due: false },
    { name: 'a forced resync', input: { needResync: true }, due: true },
    { name: 'the first sync', input: { lastSyncMs: undefined }, due: true },
    { name: 'pods but no ENIs', input: { eniCount: 0 }, due: true },
    { name: 'no pods and no ENIs waits', input: { eniCount: 0, podCount: 0 }, due: false },
    {
      name: 'pods but no ENIs in the status the workflow wrote itself',
      input: { eniCount: 0, crIsOwnWrite: true },
      due: false,
    },
    { name: 'a forced resync even on its own write', input: { needResync: true, crIsOwnWrite: true }, due: true },
    { name: 'the due time reached', input: { nowMs: NOW + 1_000 }, due: true },
    { name: 'no due time known', input: { nextSyncMs: undefined }, due: true },
  ];
  for (const entry of cases) {
    it(entry.name, () => {
      assert.equal(isOpenApiSyncDue({ ...synced, nowMs: NOW, ...entry.input }), entry.due);
    });
  }
});
