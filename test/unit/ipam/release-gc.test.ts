import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  countAvailable,
  countIdleIps,
  ipEntries,
  isAvailable,
  planGc,
  planPoolRelease,
  unorderedIpEntries,
} from '../../../src/ipam/index.js';
import type { GcAction, NetworkInterfaces, NodeSpec } from '../../../src/ipam/index.js';
import { aSpec, anEni, anIp, dualStackSpec, enisOf, v4Range, v6Range } from './builders.js';

function deletingMarks(enis: NetworkInterfaces): string[] {
  const marks: string[] = [];
  for (const id of Object.keys(enis).sort()) {
    const eni = enis[id];
    if (eni === undefined) continue;
    if (eni.status === 'Deleting') marks.push(`eni:${id}`);
    for (const family of ['ipv4', 'ipv6'] as const) {
      for (const entry of Object.values(eni[family] ?? {}))
        if (entry.status === 'Deleting') marks.push(`${id}/${entry.ip}`);
    }
  }
  return marks.sort();
}

describe('planPoolRelease', () => {
  const cases: { name: string; spec: NodeSpec; enis: NetworkInterfaces; expectedMarks: string[]; idleAfter: number }[] =
    [
      {
        name: 'idle IPs within maxPoolSize are kept',
        spec: aSpec({ pool: { minPoolSize: 0, maxPoolSize: 5 } }),
        enis: enisOf(anEni('eni-1', { ipv4: v4Range('10.0.0', { count: 5 }) })),
        expectedMarks: [],
        idleAfter: 5,
      },
      {
        name: 'the surplus above maxPoolSize is released, highest address first, never the primary',
        spec: aSpec({ pool: { minPoolSize: 0, maxPoolSize: 2 } }),
        enis: enisOf(
          anEni('eni-1', { ipv4: [...v4Range('10.0.0', { count: 5 }), anIp('10.0.0.99', { pod: 'ns/a' })] }),
        ),
        expectedMarks: ['eni-1/10.0.0.12', 'eni-1/10.0.0.13', 'eni-1/10.0.0.14'],
        idleAfter: 2,
      },
      {
        name: 'a fully idle Secondary ENI no larger than the surplus is deleted whole',
        spec: aSpec({ pool: { minPoolSize: 0, maxPoolSize: 2 } }),
        enis: enisOf(
          anEni('eni-busy', {
            ipv4: [
              ...v4Range('10.0.0', { count: 2 }),
              anIp('10.0.0.50', { pod: 'ns/a' }),
              anIp('10.0.0.51', { pod: 'ns/b' }),
            ],
          }),
          anEni('eni-idle', { ipv4: v4Range('10.0.1', { count: 3 }) }),
        ),
        expectedMarks: ['eni:eni-idle'],
        idleAfter: 2,
      },
      {
        name: 'victims are the ENIs with the fewest IPs; trunk and HighPerformance ENIs come last',
        spec: aSpec({ pool: { minPoolSize: 0, maxPoolSize: 6 } }),
        enis: enisOf(
          anEni('eni-trunk', { type: 'Trunk', ipv4: v4Range('10.0.5', { count: 2 }) }),
          anEni('eni-hp', { mode: 'HighPerformance', ipv4: v4Range('10.0.6', { count: 2 }) }),
          anEni('eni-small', { ipv4: v4Range('10.0.1', { count: 2 }) }),
          anEni('eni-large', { ipv4: [...v4Range('10.0.2', { count: 3 }), anIp('10.0.2.99', { pod: 'ns/a' })] }),
        ),
        expectedMarks: ['eni-large/10.0.2.12', 'eni:eni-small'],
        idleAfter: 6,
      },
      {
        name: 'trunk and HighPerformance ENIs are never deleted whole, only trimmed',
        spec: aSpec({ pool: { minPoolSize: 0, maxPoolSize: 0 } }),
        enis: enisOf(anEni('eni-trunk', { type: 'Trunk', ipv4: v4Range('10.0.5', { count: 3 }) })),
        expectedMarks: ['eni-trunk/10.0.5.11', 'eni-trunk/10.0.5.12'],
        idleAfter: 1,
      },
      {
        name: 'an ENI larger than the surplus is trimmed, not deleted',
        spec: aSpec({ pool: { minPoolSize: 0, maxPoolSize: 3 } }),
        enis: enisOf(anEni('eni-1', { ipv4: v4Range('10.0.0', { count: 5 }) })),
        expectedMarks: ['eni-1/10.0.0.13', 'eni-1/10.0.0.14'],
        idleAfter: 3,
      },
      {
        name: 'dual-stack: both families are trimmed to the same number of idle IPs',
        spec: dualStackSpec({ pool: { minPoolSize: 0, maxPoolSize: 2 } }),
        enis: enisOf(
          anEni('eni-1', {
            ipv4: [...v4Range('10.0.0', { count: 4 }), anIp('10.0.0.99', { pod: 'ns/a' })],
            ipv6: [...v6Range('fd00', { count: 5 }), anIp('fd00::99', { pod: 'ns/a' })],
          }),
        ),
        expectedMarks: ['eni-1/10.0.0.12', 'eni-1/10.0.0.13', 'eni-1/fd00::c', 'eni-1/fd00::d', 'eni-1/fd00::e'],
        idleAfter: 2,
      },
      {
        name: 'only InUse ENIs count as idle and give up IPs',
        spec: aSpec({ pool: { minPoolSize: 0, maxPoolSize: 0 } }),
        enis: enisOf(anEni('eni-1', { status: 'Attaching', ipv4: v4Range('10.0.0', { count: 3 }) })),
        expectedMarks: [],
        idleAfter: 0,
      },
    ];
  for (const c of cases) {
    it(c.name, () => {
      const plan = planPoolRelease({ spec: c.spec, enis: c.enis });
      assert.deepEqual(deletingMarks(plan.enis), c.expectedMarks);
      assert.equal(plan.idleAfter, c.idleAfter);
      assert.equal(plan.idleAfter, countIdleIps({ enis: plan.enis, family: 'ipv4' }));
    });
  }

  it('lists what it marked, per ENI and family', () => {
    const plan = planPoolRelease({
      spec: aSpec({ pool: { minPoolSize: 0, maxPoolSize: 1 } }),
      enis: enisOf(
        anEni('eni-1', { ipv4: [...v4Range('10.0.0', { count: 3 }), anIp('10.0.0.99', { pod: 'ns/a' })] }),
        anEni('eni-2', { ipv4: v4Range('10.0.1', { count: 1 }) }),
      ),
    });
    assert.deepEqual(plan.enisToDelete, ['eni-2']);
    assert.deepEqual(plan.ipsToRelease, [{ eniId: 'eni-1', family: 'ipv4', ips: ['10.0.0.12', '10.0.0.11'] }]);
    assert.equal(plan.idleBefore, 4);
  });
});

