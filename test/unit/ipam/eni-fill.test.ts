/**
 * One create per ENI that is needed (issue 29, point 3): every ENI is taken to its quota before another is opened,
 * a node's first ENI for waiting pods takes its whole quota and a later create carries up to maxPoolSize idle (the
 * pods arriving next need no assign call), and what a create cannot carry is assigned to that ENI once it is attached. Table rows, then a few passes carried out on paper (`carryOutAllocations`) with the pods that wait.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { assignCalls, assignIpsFromLocalPool, fillAfterAttach, planEniAllocations } from '../../../src/ipam/index.js';
import type {
  EniAllocation,
  EniAllocationPlan,
  NetworkInterfaces,
  NodeSpec,
  PodIpRequest,
  VSwitchInfo,
} from '../../../src/ipam/index.js';
import { aRequest, aSpec, aVSwitch, anEni, carryOutAllocations, enisOf, v4Range, vSwitchesOf } from './builders.js';

/** ecs.g8ae.2xlarge-like: 4 adapters (3 secondary ENIs), 15 addresses per ENI. */
const spec15 = (overrides: Partial<NodeSpec> = {}): NodeSpec =>
  aSpec({ nodeCap: { ...aSpec().nodeCap, ipv4PerAdapter: 15, ipv6PerAdapter: 15 }, ...overrides });
const dualStack15 = (): NodeSpec => {
  const base = spec15();
  return { ...base, eni: { ...base.eni, enableIPv6: true } };
};

function pods(count: number, opts: { from?: number; v6?: boolean } = {}): PodIpRequest[] {
  return Array.from({ length: count }, (_, i) =>
    aRequest(`ns/p${String((opts.from ?? 0) + i).padStart(3, '0')}`, { requireIpv6: opts.v6 ?? false }),
  );
}

const create = (ipv4Count: number, extra: Partial<EniAllocation> = {}): EniAllocation =>
  ({ kind: 'createEni', eniKind: 'secondary', vSwitchId: 'vsw-a', ipv4Count, ipv6Count: 0, ...extra }) as EniAllocation;

/** One pass on paper: serve from the pool, plan for the rest, carry the plan out, serve again. */
function pass(input: {
  spec: NodeSpec;
  enis: NetworkInterfaces;
  requests: PodIpRequest[];
  vSwitches?: Record<string, VSwitchInfo>;
  warmUpDemand?: number;
}): { plan: EniAllocationPlan; enis: NetworkInterfaces; waiting: number } {
  const primaryFamily = 'ipv4';
  const local = assignIpsFromLocalPool({ enis: input.enis, requests: input.requests, primaryFamily });
  const vSwitches = input.vSwitches ?? vSwitchesOf(aVSwitch('vsw-a'));
  const plan = planEniAllocations({
    spec: input.spec,
    enis: local.enis,
    unsatisfied: local.unsatisfied,
    vSwitches,
    randomValue: 0,
    ...(input.warmUpDemand === undefined ? {} : { warmUpDemand: input.warmUpDemand }),
  });
  const grown = carryOutAllocations({ enis: local.enis, allocations: plan.allocations, vSwitches });
  const served = assignIpsFromLocalPool({ enis: grown, requests: input.requests, primaryFamily });
  return { plan, enis: served.enis, waiting: served.unsatisfied.length };
}

const creates = (plan: EniAllocationPlan): number => plan.allocations.filter((a) => a.kind === 'createEni').length;
const addresses = (enis: NetworkInterfaces): number =>
  Object.values(enis).reduce((sum, eni) => sum + Object.keys(eni.ipv4 ?? {}).length, 0);
const idle = (enis: NetworkInterfaces): number =>
  Object.values(enis).reduce((sum, eni) => sum + Object.values(eni.ipv4 ?? {}).filter((e) => !e.podID).length, 0);

