/**
 * The data-plane safety rules of the core: ENIs a pod uses or that are not ours are never removed, unschedulable
 * ENIs are never touched, unlisted ENIs are looked up before anything is decided, bindings to Invalid addresses
 * are dropped when the pod does not use them, IPs wait for the CNI delete where a NodeRuntime exists, and the
 * status write keeps every field the model does not know.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import fc from 'fast-check';

import {
  assignIpsFromLocalPool,
  finalCniStatus,
  hasBoundIp,
  mayRemoveEni,
  mergeNetworkInterfacesOverRaw,
  planEniAllocations,
  planGc,
  planPoolRelease,
  primaryFamilyOf,
  releaseIpsOfGonePods,
  resolveUnlistedEnis,
} from '../../../src/ipam/index.js';
import type { CloudEni, NetworkInterfaces } from '../../../src/ipam/index.js';
import { aCloudEni, aRequest, aSpec, aVSwitch, anEni, anIp, enisOf, vSwitchesOf } from './builders.js';
import { scenarioArb } from './scenario-arbitrary.js';

const NOW = '2026-12-03T08:00:00Z';
const CLUSTER_ID = 'c-this';

/** A cloud ENI attached to this test's instance `i-1`, untagged, with only its primary address. */
function cloudEni(eniId: string, overrides: Partial<CloudEni> = {}): CloudEni {
  return aCloudEni(eniId, {
    instanceId: 'i-1',
    tags: {},
    ipv4: [{ ip: '10.0.0.1', primary: true }],
    ipv6: [],
    ...overrides,
  });
}

describe('resolveUnlistedEnis', () => {
  const bound = (id: string) => anEni(id, { ipv4: [anIp('10.0.0.2', { pod: 'ns/a' })] });
  const idle = (id: string) => anEni(id, { ipv4: [anIp('10.0.0.2')] });
  const resolve = (enis: NetworkInterfaces, cloud: CloudEni[]) =>
    resolveUnlistedEnis({
      enis,
      unlisted: Object.keys(enis),
      cloud,
      instanceId: 'i-1',
      eniSpec: { enableIPv4: true },
      nowRfc3339: NOW,
      clusterId: CLUSTER_ID,
    });

  const rows: {
    name: string;
    eni: NetworkInterfaces[string];
    cloud?: Partial<CloudEni>;
    outcome: string;
    kept: boolean;
    status?: string;
    ipStatus?: string;
  }[] = [
    {
      name: 'attached here, serving a pod',
      eni: bound('e'),
      cloud: {},
      outcome: 'keptServing',
      kept: true,
      ipStatus: 'Valid',
    },
    { name: 'attached here, idle', eni: idle('e'), cloud: {}, outcome: 'forgottenAttached', kept: false },
    {
      name: 'attached here, created by eniflow before the cluster tag (tagFilter misses its tags): adopted, managed',
      eni: idle('e'),
      cloud: { tags: { creator: 'eniflow' } },
      outcome: 'keptOwn',
      kept: true,
      status: 'InUse',
    },
    {
      name: 'attached here, created by eniflow for this cluster: still managed',
      eni: idle('e'),
      cloud: { tags: { creator: 'eniflow', 'eniflow.io/cluster-id': CLUSTER_ID } },
      outcome: 'keptOwn',
      kept: true,
      status: 'InUse',
    },
    {
      name: 'attached here, created by eniflow for another cluster: not ours to manage',
      eni: idle('e'),
      cloud: { tags: { creator: 'eniflow', 'eniflow.io/cluster-id': 'c-other' } },
      outcome: 'forgottenAttached',
      kept: false,
    },
    {
      name: 'attached elsewhere, serving a pod',
      eni: bound('e'),
      cloud: { instanceId: 'i-other' },
      outcome: 'keptAttachedElsewhere',
      kept: true,
      ipStatus: 'Invalid',
    },
    {
      name: 'attached elsewhere, idle',
      eni: idle('e'),
      cloud: { instanceId: 'i-other' },
      outcome: 'forgottenAttachedElsewhere',
      kept: false,
    },
    { name: 'unknown to the cloud, bound', eni: bound('e'), outcome: 'keptMissing', kept: true, ipStatus: 'Invalid' },
    { name: 'unknown to the cloud, idle (a phantom)', eni: idle('e'), outcome: 'forgottenMissing', kept: false },
    {
      name: 'Available, idle, Secondary: released to GC',
      eni: idle('e'),
      cloud: { status: 'Available', instanceId: '' },
      outcome: 'released',
      kept: true,
      status: 'Deleting',
    },
    {
      name: 'Available but a Primary ENI',
      eni: anEni('e', { type: 'Primary' }),
      cloud: { status: 'Available', instanceId: '', type: 'Primary' },
      outcome: 'forgottenAvailable',
      kept: false,
    },
    {
      name: 'Available but blocked by tag',
      eni: idle('e'),
      cloud: { status: 'Available', instanceId: '', tags: { 'terway.alibabacloud.com/excluded': 'true' } },
      outcome: 'forgottenAvailable',
      kept: false,
    },
    {
      name: 'Available and bound',
      eni: bound('e'),
      cloud: { status: 'Available', instanceId: '' },
      outcome: 'keptAvailable',
      kept: true,
      ipStatus: 'Invalid',
    },
    {
      name: 'in a transition',
      eni: idle('e'),
      cloud: { status: 'Detaching', instanceId: '' },
      outcome: 'keptInTransition',
      kept: true,
      status: 'Detaching',
    },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const result = resolve(enisOf(row.eni), row.cloud === undefined ? [] : [cloudEni('e', row.cloud)]);
      assert.deepEqual(
        result.reports.map((report) => report.outcome),
        [row.outcome],
      );
      assert.match(result.reports[0]?.message ?? '', /^ENI e /);
      const eni = result.enis['e'];
      assert.equal(eni !== undefined, row.kept);
      if (row.status !== undefined) assert.equal(eni?.status, row.status);
      if (row.ipStatus !== undefined) {
        assert.equal(eni?.ipv4?.['10.0.0.2']?.status, row.ipStatus);
        assert.equal(eni?.unschedulable, true, 'a kept ENI is out of every plan');
        assert.match(eni?.conditions?.OperationErr?.message ?? '', /never detached or deleted/);
      }
    });
  }
});

