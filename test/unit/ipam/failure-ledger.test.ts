import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  callsFailingRetryably,
  eniOperationsCondition,
  failureRepeatsSince,
  failureTypesSince,
  formatRfc3339,
  hasFailingCalls,
  headlineFailure,
  noteFailure,
  pendingPodNotice,
  settleFailures,
} from '../../../src/ipam/index.js';
import type { FailureLedger } from '../../../src/ipam/index.js';

/** One failure as a pass met it (what `noteFailure` takes). */
type LedgerFailure = Parameters<typeof noteFailure>[0]['failure'];

const T0 = Date.UTC(2026, 11, 3, 10, 0, 0);
const MIN = 60_000;

const throttled: LedgerFailure = {
  operation: 'AttachNetworkInterface',
  code: 'Throttling',
  type: 'EcsThrottled',
  attempts: 5,
  message: 'Request was denied due to request throttling.',
  requestId: 'req-1',
};
const unavailable: LedgerFailure = {
  operation: 'AttachNetworkInterface',
  code: 'ServiceUnavailable',
  type: 'EcsTransient',
  attempts: 5,
  message: 'The request has failed due to a temporary failure of the server.',
};
const readFailed: LedgerFailure = {
  operation: 'reconcile',
  code: 'KubeTransient',
  type: 'KubeTransient',
  attempts: 1,
  message: 'read Node CR: connection refused',
};
const exhausted: LedgerFailure = {
  operation: 'CreateNetworkInterface',
  code: 'InvalidVSwitchId.IpNotEnough',
  type: 'EcsVSwitchExhausted',
  attempts: 1,
  message: 'vSwitch has no free IP',
};

type Step =
  { note: LedgerFailure; atMs: number } | { settle: 'completed' | 'stoppedBeforeCloud' | 'threw'; passStartMs: number };

function run(steps: readonly Step[]): FailureLedger {
  let ledger: FailureLedger = {};
  for (const step of steps) {
    ledger =
      'note' in step
        ? noteFailure({ ledger, failure: step.note, nowMs: step.atMs })
        : settleFailures({ ledger, passStartMs: step.passStartMs, scope: step.settle });
  }
  return ledger;
}

/**
 * Every place that says since when a node fails, read from one ledger: the headline (search attribute, query,
 * Web UI, CLI), the core Node condition, and a waiting pod's Event.
 */
function sinceEverywhere(ledger: FailureLedger): { headline?: number; condition?: string; podEvent?: string } {
  const headline = headlineFailure(ledger);
  const condition = eniOperationsCondition({ failing: ledger, existing: undefined, workflowId: 'w', nowMs: T0 });
  const pod = pendingPodNotice({ reason: 'waitingForAttach', failing: ledger, workflowId: 'w' });
  const out: { headline?: number; condition?: string; podEvent?: string } = {};
  if (headline !== undefined) out.headline = headline.sinceMs;
  if (condition?.status === 'True') out.condition = condition.message;
  if (pod.series !== 'waitingForAttach') out.podEvent = pod.message;
  return out;
}

describe('the failure ledger: one "since" everywhere', () => {
  const cases: { name: string; steps: Step[]; since: number | undefined; cloud: boolean }[] = [
    {
      name: 'a Throttling that turns into a 5xx keeps the time the call first failed',
      steps: [
        { note: throttled, atMs: T0 },
        { settle: 'completed', passStartMs: T0 - 1_000 },
        { note: unavailable, atMs: T0 + 2 * MIN },
        { settle: 'completed', passStartMs: T0 + 2 * MIN - 1_000 },
      ],
      since: T0,
      cloud: true,
    },
    {
      name: 'a pass that fails before any cloud call keeps the cloud cause it could not retry',
      steps: [
        { note: unavailable, atMs: T0 },
        { settle: 'completed', passStartMs: T0 - 1_000 },
        { note: readFailed, atMs: T0 + MIN },
        { settle: 'threw', passStartMs: T0 + MIN - 1_000 },
      ],
      since: T0,
      cloud: true,
    },
    {
      name: 'a pass that stops before the cloud (node not ready) clears the read failure but keeps the cloud cause',
      steps: [
        { note: unavailable, atMs: T0 },
        { note: readFailed, atMs: T0 + MIN },
        { settle: 'stoppedBeforeCloud', passStartMs: T0 + 2 * MIN },
      ],
      since: T0,
      cloud: true,
    },
    {
      name: 'a read that keeps failing with no cloud cause is the headline itself',
      steps: [
        { note: readFailed, atMs: T0 },
        { settle: 'threw', passStartMs: T0 - 1_000 },
        { note: readFailed, atMs: T0 + MIN },
        { settle: 'threw', passStartMs: T0 + MIN - 1_000 },
      ],
      since: T0,
      cloud: false,
    },
    {
      name: 'a completed pass in which the cause did not fail again ends it',
      steps: [
        { note: unavailable, atMs: T0 },
        { settle: 'completed', passStartMs: T0 + MIN },
      ],
      since: undefined,
      cloud: false,
    },
  ];
  for (const entry of cases) {
    it(entry.name, () => {
      const ledger = run(entry.steps);
      const seen = sinceEverywhere(ledger);
      assert.equal(seen.headline, entry.since);
      if (entry.cloud && entry.since !== undefined) {
        const stamp = formatRfc3339(entry.since);
        assert.ok(seen.condition?.includes(`since ${stamp}`), `condition: ${seen.condition ?? 'none'}`);
        assert.ok(seen.podEvent?.includes(`since ${stamp}`), `pod event: ${seen.podEvent ?? 'none'}`);
      } else {
        assert.equal(seen.condition, undefined, 'no ENIOperationsFailing without a failing cloud call');
        assert.equal(seen.podEvent, undefined, 'a pod event names no call when none fails');
      }
    });
  }

  it('survives continue-as-new whole: what the next run reads is what this one showed', () => {
    const ledger = run([{ note: throttled, atMs: T0 }]);
    const carried = JSON.parse(JSON.stringify(ledger)) as FailureLedger;
    assert.deepEqual(headlineFailure(carried), headlineFailure(ledger));
    assert.equal(headlineFailure(carried)?.message, throttled.message);
    assert.equal(headlineFailure(carried)?.requestId, 'req-1');
  });
});

