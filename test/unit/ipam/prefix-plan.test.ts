import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  MAX_PREFIXES_PER_CALL,
  applyEniOutcome,
  foldEniOutcomes,
  freePrefixSlots,
  markPrefixesDeleting,
  mayRemoveEni,
  mergeOpenApiEnis,
  nextFrozenExpiryMs,
  parseRfc3339,
  planGc,
  planPrefixAllocations,
  planPrefixGc,
  prefixCallBatches,
  unfreezeExpiredPrefixes,
} from '../../../src/ipam/index.js';
import type {
  IpPrefixEntry,
  NetworkInterface,
  NetworkInterfaces,
  NodeSpec,
  PrefixPlan,
  VSwitchInfo,
} from '../../../src/ipam/index.js';
import { aCloudEni, aSpec, aVSwitch, anEni, enisOf, v4Range, vSwitchesOf } from './builders.js';

/** A prefix-mode spec; `perAdapter` is `ipv4PerAdapter` (slots per ENI, the primary IP's included). */
function prefixSpec(input: {
  v4Count?: number;
  v6Count?: number;
  perAdapter?: number;
  adapters?: number;
  secondaries?: number;
  stack?: 'v4' | 'dual' | 'v6';
  enabled?: boolean;
}): NodeSpec {
  const base = aSpec();
  const stack = input.stack ?? 'v4';
  return {
    ...base,
    nodeCap: { ...base.nodeCap, adapters: input.adapters ?? 4, ipv4PerAdapter: input.perAdapter ?? 20 },
    eni: {
      ...base.eni,
      enableIPv4: stack !== 'v6',
      enableIPv6: stack !== 'v4',
      enableIPPrefix: input.enabled ?? true,
      ...(input.v4Count === undefined ? {} : { ipv4PrefixCount: input.v4Count }),
      ...(input.v6Count === undefined ? {} : { ipv6PrefixCount: input.v6Count }),
    },
    flavor: [
      { networkInterfaceType: 'Secondary', networkInterfaceTrafficMode: 'Standard', count: input.secondaries ?? 3 },
    ],
  };
}

function prefixes(base: string, count: number, status: IpPrefixEntry['status'] = 'Valid'): IpPrefixEntry[] {
  return Array.from({ length: count }, (_, i) => ({ prefix: `${base}.${i * 16}/28`, status }));
}

/** An InUse ENI with its primary IP, `secondaryIps` more, and the given prefix lists. */
function prefixEni(
  id: string,
  opts: { v4?: IpPrefixEntry[]; v6?: IpPrefixEntry[]; secondaryIps?: number; status?: string } = {},
): NetworkInterface {
  const eni = anEni(id, {
    status: opts.status ?? 'InUse',
    ipv4: v4Range('192.168.0', { count: 1 + (opts.secondaryIps ?? 0) }),
  });
  if (opts.v4 !== undefined) eni.ipv4Prefix = opts.v4;
  if (opts.v6 !== undefined) eni.ipv6Prefix = opts.v6;
  return eni;
}

/** A plan as short strings: `assign eni v4+v6` and `create vsw v4+v6`. */
function summary(plan: PrefixPlan): string[] {
  return plan.allocations.map((allocation) =>
    allocation.kind === 'assignPrefixes'
      ? `assign ${allocation.eniId} ${allocation.ipv4PrefixCount}+${allocation.ipv6PrefixCount}`
      : `create ${allocation.vSwitchId} ${allocation.ipv4PrefixCount ?? 0}+${allocation.ipv6PrefixCount ?? 0}`,
  );
}

/** Cloud calls the plan costs: one per 10 prefixes per family on an assign, create + attach for a new ENI. */
function callCount(plan: PrefixPlan): number {
  return plan.allocations.reduce(
    (sum, allocation) =>
      sum +
      (allocation.kind === 'assignPrefixes'
        ? prefixCallBatches(allocation.ipv4PrefixCount).length + prefixCallBatches(allocation.ipv6PrefixCount).length
        : 2),
    0,
  );
}

