import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { eniKindOf, planEniAllocations, planEniSlots } from '../../../src/ipam/index.js';
import type {
  EniAllocation,
  NetworkInterfaces,
  NodeSpec,
  UnsatisfiedPod,
  VSwitchInfo,
} from '../../../src/ipam/index.js';
import {
  aRequest,
  aSpec,
  aVSwitch,
  anEni,
  anIp,
  dualStackSpec,
  enisOf,
  v4Range,
  v6Range,
  vSwitchesOf,
} from './builders.js';

function pending(count: number, opts: { erdma?: boolean; v6?: boolean } = {}): UnsatisfiedPod[] {
  return Array.from({ length: count }, (_, i) => ({
    request: aRequest(`ns/p${i}`, { requireErdma: opts.erdma ?? false, requireIpv6: opts.v6 ?? false }),
    reason: 'noIdleIp' as const,
    missing: opts.v6 === true ? ['ipv4' as const, 'ipv6' as const] : ['ipv4' as const],
  }));
}

function describeSlots(spec: NodeSpec, enis: NetworkInterfaces): string[] {
  return planEniSlots({ spec, enis }).map((slot) =>
    slot.eniId === undefined ? `new:${slot.kind}` : `${slot.kind}:${slot.eniId}`,
  );
}

const TRUNK_FLAVOR: NodeSpec['flavor'] = [
  { networkInterfaceType: 'Trunk', networkInterfaceTrafficMode: 'Standard', count: 1 },
  { networkInterfaceType: 'Secondary', networkInterfaceTrafficMode: 'HighPerformance', count: 1 },
  { networkInterfaceType: 'Secondary', networkInterfaceTrafficMode: 'Standard', count: 2 },
];

describe('planEniSlots', () => {
  const cases: { name: string; spec: NodeSpec; enis: NetworkInterfaces; expected: string[] }[] = [
    {
      name: 'an empty node gets one new slot per flavor count',
      spec: aSpec(),
      enis: {},
      expected: ['new:secondary', 'new:secondary', 'new:secondary'],
    },
    {
      name: 'trunk slots first, then ERDMA, then existing ENIs, then new secondaries',
      spec: aSpec({
        flavor: TRUNK_FLAVOR,
        nodeCap: { ...aSpec().nodeCap, adapters: 5 },
        eni: { ...aSpec().eni, enableTrunk: true, enableERDMA: true },
      }),
      enis: enisOf(anEni('eni-s', { ipv4: v4Range('10.0.0', { count: 2 }) })),
      expected: ['new:trunk', 'new:erdma', 'secondary:eni-s', 'new:secondary'],
    },
    {
      name: 'trunk and ERDMA slots are offered only when the node enables them',
      spec: aSpec({ flavor: TRUNK_FLAVOR }),
      enis: {},
      expected: ['new:secondary', 'new:secondary'],
    },
    {
      name: 'existing ENIs come in allocation order: trunk, HighPerformance, fuller first',
      spec: aSpec({ flavor: TRUNK_FLAVOR, eni: { ...aSpec().eni, enableTrunk: true, enableERDMA: true } }),
      enis: enisOf(
        anEni('eni-small', { ipv4: v4Range('10.0.0', { count: 1 }) }),
        anEni('eni-big', { ipv4: v4Range('10.0.1', { count: 5 }) }),
        anEni('eni-hp', { mode: 'HighPerformance', ipv4: v4Range('10.0.2', { count: 1 }) }),
        anEni('eni-trunk', { type: 'Trunk', ipv4: v4Range('10.0.3', { count: 1 }) }),
      ),
      expected: ['trunk:eni-trunk', 'erdma:eni-hp', 'secondary:eni-big', 'secondary:eni-small'],
    },
    {
      name: 'a surplus of trunk ENIs does not raise the new-ENI limit (seed quirk fixed)',
      spec: aSpec({ flavor: TRUNK_FLAVOR, eni: { ...aSpec().eni, enableTrunk: true } }),
      enis: enisOf(
        anEni('eni-t1', { type: 'Trunk' }),
        anEni('eni-t2', { type: 'Trunk' }),
        anEni('eni-t3', { type: 'Trunk' }),
        anEni('eni-t4', { type: 'Trunk' }),
      ),
      expected: ['trunk:eni-t1', 'trunk:eni-t2', 'trunk:eni-t3', 'trunk:eni-t4'],
    },
    {
      name: 'the instance adapter count caps new slots (the primary ENI takes one)',
      spec: aSpec({ nodeCap: { ...aSpec().nodeCap, adapters: 3 } }),
      enis: enisOf(anEni('eni-1')),
      expected: ['secondary:eni-1', 'new:secondary'],
    },
    {
      name: 'unmanaged kinds (Member, Primary) are neither slots nor counted against the flavor',
      spec: aSpec(),
      enis: enisOf(anEni('eni-m', { type: 'Member' })),
      expected: ['new:secondary', 'new:secondary'],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      assert.deepEqual(describeSlots(c.spec, c.enis), c.expected);
    });
  }

  it('classifies ENI kinds by type and traffic mode', () => {
    assert.equal(eniKindOf(anEni('a')), 'secondary');
    assert.equal(eniKindOf(anEni('a', { type: 'Trunk' })), 'trunk');
    assert.equal(eniKindOf(anEni('a', { mode: 'HighPerformance' })), 'erdma');
    assert.equal(eniKindOf(anEni('a', { type: 'Primary' })), undefined);
    assert.equal(eniKindOf({ id: 'a', status: 'InUse', networkInterfaceType: 'Secondary' }), 'secondary');
  });
});