describe('planGc and planPoolRelease guards', () => {
  it('never removes an ENI marked Deleting while a pod holds one of its IPs, or one of a kind it never creates', () => {
    const enis = enisOf(
      anEni('eni-bound', { status: 'Deleting', ipv4: [anIp('10.0.0.2', { pod: 'ns/a' })] }),
      anEni('eni-member', { status: 'Deleting', type: 'Member' }),
      anEni('eni-unschedulable', { status: 'Deleting', unschedulable: true }),
      anEni('eni-free', { status: 'Deleting' }),
      anEni('eni-blocked-ips', {
        unschedulable: true,
        ipv4: [anIp('10.0.1.2', { status: 'Deleting' })],
      }),
      { id: 'eni-saga', status: 'Deleting' },
    );
    assert.deepEqual(planGc({ enis }), [
      { kind: 'removeEni', eniId: 'eni-free' },
      { kind: 'removeEni', eniId: 'eni-saga' },
    ]);
  });

  it('leaves unschedulable ENIs out of the pool: not counted idle, never a release victim', () => {
    const spec = aSpec({ pool: { minPoolSize: 0, maxPoolSize: 1 } });
    const enis = enisOf(
      anEni('eni-blocked', { unschedulable: true, ipv4: [anIp('10.0.1.1', { primary: true }), anIp('10.0.1.2')] }),
      anEni('eni-ours', { ipv4: [anIp('10.0.0.1', { primary: true }), anIp('10.0.0.2'), anIp('10.0.0.3')] }),
    );
    const plan = planPoolRelease({ spec, enis });
    assert.equal(plan.idleBefore, 3);
    assert.deepEqual(plan.enis['eni-blocked'], enis['eni-blocked']);
    assert.deepEqual(plan.ipsToRelease, [{ eniId: 'eni-ours', family: 'ipv4', ips: ['10.0.0.3', '10.0.0.2'] }]);
  });

  it('mayRemoveEni and hasBoundIp', () => {
    assert.equal(hasBoundIp(anEni('e', { ipv4: [anIp('10.0.0.2', { pod: 'ns/a' })] })), true);
    assert.equal(mayRemoveEni(anEni('e', { ipv4: [anIp('10.0.0.2')] })), true);
    assert.equal(mayRemoveEni(anEni('e', { type: 'Primary' })), false);
  });
});

describe('local pool: Invalid bindings and unschedulable ENIs', () => {
  it('drops a binding to an Invalid address the pod does not use and serves the pod from a valid one', () => {
    const enis = enisOf(
      anEni('eni-1', {
        ipv4: [
          anIp('10.0.0.2'),
          anIp('10.9.9.9', { pod: 'ns/a', status: 'Invalid' }),
          anIp('10.0.0.3', { pod: 'ns/b', status: 'Invalid' }),
        ],
      }),
    );
    const result = assignIpsFromLocalPool({
      enis,
      requests: [aRequest('ns/a'), aRequest('ns/b', { statusIpv4: '10.0.0.3' })],
      primaryFamily: 'ipv4',
    });
    assert.deepEqual(result.droppedInvalid, [
      { podId: 'ns/a', family: 'ipv4', ref: { eniId: 'eni-1', ip: '10.9.9.9' } },
    ]);
    assert.equal(result.enis['eni-1']?.ipv4?.['10.0.0.2']?.podID, 'ns/a', 'rebound to a valid address');
    assert.equal(result.enis['eni-1']?.ipv4?.['10.9.9.9']?.podID, undefined);
    assert.equal(result.enis['eni-1']?.ipv4?.['10.0.0.3']?.podID, 'ns/b', 'the sandbox uses it: kept');
  });

  it('never gives a new pod an address of an unschedulable ENI', () => {
    const enis = enisOf(anEni('eni-1', { unschedulable: true, ipv4: [anIp('10.0.0.2')] }));
    const result = assignIpsFromLocalPool({ enis, requests: [aRequest('ns/a')], primaryFamily: 'ipv4' });
    assert.deepEqual(result.bound, []);
    assert.equal(result.unsatisfied.length, 1);
  });
});