const VSW: Record<string, VSwitchInfo> = vSwitchesOf(aVSwitch('vsw-a', { availableIpCount: 4000 }));

describe('planPrefixAllocations', () => {
  const cases: {
    name: string;
    spec: NodeSpec;
    enis: NetworkInterfaces;
    vSwitches?: Record<string, VSwitchInfo>;
    expected: string[];
    unmet?: { ipv4: number; ipv6: number };
    calls?: number;
  }[] = [
    {
      name: 'not in prefix mode: nothing, whatever the counts say',
      spec: prefixSpec({ v4Count: 5, enabled: false }),
      enis: enisOf(prefixEni('eni-1')),
      expected: [],
    },
    {
      name: 'docs: 19 prefixes × 16 on a 20-slot ENI fill it (cap ipv4PerAdapter − 1), in two calls of ≤ 10',
      spec: prefixSpec({ v4Count: 19, perAdapter: 20 }),
      enis: enisOf(prefixEni('eni-1')),
      expected: ['assign eni-1 19+0'],
      calls: 2,
    },
    {
      name: 'acceptance: 20 prefixes on a node without ENIs: two new ENIs created with 10 each (fewest calls)',
      spec: prefixSpec({ v4Count: 20, perAdapter: 20 }),
      enis: {},
      expected: ['create vsw-a 10+0', 'create vsw-a 10+0'],
      calls: 4,
    },
    {
      name: 'existing ENIs are filled before any new ENI: 19 on the first, the rest on a new one',
      spec: prefixSpec({ v4Count: 25, perAdapter: 20 }),
      enis: enisOf(prefixEni('eni-1')),
      expected: ['assign eni-1 19+0', 'create vsw-a 6+0'],
    },
    {
      name: 'spread in allocation order: each InUse ENI up to its free slots',
      spec: prefixSpec({ v4Count: 12, perAdapter: 6 }),
      enis: enisOf(prefixEni('eni-1', { v4: prefixes('10.0.0', 2) }), prefixEni('eni-2'), prefixEni('eni-3')),
      expected: ['assign eni-1 3+0', 'assign eni-2 5+0', 'assign eni-3 2+0'],
    },
    {
      name: 'secondary IPs and Valid, Frozen and Deleting prefixes share the slots; Invalid ones do not hold one',
      spec: prefixSpec({ v4Count: 10, perAdapter: 10 }),
      enis: enisOf(
        prefixEni('eni-1', {
          secondaryIps: 2,
          v4: [
            ...prefixes('10.0.0', 1),
            ...prefixes('10.0.1', 1, 'Frozen'),
            ...prefixes('10.0.2', 1, 'Deleting'),
            ...prefixes('10.0.3', 1, 'Invalid'),
          ],
        }),
      ),
      // 10 slots − 3 addresses − 3 occupying prefixes = 4 free; the Valid and the Frozen one count toward the 10.
      expected: ['assign eni-1 4+0', 'create vsw-a 4+0'],
    },
    {
      name: 'the node total is met: nothing to do',
      spec: prefixSpec({ v4Count: 3 }),
      enis: enisOf(prefixEni('eni-1', { v4: prefixes('10.0.0', 3) })),
      expected: [],
    },
    {
      name: 'a surplus is left alone: the controller never removes prefixes itself',
      spec: prefixSpec({ v4Count: 1 }),
      enis: enisOf(prefixEni('eni-1', { v4: prefixes('10.0.0', 5) })),
      expected: [],
    },
    {
      name: 'a Frozen prefix counts toward the total (Terway counts Valid + Frozen): nothing is added for it',
      spec: prefixSpec({ v4Count: 2 }),
      enis: enisOf(prefixEni('eni-1', { v4: [...prefixes('10.0.0', 1), ...prefixes('10.0.1', 1, 'Frozen')] })),
      expected: [],
    },
    {
      name: 'issue 28: target 4, the daemon marks 1 Deleting and 2 Frozen: 1 is added (Terway ends with 4, not 6)',
      spec: prefixSpec({ v4Count: 4 }),
      enis: enisOf(
        prefixEni('eni-1', {
          v4: [...prefixes('10.0.0', 1), ...prefixes('10.0.1', 1, 'Deleting'), ...prefixes('10.0.2', 2, 'Frozen')],
        }),
      ),
      expected: ['assign eni-1 1+0'],
    },
    {
      name: 'Frozen prefixes alone meet the total; Deleting and Invalid ones do not count',
      spec: prefixSpec({ v4Count: 3 }),
      enis: enisOf(
        prefixEni('eni-1', {
          v4: [
            ...prefixes('10.0.0', 2, 'Frozen'),
            ...prefixes('10.0.1', 2, 'Deleting'),
            ...prefixes('10.0.2', 2, 'Invalid'),
          ],
        }),
        prefixEni('eni-2', { v4: prefixes('10.0.3', 1, 'Frozen') }),
      ),
      expected: [],
    },
    {
      name: 'Frozen prefixes spread over ENIs count, and those of an ENI still Attaching too',
      spec: prefixSpec({ v4Count: 6 }),
      enis: enisOf(
        prefixEni('eni-1', { v4: [...prefixes('10.0.0', 1, 'Frozen'), ...prefixes('10.0.1', 1, 'Deleting')] }),
        prefixEni('eni-2', { v4: prefixes('10.0.2', 2, 'Frozen'), status: 'Attaching' }),
        prefixEni('eni-3', { v4: prefixes('10.0.3', 1) }),
      ),
      expected: ['assign eni-1 2+0'],
    },
    {
      name: 'the Frozen prefixes of an unschedulable ENI do not count',
      spec: prefixSpec({ v4Count: 2 }),
      enis: enisOf(
        { ...prefixEni('eni-1', { v4: prefixes('10.0.0', 2, 'Frozen') }), unschedulable: true },
        prefixEni('eni-2'),
      ),
      expected: ['assign eni-2 2+0'],
    },
    {
      name: 'dual-stack: an ENI holding only Frozen IPv4 prefixes gets its IPv6 prefix; a Frozen IPv6 one suffices',
      spec: prefixSpec({ v4Count: 2, stack: 'dual' }),
      enis: enisOf(
        prefixEni('eni-1', { v4: prefixes('10.0.0', 1, 'Frozen') }),
        prefixEni('eni-2', {
          v4: prefixes('10.0.1', 1, 'Frozen'),
          v6: [{ prefix: 'fd00:0:0:2::/80', status: 'Frozen' }],
        }),
      ),
      expected: ['assign eni-1 0+1'],
    },
    {
      name: 'dual-stack: exactly one IPv6 prefix on each ENI holding or getting IPv4 prefixes',
      spec: prefixSpec({ v4Count: 4, perAdapter: 4, stack: 'dual' }),
      enis: enisOf(
        prefixEni('eni-1', { v4: prefixes('10.0.0', 1), v6: [{ prefix: 'fd00:0:0:1::/80', status: 'Valid' }] }),
        prefixEni('eni-2'),
        prefixEni('eni-3'),
      ),
      expected: ['assign eni-1 2+0', 'assign eni-2 1+1'],
    },
    {
      name: 'dual-stack: an ENI with IPv4 prefixes but none of IPv6 gets one even when the IPv4 total is met',
      spec: prefixSpec({ v4Count: 1, stack: 'dual' }),
      enis: enisOf(prefixEni('eni-1', { v4: prefixes('10.0.0', 1) }), prefixEni('eni-2')),
      expected: ['assign eni-1 0+1'],
    },
    {
      name: 'dual-stack: a new ENI is created with its IPv4 prefixes and one IPv6 prefix',
      spec: prefixSpec({ v4Count: 3, stack: 'dual' }),
      enis: {},
      expected: ['create vsw-a 3+1'],
    },
    {
      name: 'IPv6-only: ipv6PrefixCount 1 puts one /80 on the first InUse ENI',
      spec: prefixSpec({ v6Count: 1, stack: 'v6' }),
      enis: enisOf(prefixEni('eni-1'), prefixEni('eni-2')),
      expected: ['assign eni-1 0+1'],
    },
    {
      name: 'IPv6-only: a node without ENIs creates one with its /80',
      spec: prefixSpec({ v6Count: 1, stack: 'v6' }),
      enis: {},
      expected: ['create vsw-a 0+1'],
    },
    {
      name: 'IPv6-only: ipv6PrefixCount 0 asks for nothing',
      spec: prefixSpec({ v6Count: 0, stack: 'v6' }),
      enis: enisOf(prefixEni('eni-1')),
      expected: [],
    },
    {
      name: 'new ENIs stay within the flavor: what does not fit is unmet',
      spec: prefixSpec({ v4Count: 40, perAdapter: 20, secondaries: 2 }),
      enis: {},
      expected: ['create vsw-a 10+0', 'create vsw-a 10+0'],
      unmet: { ipv4: 20, ipv6: 0 },
    },
    {
      name: 'new ENIs stay within the adapters (the primary ENI takes one)',
      spec: prefixSpec({ v4Count: 30, perAdapter: 20, adapters: 2 }),
      enis: {},
      expected: ['create vsw-a 10+0'],
      unmet: { ipv4: 20, ipv6: 0 },
    },
    {
      name: 'a new ENI takes at most ipv4PerAdapter − 1 prefixes',
      spec: prefixSpec({ v4Count: 8, perAdapter: 5 }),
      enis: {},
      expected: ['create vsw-a 4+0', 'create vsw-a 4+0'],
    },
    {
      name: 'unschedulable, ERDMA and non-InUse ENIs get no prefixes and their Valid ones count only when on the way in',
      spec: prefixSpec({ v4Count: 6 }),
      enis: enisOf(
        { ...prefixEni('eni-1', { v4: prefixes('10.0.0', 2) }), unschedulable: true },
        { ...prefixEni('eni-2'), networkInterfaceTrafficMode: 'HighPerformance' },
        prefixEni('eni-3', { v4: prefixes('10.0.1', 2), status: 'Attaching' }),
        prefixEni('eni-4', { v4: prefixes('10.0.2', 1), status: 'Deleting' }),
        prefixEni('eni-5'),
      ),
      expected: ['assign eni-5 4+0'],
    },
    {
      name: 'a vSwitch without room for a /28 gets no prefix and is reported',
      spec: prefixSpec({ v4Count: 2 }),
      enis: enisOf(prefixEni('eni-1')),
      vSwitches: vSwitchesOf(aVSwitch('vsw-a', { availableIpCount: 15 })),
      expected: [],
      unmet: { ipv4: 2, ipv6: 0 },
    },
    {
      name: 'the vSwitch limits prefixes to its free addresses / 16',
      spec: prefixSpec({ v4Count: 5 }),
      enis: enisOf(prefixEni('eni-1')),
      vSwitches: vSwitchesOf(aVSwitch('vsw-a', { availableIpCount: 40 })),
      expected: ['assign eni-1 2+0'],
      unmet: { ipv4: 3, ipv6: 0 },
    },
  ];
  for (const row of cases) {
    void it(row.name, () => {
      const plan = planPrefixAllocations({
        spec: row.spec,
        enis: row.enis,
        vSwitches: row.vSwitches ?? VSW,
        randomValue: 0,
      });
      assert.deepEqual(summary(plan), row.expected);
      if (row.unmet !== undefined) assert.deepEqual(plan.unmet, row.unmet);
      if (row.calls !== undefined) assert.equal(callCount(plan), row.calls);
      for (const allocation of plan.allocations) {
        if (allocation.kind !== 'createEni') continue;
        assert.ok((allocation.ipv4PrefixCount ?? 0) <= MAX_PREFIXES_PER_CALL);
        // ECS takes secondary addresses or prefixes in one create, never both.
        assert.equal(allocation.ipv4Count, 1);
        assert.equal(allocation.ipv6Count, 0);
      }
    });
  }

  void it('reports the exhausted vSwitch of an ENI it could not grow', () => {
    const plan = planPrefixAllocations({
      spec: prefixSpec({ v4Count: 2 }),
      enis: enisOf(prefixEni('eni-1')),
      vSwitches: vSwitchesOf(aVSwitch('vsw-a', { availableIpCount: 3 })),
      randomValue: 0,
    });
    assert.deepEqual(plan.problems, [{ kind: 'vSwitchExhausted', eniId: 'eni-1', vSwitchId: 'vsw-a' }]);
  });

  void it('once the plan is carried out, the next plan asks for nothing (no pass repeats work)', () => {
    const spec = prefixSpec({ v4Count: 25, perAdapter: 20, stack: 'dual' });
    let enis: NetworkInterfaces = enisOf(prefixEni('eni-1'));
    const plan = planPrefixAllocations({ spec, enis, vSwitches: VSW, randomValue: 0 });
    let next = 0;
    const fresh = (n: number, v6 = false) =>
      Array.from({ length: n }, () => (v6 ? `fd00:0:0:${++next}::/80` : `10.9.${++next}.0/28`));
    for (const allocation of plan.allocations) {
      if (allocation.kind === 'assignPrefixes') {
        enis = foldEniOutcomes(enis, [
          {
            kind: 'prefixesAssigned',
            eniId: allocation.eniId,
            family: 'ipv4',
            prefixes: fresh(allocation.ipv4PrefixCount),
          },
          {
            kind: 'prefixesAssigned',
            eniId: allocation.eniId,
            family: 'ipv6',
            prefixes: fresh(allocation.ipv6PrefixCount, true),
          },
        ]);
      } else {
        enis = applyEniOutcome(enis, {
          kind: 'eniCreated',
          cloud: aCloudEni(`eni-new-${++next}`, {
            ipv4: [{ ip: '192.168.9.1', primary: true }],
            ipv6: [],
            ipv4Prefixes: fresh(allocation.ipv4PrefixCount ?? 0),
            ipv6Prefixes: fresh(allocation.ipv6PrefixCount ?? 0, true),
          }),
        });
      }
    }
    const again = planPrefixAllocations({ spec, enis, vSwitches: VSW, randomValue: 0 });
    assert.deepEqual(again.allocations, []);
    assert.equal(again.have.ipv4, 25);
  });
});