describe('noteFailure', () => {
  it('counts attempts per cause and keeps the latest message, in key order', () => {
    const ledger = run([
      { note: unavailable, atMs: T0 },
      { note: exhausted, atMs: T0 + 1 },
      { note: { ...unavailable, attempts: 0, message: 'later' }, atMs: T0 + MIN },
    ]);
    assert.deepEqual(Object.keys(ledger), [
      'AttachNetworkInterface/ServiceUnavailable',
      'CreateNetworkInterface/InvalidVSwitchId.IpNotEnough',
    ]);
    const entry = ledger['AttachNetworkInterface/ServiceUnavailable'];
    assert.equal(entry?.attempts, 6, 'an attempt count below one counts as one');
    assert.equal(entry?.message, 'later');
    assert.equal(entry?.sinceMs, T0);
    assert.equal(entry?.lastMs, T0 + MIN);
  });
});

describe('headlineFailure', () => {
  it('ranks failing calls over capacity answers over Kubernetes, then attempts, then age', () => {
    const all = run([
      { note: readFailed, atMs: T0 },
      { note: { ...exhausted, attempts: 9 }, atMs: T0 },
      { note: { ...unavailable, attempts: 1 }, atMs: T0 + MIN },
    ]);
    assert.equal(headlineFailure(all)?.code, 'ServiceUnavailable');
    const noCalls = run([
      { note: readFailed, atMs: T0 },
      { note: exhausted, atMs: T0 + MIN },
    ]);
    assert.equal(headlineFailure(noCalls)?.code, 'InvalidVSwitchId.IpNotEnough');
    const ties = run([
      { note: { ...unavailable, operation: 'AssignPrivateIpAddresses' }, atMs: T0 + MIN },
      { note: unavailable, atMs: T0 },
    ]);
    assert.equal(headlineFailure(ties)?.operation, 'AttachNetworkInterface', 'the older of equal counts');
    assert.equal(headlineFailure({}), undefined);
  });
});

describe('hasFailingCalls and failureTypesSince', () => {
  it('capacity answers and Kubernetes failures are not failing calls', () => {
    assert.equal(hasFailingCalls(run([{ note: exhausted, atMs: T0 }])), false);
    assert.equal(hasFailingCalls(run([{ note: readFailed, atMs: T0 }])), false);
    assert.equal(hasFailingCalls(run([{ note: throttled, atMs: T0 }])), true);
  });

  it('gives the failure types of the last pass only, sorted and once each', () => {
    const ledger = run([
      { note: exhausted, atMs: T0 },
      { note: unavailable, atMs: T0 + MIN },
      { note: { ...unavailable, operation: 'AssignPrivateIpAddresses' }, atMs: T0 + MIN },
      { note: throttled, atMs: T0 + MIN },
    ]);
    assert.deepEqual(failureTypesSince(ledger, T0 + 1), ['EcsThrottled', 'EcsTransient']);
  });
});

describe('passes in a row (what lengthens the backoff)', () => {
  /** One failing pass per entry: each pass starts a minute after the last and meets its failures at its start. */
  function passes(...perPass: (readonly LedgerFailure[])[]): FailureLedger {
    let ledger: FailureLedger = {};
    perPass.forEach((failures, i) => {
      const passStartMs = T0 + i * MIN;
      for (const failure of failures) ledger = noteFailure({ ledger, failure, nowMs: passStartMs, passStartMs });
      ledger = settleFailures({ ledger, passStartMs, scope: 'completed' });
    });
    return ledger;
  }

  it('counts one pass per pass the same call failed with the same code, however many attempts it made', () => {
    const ledger = passes([unavailable, unavailable], [unavailable], [unavailable]);
    assert.equal(ledger['AttachNetworkInterface/ServiceUnavailable']?.passes, 3);
    assert.equal(failureRepeatsSince(ledger, T0 + 2 * MIN), 3);
  });

  it('starts again at 1 when the failure stopped for a pass, or for a new code', () => {
    assert.equal(failureRepeatsSince(passes([unavailable], [], [unavailable]), T0 + 2 * MIN), 1);
    const newCode = passes([unavailable], [unavailable], [throttled]);
    assert.equal(failureRepeatsSince(newCode, T0 + 2 * MIN), 1);
  });

  it('takes the most repeated of the last pass, and 1 for an empty pass or a ledger from before the count', () => {
    const ledger = passes([unavailable], [unavailable, readFailed], [unavailable, readFailed]);
    assert.equal(failureRepeatsSince(ledger, T0 + 2 * MIN), 3);
    assert.equal(failureRepeatsSince({}, T0), 1);
    const old = { ...(ledger['AttachNetworkInterface/ServiceUnavailable'] ?? throwIt()) };
    delete old.passes;
    assert.equal(failureRepeatsSince({ old }, T0), 1);
  });

  it('names the calls failing with a retryable error, once each and sorted', () => {
    const assign = { ...throttled, operation: 'AssignPrivateIpAddresses' };
    const ledger = passes([unavailable, throttled, assign, exhausted, readFailed]);
    assert.deepEqual(callsFailingRetryably(ledger), ['AssignPrivateIpAddresses', 'AttachNetworkInterface']);
  });
});

function throwIt(): never {
  throw new Error('missing entry');
}