describe('one create per ENI that is needed', () => {
  const rows: {
    name: string;
    spec: NodeSpec;
    enis?: NetworkInterfaces;
    requests: PodIpRequest[];
    vSwitches?: Record<string, VSwitchInfo>;
    warmUpDemand?: number;
    expected: EniAllocation[];
    unmet?: number;
  }[] = [
    {
      name: '27 pods on a cold node of 15-address ENIs: 2 creates (15 + 12 and 3 idle, within maxPoolSize 5)',
      spec: spec15(),
      requests: pods(27),
      expected: [create(15), create(15)],
    },
    {
      name: '20 pods on a cold node of 10-address ENIs: 2 creates of 10',
      spec: aSpec(),
      requests: pods(20),
      expected: [create(10), create(10)],
    },
    {
      name: 'an ENI with room is filled to its quota before a new one opens',
      spec: spec15(),
      enis: enisOf(
        anEni('eni-1', { ipv4: v4Range('10.0.0', { count: 3 }).map((ip, i) => ({ ...ip, podID: `ns/x${i}` })) }),
      ),
      requests: pods(20),
      expected: [{ kind: 'assignIps', eniId: 'eni-1', ipv4Count: 12, ipv6Count: 0 }, create(13)],
    },
    {
      name: 'pods + minPoolSize + idle up to maxPoolSize: 27 pods, pool 2–5: 29 addresses asked for, 30 carried',
      spec: spec15({ pool: { minPoolSize: 2, maxPoolSize: 5 } }),
      requests: pods(27),
      expected: [create(15), create(15)],
    },
    {
      name: 'warm-up and waiting pods are not added: warm-up 20 with 5 pods waiting asks for 20',
      spec: spec15(),
      requests: pods(5),
      warmUpDemand: 20,
      expected: [create(15), create(5)],
    },
    {
      name: 'vSwitch runs out part-way: what it has left goes to the next ENI, the rest is unmet',
      spec: spec15(),
      requests: pods(27),
      vSwitches: vSwitchesOf(aVSwitch('vsw-a', { availableIpCount: 20 })),
      expected: [create(15), create(5)],
      unmet: 7,
    },
    {
      name: 'vSwitch runs out part-way, a second vSwitch of the spec takes the next ENI whole',
      spec: spec15({ eni: { ...spec15().eni, vSwitchOptions: ['vsw-a', 'vsw-b'] } }),
      requests: pods(27),
      vSwitches: vSwitchesOf(aVSwitch('vsw-a', { availableIpCount: 9 }), aVSwitch('vsw-b')),
      expected: [create(9), create(15, { vSwitchId: 'vsw-b' }), create(8, { vSwitchId: 'vsw-b' })],
    },
    {
      name: 'dual-stack: a create carries at most 10 IPv6; the pair count is filled once attached',
      spec: dualStack15(),
      requests: pods(15, { v6: true }),
      expected: [create(15, { ipv6Count: 10, fillTo: { ipv4Count: 15, ipv6Count: 15 } })],
    },
    {
      name: 'a create carries at most 49 secondary IPv4; the rest of a larger quota is filled once attached',
      spec: aSpec({ nodeCap: { ...aSpec().nodeCap, ipv4PerAdapter: 60 } }),
      requests: pods(55),
      expected: [create(50, { fillTo: { ipv4Count: 60, ipv6Count: 0 } })],
    },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const local = assignIpsFromLocalPool({ enis: row.enis ?? {}, requests: row.requests, primaryFamily: 'ipv4' });
      const plan = planEniAllocations({
        spec: row.spec,
        enis: local.enis,
        unsatisfied: local.unsatisfied,
        vSwitches: row.vSwitches ?? vSwitchesOf(aVSwitch('vsw-a')),
        randomValue: 0,
        ...(row.warmUpDemand === undefined ? {} : { warmUpDemand: row.warmUpDemand }),
      });
      assert.deepEqual(plan.allocations, row.expected);
      assert.equal(plan.unmetDemand.normal, row.unmet ?? 0);
    });
  }

  it('carried out, the 27 pods are all served by 2 ENIs, and the next pass asks for nothing', () => {
    const first = pass({ spec: spec15(), enis: {}, requests: pods(27) });
    assert.equal(creates(first.plan), 2);
    assert.equal(first.waiting, 0);
    assert.equal(Object.keys(first.enis).length, 2);
    const second = pass({ spec: spec15(), enis: first.enis, requests: pods(27) });
    assert.deepEqual(second.plan.allocations, []);
  });

  it('pods arriving in waves (10, then 17) open 2 ENIs in all and make no assign: the first ENI took its quota', () => {
    const first = pass({ spec: spec15(), enis: {}, requests: pods(10) });
    assert.deepEqual(first.plan.allocations, [create(15)]);
    const second = pass({ spec: spec15(), enis: first.enis, requests: pods(27) });
    assert.deepEqual(second.plan.allocations, [create(15)]);
    assert.equal(second.waiting, 0);
    assert.equal(idle(second.enis), 3);
  });

  it('the cold 40 × 20 node (pool 0–5): 5 pods, then 20: 2 creates, no assign, 5 idle at the end', () => {
    const first = pass({ spec: spec15(), enis: {}, requests: pods(5) });
    assert.deepEqual(first.plan.allocations, [create(15)]);
    const second = pass({ spec: spec15(), enis: first.enis, requests: pods(20) });
    // 10 of the 15 served from the first ENI's idle addresses, 5 and maxPoolSize idle on the new one.
    assert.deepEqual(second.plan.allocations, [create(10)]);
    assert.equal(second.waiting, 0);
    assert.equal(idle(second.enis), 5);
    const third = pass({ spec: spec15(), enis: second.enis, requests: pods(20) });
    assert.deepEqual(third.plan.allocations, []);
  });

  it('a node with an ENI already: a create carries the pods and up to maxPoolSize idle, never more', () => {
    const full = anEni('eni-1', {
      ipv4: v4Range('10.0.0', { count: 15 }).map((ip, i) => ({ ...ip, podID: `ns/x${String(i)}` })),
    });
    const spec = spec15({ pool: { minPoolSize: 0, maxPoolSize: 4 } });
    assert.deepEqual(pass({ spec, enis: enisOf(full), requests: pods(3) }).plan.allocations, [create(7)]);
    assert.deepEqual(pass({ spec, enis: enisOf(full), requests: pods(13) }).plan.allocations, [create(15)]);
    const noIdle = spec15({ pool: { minPoolSize: 0, maxPoolSize: 0 } });
    assert.deepEqual(pass({ spec: noIdle, enis: enisOf(full), requests: pods(3) }).plan.allocations, [create(3)]);
  });

  it('an assign for waiting pods carries idle up to maxPoolSize only as far as it adds no call', () => {
    const oneUsed = enisOf(anEni('eni-1', { ipv4: [{ ...v4Range('10.0.0', { count: 1 })[0]!, podID: 'ns/x' }] }));
    const spec = spec15();
    const assign = (ipv4Count: number) => [{ kind: 'assignIps', eniId: 'eni-1', ipv4Count, ipv6Count: 0 }];
    // 3 pods: one call of 3 + 5 idle.
    assert.deepEqual(pass({ spec, enis: oneUsed, requests: pods(3) }).plan.allocations, assign(8));
    // 9 pods: one call; only 1 more fits in it.
    assert.deepEqual(pass({ spec, enis: oneUsed, requests: pods(9) }).plan.allocations, assign(10));
    // 10 pods: a full call; an idle address more would take a second call.
    assert.deepEqual(pass({ spec, enis: oneUsed, requests: pods(10) }).plan.allocations, assign(10));
    // 12 pods: two calls (10 + 2); up to the quota (14 secondary) in the second.
    assert.deepEqual(pass({ spec, enis: oneUsed, requests: pods(12) }).plan.allocations, assign(14));
    // No pod waiting: a minPoolSize top-up is exactly that.
    const topUp = spec15({ pool: { minPoolSize: 2, maxPoolSize: 5 } });
    assert.deepEqual(pass({ spec: topUp, enis: oneUsed, requests: [] }).plan.allocations, assign(2));
  });

  it('no pod waiting (a minPoolSize top-up): the create carries exactly the top-up', () => {
    const spec = spec15({ pool: { minPoolSize: 2, maxPoolSize: 5 } });
    assert.deepEqual(pass({ spec, enis: {}, requests: [] }).plan.allocations, [create(2)]);
  });

  it('the maximum pool is respected: what is left idle is minPoolSize, never more than maxPoolSize', () => {
    const spec = spec15({ pool: { minPoolSize: 3, maxPoolSize: 4 } });
    const done = pass({ spec, enis: {}, requests: pods(27) });
    assert.equal(done.waiting, 0);
    assert.equal(addresses(done.enis), 30);
    assert.equal(idle(done.enis), 3);
  });

  it('dual-stack: carried out with the fill after attach, 15 pods get their pairs from one ENI', () => {
    const done = pass({ spec: dualStack15(), enis: {}, requests: pods(15, { v6: true }) });
    assert.equal(creates(done.plan), 1);
    assert.equal(done.waiting, 0);
  });
});

