import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  addressesReturnedBy,
  advanceWarmUp,
  initialWarmUp,
  planEniAllocations,
  planPoolRelease,
  poolShrinkGate,
  warmUpDemand,
} from '../../../src/ipam/index.js';
import type { EniOutcome, UnsatisfiedPod, WarmUpStatus } from '../../../src/ipam/index.js';
import { aCloudEni, aRequest, aSpec, aVSwitch, anEni, anIp, enisOf, v4Range, vSwitchesOf } from './builders.js';

/** `count` addresses from `base.1`, each bound to a pod. */
function podIps(base: string, count: number) {
  return Array.from({ length: count }, (_, i) => anIp(`${base}.${i + 1}`, { pod: `ns/p${i}` }));
}

function pending(count: number): UnsatisfiedPod[] {
  return Array.from({ length: count }, (_, i) => ({
    request: aRequest(`ns/p${i}`),
    reason: 'noIdleIp' as const,
    missing: ['ipv4' as const],
  }));
}

describe('initialWarmUp', () => {
  const cases: { name: string; status: WarmUpStatus; warmUpSize: number | undefined; expected: WarmUpStatus }[] = [
    {
      name: 'a new node with warmUpSize starts at count 0',
      status: {},
      warmUpSize: 20,
      expected: { warmUpTarget: 20, warmUpAllocatedCount: 0, warmUpCompleted: false },
    },
    { name: 'warmUpSize 0: complete at once', status: {}, warmUpSize: 0, expected: { warmUpCompleted: true } },
    { name: 'no warmUpSize: complete at once', status: {}, warmUpSize: undefined, expected: { warmUpCompleted: true } },
    {
      name: 'a running warm-up keeps its target when warmUpSize changes (never re-read)',
      status: { warmUpTarget: 20, warmUpAllocatedCount: 7, warmUpCompleted: false },
      warmUpSize: 50,
      expected: { warmUpTarget: 20, warmUpAllocatedCount: 7, warmUpCompleted: false },
    },
    {
      name: 'a completed node never warms up again, whatever warmUpSize says later',
      status: { warmUpCompleted: true },
      warmUpSize: 30,
      expected: { warmUpCompleted: true },
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      assert.deepEqual(initialWarmUp({ status: c.status, warmUpSize: c.warmUpSize }), c.expected);
    });
  }
});

describe('warm-up progress', () => {
  it('counts addresses the cloud returned, so churn between passes neither restarts nor stretches it', () => {
    let status = initialWarmUp({ status: {}, warmUpSize: 20 });
    assert.equal(warmUpDemand(status), 20);
    // Pass 1: the cloud returns 12 addresses; then pods take 5 of them and free them again (no cloud call).
    status = advanceWarmUp(status, 12);
    assert.deepEqual(status, { warmUpTarget: 20, warmUpAllocatedCount: 12, warmUpCompleted: false });
    assert.equal(warmUpDemand(status), 8);
    status = advanceWarmUp(status, 0);
    assert.equal(warmUpDemand(status), 8, 'a pass without cloud results changes nothing');
    // Pass 2: 10 more (the plan may overshoot to fill an ENI): complete, and stays complete.
    status = advanceWarmUp(status, 10);
    assert.deepEqual(status, { warmUpTarget: 20, warmUpAllocatedCount: 22, warmUpCompleted: true });
    assert.equal(warmUpDemand(status), 0);
    assert.deepEqual(advanceWarmUp(status, 5), status, 'nothing is counted after completion');
    assert.deepEqual(initialWarmUp({ status, warmUpSize: 40 }), status);
  });

  it('completes on the pass that reaches the target exactly', () => {
    const status = advanceWarmUp({ warmUpTarget: 3, warmUpAllocatedCount: 0, warmUpCompleted: false }, 3);
    assert.equal(status.warmUpCompleted, true);
  });

  it('does nothing on a node without warm-up', () => {
    assert.deepEqual(advanceWarmUp({ warmUpCompleted: true }, 10), { warmUpCompleted: true });
    assert.deepEqual(advanceWarmUp({}, 10), {});
    assert.equal(warmUpDemand({}), 0);
    assert.equal(warmUpDemand({ warmUpTarget: 5, warmUpCompleted: true }), 0);
  });
});

describe('addressesReturnedBy', () => {
  it('counts assigned IPs of the family and every address of an attached new ENI, not one awaiting attach', () => {
    const outcomes: EniOutcome[] = [
      { kind: 'ipsAssigned', eniId: 'eni-1', family: 'ipv4', ips: ['10.0.0.5', '10.0.0.6'] },
      { kind: 'ipsAssigned', eniId: 'eni-1', family: 'ipv6', ips: ['fd00::5'] },
      {
        kind: 'eniCreated',
        cloud: aCloudEni('eni-2', {
          ipv4: [
            { ip: '10.0.1.2', primary: true },
            { ip: '10.0.1.3', primary: false },
          ],
          ipv6: ['fd00::1:3'],
        }),
      },
      {
        kind: 'eniAwaitingAttach',
        cloud: aCloudEni('eni-3'),
        message: 'attach timed out',
        nowRfc3339: '2026-01-01T00:00:00Z',
      },
      { kind: 'ipsReleased', eniId: 'eni-1', family: 'ipv4', ips: ['10.0.0.9'] },
    ];
    assert.equal(addressesReturnedBy(outcomes, 'ipv4'), 4);
    assert.equal(addressesReturnedBy(outcomes, 'ipv6'), 2);
  });
});