describe('prefixCallBatches and freePrefixSlots', () => {
  void it('splits into calls of at most ten', () => {
    assert.deepEqual(prefixCallBatches(0), []);
    assert.deepEqual(prefixCallBatches(10), [10]);
    assert.deepEqual(prefixCallBatches(19), [10, 9]);
    assert.deepEqual(prefixCallBatches(25), [10, 10, 5]);
  });
  void it('counts the primary address even when the CR lists no IPv4 (IPv6-only node)', () => {
    assert.equal(freePrefixSlots({ id: 'eni-1', status: 'InUse' }, 20), 19);
    assert.equal(freePrefixSlots(prefixEni('eni-1', { v4: prefixes('10.0.0', 25) }), 20), 0);
  });
});

describe('unfreezeExpiredPrefixes', () => {
  const now = parseRfc3339('2026-01-01T12:00:00Z') ?? 0;
  const enis = enisOf(
    prefixEni('eni-1', {
      v4: [
        { prefix: '10.0.0.0/28', status: 'Frozen', frozenExpireAt: '2026-01-01T11:00:00Z' },
        { prefix: '10.0.0.16/28', status: 'Frozen', frozenExpireAt: '2026-01-01T13:00:00Z' },
        { prefix: '10.0.0.32/28', status: 'Frozen' },
        { prefix: '10.0.0.48/28', status: 'Valid', frozenExpireAt: '2026-01-01T11:00:00Z' },
        { prefix: '10.0.0.64/28', status: 'Frozen', frozenExpireAt: '2026-01-01T12:00:00Z' },
      ],
      v6: [{ prefix: 'fd00::/80', status: 'Frozen', frozenExpireAt: '2026-01-01T00:00:00Z' }],
    }),
  );
  void it('returns expired Frozen prefixes to Valid without expiry; others stay as they are', () => {
    const result = unfreezeExpiredPrefixes({ enis, nowMs: now });
    assert.deepEqual(result.enis['eni-1']?.ipv4Prefix, [
      { prefix: '10.0.0.0/28', status: 'Valid' },
      { prefix: '10.0.0.16/28', status: 'Frozen', frozenExpireAt: '2026-01-01T13:00:00Z' },
      { prefix: '10.0.0.32/28', status: 'Frozen' },
      { prefix: '10.0.0.48/28', status: 'Valid', frozenExpireAt: '2026-01-01T11:00:00Z' },
      { prefix: '10.0.0.64/28', status: 'Valid' },
    ]);
    assert.deepEqual(result.enis['eni-1']?.ipv6Prefix, [{ prefix: 'fd00::/80', status: 'Valid' }]);
    assert.deepEqual(
      result.unfrozen.map((entry) => entry.prefix),
      ['10.0.0.0/28', '10.0.0.64/28', 'fd00::/80'],
    );
    assert.equal(enis['eni-1']?.ipv4Prefix?.[0]?.status, 'Frozen', 'input untouched');
  });
  void it('knows the next expiry, and none once everything expired', () => {
    assert.equal(nextFrozenExpiryMs(enis), parseRfc3339('2026-01-01T00:00:00Z'));
    const later = unfreezeExpiredPrefixes({ enis, nowMs: now + 2 * 3600_000 }).enis;
    assert.equal(nextFrozenExpiryMs(later), undefined);
  });
});