describe('releaseIpsOfGonePods with a NodeRuntime', () => {
  const enis = enisOf(
    anEni('eni-1', {
      ipv4: [
        anIp('10.0.0.2', { pod: 'ns/deleted' }),
        anIp('10.0.0.3', { pod: 'ns/running' }),
        anIp('10.0.0.4', { pod: 'ns/unknown' }),
      ],
    }),
  );
  it('frees only IPs whose pod the daemon recorded as CNI-deleted', () => {
    const result = releaseIpsOfGonePods({
      enis,
      requests: [],
      nodeRuntime: { cniStatusByPodUid: { 'uid-ns/deleted': 'deleted', 'uid-ns/running': 'initial' } },
    });
    assert.deepEqual(
      result.released.map((binding) => binding.ip),
      ['10.0.0.2'],
    );
    assert.deepEqual(
      result.awaitingCniDelete.map((binding) => binding.ip),
      ['10.0.0.3', '10.0.0.4'],
    );
    assert.equal(result.enis['eni-1']?.ipv4?.['10.0.0.3']?.podID, 'ns/running');
  });

  it('frees every gone pod at once without a NodeRuntime, and a binding without podUID even with one', () => {
    assert.equal(releaseIpsOfGonePods({ enis, requests: [] }).released.length, 3);
    const noUid = enisOf(
      anEni('eni-1', { ipv4: [{ ip: '10.0.0.2', primary: false, status: 'Valid', podID: 'ns/x' }] }),
    );
    assert.equal(
      releaseIpsOfGonePods({ enis: noUid, requests: [], nodeRuntime: { cniStatusByPodUid: {} } }).released.length,
      1,
    );
  });

  it('finalCniStatus: the status written last wins, deleted on a tie', () => {
    assert.equal(finalCniStatus({ initial: { lastUpdateTime: '2026-12-03T08:00:00Z' } }), 'initial');
    assert.equal(
      finalCniStatus({
        initial: { lastUpdateTime: '2026-12-03T08:00:00Z' },
        deleted: { lastUpdateTime: '2026-12-03T08:00:05Z' },
      }),
      'deleted',
    );
    assert.equal(
      finalCniStatus({
        initial: { lastUpdateTime: '2026-12-03T08:00:09Z' },
        deleted: { lastUpdateTime: '2026-12-03T08:00:05Z' },
      }),
      'initial',
      'a new sandbox after the delete',
    );
    assert.equal(finalCniStatus({ deleted: { lastUpdateTime: 'x' }, initial: { lastUpdateTime: 'x' } }), 'deleted');
    assert.equal(finalCniStatus(null), undefined);
    assert.equal(finalCniStatus({}), undefined);
  });
});

