import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { hasWorkForGcPeriod, jitterOf, NEXT_PASS_REASONS, nextPass, poolPeriodMs } from '../../../src/ipam/index.js';
import type { NextPassInput } from '../../../src/ipam/index.js';
import { aSpec, anEni, anIp, aRequest, enisOf, v4Range } from './builders.js';

const H = 3_600_000;
const LAST = 1_000_000;
const base: NextPassInput = {
  lastPassEndMs: LAST,
  failureStreak: 0,
  lastFailureTypes: [],
  jitter: 0,
  settings: {
    idleWakeMs: 6 * H,
    gcPeriodMs: 120_000,
    maxFailureBackoffMs: 300_000,
    transientFailureBackoffMs: 10_000,
    daemonWaitEventAfterMs: 300_000,
    stuckBackoffMs: 30 * 60_000,
    pendingPodEventAfterMs: 30_000,
  },
  hasPendingWork: false,
};

describe('nextPass', () => {
  const cases: { name: string; input: Partial<NextPassInput>; atMs: number; reason: string }[] = [
    { name: 'an idle node sleeps until the safety net', input: {}, atMs: LAST + 6 * H, reason: 'safetyNet' },
    {
      name: 'the safety net is stretched by the node jitter (up to a quarter)',
      input: { jitter: 0.5 },
      atMs: LAST + 6.75 * H,
      reason: 'safetyNet',
    },
    {
      name: 'pending work wakes at the GC period after the last GC',
      input: { hasPendingWork: true, lastGcMs: LAST - 20_000 },
      atMs: LAST + 100_000,
      reason: 'gcPeriod',
    },
    {
      name: 'pending work with no GC yet counts from the last pass',
      input: { hasPendingWork: true },
      atMs: LAST + 120_000,
      reason: 'gcPeriod',
    },
    {
      name: 'a due OpenAPI sync wins over a later GC',
      input: { hasPendingWork: true, nextSyncMs: LAST + 60_000 },
      atMs: LAST + 60_000,
      reason: 'openApiSync',
    },
    {
      name: 'a sync and a GC due at once are reported as the sync',
      input: { hasPendingWork: true, nextSyncMs: LAST + 120_000 },
      atMs: LAST + 120_000,
      reason: 'openApiSync',
    },
    {
      name: 'the node’s own pool period replaces the GC period',
      input: { hasPendingWork: true, lastGcMs: LAST - 20_000, poolPeriodMs: 30_000 },
      atMs: LAST + 10_000,
      reason: 'gcPeriod',
    },
    {
      name: 'a pool period without pending work sets no timer',
      input: { poolPeriodMs: 30_000 },
      atMs: LAST + 6 * H,
      reason: 'safetyNet',
    },
    {
      name: 'a planned idle reclaim batch is a timer of its own',
      input: { idleReclaimAtMs: LAST + 600_000 },
      atMs: LAST + 600_000,
      reason: 'idleReclaim',
    },
    {
      name: 'a warm-up that made progress and is not complete is followed at once',
      input: { warmUpContinues: true, idleReclaimAtMs: LAST + 600_000 },
      atMs: LAST,
      reason: 'warmUp',
    },
    {
      name: 'a Frozen prefix expiring before the safety net wakes the node at its frozenExpireAt',
      input: { frozenExpiryMs: LAST + 90_000 },
      atMs: LAST + 90_000,
      reason: 'frozenPrefixExpiry',
    },
    {
      name: 'an OpenAPI sync due before the frozen expiry comes first',
      input: { frozenExpiryMs: LAST + 90_000, nextSyncMs: LAST + 60_000 },
      atMs: LAST + 60_000,
      reason: 'openApiSync',
    },
    {
      name: 'a GC period due first wins over the reclaim batch',
      input: { hasPendingWork: true, idleReclaimAtMs: LAST + 600_000 },
      atMs: LAST + 120_000,
      reason: 'gcPeriod',
    },
    {
      name: 'a daemon wait not yet reported wakes to report it',
      input: { daemonWait: { sinceMs: LAST - 100_000, reported: false } },
      atMs: LAST + 200_000,
      reason: 'daemonWaitEvent',
    },
    {
      name: 'a reported daemon wait sets no timer',
      input: { daemonWait: { sinceMs: LAST - 100_000, reported: true } },
      atMs: LAST + 6 * H,
      reason: 'safetyNet',
    },
    {
      name: 'the run age limit comes before the safety net',
      input: { runDeadlineMs: LAST + H },
      atMs: LAST + H,
      reason: 'runAge',
    },
    {
      name: 'a failed pass backs off 1 s, doubling',
      input: { failureStreak: 3, lastFailureTypes: ['EcsInvalidRequest'], nextSyncMs: LAST + 1 },
      atMs: LAST + 4_000,
      reason: 'failureBackoff',
    },
    {
      name: 'the long cap holds for failures that will not fix themselves',
      input: { failureStreak: 12, lastFailureTypes: ['EcsInvalidRequest'] },
      atMs: LAST + 300_000,
      reason: 'failureBackoff',
    },
    {
      name: 'the short cap holds when every failure may fix itself, the first time',
      input: { failureStreak: 12, failureRepeats: 1, lastFailureTypes: ['EcsThrottled', 'EcsTransient'] },
      atMs: LAST + 10_000,
      reason: 'failureBackoff',
    },
    {
      name: 'a transient failure that keeps coming back waits longer each time',
      input: { failureStreak: 7, failureRepeats: 3, lastFailureTypes: ['EcsTransient'] },
      atMs: LAST + 40_000,
      reason: 'failureBackoff',
    },
    {
      name: 'up to the long cap, with full jitter under it',
      input: { failureStreak: 40, failureRepeats: 40, lastFailureTypes: ['EcsTransient'], backoffRandom: 0.5 },
      atMs: LAST + 150_000,
      reason: 'failureBackoff',
    },
    {
      name: 'a node stuck on a failing call sleeps three long backoffs (the worker wakes it when the call answers)',
      input: { stuck: 'cloudCallsFailing', failureStreak: 6, failureRepeats: 6, lastFailureTypes: ['EcsTransient'] },
      atMs: LAST + 15 * 60_000,
      reason: 'stuckBackoff',
    },
    {
      name: 'a node stuck on a failing call sleeps no longer than stuckBackoffMs',
      input: {
        stuck: 'cloudCallsFailing',
        settings: { ...base.settings, maxFailureBackoffMs: 20 * 60_000 },
        failureStreak: 6,
        lastFailureTypes: ['EcsTransient'],
      },
      atMs: LAST + 30 * 60_000,
      reason: 'stuckBackoff',
    },
    {
      name: 'a stuck node sleeps the long backoff instead of the GC period',
      input: { stuck: 'vSwitchExhausted', hasPendingWork: true },
      atMs: LAST + 30 * 60_000,
      reason: 'stuckBackoff',
    },
    {
      name: 'the long backoff is stretched by the node jitter',
      input: { stuck: 'instanceEniLimit', jitter: 0.5 },
      atMs: LAST + 33.75 * 60_000,
      reason: 'stuckBackoff',
    },
    {
      name: 'a stuck node failing on quota answers sleeps long, not the failure backoff',
      input: { stuck: 'quotaExceeded', failureStreak: 4, lastFailureTypes: ['EcsQuotaExceeded'] },
      atMs: LAST + 30 * 60_000,
      reason: 'stuckBackoff',
    },
    {
      name: 'a stuck node wakes to tell a pod that started waiting why',
      input: { stuck: 'vSwitchExhausted', pendingSince: { 'ns/a': LAST - 60_000, 'ns/b': LAST - 10_000 } },
      atMs: LAST + 20_000,
      reason: 'pendingPodEvent',
    },
    {
      name: 'pods already told do not wake a stuck node',
      input: { stuck: 'vSwitchExhausted', pendingSince: { 'ns/a': LAST - 60_000 } },
      atMs: LAST + 30 * 60_000,
      reason: 'stuckBackoff',
    },
    {
      name: 'a due sync and the run age still come first for a stuck node',
      input: { stuck: 'vSwitchExhausted', nextSyncMs: LAST + 60_000, runDeadlineMs: LAST + 120_000 },
      atMs: LAST + 60_000,
      reason: 'openApiSync',
    },
    {
      name: "the run age limit ends a stuck node's run on time",
      input: { stuck: 'vSwitchExhausted', runDeadlineMs: LAST + 120_000 },
      atMs: LAST + 120_000,
      reason: 'runAge',
    },
  ];
  for (const entry of cases) {
    it(entry.name, () => {
      assert.deepEqual(nextPass({ ...base, ...entry.input }), { atMs: entry.atMs, reason: entry.reason });
    });
  }

  it('names every reason for people', () => {
    for (const text of Object.values(NEXT_PASS_REASONS)) assert.ok(text.length > 10);
  });
});