describe('prefix GC', () => {
  void it('unassigns Deleting prefixes ten per call on InUse schedulable ENIs only, IPv4 first', () => {
    const enis = enisOf(
      prefixEni('eni-1', {
        v4: [...prefixes('10.0.0', 12, 'Deleting'), ...prefixes('10.0.1', 1)],
        v6: [{ prefix: 'fd00::/80', status: 'Deleting' }],
      }),
      { ...prefixEni('eni-2', { v4: prefixes('10.0.2', 1, 'Deleting') }), unschedulable: true },
      prefixEni('eni-3', { v4: prefixes('10.0.3', 1, 'Deleting'), status: 'Attaching' }),
    );
    const actions = planPrefixGc({ enis });
    assert.deepEqual(
      actions.map((action) => `${action.eniId} ${action.family} ${action.prefixes.length}`),
      ['eni-1 ipv4 10', 'eni-1 ipv4 2', 'eni-1 ipv6 1'],
    );
    assert.ok(actions.every((action) => action.prefixes.every((prefix) => !prefix.startsWith('10.0.1.'))));
  });
  void it('a released prefix leaves the CR; the Valid ones stay', () => {
    const enis = enisOf(prefixEni('eni-1', { v4: [...prefixes('10.0.0', 1, 'Deleting'), ...prefixes('10.0.1', 1)] }));
    const after = foldEniOutcomes(enis, [
      { kind: 'prefixesReleased', eniId: 'eni-1', family: 'ipv4', prefixes: ['10.0.0.0/28'] },
    ]);
    assert.deepEqual(after['eni-1']?.ipv4Prefix, [{ prefix: '10.0.1.0/28', status: 'Valid' }]);
  });
  void it('an ENI holding Valid or Frozen prefixes is never removed; one with only Deleting/Invalid ones may be', () => {
    for (const status of ['Valid', 'Frozen'] as const) {
      const eni = { ...prefixEni('eni-1', { v4: prefixes('10.0.0', 1, status) }), status: 'Deleting' };
      assert.equal(mayRemoveEni(eni), false, status);
      assert.deepEqual(planGc({ enis: enisOf(eni) }), [], status);
    }
    const done = { ...prefixEni('eni-1', { v4: [...prefixes('10.0.0', 1, 'Invalid')] }), status: 'Deleting' };
    assert.equal(mayRemoveEni(done), true);
  });
  void it('a node going away marks its prefixes Deleting, so its ENIs may be removed', () => {
    const enis = enisOf(prefixEni('eni-1', { v4: prefixes('10.0.0', 2, 'Frozen'), v6: prefixes('10.0.1', 1) }));
    const marked = markPrefixesDeleting({ enis, eniId: 'eni-1' });
    assert.deepEqual(
      [...(marked['eni-1']?.ipv4Prefix ?? []), ...(marked['eni-1']?.ipv6Prefix ?? [])].map((entry) => entry.status),
      ['Deleting', 'Deleting', 'Deleting'],
    );
    assert.equal(mayRemoveEni({ ...(marked['eni-1'] ?? prefixEni('x')), status: 'Deleting' }), true);
  });
});