describe('planEniAllocations', () => {
  const vsw = vSwitchesOf(aVSwitch('vsw-a'));
  const cases: {
    name: string;
    spec: NodeSpec;
    enis: NetworkInterfaces;
    unsatisfied: UnsatisfiedPod[];
    vSwitches?: Record<string, VSwitchInfo>;
    expected: EniAllocation[];
    unmet?: { normal: number; erdma: number };
    problems?: string[];
  }[] = [
    {
      name: 'a new node with 5 pending pods and minPoolSize 2 creates its first ENI at its quota (10), not 7',
      spec: aSpec({ pool: { minPoolSize: 2, maxPoolSize: 5 } }),
      enis: {},
      unsatisfied: pending(5),
      expected: [{ kind: 'createEni', eniKind: 'secondary', vSwitchId: 'vsw-a', ipv4Count: 10, ipv6Count: 0 }],
    },
    {
      name: 'nothing is requested when idle IPs already cover minPoolSize and no pod waits',
      spec: aSpec({ pool: { minPoolSize: 2, maxPoolSize: 5 } }),
      enis: enisOf(anEni('eni-1', { ipv4: v4Range('10.0.0', { count: 3 }) })),
      unsatisfied: [],
      expected: [],
    },
    {
      name: 'an existing ENI grows up to its quota, the rest goes to a new ENI',
      spec: aSpec({ nodeCap: { ...aSpec().nodeCap, ipv4PerAdapter: 6 } }),
      enis: enisOf(
        anEni('eni-1', { ipv4: v4Range('10.0.0', { count: 4 }).map((ip, i) => ({ ...ip, podID: `ns/x${i}` })) }),
      ),
      unsatisfied: pending(5),
      expected: [
        { kind: 'assignIps', eniId: 'eni-1', ipv4Count: 2, ipv6Count: 0 },
        // 3 for the pods and 3 idle (up to maxPoolSize 5, within the quota of 6): the create carries them free.
        { kind: 'createEni', eniKind: 'secondary', vSwitchId: 'vsw-a', ipv4Count: 6, ipv6Count: 0 },
      ],
    },
    {
      name: 'an existing ENI with room takes the whole demand in one assign (made in calls of ten): no new ENI',
      spec: aSpec({ nodeCap: { ...aSpec().nodeCap, ipv4PerAdapter: 30 } }),
      enis: enisOf(anEni('eni-1', { ipv4: [anIp('10.0.0.1', { primary: true, pod: 'ns/x' })] })),
      unsatisfied: pending(25),
      // 25 and 4 idle more (within maxPoolSize 5 and the quota): still three calls of ten.
      expected: [{ kind: 'assignIps', eniId: 'eni-1', ipv4Count: 29, ipv6Count: 0 }],
    },
    {
      name: 'a full ENI is skipped and the shortfall is reported when no slot is left',
      spec: aSpec({ nodeCap: { ...aSpec().nodeCap, adapters: 2, ipv4PerAdapter: 3 } }),
      enis: enisOf(
        anEni('eni-1', { ipv4: v4Range('10.0.0', { count: 3 }).map((ip, i) => ({ ...ip, podID: `ns/x${i}` })) }),
      ),
      unsatisfied: pending(2),
      expected: [],
      unmet: { normal: 2, erdma: 0 },
    },
    {
      name: 'dual-stack: IPv4 and IPv6 are requested in pairs on the same ENI',
      spec: dualStackSpec(),
      enis: enisOf(
        anEni('eni-1', {
          ipv4: [...v4Range('10.0.0', { count: 2 }), anIp('10.0.0.50', { pod: 'ns/x' })],
          ipv6: [anIp('fd00::1', { pod: 'ns/x' })],
        }),
      ),
      unsatisfied: pending(3, { v6: true }),
      // 3 pairs, and 5 idle pairs more (maxPoolSize 5) in the same two calls.
      expected: [{ kind: 'assignIps', eniId: 'eni-1', ipv4Count: 6, ipv6Count: 8 }],
    },
    {
      name: 'dual-stack: a new ENI gets as many IPv6 as IPv4 addresses (a first ENI: its quota of pairs)',
      spec: dualStackSpec(),
      enis: {},
      unsatisfied: pending(4, { v6: true }),
      expected: [{ kind: 'createEni', eniKind: 'secondary', vSwitchId: 'vsw-a', ipv4Count: 10, ipv6Count: 10 }],
    },
    {
      name: 'dual-stack: the IPv6 quota of an ENI limits its pairs',
      spec: dualStackSpec({ nodeCap: { ...aSpec().nodeCap, ipv4PerAdapter: 10, ipv6PerAdapter: 2 } }),
      enis: enisOf(
        anEni('eni-1', {
          ipv4: v4Range('10.0.0', { count: 1 }).map((ip) => ({ ...ip, podID: 'ns/x' })),
          ipv6: v6Range('fd00', { count: 1 }).map((ip) => ({ ...ip, podID: 'ns/x' })),
        }),
      ),
      unsatisfied: pending(3, { v6: true }),
      expected: [
        { kind: 'assignIps', eniId: 'eni-1', ipv4Count: 1, ipv6Count: 1 },
        { kind: 'createEni', eniKind: 'secondary', vSwitchId: 'vsw-a', ipv4Count: 2, ipv6Count: 2 },
      ],
    },
    {
      name: 'a new trunk ENI is created even without demand, with at least one IP of each family',
      spec: dualStackSpec({ flavor: TRUNK_FLAVOR, eni: { ...dualStackSpec().eni, enableTrunk: true } }),
      enis: {},
      unsatisfied: [],
      expected: [{ kind: 'createEni', eniKind: 'trunk', vSwitchId: 'vsw-a', ipv4Count: 1, ipv6Count: 1 }],
    },
    {
      name: 'ERDMA pods are served by a new HighPerformance ENI; minPoolSize does not apply to them',
      spec: aSpec({
        flavor: TRUNK_FLAVOR,
        eni: { ...aSpec().eni, enableERDMA: true },
        pool: { minPoolSize: 0, maxPoolSize: 5 },
      }),
      enis: {},
      unsatisfied: pending(2, { erdma: true }),
      expected: [{ kind: 'createEni', eniKind: 'erdma', vSwitchId: 'vsw-a', ipv4Count: 2, ipv6Count: 0 }],
    },
    {
      name: 'an existing HighPerformance ENI grows only for ERDMA pods',
      spec: aSpec({ flavor: TRUNK_FLAVOR, eni: { ...aSpec().eni, enableERDMA: true } }),
      enis: enisOf(
        anEni('eni-hp', { mode: 'HighPerformance', ipv4: [anIp('10.0.9.1', { primary: true, pod: 'ns/r' })] }),
        anEni('eni-s', { ipv4: [anIp('10.0.0.1', { primary: true, pod: 'ns/n' })] }),
      ),
      unsatisfied: [
        ...pending(1),
        ...pending(1, { erdma: true }).map((p) => ({ ...p, request: { ...p.request, podId: 'ns/rdma' } })),
      ],
      expected: [
        { kind: 'assignIps', eniId: 'eni-hp', ipv4Count: 1, ipv6Count: 0 },
        // The normal pod's assign carries idle up to maxPoolSize (5) in its one call; the ERDMA one does not.
        { kind: 'assignIps', eniId: 'eni-s', ipv4Count: 6, ipv6Count: 0 },
      ],
    },
    {
      name: 'an ENI whose vSwitch is exhausted is skipped and flagged; a new ENI goes to another vSwitch',
      spec: aSpec({ eni: { ...aSpec().eni, vSwitchOptions: ['vsw-a', 'vsw-b'] } }),
      enis: enisOf(anEni('eni-1', { vSwitch: 'vsw-a', ipv4: [anIp('10.0.0.1', { primary: true, pod: 'ns/x' })] })),
      unsatisfied: pending(1),
      vSwitches: vSwitchesOf(aVSwitch('vsw-a', { availableIpCount: 0 }), aVSwitch('vsw-b')),
      // Not the node's first ENI: the pod and up to maxPoolSize (5) idle.
      expected: [{ kind: 'createEni', eniKind: 'secondary', vSwitchId: 'vsw-b', ipv4Count: 6, ipv6Count: 0 }],
      problems: ['vSwitchExhausted:eni-1'],
    },
    {
      name: 'no vSwitch with free addresses: nothing is created and the reason is reported',
      spec: aSpec(),
      enis: {},
      unsatisfied: pending(1),
      vSwitches: vSwitchesOf(aVSwitch('vsw-a', { availableIpCount: 0 })),
      expected: [],
      unmet: { normal: 1, erdma: 0 },
      problems: ['noVSwitchForNewEni:secondary', 'noVSwitchForNewEni:secondary', 'noVSwitchForNewEni:secondary'],
    },
    {
      name: 'a new ENI never asks for more addresses than its vSwitch has left',
      spec: aSpec(),
      enis: {},
      unsatisfied: pending(8),
      vSwitches: vSwitchesOf(aVSwitch('vsw-a', { availableIpCount: 5 })),
      expected: [{ kind: 'createEni', eniKind: 'secondary', vSwitchId: 'vsw-a', ipv4Count: 5, ipv6Count: 0 }],
      unmet: { normal: 3, erdma: 0 },
      problems: ['noVSwitchForNewEni:secondary', 'noVSwitchForNewEni:secondary'],
    },
    {
      name: 'an existing ENI asks its vSwitch for no more than it has left (8 free, 10 wanted: 8, the rest reported)',
      spec: aSpec({ nodeCap: { ...aSpec().nodeCap, ipv4PerAdapter: 15 } }),
      enis: enisOf(anEni('eni-1', { ipv4: [anIp('10.0.0.1', { primary: true, pod: 'ns/x' })] })),
      unsatisfied: pending(10),
      vSwitches: vSwitchesOf(aVSwitch('vsw-a', { availableIpCount: 8 })),
      expected: [{ kind: 'assignIps', eniId: 'eni-1', ipv4Count: 8, ipv6Count: 0 }],
      unmet: { normal: 2, erdma: 0 },
      problems: ['noVSwitchForNewEni:secondary', 'noVSwitchForNewEni:secondary'],
    },
    {
      name: "what an ENI's vSwitch lacks goes to a new ENI on the next vSwitch of the spec",
      spec: aSpec({ eni: { ...aSpec().eni, vSwitchOptions: ['vsw-a', 'vsw-b'] } }),
      enis: enisOf(anEni('eni-1', { vSwitch: 'vsw-a', ipv4: [anIp('10.0.0.1', { primary: true, pod: 'ns/x' })] })),
      unsatisfied: pending(9),
      vSwitches: vSwitchesOf(aVSwitch('vsw-a', { availableIpCount: 3 }), aVSwitch('vsw-b')),
      expected: [
        { kind: 'assignIps', eniId: 'eni-1', ipv4Count: 3, ipv6Count: 0 },
        { kind: 'createEni', eniKind: 'secondary', vSwitchId: 'vsw-b', ipv4Count: 10, ipv6Count: 0 },
      ],
    },
    {
      name: 'two ENIs on one vSwitch share what it has left, in allocation order',
      spec: aSpec(),
      enis: enisOf(
        anEni('eni-1', { ipv4: [anIp('10.0.0.1', { primary: true, pod: 'ns/x' })] }),
        anEni('eni-2', { ipv4: [anIp('10.0.1.1', { primary: true, pod: 'ns/y' })] }),
      ),
      unsatisfied: pending(10),
      vSwitches: vSwitchesOf(aVSwitch('vsw-a', { availableIpCount: 6 })),
      expected: [{ kind: 'assignIps', eniId: 'eni-1', ipv4Count: 6, ipv6Count: 0 }],
      unmet: { normal: 4, erdma: 0 },
      problems: ['vSwitchExhausted:eni-2', 'noVSwitchForNewEni:secondary'],
    },
    {
      name: 'dual-stack: the IPv4 count of a pair is capped by the vSwitch, the IPv6 count follows it',
      spec: dualStackSpec(),
      enis: enisOf(
        anEni('eni-1', {
          ipv4: [anIp('10.0.0.1', { primary: true, pod: 'ns/x' })],
          ipv6: [anIp('fd00::1', { pod: 'ns/x' })],
        }),
      ),
      unsatisfied: pending(5, { v6: true }),
      vSwitches: vSwitchesOf(aVSwitch('vsw-a', { availableIpCount: 2 })),
      expected: [{ kind: 'assignIps', eniId: 'eni-1', ipv4Count: 2, ipv6Count: 2 }],
      unmet: { normal: 3, erdma: 0 },
      problems: ['noVSwitchForNewEni:secondary', 'noVSwitchForNewEni:secondary'],
    },
    {
      name: 'ENIs that are not InUse get no new IPs',
      spec: aSpec({ nodeCap: { ...aSpec().nodeCap, adapters: 2 } }),
      enis: enisOf(anEni('eni-1', { status: 'Deleting' })),
      unsatisfied: pending(1),
      expected: [],
      unmet: { normal: 1, erdma: 0 },
    },
    {
      name: 'pods that run with a foreign IP are not demand',
      spec: aSpec(),
      enis: {},
      unsatisfied: pending(2).map((p) => ({ ...p, reason: 'statusIpNotInPool' as const })),
      expected: [],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const plan = planEniAllocations({
        spec: c.spec,
        enis: c.enis,
        unsatisfied: c.unsatisfied,
        vSwitches: c.vSwitches ?? vsw,
        randomValue: 0,
      });
      assert.deepEqual(plan.allocations, c.expected);
      assert.deepEqual(plan.unmetDemand, c.unmet ?? { normal: 0, erdma: 0 });
      assert.deepEqual(
        plan.problems.map((p) => `${p.kind}:${p.kind === 'vSwitchExhausted' ? p.eniId : p.eniKind}`),
        c.problems ?? [],
      );
    });
  }

  it('reports capacity for the SufficientIP condition', () => {
    const full = aSpec({ nodeCap: { ...aSpec().nodeCap, adapters: 2, ipv4PerAdapter: 1 } });
    const busy = enisOf(anEni('eni-1', { ipv4: [anIp('10.0.0.1', { primary: true, pod: 'ns/x' })] }));
    assert.deepEqual(
      planEniAllocations({ spec: full, enis: busy, unsatisfied: [], vSwitches: vsw, randomValue: 0 }).capacity,
      { hasIdleIp: false, hasAllocatableEni: false },
    );
    const idle = enisOf(anEni('eni-1', { ipv4: [anIp('10.0.0.1', { primary: true })] }));
    assert.deepEqual(
      planEniAllocations({ spec: full, enis: idle, unsatisfied: [], vSwitches: vsw, randomValue: 0 }).capacity,
      { hasIdleIp: true, hasAllocatableEni: false },
    );
    assert.deepEqual(
      planEniAllocations({ spec: aSpec(), enis: {}, unsatisfied: [], vSwitches: vsw, randomValue: 0 }).capacity,
      {
        hasIdleIp: false,
        hasAllocatableEni: true,
      },
    );
  });
});
