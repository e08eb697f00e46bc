import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { planOrphanEnis } from '../../src/ipam/index.js';
import type { CloudEni } from '../../src/ipam/index.js';
import { aCloudEni } from './builders.js';

/** An eniflow-created ENI, Available, attached nowhere, an hour old at {@link NOW}. */
function cloudEni(eniId: string, overrides: Partial<CloudEni> = {}): CloudEni {
  return aCloudEni(eniId, {
    status: 'Available',
    instanceId: '',
    tags: { creator: 'eniflow', 'eniflow.io/node': 'node-a' },
    creationTime: '2026-12-03T07:00:00Z',
    ...overrides,
  });
}

function withoutCreationTime(eni: CloudEni): CloudEni {
  const copy = { ...eni };
  delete copy.creationTime;
  return copy;
}

const NOW = Date.UTC(2026, 11, 3, 8, 0, 0);

describe('planOrphanEnis', () => {
  it('deletes only Available ENIs known to no CR and older than the grace period, and says why it keeps the rest', () => {
    const plan = planOrphanEnis({
      cloud: [
        cloudEni('eni-young', { creationTime: '2026-12-03T07:59:30Z' }),
        cloudEni('eni-orphan'),
        cloudEni('eni-known'),
        cloudEni('eni-attached', { status: 'InUse', instanceId: 'i-1' }),
        cloudEni('eni-attaching', { status: 'Attaching', instanceId: '' }),
        withoutCreationTime(cloudEni('eni-no-time')),
        cloudEni('eni-bad-time', { creationTime: 'yesterday' }),
        cloudEni('eni-untagged-node', { tags: { creator: 'eniflow' } }),
      ],
      knownEniIds: ['eni-known'],
      nowMs: NOW,
      graceMs: 15 * 60_000,
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
  });
});
