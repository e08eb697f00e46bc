import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  addressesReturnedBy,
  advanceWarmUp,
  initialWarmUp,
  planEniAllocations,
  warmUpDemand,
} from '../../src/ipam/index.js';
import type { EniOutcome, UnsatisfiedPod, WarmUpStatus } from '../../src/ipam/index.js';
import { aCloudEni, aRequest, aSpec, aVSwitch, anEni, anIp, enisOf, v4Range, vSwitchesOf } from './builders.js';

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
  }[] = [
    {
      name: 'pods + minPool top-up without warm-up',
      minPoolSize: 5,
      maxPoolSize: 10,
      idle: 0,
      pods: 3,
      warmUpDemand: undefined,
      expectedDemand: 8,
    },
    {
      name: 'warm-up smaller than the minPool top-up adds nothing',
      minPoolSize: 5,
      maxPoolSize: 10,
      idle: 0,
      pods: 3,
      warmUpDemand: 4,
      expectedDemand: 8,
    },
    {
      name: 'warm-up larger than the minPool top-up replaces it',
      minPoolSize: 5,
      maxPoolSize: 10,
      idle: 0,
      pods: 3,
      warmUpDemand: 7,
      expectedDemand: 10,
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
      assert.equal(planned, c.expectedDemand, 'the plan asks the cloud for exactly the demand');
    });
  }
});
