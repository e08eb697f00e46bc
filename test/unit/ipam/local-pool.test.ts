import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { assignIpsFromLocalPool, releaseIpsOfGonePods } from '../../../src/ipam/index.js';
import type { NetworkInterfaces, PodIpRequest } from '../../../src/ipam/index.js';
import { aRequest, anEni, anIp, enisOf } from './builders.js';

/** `pod → "eni/ip"` for every bound IPv4 (and `pod → "eni/ip"` for IPv6 under `v6:`), for compact expectations. */
function bindings(enis: NetworkInterfaces): Record<string, string> {
  const out: Record<string, string> = {};
  for (const eni of Object.values(enis)) {
    for (const entry of Object.values(eni.ipv4 ?? {})) if (entry.podID) out[entry.podID] = `${eni.id}/${entry.ip}`;
    for (const entry of Object.values(eni.ipv6 ?? {}))
      if (entry.podID) out[`v6:${entry.podID}`] = `${eni.id}/${entry.ip}`;
  }
  return out;
}

describe('releaseIpsOfGonePods', () => {
  it('frees IPs of pods that are gone and keeps the others, refreshing their UID', () => {
    const enis = enisOf(
      anEni('eni-1', {
        ipv4: [anIp('10.0.0.1', { primary: true, pod: 'ns/gone' }), anIp('10.0.0.2', { pod: 'ns/here' })],
        ipv6: [anIp('fd00::1', { pod: 'ns/gone' })],
      }),
    );
    const { enis: after, released } = releaseIpsOfGonePods({
      enis,
      requests: [aRequest('ns/here', { podUid: 'new-uid' })],
    });
    assert.deepEqual(bindings(after), { 'ns/here': 'eni-1/10.0.0.2' });
    assert.equal(after['eni-1']?.ipv4?.['10.0.0.2']?.podUID, 'new-uid');
    assert.equal(after['eni-1']?.ipv4?.['10.0.0.1']?.podUID, undefined);
    assert.deepEqual(
      released.map((r) => `${r.family}:${r.ip}:${r.podId}`),
      ['ipv4:10.0.0.1:ns/gone', 'ipv6:fd00::1:ns/gone'],
    );
    assert.equal(enis['eni-1']?.ipv4?.['10.0.0.1']?.podID, 'ns/gone', 'the input is not modified');
  });
});

