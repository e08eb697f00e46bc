import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  eniOperationsCondition,
  failureBackoffMs,
  formatRfc3339,
  noteFailure,
  pendingPodNotice,
  recoveredNotice,
  settleFailures,
} from '../../../src/ipam/index.js';
import type { FailureLedger } from '../../../src/ipam/index.js';

const NOW = Date.UTC(2026, 11, 3, 9, 0, 0);
const attach = { operation: 'AttachNetworkInterface', code: 'ServiceUnavailable', type: 'EcsTransient' };
const exhausted = {
  operation: 'CreateNetworkInterface',
  code: 'InvalidVSwitchId.IpNotEnough',
  type: 'EcsVSwitchExhausted',
};

function failing(...entries: { failure: typeof attach; attempts: number; atMs: number }[]): FailureLedger {
  let current: FailureLedger = {};
  for (const entry of entries) {
    current = noteFailure({
      ledger: current,
      failure: { ...entry.failure, attempts: entry.attempts, message: 'm' },
      nowMs: entry.atMs,
    });
  }
  return current;
}

describe('noteFailure and settleFailures', () => {
  it('one cause keeps its first time and adds up attempts', () => {
    const current = failing(
      { failure: attach, attempts: 5, atMs: NOW },
      { failure: attach, attempts: 5, atMs: NOW + 40_000 },
    );
    assert.deepEqual(current, {
      'AttachNetworkInterface/ServiceUnavailable': {
        ...attach,
        attempts: 10,
        passes: 1,
        sinceMs: NOW,
        lastMs: NOW + 40_000,
        message: 'm',
      },
    });
  });

  it('a cause that did not fail during the pass is over; one that did stays', () => {
    const current = failing(
      { failure: exhausted, attempts: 1, atMs: NOW },
      { failure: attach, attempts: 5, atMs: NOW + 40_000 },
    );
    assert.deepEqual(Object.keys(settleFailures({ ledger: current, passStartMs: NOW + 10_000, scope: 'completed' })), [
      'AttachNetworkInterface/ServiceUnavailable',
    ]);
    assert.deepEqual(settleFailures({ ledger: current, passStartMs: NOW + 50_000, scope: 'completed' }), {});
  });
});

describe('pendingPodNotice', () => {
  it('names the failing call, its code, the attempts, since when and the workflow', () => {
    const notice = pendingPodNotice({
      reason: 'waitingForAttach',
      failing: failing({ failure: attach, attempts: 15, atMs: NOW }),
      workflowId: 'eniflow-node/n1',
    });
    assert.equal(
      notice.message,
      `no IP yet: AttachNetworkInterface failed with ServiceUnavailable: 15 attempts since ${formatRfc3339(NOW)}; ` +
        'retried automatically (workflow eniflow-node/n1)',
    );
    assert.equal(notice.series, 'waitingForAttach:AttachNetworkInterface/ServiceUnavailable');
  });

  it('keeps one series while only the attempt count changes', () => {
    const once = pendingPodNotice({
      reason: 'waitingForAttach',
      failing: failing({ failure: attach, attempts: 5, atMs: NOW }),
      workflowId: 'w',
    });
    const later = pendingPodNotice({
      reason: 'waitingForAttach',
      failing: failing({ failure: attach, attempts: 5, atMs: NOW }, { failure: attach, attempts: 5, atMs: NOW + 1 }),
      workflowId: 'w',
    });
    assert.notEqual(once.message, later.message);
    assert.equal(once.series, later.series);
  });

  it('prefers a failing call over a capacity answer, and says the plan reason when nothing fails', () => {
    const both = failing(
      { failure: exhausted, attempts: 9, atMs: NOW },
      { failure: attach, attempts: 1, atMs: NOW + 1 },
    );
    assert.match(
      pendingPodNotice({ reason: 'vSwitchExhausted', failing: both, workflowId: 'w' }).message,
      /AttachNetworkInterface/,
    );
    const capacity = failing({ failure: exhausted, attempts: 1, atMs: NOW });
    assert.equal(
      pendingPodNotice({ reason: 'vSwitchExhausted', failing: capacity, workflowId: 'w' }).message,
      "no IP yet: the node's vSwitches have no free IP address (vSwitch exhausted); CreateNetworkInterface failed " +
        `with InvalidVSwitchId.IpNotEnough: 1 attempt since ${formatRfc3339(NOW)} (workflow w)`,
    );
    assert.deepEqual(pendingPodNotice({ reason: 'allocating', failing: {}, workflowId: 'w' }), {
      message: 'no IP yet: IP allocation is in progress (workflow w)',
      series: 'allocating',
    });
  });
});

