import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { clusterOwnershipOf, gcRemovalVerdict, planOrphanEnis, recheckOrphan } from '../../../src/ipam/index.js';
import type { CloudEni, GcRemovalVerdict, OrphanRecheck } from '../../../src/ipam/index.js';
import { aCloudEni } from './builders.js';

const CLUSTER = 'c-this';
const OTHER = 'c-other';

/** An eniflow-created ENI of this cluster, Available, attached nowhere, an hour old at {@link NOW}. */
function cloudEni(eniId: string, overrides: Partial<CloudEni> = {}): CloudEni {
  return aCloudEni(eniId, {
    status: 'Available',
    instanceId: '',
    tags: { creator: 'eniflow', 'eniflow.io/node': 'node-a', 'eniflow.io/cluster-id': CLUSTER },
    creationTime: '2026-12-03T07:00:00Z',
    ...overrides,
  });
}

/** An ENI eniflow made before the cluster tag existed. */
function legacyEni(eniId: string, overrides: Partial<CloudEni> = {}): CloudEni {
  return cloudEni(eniId, { tags: { creator: 'eniflow', 'eniflow.io/node': 'node-a' }, ...overrides });
}

function withoutCreationTime(eni: CloudEni): CloudEni {
  const copy = { ...eni };
  delete copy.creationTime;
  return copy;
}

const NOW = Date.UTC(2026, 11, 3, 8, 0, 0);
const GRACE = 15 * 60_000;

describe('planOrphanEnis', () => {
  it('deletes only Available ENIs known to no CR and older than the grace period, and says why it keeps the rest', () => {
    const plan = planOrphanEnis({
      owned: [
        cloudEni('eni-young', { creationTime: '2026-12-03T07:59:30Z' }),
        cloudEni('eni-orphan'),
        cloudEni('eni-known'),
        cloudEni('eni-attached', { status: 'InUse', instanceId: 'i-1' }),
        cloudEni('eni-attaching', { status: 'Attaching', instanceId: '' }),
        withoutCreationTime(cloudEni('eni-no-time')),
        cloudEni('eni-bad-time', { creationTime: 'yesterday' }),
        cloudEni('eni-untagged-node', { tags: { creator: 'eniflow', 'eniflow.io/cluster-id': CLUSTER } }),
      ],
      clusterId: CLUSTER,
      knownEniIds: ['eni-known'],
      nowMs: NOW,
      graceMs: GRACE,
    });
    assert.deepEqual(plan.orphans, [
      { eniId: 'eni-orphan', node: 'node-a', createdAt: '2026-12-03T07:00:00Z' },
      { eniId: 'eni-untagged-node', createdAt: '2026-12-03T07:00:00Z' },
    ]);
    assert.deepEqual(plan.kept, [
      { eniId: 'eni-attached', reason: 'attached' },
      { eniId: 'eni-attaching', reason: 'attached' },
      { eniId: 'eni-bad-time', reason: 'ageUnknown' },
      { eniId: 'eni-known', reason: 'knownToCr' },
      { eniId: 'eni-no-time', reason: 'ageUnknown' },
      { eniId: 'eni-young', reason: 'young' },
    ]);
    assert.deepEqual(plan.adopted, []);
    assert.deepEqual(plan.unowned, []);
  });

  it("never plans to delete another cluster's ENI, even one the owned list returned by mistake", () => {
    const plan = planOrphanEnis({
      owned: [
        cloudEni('eni-b', { tags: { creator: 'eniflow', 'eniflow.io/cluster-id': OTHER } }),
        legacyEni('eni-legacy'),
        cloudEni('eni-not-eniflow', { tags: { 'eniflow.io/cluster-id': OTHER } }),
      ],
      clusterId: CLUSTER,
      knownEniIds: [],
      nowMs: NOW,
      graceMs: GRACE,
    });
    assert.deepEqual(plan.orphans, []);
    assert.deepEqual(
      plan.kept.map((kept) => kept.reason),
      ['notThisCluster', 'notThisCluster', 'notThisCluster'],
    );
  });

  it('adopts legacy ENIs a CR of this cluster lists, reports the others, and ignores tagged ones in the wide list', () => {
    const plan = planOrphanEnis({
      owned: [cloudEni('eni-a')],
      unscoped: [
        cloudEni('eni-a'),
        cloudEni('eni-b', { tags: { creator: 'eniflow', 'eniflow.io/cluster-id': OTHER } }),
        legacyEni('eni-legacy-listed'),
        legacyEni('eni-legacy-loose', { status: 'InUse', instanceId: 'i-9' }),
        withoutCreationTime(legacyEni('eni-legacy-old', { tags: { creator: 'eniflow' } })),
        aCloudEni('eni-not-ours', { tags: { creator: 'someone' } }),
      ],
      clusterId: CLUSTER,
      knownEniIds: ['eni-legacy-listed'],
      nowMs: NOW,
      graceMs: GRACE,
    });
    assert.deepEqual(
      plan.orphans.map((orphan) => orphan.eniId),
      ['eni-a'],
    );
    assert.deepEqual(plan.adopted, ['eni-legacy-listed']);
    // Only the detached one is possibly this cluster's leak: the attached one is in use on its instance.
    assert.deepEqual(plan.unowned, [
      {
        eniId: 'eni-legacy-loose',
        status: 'InUse',
        detached: false,
        node: 'node-a',
        createdAt: '2026-12-03T07:00:00Z',
      },
      { eniId: 'eni-legacy-old', status: 'Available', detached: true },
    ]);
  });

  it('is the same plan whatever order the cloud lists in', () => {
    const owned = [cloudEni('eni-3'), cloudEni('eni-1', { creationTime: '2026-12-03T07:59:00Z' }), cloudEni('eni-2')];
    const unscoped = [legacyEni('eni-9'), legacyEni('eni-8')];
    const input = { clusterId: CLUSTER, knownEniIds: [], nowMs: NOW, graceMs: GRACE };
    const forward = planOrphanEnis({ ...input, owned, unscoped });
    const backward = planOrphanEnis({ ...input, owned: [...owned].reverse(), unscoped: [...unscoped].reverse() });
    assert.deepEqual(forward, backward);
    assert.deepEqual(
      forward.unowned.map((eni) => eni.eniId),
      ['eni-8', 'eni-9'],
    );
  });
});