describe('warm-up demand in the ENI plan', () => {
  const vSwitches = vSwitchesOf(aVSwitch('vsw-a', { availableIpCount: 1000 }));
  const cases: {
    name: string;
    minPoolSize: number;
    maxPoolSize: number;
    idle: number;
    pods: number;
    warmUpDemand: number | undefined;
    expectedDemand: number;
    /**
     * What the plan's allocations carry, when more than the demand: a node's first ENI for waiting pods takes its
     * quota (10 here), a later one up to maxPoolSize idle (`createHeadroomOf`); not while warm-up's rest decides.
     * Absent: exactly the demand.
     */
    expectedPlanned?: number;
  }[] = [
    {
      name: 'pods + minPool top-up without warm-up',
      minPoolSize: 5,
      maxPoolSize: 10,
      idle: 0,
      pods: 3,
      warmUpDemand: undefined,
      expectedDemand: 8,
      expectedPlanned: 10,
    },
    {
      name: 'warm-up smaller than the minPool top-up adds nothing',
      minPoolSize: 5,
      maxPoolSize: 10,
      idle: 0,
      pods: 3,
      warmUpDemand: 4,
      expectedDemand: 8,
      expectedPlanned: 10,
    },
    {
      name: 'warm-up smaller than pods + minPool top-up adds nothing: the pods take warm-up addresses too',
      minPoolSize: 5,
      maxPoolSize: 10,
      idle: 0,
      pods: 3,
      warmUpDemand: 7,
      expectedDemand: 8,
      expectedPlanned: 10,
    },
    {
      name: 'warm-up larger than pods + minPool top-up: its rest, the pods served from it',
      minPoolSize: 5,
      maxPoolSize: 10,
      idle: 0,
      pods: 3,
      warmUpDemand: 12,
      expectedDemand: 12,
    },
    {
      name: 'issue 28: warmUpSize 20, pool 0–5, 6 pods: 20 addresses in one pass (two creates), not 26',
      minPoolSize: 0,
      maxPoolSize: 5,
      idle: 0,
      pods: 6,
      warmUpDemand: 20,
      expectedDemand: 20,
    },
    {
      name: 'more pods than the warm-up rest: the pods decide',
      minPoolSize: 0,
      maxPoolSize: 5,
      idle: 0,
      pods: 26,
      warmUpDemand: 20,
      expectedDemand: 26,
      expectedPlanned: 30,
    },
    {
      name: 'warm-up ignores idle IPs already there (it counts cloud results)',
      minPoolSize: 0,
      maxPoolSize: 30,
      idle: 6,
      pods: 0,
      warmUpDemand: 5,
      expectedDemand: 5,
    },
    {
      name: 'warm-up above maxPoolSize is asked for in full (Terway allows it)',
      minPoolSize: 2,
      maxPoolSize: 10,
      idle: 0,
      pods: 0,
      warmUpDemand: 20,
      expectedDemand: 20,
    },
    {
      name: 'warmUpSize 0: only the minPool top-up',
      minPoolSize: 2,
      maxPoolSize: 10,
      idle: 0,
      pods: 0,
      warmUpDemand: 0,
      expectedDemand: 2,
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const spec = aSpec({ pool: { minPoolSize: c.minPoolSize, maxPoolSize: c.maxPoolSize } });
      const enis =
        c.idle === 0
          ? {}
          : enisOf(
              anEni('eni-1', { ipv4: [...v4Range('10.0.0', { count: c.idle }), anIp('10.0.0.99', { pod: 'ns/x' })] }),
            );
      const plan = planEniAllocations({
        spec,
        enis,
        unsatisfied: pending(c.pods),
        vSwitches,
        randomValue: 0,
        ...(c.warmUpDemand === undefined ? {} : { warmUpDemand: c.warmUpDemand }),
      });
      assert.equal(plan.demand.normal, c.expectedDemand);
      const planned = plan.allocations.reduce((sum, allocation) => sum + allocation.ipv4Count, 0);
      assert.equal(planned, c.expectedPlanned ?? c.expectedDemand, 'the demand, plus only the headroom of creates');
    });
  }
});