describe('assignIpsFromLocalPool', () => {
  const cases: {
    name: string;
    enis: NetworkInterfaces;
    requests: PodIpRequest[];
    expectedBindings: Record<string, string>;
    expectedUnsatisfied?: Record<string, string>;
  }[] = [
    {
      name: 'pods get the lowest free Valid IPs of the fullest InUse ENI, in pod order',
      enis: enisOf(
        anEni('eni-b', {
          ipv4: [anIp('10.0.1.1', { primary: true }), anIp('10.0.1.2'), anIp('10.0.1.10'), anIp('10.0.1.9')],
        }),
        anEni('eni-a', { ipv4: [anIp('10.0.0.1', { primary: true })] }),
      ),
      requests: [aRequest('ns/b'), aRequest('ns/a')],
      expectedBindings: { 'ns/a': 'eni-b/10.0.1.1', 'ns/b': 'eni-b/10.0.1.2' },
    },
    {
      name: 'only InUse ENIs and only Valid idle IPs are handed out',
      enis: enisOf(
        anEni('eni-attaching', { status: 'Attaching', ipv4: [anIp('10.0.0.1'), anIp('10.0.0.2')] }),
        anEni('eni-deleting', { status: 'Deleting', ipv4: [anIp('10.0.1.1'), anIp('10.0.1.2')] }),
        anEni('eni-ok', {
          ipv4: [anIp('10.0.2.1', { status: 'Deleting' }), anIp('10.0.2.2', { pod: 'ns/x' }), anIp('10.0.2.3')],
        }),
      ),
      requests: [aRequest('ns/x'), aRequest('ns/a'), aRequest('ns/b')],
      expectedBindings: { 'ns/x': 'eni-ok/10.0.2.2', 'ns/a': 'eni-ok/10.0.2.3' },
      expectedUnsatisfied: { 'ns/b': 'noIdleIp' },
    },
    {
      name: 'take-over binds a pod to the IP its sandbox already has, even on a non-InUse ENI',
      enis: enisOf(anEni('eni-1', { status: 'Attaching', ipv4: [anIp('10.0.0.1'), anIp('10.0.0.7')] })),
      requests: [aRequest('ns/a', { statusIpv4: '10.0.0.7' })],
      expectedBindings: { 'ns/a': 'eni-1/10.0.0.7' },
    },
    {
      name: 'take-over never steals an IP bound to another pod',
      enis: enisOf(anEni('eni-1', { ipv4: [anIp('10.0.0.1', { pod: 'ns/owner' }), anIp('10.0.0.2')] })),
      requests: [aRequest('ns/owner'), aRequest('ns/thief', { statusIpv4: '10.0.0.1' })],
      expectedBindings: { 'ns/owner': 'eni-1/10.0.0.1' },
      expectedUnsatisfied: { 'ns/thief': 'statusIpNotInPool' },
    },
    {
      name: 'a pod running with an IP this node does not hold is not demand and gets no other IP',
      enis: enisOf(anEni('eni-1', { ipv4: [anIp('10.0.0.1')] })),
      requests: [aRequest('ns/stale', { statusIpv4: '10.9.9.9' })],
      expectedBindings: {},
      expectedUnsatisfied: { 'ns/stale': 'statusIpNotInPool' },
    },
    {
      name: 'dual-stack: both addresses come from one ENI, skipping ENIs that lack a free IPv6',
      enis: enisOf(
        anEni('eni-a', { ipv4: [anIp('10.0.0.1'), anIp('10.0.0.2'), anIp('10.0.0.3')], ipv6: [] }),
        anEni('eni-b', { ipv4: [anIp('10.0.1.1')], ipv6: [anIp('fd00::b1')] }),
      ),
      requests: [aRequest('ns/a', { requireIpv6: true })],
      expectedBindings: { 'ns/a': 'eni-b/10.0.1.1', 'v6:ns/a': 'eni-b/fd00::b1' },
    },
    {
      name: 'dual-stack: a held IPv4 anchors the IPv6 to the same ENI',
      enis: enisOf(
        anEni('eni-a', { ipv4: [anIp('10.0.0.1', { pod: 'ns/a' }), anIp('10.0.0.2')], ipv6: [anIp('fd00::a1')] }),
        anEni('eni-b', { ipv4: [anIp('10.0.1.1'), anIp('10.0.1.2'), anIp('10.0.1.3')], ipv6: [anIp('fd00::b1')] }),
      ),
      requests: [aRequest('ns/a', { requireIpv6: true })],
      expectedBindings: { 'ns/a': 'eni-a/10.0.0.1', 'v6:ns/a': 'eni-a/fd00::a1' },
    },
    {
      name: 'dual-stack: an unused IPv4 is rolled back when its ENI has no IPv6 left, and the pod moves',
      enis: enisOf(
        anEni('eni-a', { ipv4: [anIp('10.0.0.1', { pod: 'ns/a' }), anIp('10.0.0.2'), anIp('10.0.0.3')], ipv6: [] }),
        anEni('eni-b', { ipv4: [anIp('10.0.1.1')], ipv6: [anIp('fd00::b1')] }),
      ),
      requests: [aRequest('ns/a', { requireIpv6: true })],
      expectedBindings: { 'ns/a': 'eni-b/10.0.1.1', 'v6:ns/a': 'eni-b/fd00::b1' },
    },
    {
      name: 'dual-stack: an IPv4 the sandbox uses is kept even when its ENI has no IPv6 left',
      enis: enisOf(
        anEni('eni-a', { ipv4: [anIp('10.0.0.1', { pod: 'ns/a' })], ipv6: [] }),
        anEni('eni-b', { ipv4: [anIp('10.0.1.1')], ipv6: [anIp('fd00::b1')] }),
      ),
      requests: [aRequest('ns/a', { requireIpv6: true, statusIpv4: '10.0.0.1' })],
      expectedBindings: { 'ns/a': 'eni-a/10.0.0.1' },
      expectedUnsatisfied: { 'ns/a': 'noIdleIp' },
    },
    {
      name: 'dual-stack: no ENI with both families free leaves the pod unbound (no half binding)',
      enis: enisOf(
        anEni('eni-a', { ipv4: [anIp('10.0.0.1')] }),
        anEni('eni-b', { ipv4: [], ipv6: [anIp('fd00::b1')] }),
      ),
      requests: [aRequest('ns/a', { requireIpv6: true })],
      expectedBindings: {},
      expectedUnsatisfied: { 'ns/a': 'noIdleIp' },
    },
    {
      name: 'ERDMA pods only get IPs of HighPerformance ENIs, other pods never do',
      enis: enisOf(
        anEni('eni-hp', { mode: 'HighPerformance', ipv4: [anIp('10.0.9.1'), anIp('10.0.9.2')] }),
        anEni('eni-std', { ipv4: [anIp('10.0.0.1')] }),
      ),
      requests: [aRequest('ns/rdma', { requireErdma: true }), aRequest('ns/n1'), aRequest('ns/n2')],
      expectedBindings: { 'ns/rdma': 'eni-hp/10.0.9.1', 'ns/n1': 'eni-std/10.0.0.1' },
      expectedUnsatisfied: { 'ns/n2': 'noIdleIp' },
    },
    {
      name: 'trunk ENIs are filled before secondary ones',
      enis: enisOf(
        anEni('eni-sec', { ipv4: [anIp('10.0.0.1'), anIp('10.0.0.2'), anIp('10.0.0.3')] }),
        anEni('eni-trunk', { type: 'Trunk', ipv4: [anIp('10.0.5.1')] }),
      ),
      requests: [aRequest('ns/a'), aRequest('ns/b')],
      expectedBindings: { 'ns/a': 'eni-trunk/10.0.5.1', 'ns/b': 'eni-sec/10.0.0.1' },
    },
    {
      name: 'a taken-over Deleting IP is restored to Valid so GC does not pull it from under the pod',
      enis: enisOf(anEni('eni-1', { ipv4: [anIp('10.0.0.5', { status: 'Deleting' })] })),
      requests: [aRequest('ns/a', { statusIpv4: '10.0.0.5' })],
      expectedBindings: { 'ns/a': 'eni-1/10.0.0.5' },
    },
    {
      name: 'a pod bound twice in one family keeps the IP matching its status and frees the other',
      enis: enisOf(anEni('eni-1', { ipv4: [anIp('10.0.0.1', { pod: 'ns/a' }), anIp('10.0.0.2', { pod: 'ns/a' })] })),
      requests: [aRequest('ns/a', { statusIpv4: '10.0.0.2' })],
      expectedBindings: { 'ns/a': 'eni-1/10.0.0.2' },
    },
    {
      name: 'IPv6-only pods are served from the IPv6 map',
      enis: enisOf(
        anEni('eni-1', { ipv4: [anIp('10.0.0.1', { primary: true })], ipv6: [anIp('fd00::2'), anIp('fd00::1')] }),
      ),
      requests: [aRequest('ns/a', { requireIpv4: false, requireIpv6: true })],
      expectedBindings: { 'v6:ns/a': 'eni-1/fd00::1' },
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const result = assignIpsFromLocalPool({ enis: c.enis, requests: c.requests, primaryFamily: 'ipv4' });
      assert.deepEqual(bindings(result.enis), c.expectedBindings);
      assert.deepEqual(
        Object.fromEntries(result.unsatisfied.map((u) => [u.request.podId, u.reason])),
        c.expectedUnsatisfied ?? {},
      );
    });
  }

  it('reports newly bound and fully bound pods and leaves the input untouched', () => {
    const enis = enisOf(anEni('eni-1', { ipv4: [anIp('10.0.0.1'), anIp('10.0.0.2', { pod: 'ns/old' })] }));
    const result = assignIpsFromLocalPool({
      enis,
      requests: [aRequest('ns/new'), aRequest('ns/old')],
      primaryFamily: 'ipv4',
    });
    assert.deepEqual(result.newlyBound, [{ podId: 'ns/new', family: 'ipv4', ref: { eniId: 'eni-1', ip: '10.0.0.1' } }]);
    assert.deepEqual(result.bound, [
      { podId: 'ns/new', ipv4: { eniId: 'eni-1', ip: '10.0.0.1' } },
      { podId: 'ns/old', ipv4: { eniId: 'eni-1', ip: '10.0.0.2' } },
    ]);
    assert.equal(enis['eni-1']?.ipv4?.['10.0.0.1']?.podID, undefined);
    assert.equal(result.enis['eni-1']?.ipv4?.['10.0.0.1']?.podUID, 'uid-ns/new');
  });

  it('restores a taken-over Deleting IP to Valid, but not on an ENI being deleted', () => {
    const result = assignIpsFromLocalPool({
      enis: enisOf(
        anEni('eni-1', { ipv4: [anIp('10.0.0.5', { status: 'Deleting' })] }),
        anEni('eni-2', { status: 'Deleting', ipv4: [anIp('10.0.1.5', { status: 'Deleting' })] }),
      ),
      requests: [aRequest('ns/a', { statusIpv4: '10.0.0.5' }), aRequest('ns/b', { statusIpv4: '10.0.1.5' })],
      primaryFamily: 'ipv4',
    });
    assert.equal(result.enis['eni-1']?.ipv4?.['10.0.0.5']?.status, 'Valid');
    assert.equal(result.enis['eni-2']?.ipv4?.['10.0.1.5']?.status, 'Deleting');
    assert.equal(result.enis['eni-2']?.ipv4?.['10.0.1.5']?.podID, 'ns/b');
  });

  it('restores to Valid a Deleting IP the CR already binds to a live pod (a CR Terway wrote), not on a Deleting ENI', () => {
    // Terway's take-over binds a pod to its status IP whatever the IP's status, so its CR can hold a live pod's
    // address marked Deleting (which Terway's GC would then unassign under the pod).
    const result = assignIpsFromLocalPool({
      enis: enisOf(
        anEni('eni-1', {
          ipv4: [anIp('10.0.0.5', { status: 'Deleting', pod: 'ns/a' }), anIp('10.0.0.6', { status: 'Deleting' })],
        }),
        anEni('eni-2', { status: 'Deleting', ipv4: [anIp('10.0.1.5', { status: 'Deleting', pod: 'ns/b' })] }),
      ),
      requests: [aRequest('ns/a', { statusIpv4: '10.0.0.5' }), aRequest('ns/b')],
      primaryFamily: 'ipv4',
    });
    assert.equal(result.enis['eni-1']?.ipv4?.['10.0.0.5']?.status, 'Valid');
    assert.equal(result.enis['eni-1']?.ipv4?.['10.0.0.5']?.podID, 'ns/a');
    assert.equal(result.enis['eni-1']?.ipv4?.['10.0.0.6']?.status, 'Deleting', 'an idle one stays marked');
    assert.equal(result.enis['eni-2']?.ipv4?.['10.0.1.5']?.status, 'Deleting');
    assert.deepEqual(result.newlyBound, [], 'kept, not newly bound');
  });

  it('gives the same answer whatever order the ENIs and pods arrive in', () => {
    const a = anEni('eni-a', { ipv4: [anIp('10.0.0.1'), anIp('10.0.0.2')] });
    const b = anEni('eni-b', { ipv4: [anIp('10.0.1.1'), anIp('10.0.1.2')] });
    const pods = [aRequest('ns/1'), aRequest('ns/2'), aRequest('ns/3')];
    const forward = assignIpsFromLocalPool({ enis: enisOf(a, b), requests: pods, primaryFamily: 'ipv4' });
    const backward = assignIpsFromLocalPool({
      enis: enisOf(b, a),
      requests: [...pods].reverse(),
      primaryFamily: 'ipv4',
    });
    assert.deepEqual(bindings(forward.enis), bindings(backward.enis));
  });
});
