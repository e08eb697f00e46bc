/**
 * Notices that scale with the number of waiting pods: Events admitted in one pass over the record (the same answer
 * as one at a time, for any sequence), a record that stays bounded, and per-pod Events capped with one summary on
 * the node that counts every waiting pod by cause.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import fc from 'fast-check';

import {
  admitEvents,
  EVENT_REASONS,
  MAX_RECENT_EVENTS,
  POD_EVENT_CAP,
  pendingNotices,
} from '../../../src/ipam/index.js';
import type { DuePod, FailureLedger } from '../../../src/ipam/index.js';

const NOW = Date.UTC(2026, 11, 6, 10, 0, 0);
const REPEAT = 60_000;

/** The rule, one key at a time: written unless written within the window; the window's entries are what is kept. */
function admitOneByOne(recent: Record<string, number>, keys: readonly string[]) {
  const times = new Map(Object.entries(recent).filter(([, at]) => NOW - at < REPEAT));
  const admitted = keys.map((key) => {
    if (times.has(key)) return false;
    times.set(key, NOW);
    return true;
  });
  return { admitted, recent: Object.fromEntries([...times].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) };
}

void describe('admitEvents', () => {
  const rows: {
    name: string;
    recent: Record<string, number>;
    keys: string[];
    admitted: boolean[];
    after: Record<string, number>;
  }[] = [
    {
      name: 'nothing asked, nothing kept past the window',
      recent: { a: NOW - REPEAT },
      keys: [],
      admitted: [],
      after: {},
    },
    {
      name: 'new keys are written, in the order asked; the record is in key order',
      recent: {},
      keys: ['b', 'a'],
      admitted: [true, true],
      after: { a: NOW, b: NOW },
    },
    {
      name: 'a key twice in one batch is written once',
      recent: {},
      keys: ['a', 'a'],
      admitted: [true, false],
      after: { a: NOW },
    },
    {
      name: 'a key within its window is held back; one past it is written again',
      recent: { held: NOW - REPEAT + 1, due: NOW - REPEAT },
      keys: ['held', 'due'],
      admitted: [false, true],
      after: { due: NOW, held: NOW - REPEAT + 1 },
    },
  ];
  for (const row of rows) {
    void it(row.name, () => {
      const result = admitEvents({ recent: row.recent, keys: row.keys, nowMs: NOW, repeatMs: REPEAT });
      assert.deepEqual(result.admitted, row.admitted);
      assert.deepEqual(result.recent, row.after);
      assert.deepEqual(Object.keys(result.recent), Object.keys(row.after).sort());
    });
  }

  void it('answers as admitting the keys one at a time would, for any record and keys', () => {
    const key = fc.constantFrom('a', 'b', 'c', 'd', 'ns/p:IPAllocationPending:x', 'AllocIPFailed:s');
    fc.assert(
      fc.property(
        fc.dictionary(key, fc.integer({ min: NOW - 3 * REPEAT, max: NOW })),
        fc.array(key, { maxLength: 12 }),
        (recent, keys) => {
          const batch = admitEvents({ recent, keys, nowMs: NOW, repeatMs: REPEAT });
          assert.deepEqual(batch, admitOneByOne(recent, keys));
        },
      ),
    );
  });

  void it(`keeps at most ${MAX_RECENT_EVENTS} keys, the newest, however many Events a node writes`, () => {
    const recent = Object.fromEntries(
      Array.from({ length: MAX_RECENT_EVENTS }, (_, i) => [`old-${String(i).padStart(5, '0')}`, NOW - 1_000 + i]),
    );
    const keys = Array.from({ length: 10_000 }, (_, i) => `ns/p${i}:IPAllocationPending:s`);
    const result = admitEvents({ recent, keys, nowMs: NOW, repeatMs: REPEAT });
    assert.equal(
      result.admitted.every((admitted) => admitted),
      true,
    );
    const kept = Object.keys(result.recent);
    assert.equal(kept.length, MAX_RECENT_EVENTS);
    assert.equal(
      kept.every((k) => result.recent[k] === NOW),
      true,
      'the newest are kept',
    );
  });
});

const ledgerFailing: FailureLedger = {
  'AttachNetworkInterface/ServiceUnavailable': {
    operation: 'AttachNetworkInterface',
    code: 'ServiceUnavailable',
    type: 'EcsTransient',
    attempts: 7,
    sinceMs: NOW - 120_000,
    lastMs: NOW,
    message: 'ServiceUnavailable',
  },
};

