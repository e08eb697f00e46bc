import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { attachEniTypeOf, newlyReadyPods, podIpReadySeconds } from '../../../src/ipam/index.js';
import type { IpFamily, ReadyPod } from '../../../src/ipam/index.js';

interface Binding {
  ip: string;
  podID?: string;
  podUID?: string;
  status?: string;
}

/** A raw `status.networkInterfaces` with one ENI per key, each IP bound as given. */
function statusOf(enis: Record<string, { ipv4?: Binding[]; ipv6?: Binding[] }>): unknown {
  const out: Record<string, unknown> = {};
  for (const [eniId, families] of Object.entries(enis)) {
    const eni: Record<string, unknown> = { id: eniId, status: 'InUse' };
    for (const family of ['ipv4', 'ipv6'] as const) {
      const entries = families[family];
      if (entries === undefined) continue;
      eni[family] = Object.fromEntries(
        entries.map((entry) => [entry.ip, { primary: false, status: 'Valid', ...entry }]),
      );
    }
    out[eniId] = eni;
  }
  return out;
}

const v4: IpFamily[] = ['ipv4'];
const dual: IpFamily[] = ['ipv4', 'ipv6'];

describe('newlyReadyPods', () => {
  const cases: {
    name: string;
    families: IpFamily[];
    before: unknown;
    after: unknown;
    expected: ReadyPod[];
  }[] = [
    {
      name: 'a pod bound by the write is ready, with its uid',
      families: v4,
      before: statusOf({ 'eni-1': { ipv4: [{ ip: '10.0.0.2' }] } }),
      after: statusOf({ 'eni-1': { ipv4: [{ ip: '10.0.0.2', podID: 'ns/a', podUID: 'u-a' }] } }),
      expected: [{ podId: 'ns/a', podUid: 'u-a' }],
    },
    {
      name: 'a pod already bound before the write is not counted again (a retried write)',
      families: v4,
      before: statusOf({ 'eni-1': { ipv4: [{ ip: '10.0.0.2', podID: 'ns/a', podUID: 'u-a' }] } }),
      after: statusOf({ 'eni-1': { ipv4: [{ ip: '10.0.0.2', podID: 'ns/a', podUID: 'u-a' }] } }),
      expected: [],
    },
    {
      name: 'a pod that moved to another IP or ENI is not new',
      families: v4,
      before: statusOf({ 'eni-1': { ipv4: [{ ip: '10.0.0.2', podID: 'ns/a', podUID: 'u-a' }] } }),
      after: statusOf({ 'eni-2': { ipv4: [{ ip: '10.0.1.2', podID: 'ns/a', podUID: 'u-a' }] } }),
      expected: [],
    },
    {
      name: 'a podUID filled in later for a pod already bound is the same pod',
      families: v4,
      before: statusOf({ 'eni-1': { ipv4: [{ ip: '10.0.0.2', podID: 'ns/a' }] } }),
      after: statusOf({ 'eni-1': { ipv4: [{ ip: '10.0.0.2', podID: 'ns/a', podUID: 'u-a' }] } }),
      expected: [],
    },
    {
      name: 'a pod re-created under its name (new uid) is a new pod',
      families: v4,
      before: statusOf({ 'eni-1': { ipv4: [{ ip: '10.0.0.2', podID: 'ns/a', podUID: 'u-old' }] } }),
      after: statusOf({ 'eni-1': { ipv4: [{ ip: '10.0.0.3', podID: 'ns/a', podUID: 'u-new' }] } }),
      expected: [{ podId: 'ns/a', podUid: 'u-new' }],
    },
    {
      name: 'dual stack: bound in IPv4 only is not ready yet',
      families: dual,
      before: statusOf({ 'eni-1': { ipv4: [{ ip: '10.0.0.2' }], ipv6: [{ ip: 'fd00::2' }] } }),
      after: statusOf({ 'eni-1': { ipv4: [{ ip: '10.0.0.2', podID: 'ns/a' }], ipv6: [{ ip: 'fd00::2' }] } }),
      expected: [],
    },
    {
      name: 'dual stack: the write that adds the second family makes the pod ready',
      families: dual,
      before: statusOf({ 'eni-1': { ipv4: [{ ip: '10.0.0.2', podID: 'ns/a' }], ipv6: [{ ip: 'fd00::2' }] } }),
      after: statusOf({
        'eni-1': { ipv4: [{ ip: '10.0.0.2', podID: 'ns/a' }], ipv6: [{ ip: 'fd00::2', podID: 'ns/a', podUID: 'u' }] },
      }),
      expected: [{ podId: 'ns/a', podUid: 'u' }],
    },
    {
      name: 'several pods, sorted, unbound and empty podIDs ignored',
      families: v4,
      before: undefined,
      after: statusOf({
        'eni-2': {
          ipv4: [
            { ip: '10.0.1.2', podID: 'ns/c' },
            { ip: '10.0.1.3', podID: '' },
          ],
        },
        'eni-1': { ipv4: [{ ip: '10.0.0.2', podID: 'ns/b' }, { ip: '10.0.0.3' }] },
      }),
      expected: [{ podId: 'ns/b' }, { podId: 'ns/c' }],
    },
    {
      name: 'a pod released by the write is not ready',
      families: v4,
      before: statusOf({ 'eni-1': { ipv4: [{ ip: '10.0.0.2', podID: 'ns/a' }] } }),
      after: statusOf({ 'eni-1': { ipv4: [{ ip: '10.0.0.2' }] } }),
      expected: [],
    },
    {
      name: 'a node serving no family readies no pod',
      families: [],
      before: undefined,
      after: statusOf({ 'eni-1': { ipv4: [{ ip: '10.0.0.2', podID: 'ns/a' }] } }),
      expected: [],
    },
    {
      name: 'malformed JSON (arrays, strings, null) is read as no binding',
      families: v4,
      before: null,
      after: { 'eni-1': { ipv4: ['10.0.0.2'] }, 'eni-2': 'InUse', 'eni-3': { ipv4: { '10.0.0.9': { podID: 7 } } } },
      expected: [],
    },
  ];
  for (const row of cases) {
    it(row.name, () => {
      assert.deepEqual(newlyReadyPods({ families: row.families, before: row.before, after: row.after }), row.expected);
    });
  }

  it('does not depend on the key order of the JSON', () => {
    const forward = statusOf({
      'eni-1': { ipv4: [{ ip: '10.0.0.2', podID: 'ns/a', podUID: 'first' }] },
      'eni-2': { ipv6: [{ ip: 'fd00::2', podID: 'ns/a', podUID: 'second' }] },
    }) as Record<string, unknown>;
    const reversed = Object.fromEntries(Object.entries(forward).reverse());
    const expected = [{ podId: 'ns/a', podUid: 'first' }];
    assert.deepEqual(newlyReadyPods({ families: dual, before: {}, after: forward }), expected);
    assert.deepEqual(newlyReadyPods({ families: dual, before: {}, after: reversed }), expected);
  });
});

describe('podIpReadySeconds', () => {
  it('is the time from creation to the write, in seconds', () => {
    assert.equal(podIpReadySeconds({ createdMs: 1_000_000, readyMs: 1_002_500 }), 2.5);
  });
  it('reads a creation time after the write (clock skew) as 0', () => {
    assert.equal(podIpReadySeconds({ createdMs: 2_000, readyMs: 1_000 }), 0);
  });
});

describe('attachEniTypeOf', () => {
  const cases: { type: string; trafficMode: string; expected: string }[] = [
    { type: 'Secondary', trafficMode: 'Standard', expected: 'secondary' },
    { type: 'Trunk', trafficMode: 'Standard', expected: 'trunk' },
    { type: 'Secondary', trafficMode: 'HighPerformance', expected: 'erdma' },
    { type: 'Secondary', trafficMode: '', expected: 'secondary' },
    { type: 'Member', trafficMode: 'Standard', expected: 'other' },
    { type: 'Trunk', trafficMode: 'HighPerformance', expected: 'other' },
  ];
  for (const row of cases) {
    it(`${row.type}/${row.trafficMode || '(none)'} is ${row.expected}`, () => {
      assert.equal(attachEniTypeOf(row), row.expected);
    });
  }
});