describe('prefixes from the cloud (OpenAPI sync)', () => {
  void it('follows Terway: new ones Valid, known ones kept, missing ones Invalid, missing Deleting ones dropped', () => {
    const current = enisOf(
      prefixEni('eni-1', {
        v4: [
          { prefix: '10.0.0.0/28', status: 'Valid' },
          { prefix: '10.0.0.16/28', status: 'Frozen', frozenExpireAt: '2026-01-01T00:00:00Z' },
          { prefix: '10.0.0.32/28', status: 'Deleting' },
          { prefix: '10.0.0.48/28', status: 'Invalid' },
          { prefix: '10.0.0.64/28', status: 'Frozen', frozenExpireAt: '2026-01-01T00:00:00Z' },
        ],
      }),
    );
    const result = mergeOpenApiEnis({
      current,
      remote: [
        aCloudEni('eni-1', { ipv4Prefixes: ['10.0.0.0/28', '10.0.0.16/28', '10.0.0.48/28', '10.0.0.80/28'] }),
        aCloudEni('eni-2', { ipv4Prefixes: ['10.0.1.0/28'], ipv6Prefixes: ['fd00::/80'] }),
      ],
      vSwitchCidrs: {},
      eniSpec: { enableIPv4: true, enableIPPrefix: true },
    });
    assert.deepEqual(result.enis['eni-1']?.ipv4Prefix, [
      { prefix: '10.0.0.0/28', status: 'Valid' },
      { prefix: '10.0.0.16/28', status: 'Frozen', frozenExpireAt: '2026-01-01T00:00:00Z' },
      { prefix: '10.0.0.48/28', status: 'Invalid' },
      { prefix: '10.0.0.64/28', status: 'Invalid', frozenExpireAt: '2026-01-01T00:00:00Z' },
      { prefix: '10.0.0.80/28', status: 'Valid' },
    ]);
    assert.deepEqual(result.enis['eni-2']?.ipv4Prefix, [{ prefix: '10.0.1.0/28', status: 'Valid' }]);
    assert.deepEqual(result.enis['eni-2']?.ipv6Prefix, [{ prefix: 'fd00::/80', status: 'Valid' }]);
    assert.equal(result.enis['eni-1']?.ipv6Prefix, undefined, 'a family with no prefixes stays absent');
  });
  void it('outside prefix mode a known ENI keeps its prefix lists as the CR has them', () => {
    const v4 = [{ prefix: '10.0.0.16/28', status: 'Frozen' as const, frozenExpireAt: '2026-01-01T00:00:00Z' }];
    const result = mergeOpenApiEnis({
      current: enisOf(prefixEni('eni-1', { v4 })),
      remote: [aCloudEni('eni-1')],
      vSwitchCidrs: {},
      eniSpec: { enableIPv4: true },
    });
    assert.deepEqual(result.enis['eni-1']?.ipv4Prefix, v4);
  });
});