describe('assignCalls', () => {
  it('splits an assign into calls of at most ten, IPv4 and IPv6 in turn', () => {
    assert.deepEqual(assignCalls({ ipv4Count: 25, ipv6Count: 12 }), [
      { family: 'ipv4', count: 10 },
      { family: 'ipv6', count: 10 },
      { family: 'ipv4', count: 10 },
      { family: 'ipv6', count: 2 },
      { family: 'ipv4', count: 5 },
    ]);
    assert.deepEqual(assignCalls({ ipv4Count: 3, ipv6Count: 0 }), [{ family: 'ipv4', count: 3 }]);
    assert.deepEqual(assignCalls({ ipv4Count: 0, ipv6Count: 0 }), []);
  });
});

describe('fillAfterAttach', () => {
  const planned = create(15, { ipv6Count: 10, fillTo: { ipv4Count: 15, ipv6Count: 15 } });
  const rows: { name: string; planned: EniAllocation; has: { ipv4: number; ipv6: number }; expected: object }[] = [
    { name: 'a fresh create: the part it could not carry', planned, has: { ipv4: 15, ipv6: 10 }, expected: [0, 5] },
    {
      name: 'an older create standing for it (an intent of 10): the rest of the plan',
      planned,
      has: { ipv4: 10, ipv6: 10 },
      expected: [5, 5],
    },
    {
      name: 'a create without fillTo needs nothing more',
      planned: create(7),
      has: { ipv4: 7, ipv6: 0 },
      expected: [0, 0],
    },
    {
      name: 'an ENI awaiting attach that holds more than planned gets nothing',
      planned: create(3),
      has: { ipv4: 10, ipv6: 0 },
      expected: [0, 0],
    },
  ];
  for (const row of rows) {
    it(row.name, () => {
      if (row.planned.kind !== 'createEni') throw new Error('a create row');
      const fill = fillAfterAttach(row.planned, row.has);
      assert.deepEqual([fill.ipv4Count, fill.ipv6Count], row.expected);
    });
  }
});