describe('jitterOf', () => {
  it('is a fraction fixed per name, and differs between names', () => {
    const a = jitterOf('node-a');
    assert.equal(jitterOf('node-a'), a);
    assert.ok(a >= 0 && a < 1);
    assert.notEqual(jitterOf('node-b'), a);
  });
});

describe('hasWorkForGcPeriod', () => {
  const spec = aSpec({ pool: { minPoolSize: 0, maxPoolSize: 5 } });
  const quiet = enisOf(anEni('eni-1', { ipv4: [...v4Range('10.0.0', { count: 3 })] }));
  const cases: { name: string; input: Partial<Parameters<typeof hasWorkForGcPeriod>[0]>; expected: boolean }[] = [
    { name: 'a quiet node has none', input: {}, expected: false },
    {
      name: 'a pod waiting for a new IP',
      input: { unsatisfied: [{ request: aRequest('ns/a'), reason: 'noIdleIp', missing: ['ipv4'] }] },
      expected: true,
    },
    {
      name: 'a pod that runs with a foreign IP is not work',
      input: { unsatisfied: [{ request: aRequest('ns/a'), reason: 'statusIpNotInPool', missing: ['ipv4'] }] },
      expected: false,
    },
    { name: 'IPs waiting for the CNI delete', input: { awaitingCniDelete: 1 }, expected: true },
    {
      name: 'a Deleting mark to clean up',
      input: {
        enis: enisOf(
          anEni('eni-1', { ipv4: [anIp('10.0.0.10', { primary: true }), anIp('10.0.0.11', { status: 'Deleting' })] }),
        ),
      },
      expected: true,
    },
    {
      name: 'idle IPs above maxPoolSize',
      input: { enis: enisOf(anEni('eni-1', { ipv4: [...v4Range('10.0.0', { count: 9 })] })) },
      expected: true,
    },
  ];
  for (const entry of cases) {
    it(entry.name, () => {
      assert.equal(
        hasWorkForGcPeriod({ spec, enis: quiet, unsatisfied: [], awaitingCniDelete: 0, ...entry.input }),
        entry.expected,
      );
    });
  }
});

describe('poolPeriodMs', () => {
  const cases: [string | undefined, number][] = [
    [undefined, 120_000],
    ['30s', 30_000],
    ['1m30s', 90_000],
    ['500ms', 1_000],
    ['0s', 1_000],
    ['-5s', 1_000],
    ['soon', 120_000],
  ];
  for (const [poolSyncPeriod, expected] of cases) {
    it(`${String(poolSyncPeriod)} → ${expected} ms (Terway floors at 1 s, falls back when unparsable)`, () => {
      assert.equal(poolPeriodMs({ poolSyncPeriod, gcPeriodMs: 120_000 }), expected);
    });
  }
});
