import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { explainPendingPod, PENDING_REASONS } from '../../../src/ipam/index.js';
import type { EniAllocationPlan, PendingReason } from '../../../src/ipam/index.js';

const quiet: Pick<EniAllocationPlan, 'allocations' | 'problems' | 'unmetDemand'> = {
  allocations: [],
  problems: [],
  unmetDemand: { normal: 0, erdma: 0 },
};

describe('explainPendingPod', () => {
  const cases: { name: string; input: Parameters<typeof explainPendingPod>[0]; expected: PendingReason }[] = [
    {
      name: 'a node that is not Ready explains everything',
      input: { podReason: 'noIdleIp', isNodeReady: false, plan: quiet, failureTypes: ['EcsThrottled'] },
      expected: 'nodeNotReady',
    },
    {
      name: 'a pod running with a foreign IP',
      input: { podReason: 'statusIpNotInPool', isNodeReady: true, plan: quiet, failureTypes: [] },
      expected: 'foreignIp',
    },
    {
      name: 'throttling',
      input: { podReason: 'noIdleIp', isNodeReady: true, plan: quiet, failureTypes: ['EcsThrottled'] },
      expected: 'throttled',
    },
    {
      name: 'degradation l0 holds allocation back: not the plan made without the cloud (vSwitches unread)',
      input: {
        podReason: 'noIdleIp',
        isNodeReady: true,
        plan: { ...quiet, problems: [{ kind: 'noVSwitchForNewEni', eniKind: 'secondary', message: 'unread' }] },
        failureTypes: [],
        allocationHeldBack: true,
      },
      expected: 'degradedL0',
    },
    {
      name: 'an exhausted vSwitch seen by the cloud',
      input: { podReason: 'noIdleIp', isNodeReady: true, plan: quiet, failureTypes: ['EcsVSwitchExhausted'] },
      expected: 'vSwitchExhausted',
    },
    {
      name: 'an exhausted vSwitch seen by the plan',
      input: {
        podReason: 'noIdleIp',
        isNodeReady: true,
        plan: { ...quiet, problems: [{ kind: 'noVSwitchForNewEni', eniKind: 'secondary', message: 'none' }] },
        failureTypes: [],
      },
      expected: 'vSwitchExhausted',
    },
    {
      name: 'demand left with no slot: the instance limit',
      input: {
        podReason: 'noIdleIp',
        isNodeReady: true,
        plan: { ...quiet, unmetDemand: { normal: 2, erdma: 0 } },
        failureTypes: [],
      },
      expected: 'instanceEniLimit',
    },
    {
      name: 'a new ENI on its way',
      input: {
        podReason: 'noIdleIp',
        isNodeReady: true,
        plan: {
          ...quiet,
          allocations: [{ kind: 'createEni', eniKind: 'secondary', vSwitchId: 'v', ipv4Count: 2, ipv6Count: 0 }],
        },
        failureTypes: [],
      },
      expected: 'waitingForAttach',
    },
    {
      name: 'nothing special',
      input: { podReason: 'noIdleIp', isNodeReady: true, failureTypes: [] },
      expected: 'allocating',
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const reason = explainPendingPod(c.input);
      assert.equal(reason, c.expected);
      assert.ok(PENDING_REASONS[reason].length > 10);
    });
  }
});