describe('planGc', () => {
  const cases: { name: string; enis: NetworkInterfaces; expected: GcAction[] }[] = [
    {
      name: 'Deleting and Detaching ENIs are removed',
      enis: enisOf(anEni('eni-a', { status: 'Deleting' }), anEni('eni-b', { status: 'Detaching' }), anEni('eni-c')),
      expected: [
        { kind: 'removeEni', eniId: 'eni-a' },
        { kind: 'removeEni', eniId: 'eni-b' },
      ],
    },
    {
      name: 'Deleting IPs of InUse ENIs are unassigned in batches of ten, IPv4 first',
      enis: enisOf(
        anEni('eni-1', {
          ipv4: Array.from({ length: 12 }, (_, i) => anIp(`10.0.0.${i + 1}`, { status: 'Deleting' })),
          ipv6: [anIp('fd00::1', { status: 'Deleting' })],
        }),
      ),
      expected: [
        {
          kind: 'unassignIps',
          eniId: 'eni-1',
          family: 'ipv4',
          ips: Array.from({ length: 10 }, (_, i) => `10.0.0.${i + 1}`),
        },
        { kind: 'unassignIps', eniId: 'eni-1', family: 'ipv4', ips: ['10.0.0.11', '10.0.0.12'] },
        { kind: 'unassignIps', eniId: 'eni-1', family: 'ipv6', ips: ['fd00::1'] },
      ],
    },
    {
      name: 'marked IPs are unassigned in address order whatever the order of the CR',
      enis: enisOf(
        anEni('eni-1', {
          ipv4: ['10.0.0.12', '10.0.0.3', '10.0.0.100', '10.0.0.20', '10.0.0.1'].map((ip) =>
            anIp(ip, { status: ip === '10.0.0.20' ? 'Valid' : 'Deleting' }),
          ),
        }),
      ),
      expected: [
        {
          kind: 'unassignIps',
          eniId: 'eni-1',
          family: 'ipv4',
          ips: ['10.0.0.1', '10.0.0.3', '10.0.0.12', '10.0.0.100'],
        },
      ],
    },
    {
      name: 'IPs a pod still holds, primary IPs and IPs of non-InUse ENIs are left alone',
      enis: enisOf(
        anEni('eni-1', {
          ipv4: [
            anIp('10.0.0.1', { status: 'Deleting', pod: 'ns/a' }),
            anIp('10.0.0.2', { status: 'Deleting', primary: true }),
          ],
        }),
        anEni('eni-2', { status: 'Attaching', ipv4: [anIp('10.0.1.1', { status: 'Deleting' })] }),
      ),
      expected: [],
    },
  ];
  for (const c of cases)
    it(c.name, () => {
      assert.deepEqual(planGc({ enis: c.enis }), c.expected);
    });
});

describe('countAvailable and unorderedIpEntries', () => {
  const eni = anEni('eni-1', {
    ipv4: [
      anIp('10.0.0.9'),
      anIp('10.0.0.10', { pod: 'ns/a' }),
      anIp('10.0.0.11', { status: 'Deleting' }),
      anIp('10.0.0.12', { status: 'Invalid' }),
      anIp('10.0.0.2', { primary: true }),
    ],
  });
  const cases: { name: string; family: 'ipv4' | 'ipv6'; available: number; entries: string[] }[] = [
    {
      name: 'idle Valid addresses count, the primary included',
      family: 'ipv4',
      available: 2,
      entries: ['10.0.0.10', '10.0.0.11', '10.0.0.12', '10.0.0.2', '10.0.0.9'],
    },
    { name: 'a family the ENI has none of', family: 'ipv6', available: 0, entries: [] },
  ];
  for (const c of cases)
    it(c.name, () => {
      assert.equal(countAvailable(eni, c.family), c.available);
      assert.equal(countAvailable(eni, c.family), ipEntries(eni, c.family).filter(isAvailable).length);
      assert.deepEqual(
        unorderedIpEntries(eni, c.family)
          .map((entry) => entry.ip)
          .sort(),
        c.entries,
      );
    });
});