function duePods(count: number, reason: DuePod['reason'] = 'instanceEniLimit', sinceMs = NOW - 60_000): DuePod[] {
  return Array.from({ length: count }, (_, i) => ({
    podId: `ns/p${String(i).padStart(5, '0')}`,
    sinceMs,
    reason,
  }));
}

void describe('pendingNotices', () => {
  void it('tells every due pod when they are no more than the cap, with no summary', () => {
    const notices = pendingNotices({ due: duePods(3), failing: {}, workflowId: 'w' });
    assert.deepEqual(
      notices.pods.map((pod) => pod.podId),
      ['ns/p00000', 'ns/p00001', 'ns/p00002'],
    );
    assert.equal(notices.summary, undefined);
    assert.match(notices.pods[0]?.message ?? '', /^no IP yet: the instance's ENI limit is reached/);
  });

  void it('tells the pods waiting longest (then in pod order) and counts all of them on the node', () => {
    const due = [
      ...duePods(4, 'instanceEniLimit', NOW - 10_000),
      { podId: 'ns/z-oldest', sinceMs: NOW - 90_000, reason: 'waitingForAttach' as const },
      { podId: 'ns/y-older', sinceMs: NOW - 50_000, reason: 'instanceEniLimit' as const },
    ];
    const notices = pendingNotices({ due, failing: {}, workflowId: 'w', cap: 3 });
    assert.deepEqual(
      notices.pods.map((pod) => pod.podId),
      ['ns/p00000', 'ns/y-older', 'ns/z-oldest'],
    );
    assert.equal(
      notices.summary?.message,
      "6 pods have waited for an IP: 5 because the instance's ENI limit is reached and every ENI is at its IP quota; " +
        '1 because a new ENI is being created and attached for it. The 3 waiting longest have an Event each; the ' +
        'other 3 are counted here (workflow w)',
    );
    assert.equal(notices.summary?.series, 'pendingPods:instanceEniLimit,waitingForAttach');
  });

  void it('10,000 waiting pods: Events for the cap, one summary naming the failing call, a series without counts', () => {
    const first = pendingNotices({ due: duePods(10_000, 'waitingForAttach'), failing: ledgerFailing, workflowId: 'w' });
    assert.equal(first.pods.length, POD_EVENT_CAP);
    assert.match(
      first.summary?.message ?? '',
      /^10000 pods have waited for an IP: 10000 because AttachNetworkInterface/,
    );
    const later = pendingNotices({ due: duePods(9_000, 'waitingForAttach'), failing: ledgerFailing, workflowId: 'w' });
    assert.equal(later.summary?.series, first.summary?.series, 'a changed count updates the same Event');
  });

  void it('the summary series is in cause order, so causes that swap rank update the same Event', () => {
    const mix = (limit: number, attach: number): DuePod[] => [
      ...duePods(limit, 'instanceEniLimit', NOW - 10_000),
      ...duePods(attach, 'waitingForAttach', NOW - 10_000).map((pod) => ({ ...pod, podId: `${pod.podId}-a` })),
    ];
    const table = [
      { name: 'the ENI limit leads', due: mix(5, 1) },
      { name: 'waiting for attach leads', due: mix(1, 5) },
    ];
    for (const row of table) {
      const notices = pendingNotices({ due: row.due, failing: {}, workflowId: 'w', cap: 2 });
      assert.equal(notices.summary?.series, 'pendingPods:instanceEniLimit,waitingForAttach', row.name);
    }
  });

  void it('in the pass that recovered, pods whose IP is on its way are not told; other causes are', () => {
    const due: DuePod[] = [
      { podId: 'ns/attach', sinceMs: NOW - 60_000, reason: 'waitingForAttach' },
      { podId: 'ns/allocating', sinceMs: NOW - 60_000, reason: 'allocating' },
      { podId: 'ns/limit', sinceMs: NOW - 60_000, reason: 'instanceEniLimit' },
    ];
    const recovering = pendingNotices({ due, failing: {}, workflowId: 'w', recovering: true });
    assert.deepEqual(
      recovering.pods.map((pod) => pod.podId),
      ['ns/limit'],
    );
    const ordinary = pendingNotices({ due, failing: {}, workflowId: 'w' });
    assert.equal(ordinary.pods.length, 3);
  });

  void it('the catalogue says where the per-pod Events stop', () => {
    assert.match(EVENT_REASONS.IPAllocationPending.on, new RegExp(`past ${POD_EVENT_CAP} waiting pods`));
  });
});