describe('recoveredNotice', () => {
  it('counts what the recovering pass served and what still waits', () => {
    assert.deepEqual(recoveredNotice({ pods: { total: 6, withIp: 6, pending: 0, served: 4 }, workflowId: 'w' }), {
      message:
        'ENI and IP operations succeed again: this pass gave 4 pods their IPs, 6 of 6 pods hold theirs (workflow w)',
      series: 'recovery',
    });
    assert.match(
      recoveredNotice({ pods: { total: 6, withIp: 2, pending: 4, served: 1 }, workflowId: 'w' }).message,
      /gave 1 pod their IPs, 2 of 6 pods hold theirs; 4 still wait \(/,
    );
  });
});

describe('eniOperationsCondition', () => {
  const failingAttach = failing({ failure: attach, attempts: 5, atMs: NOW });

  it('turns True while calls fail and False once they succeed, keeping the transition time while unchanged', () => {
    const on = eniOperationsCondition({ failing: failingAttach, existing: undefined, workflowId: 'w', nowMs: NOW });
    assert.equal(on?.status, 'True');
    assert.equal(on?.reason, 'CloudCallsFailing');
    assert.match(on?.message ?? '', /AttachNetworkInterface failed with ServiceUnavailable/);
    assert.equal(
      eniOperationsCondition({ failing: failingAttach, existing: on, workflowId: 'w', nowMs: NOW + 60_000 }),
      undefined,
    );
    const refreshed = eniOperationsCondition({
      failing: failingAttach,
      existing: on,
      workflowId: 'w',
      nowMs: NOW + 6 * 60_000,
    });
    assert.equal(refreshed?.lastTransitionTime, formatRfc3339(NOW));
    const off = eniOperationsCondition({ failing: {}, existing: on, workflowId: 'w', nowMs: NOW + 70_000 });
    assert.equal(off?.status, 'False');
    assert.equal(off?.lastTransitionTime, formatRfc3339(NOW + 70_000));
  });

  it('follows the ledger: rewritten when attempts double, the cause or its "since" changes, else only on heartbeat', () => {
    const at = (attempts: number, sinceMs = NOW) => ({
      'AttachNetworkInterface/ServiceUnavailable': { ...attach, attempts, sinceMs, lastMs: NOW, message: 'm' },
    });
    const shown = eniOperationsCondition({ failing: at(5), existing: undefined, workflowId: 'w', nowMs: NOW });
    assert.match(shown?.message ?? '', /: 5 attempts since /);
    const later = (failing: FailureLedger, existing = shown) =>
      eniOperationsCondition({ failing, existing, workflowId: 'w', nowMs: NOW + 60_000 });
    assert.equal(later(at(9)), undefined, 'fewer than twice the attempts shown: not worth a Node patch');
    const doubled = later(at(10));
    assert.match(doubled?.message ?? '', /: 10 attempts since /);
    assert.equal(doubled?.lastTransitionTime, shown?.lastTransitionTime, 'still True since the first failure');
    assert.match(later(at(80))?.message ?? '', /: 80 attempts since /);
    assert.match(later(at(5, NOW + 30_000))?.message ?? '', new RegExp(`since ${formatRfc3339(NOW + 30_000)}`));
    const describe = {
      ...attach,
      operation: 'DescribeNetworkInterfaces',
      code: 'InternalError',
      attempts: 1,
      sinceMs: NOW,
      lastMs: NOW,
      message: 'm',
    };
    const both = (attempts: number) => ({ ...at(attempts), 'DescribeNetworkInterfaces/InternalError': describe });
    const another = later(both(5));
    assert.match(another?.message ?? '', /DescribeNetworkInterfaces failed with InternalError: 1 attempt since/);
    assert.equal(later(both(7), another), undefined, 'two causes shown: read back as two, nothing changed enough');
    assert.notEqual(later(at(5), another), undefined, 'a cause gone from the ledger is rewritten away');
  });

  it('writes nothing on a healthy node that never failed, and ignores capacity answers', () => {
    assert.equal(eniOperationsCondition({ failing: {}, existing: undefined, workflowId: 'w', nowMs: NOW }), undefined);
    const capacityOnly = failing({ failure: exhausted, attempts: 1, atMs: NOW });
    assert.equal(
      eniOperationsCondition({ failing: capacityOnly, existing: undefined, workflowId: 'w', nowMs: NOW }),
      undefined,
    );
  });
});

describe('failureBackoffMs', () => {
  const transient = { maxMs: 300_000, transientMaxMs: 10_000, lastFailureTypes: ['EcsTransient'] };
  const table: [string, Parameters<typeof failureBackoffMs>[0], number][] = [
    ['first transient failure: retried within a second', { ...transient, streak: 1, repeats: 1 }, 1_000],
    ['the same failure on the 4th pass: the failed-pass doubling', { ...transient, streak: 4, repeats: 4 }, 8_000],
    ['no repeat count: as the first', { ...transient, streak: 9 }, 10_000],
    ['the same failure again: the short cap doubles', { ...transient, streak: 6, repeats: 2 }, 20_000],
    ['four times in a row: doubled three times', { ...transient, streak: 8, repeats: 4 }, 80_000],
    ['changing causes never wait past the short cap', { ...transient, streak: 8, repeats: 1 }, 10_000],
    ['repeats, not failed passes, lengthen it', { ...transient, streak: 9, repeats: 2 }, 20_000],
    ['up to the long cap', { ...transient, streak: 12, repeats: 12 }, 300_000],
    ['however long it lasts', { ...transient, streak: 4_000, repeats: 4_000 }, 300_000],
    [
      'throttling and 5xx together: transient',
      { ...transient, streak: 7, repeats: 3, lastFailureTypes: ['EcsTransient', 'EcsThrottled'] },
      40_000,
    ],
    [
      'not transient: 1 s doubling per failed pass',
      { ...transient, streak: 3, lastFailureTypes: ['EcsInvalidRequest'] },
      4_000,
    ],
    [
      'not transient: long cap',
      { ...transient, streak: 9, repeats: 1, lastFailureTypes: ['EcsTransient', 'EcsInvalidRequest'] },
      256_000,
    ],
    ['no short cap configured', { streak: 12, maxMs: 300_000, lastFailureTypes: ['EcsTransient'] }, 300_000],
    ['no failure types known', { streak: 12, maxMs: 300_000, transientMaxMs: 10_000, lastFailureTypes: [] }, 300_000],
    ['short cap above the long one', { ...transient, streak: 12, maxMs: 2_000 }, 2_000],
  ];
  for (const [name, input, expected] of table) {
    it(name, () => {
      assert.equal(failureBackoffMs(input), expected);
    });
  }
});