describe('recheckOrphan', () => {
  const rows: { name: string; fresh: CloudEni | undefined; known?: string[]; verdict: OrphanRecheck }[] = [
    { name: 'still Available, unlisted, ours', fresh: cloudEni('eni-1'), verdict: 'delete' },
    { name: 'gone meanwhile', fresh: undefined, verdict: 'gone' },
    { name: 'a CR lists it now', fresh: cloudEni('eni-1'), known: ['eni-1'], verdict: 'nowKnown' },
    { name: 'attaching now', fresh: cloudEni('eni-1', { status: 'Attaching', instanceId: 'i-1' }), verdict: 'inUse' },
    { name: 'InUse now', fresh: cloudEni('eni-1', { status: 'InUse', instanceId: 'i-1' }), verdict: 'inUse' },
    {
      name: 'tagged for another cluster',
      fresh: cloudEni('eni-1', { tags: { creator: 'eniflow', 'eniflow.io/cluster-id': OTHER } }),
      verdict: 'notThisCluster',
    },
    { name: 'its cluster tag removed', fresh: legacyEni('eni-1'), verdict: 'notThisCluster' },
  ];
  for (const row of rows) {
    it(row.name, () => {
      assert.equal(recheckOrphan({ fresh: row.fresh, knownEniIds: row.known ?? [], clusterId: CLUSTER }), row.verdict);
    });
  }
});

describe('gcRemovalVerdict', () => {
  const mine = { creator: 'eniflow', 'eniflow.io/node': 'node-a', 'eniflow.io/cluster-id': CLUSTER };
  const rows: { name: string; cloud: CloudEni | undefined; verdict: GcRemovalVerdict }[] = [
    { name: 'gone', cloud: undefined, verdict: 'gone' },
    {
      name: 'attached here, any tags',
      cloud: cloudEni('e', { status: 'InUse', instanceId: 'i-1', tags: {} }),
      verdict: 'remove',
    },
    {
      name: 'attached elsewhere, even if tagged for this node',
      cloud: cloudEni('e', { status: 'InUse', instanceId: 'i-2', tags: mine }),
      verdict: 'attachedElsewhere',
    },
    { name: 'Available, tagged for this node and cluster', cloud: cloudEni('e', { tags: mine }), verdict: 'remove' },
    {
      name: 'Available, tagged for another node of this cluster',
      cloud: cloudEni('e', { tags: { ...mine, 'eniflow.io/node': 'node-b' } }),
      verdict: 'notProvablyOurs',
    },
    {
      name: 'Available, tagged for this node name in another cluster',
      cloud: cloudEni('e', { tags: { ...mine, 'eniflow.io/cluster-id': OTHER } }),
      verdict: 'notProvablyOurs',
    },
    {
      name: 'Available, made before the cluster tag',
      cloud: cloudEni('e', { tags: { creator: 'eniflow', 'eniflow.io/node': 'node-a' } }),
      verdict: 'notProvablyOurs',
    },
    { name: 'Available, untagged', cloud: cloudEni('e', { tags: {} }), verdict: 'notProvablyOurs' },
  ];
  for (const row of rows) {
    it(row.name, () => {
      assert.equal(
        gcRemovalVerdict({ cloud: row.cloud, instanceId: 'i-1', nodeName: 'node-a', clusterId: CLUSTER }),
        row.verdict,
      );
    });
  }

  it('an instance id of "" never matches an attached ENI', () => {
    const cloud = cloudEni('e', { status: 'InUse', instanceId: 'i-1', tags: {} });
    assert.equal(
      gcRemovalVerdict({ cloud, instanceId: '', nodeName: 'node-a', clusterId: CLUSTER }),
      'attachedElsewhere',
    );
  });
});

describe('clusterOwnershipOf', () => {
  it('tells this cluster, another, legacy and not eniflow apart', () => {
    const of = (tags: Record<string, string> | undefined) => clusterOwnershipOf({ tags, clusterId: CLUSTER });
    assert.equal(of({ creator: 'eniflow', 'eniflow.io/cluster-id': CLUSTER }), 'thisCluster');
    assert.equal(of({ creator: 'eniflow', 'eniflow.io/cluster-id': OTHER }), 'otherCluster');
    assert.equal(of({ creator: 'eniflow', 'eniflow.io/cluster-id': '' }), 'otherCluster');
    assert.equal(of({ creator: 'eniflow' }), 'legacy');
    assert.equal(of(undefined), 'notEniflow');
    assert.equal(of({ creator: 'terway' }), 'notEniflow');
  });

  it('lets the cluster tag decide whoever created the ENI: an adopted one keeps its creator tag', () => {
    const of = (tags: Record<string, string>) => clusterOwnershipOf({ tags, clusterId: CLUSTER });
    assert.equal(of({ creator: 'terway', 'eniflow.io/cluster-id': CLUSTER }), 'thisCluster');
    assert.equal(of({ 'eniflow.io/cluster-id': CLUSTER }), 'thisCluster');
    assert.equal(of({ creator: 'terway', 'eniflow.io/cluster-id': OTHER }), 'otherCluster');
  });
});
