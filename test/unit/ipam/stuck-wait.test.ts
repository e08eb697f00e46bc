import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  nextPendingPodEventMs,
  STUCK_AFTER_FAILED_PASSES,
  STUCK_AFTER_REPEATED_CALL_FAILURES,
  STUCK_CAUSES,
  stuckWaitOf,
} from '../../../src/ipam/index.js';
import type { StuckCause, StuckWaitInput } from '../../../src/ipam/index.js';

/** A pass that left pods waiting and planned nothing, with nothing else pending: the cause decides the rest. */
const waiting: StuckWaitInput = {
  waitingPods: 30,
  plannedAllocations: 0,
  planProblems: 0,
  unmetDemand: 0,
  failureTypes: [],
  failureStreak: 0,
  otherWork: false,
  openIntents: 0,
};

describe('stuckWaitOf', () => {
  const cases: { name: string; input: Partial<StuckWaitInput>; expected: StuckCause | undefined }[] = [
    { name: 'no pod waits: not stuck', input: { waitingPods: 0, planProblems: 1 }, expected: undefined },
    { name: 'every vSwitch exhausted, nothing planned', input: { planProblems: 1 }, expected: 'vSwitchExhausted' },
    { name: 'the instance is full, nothing planned', input: { unmetDemand: 4 }, expected: 'instanceEniLimit' },
    {
      name: 'exhausted vSwitches explain more than the instance limit',
      input: { planProblems: 1, unmetDemand: 4 },
      expected: 'vSwitchExhausted',
    },
    {
      name: 'a pass that planned an allocation may go further on the next',
      input: { planProblems: 1, plannedAllocations: 1 },
      expected: undefined,
    },
    {
      name: 'IPs awaiting the CNI delete free themselves: not stuck',
      input: { planProblems: 1, otherWork: true },
      expected: undefined,
    },
    {
      name: 'an open create intent is re-issued soon',
      input: { planProblems: 1, openIntents: 1 },
      expected: undefined,
    },
    { name: 'pods wait for no reason the plan names: not stuck', input: {}, expected: undefined },
    {
      name: 'the first capacity answers keep the short retries',
      input: { failureTypes: ['EcsVSwitchExhausted'], failureStreak: STUCK_AFTER_FAILED_PASSES - 1 },
      expected: undefined,
    },
    {
      name: 'capacity answers pass after pass: stuck on the vSwitch',
      input: { failureTypes: ['EcsVSwitchExhausted'], failureStreak: STUCK_AFTER_FAILED_PASSES },
      expected: 'vSwitchExhausted',
    },
    {
      name: 'quota answers pass after pass: stuck on the quota',
      input: { failureTypes: ['EcsVSwitchExhausted', 'EcsQuotaExceeded'], failureStreak: 9 },
      expected: 'quotaExceeded',
    },
    {
      name: 'a 5xx among the failures may pass by itself: not stuck',
      input: { failureTypes: ['EcsQuotaExceeded', 'EcsTransient'], failureStreak: 9 },
      expected: undefined,
    },
    {
      name: 'a 5xx of a call, the first times: the short retries',
      input: {
        failureTypes: ['EcsTransient'],
        failureStreak: 9,
        failureRepeats: STUCK_AFTER_REPEATED_CALL_FAILURES - 1,
        plannedAllocations: 1,
      },
      expected: undefined,
    },
    {
      name: 'the same 5xx pass after pass: stuck on the failing call (the worker wakes it)',
      input: {
        failureTypes: ['EcsThrottled', 'EcsTransient'],
        failureStreak: 9,
        failureRepeats: STUCK_AFTER_REPEATED_CALL_FAILURES,
        plannedAllocations: 1,
      },
      expected: 'cloudCallsFailing',
    },
    {
      name: 'an ENI in a wrong state is not what the worker watches: not stuck',
      input: { failureTypes: ['EcsInvalidState'], failureStreak: 9, failureRepeats: 9 },
      expected: undefined,
    },
    {
      name: 'failing calls with GC work left: not stuck',
      input: { failureTypes: ['EcsTransient'], failureRepeats: 9, otherWork: true },
      expected: undefined,
    },
    {
      name: 'the instance does not exist: stuck at once',
      input: { failureTypes: ['EcsInstanceNotFound'], failureStreak: 1, plannedAllocations: 1 },
      expected: 'instanceNotFound',
    },
    {
      name: 'the instance missing explains more than an exhausted vSwitch',
      input: { failureTypes: ['EcsInstanceNotFound', 'EcsVSwitchExhausted'], failureStreak: 1 },
      expected: 'instanceNotFound',
    },
    {
      name: 'the instance missing beside a 5xx: not stuck',
      input: { failureTypes: ['EcsInstanceNotFound', 'EcsTransient'], failureStreak: 1 },
      expected: undefined,
    },
    {
      name: 'a failed status write is not stuck, whatever the plan',
      input: { failureTypes: ['KubeTransient'], failureStreak: 9, planProblems: 1 },
      expected: undefined,
    },
  ];
  for (const entry of cases) {
    it(entry.name, () => {
      assert.equal(stuckWaitOf({ ...waiting, ...entry.input }), entry.expected);
    });
  }

  it('says for every cause what wakes the node', () => {
    for (const text of Object.values(STUCK_CAUSES)) assert.match(text, /woken/);
  });
});

describe('nextPendingPodEventMs', () => {
  const cases: { name: string; since: Record<string, number>; expected: number | undefined }[] = [
    { name: 'no pod waits', since: {}, expected: undefined },
    { name: 'every pod already told', since: { 'ns/a': -40_000, 'ns/b': -35_000 }, expected: undefined },
    { name: 'the earliest still to come', since: { 'ns/a': -40_000, 'ns/b': 1_500, 'ns/c': 1_200 }, expected: 31_200 },
    { name: 'due exactly at the pass is already told', since: { 'ns/a': -29_000 }, expected: undefined },
  ];
  for (const entry of cases) {
    it(entry.name, () => {
      assert.equal(
        nextPendingPodEventMs({ pendingSince: entry.since, eventAfterMs: 30_000, afterMs: 1_000 }),
        entry.expected,
      );
    });
  }
});