describe('the warm-up release hold (poolShrinkGate)', () => {
  const PERIOD = 120_000;
  const T = Date.parse('2026-12-01T00:00:00Z');
  const base = {
    nowMs: T,
    periodMs: PERIOD,
    periodStartMs: undefined as number | undefined,
    gcRequested: false,
    reclaimBatch: 0,
    warmUpGotAddresses: false,
    mayRelease: true,
  };
  const cases: {
    name: string;
    input: Partial<typeof base>;
    expected: { shrink: boolean; periodStartMs: number | undefined };
  }[] = [
    {
      name: 'issue 28: the first pass gets the warm-up addresses: no shrink, the pool period starts now',
      input: { warmUpGotAddresses: true },
      expected: { shrink: false, periodStartMs: T },
    },
    {
      name: 'a later pass within the period after warm-up keeps the warm addresses',
      input: { nowMs: T + PERIOD - 1, periodStartMs: T },
      expected: { shrink: false, periodStartMs: T },
    },
    {
      name: 'a pool period after warm-up got its last addresses, the excess goes',
      input: { nowMs: T + PERIOD, periodStartMs: T },
      expected: { shrink: true, periodStartMs: T + PERIOD },
    },
    {
      name: 'warm-up over several passes: each pass that gets addresses starts the period again, even when one is due',
      input: { nowMs: T + 3 * PERIOD, periodStartMs: T, warmUpGotAddresses: true },
      expected: { shrink: false, periodStartMs: T + 3 * PERIOD },
    },
    {
      name: 'without warm-up, the first pass shrinks (no period has started)',
      input: {},
      expected: { shrink: true, periodStartMs: T },
    },
    {
      name: "an operator's GC request is not held back by warm-up",
      input: { gcRequested: true, warmUpGotAddresses: true },
      expected: { shrink: true, periodStartMs: T },
    },
    {
      name: 'a due idle reclaim batch goes within the period',
      input: { nowMs: T + 1_000, periodStartMs: T, reclaimBatch: 3 },
      expected: { shrink: true, periodStartMs: T + 1_000 },
    },
    {
      name: 'degradation holding releases back: no shrink; warm-up still starts the period',
      input: { mayRelease: false, gcRequested: true, warmUpGotAddresses: true },
      expected: { shrink: false, periodStartMs: T },
    },
    {
      name: 'degradation holding releases back with a period due: nothing changes',
      input: { mayRelease: false, nowMs: T + PERIOD, periodStartMs: T },
      expected: { shrink: false, periodStartMs: T },
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      assert.deepEqual(poolShrinkGate({ ...base, ...c.input }), c.expected);
    });
  }
});

describe('warm-up and maxPoolSize over one node (issue 28)', () => {
  it('warmUpSize 20, pool 0–5, 6 pods: 20 addresses, count 20, and 14 idle kept until a pool period has passed', () => {
    const spec = aSpec({ pool: { minPoolSize: 0, maxPoolSize: 5, warmUpSize: 20 } });
    let warm = initialWarmUp({ status: {}, warmUpSize: 20 });
    const plan = planEniAllocations({
      spec,
      enis: {},
      unsatisfied: pending(6),
      vSwitches: vSwitchesOf(aVSwitch('vsw-a', { availableIpCount: 1000 })),
      randomValue: 0,
      warmUpDemand: warmUpDemand(warm),
    });
    const counts = plan.allocations.map((allocation) => [allocation.kind, allocation.ipv4Count]);
    assert.deepEqual(counts, [
      ['createEni', 10],
      ['createEni', 10],
    ]);
    warm = advanceWarmUp(warm, 20);
    assert.deepEqual(warm, { warmUpTarget: 20, warmUpAllocatedCount: 20, warmUpCompleted: true });
    // The two new ENIs, 6 pods on them: 14 idle, 9 above maxPoolSize.
    const enis = enisOf(
      anEni('eni-1', { ipv4: [...v4Range('10.0.0', { count: 4 }), ...podIps('10.0.1', 6)] }),
      anEni('eni-2', { ipv4: v4Range('10.0.2', { count: 10 }) }),
    );
    assert.equal(planPoolRelease({ spec, enis }).idleBefore, 14);
    const T = Date.parse('2026-12-01T00:00:00Z');
    const gate = (nowMs: number, periodStartMs: number | undefined, got: boolean) =>
      poolShrinkGate({
        nowMs,
        periodMs: 120_000,
        periodStartMs,
        gcRequested: false,
        reclaimBatch: 0,
        warmUpGotAddresses: got,
        mayRelease: true,
      });
    const first = gate(T, undefined, true);
    assert.equal(first.shrink, false, 'nothing given back in the warm-up pass');
    assert.equal(gate(T + 4_000, first.periodStartMs, false).shrink, false, 'nor 4 s later');
    const due = gate(T + 120_000, first.periodStartMs, false);
    assert.equal(due.shrink, true, 'a pool period later');
    assert.equal(planPoolRelease({ spec, enis }).idleAfter, 5);
  });
});