describe('mergeNetworkInterfacesOverRaw', () => {
  const raw = {
    'eni-1': {
      id: 'eni-1',
      status: 'InUse',
      networkInterfaceType: 'Secondary',
      ipv4Prefix: [{ prefix: '10.0.8.0/28', status: 'Valid' }],
      futureField: { nested: [1, 2] },
      ipv4: {
        '10.0.0.2': { ip: '10.0.0.2', primary: false, status: 'Valid', podID: 'ns/a', ipName: 'ip-abc' },
        '10.0.0.3': { ip: '10.0.0.3', primary: false, status: 'Valid', ipName: 'ip-def' },
      },
      conditions: {
        OperationErr: { observedTime: NOW, message: 'm' },
        NewerCondition: { observedTime: NOW, message: 'n' },
      },
    },
    'eni-gone': { id: 'eni-gone', status: 'InUse' },
  };

  it('keeps unknown fields of ENIs and IPs, follows the model for known ones, drops what the model dropped', () => {
    const enis = enisOf({
      id: 'eni-1',
      status: 'InUse',
      networkInterfaceType: 'Secondary',
      ipv4: {
        '10.0.0.2': { ip: '10.0.0.2', primary: false, status: 'Deleting' },
        '10.0.0.4': { ip: '10.0.0.4', primary: false, status: 'Valid' },
      },
      // Prefix lists are modelled (prefix mode): they follow the controller's view, which read them from the CR.
      ipv4Prefix: [{ prefix: '10.0.8.0/28', status: 'Valid' }],
      unschedulable: true,
    });
    const merged = mergeNetworkInterfacesOverRaw({ raw, enis });
    assert.deepEqual(merged, {
      'eni-1': {
        id: 'eni-1',
        status: 'InUse',
        networkInterfaceType: 'Secondary',
        ipv4Prefix: [{ prefix: '10.0.8.0/28', status: 'Valid' }],
        futureField: { nested: [1, 2] },
        ipv4: {
          '10.0.0.2': { ip: '10.0.0.2', primary: false, status: 'Deleting', ipName: 'ip-abc' },
          '10.0.0.4': { ip: '10.0.0.4', primary: false, status: 'Valid' },
        },
        unschedulable: true,
      },
    });
  });

  it('keeps condition types the model does not know', () => {
    const enis = enisOf({
      id: 'eni-1',
      status: 'InUse',
      conditions: { InsufficientIP: { observedTime: NOW, message: 'x' } },
    });
    const merged = mergeNetworkInterfacesOverRaw({ raw, enis }) as Record<string, { conditions?: unknown }>;
    assert.deepEqual(merged['eni-1']?.conditions, {
      InsufficientIP: { observedTime: NOW, message: 'x' },
      NewerCondition: { observedTime: NOW, message: 'n' },
    });
    assert.deepEqual(mergeNetworkInterfacesOverRaw({ raw: 'garbage', enis: {} }), {});
  });
});

describe('data-plane safety (property)', () => {
  const RUNS = { numRuns: 300, seed: 20261203 };

  it('no plan ever removes an ENI with a bound pod IP or touches an unschedulable ENI', () => {
    fc.assert(
      fc.property(scenarioArb, fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }), (s, blockedFlags) => {
        const enis: NetworkInterfaces = {};
        Object.keys(s.enis)
          .sort()
          .forEach((id, i) => {
            const eni = s.enis[id];
            if (eni !== undefined) enis[id] = blockedFlags[i] === true ? { ...eni, unschedulable: true } : eni;
          });
        const unschedulable = new Set(Object.keys(enis).filter((id) => enis[id]?.unschedulable === true));
        const primaryFamily = primaryFamilyOf(s.spec.eni ?? {});
        const released = releaseIpsOfGonePods({ enis, requests: s.requests });
        const local = assignIpsFromLocalPool({ enis: released.enis, requests: s.requests, primaryFamily });
        for (const bound of local.newlyBound) {
          assert.ok(!unschedulable.has(bound.ref.eniId), `bound ${bound.podId} on unschedulable ${bound.ref.eniId}`);
        }
        const plan = planEniAllocations({
          spec: s.spec,
          enis: local.enis,
          unsatisfied: local.unsatisfied,
          vSwitches: vSwitchesOf(aVSwitch('vsw-a', { availableIpCount: 100_000 })),
          randomValue: 0.5,
        });
        for (const allocation of plan.allocations) {
          if (allocation.kind === 'assignIps') assert.ok(!unschedulable.has(allocation.eniId));
        }
        const shrunk = planPoolRelease({ spec: s.spec, enis: local.enis });
        for (const id of unschedulable) assert.deepEqual(shrunk.enis[id], local.enis[id], `${id} changed by release`);
        const unlisted = resolveUnlistedEnis({
          enis: shrunk.enis,
          unlisted: Object.keys(shrunk.enis),
          cloud: Object.keys(shrunk.enis).map((id, i) =>
            cloudEni(id, i % 2 === 0 ? { status: 'Available', instanceId: '' } : { instanceId: 'i-other' }),
          ),
          instanceId: 'i-1',
          eniSpec: s.spec.eni ?? {},
          nowRfc3339: NOW,
          clusterId: CLUSTER_ID,
        });
        for (const candidate of [shrunk.enis, unlisted.enis]) {
          for (const action of planGc({ enis: candidate })) {
            const eni = candidate[action.eniId];
            assert.ok(eni !== undefined && eni.unschedulable !== true, `GC touches unschedulable ${action.eniId}`);
            if (action.kind === 'removeEni') assert.ok(!hasBoundIp(eni), `GC removes ${action.eniId} with a bound IP`);
          }
        }
        for (const id of Object.keys(unlisted.enis)) {
          const before = shrunk.enis[id];
          if (before !== undefined && before.status !== 'Deleting' && hasBoundIp(before)) {
            assert.notEqual(unlisted.enis[id]?.status, 'Deleting', `${id} with a bound IP marked Deleting by a sync`);
          }
        }
      }),
      RUNS,
    );
  });
});
