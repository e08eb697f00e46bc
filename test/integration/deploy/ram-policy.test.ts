/**
 * deploy/ram-policy.json, the least-privilege RAM policy of docs/security.md: it grants exactly the ECS and VPC
 * actions the code calls, found in the SDK adapter's source (so a call added there without the policy, or a grant
 * left for a call removed, fails here), and, evaluated the way RAM evaluates it (Deny wins, every condition of a
 * statement must hold), it lets a cluster's role change its own ENIs, including ones it adopted from Terway or
 * from before the cluster tag, and never another cluster's.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

import { ECS_OPERATIONS } from '../../../src/activities/ecs/ecs-operations.js';
import { ramAction, ramAllows, shippedRamPolicy } from '../../support/ram-policy.js';
import type { RamRequest } from '../../support/ram-policy.js';
import {
  adoptionTags,
  ENIFLOW_CLUSTER_TAG_KEY,
  ENIFLOW_CREATOR_TAG,
  ENIFLOW_NODE_TAG,
} from '../../../src/ipam/index.js';

const CLUSTER = 'c-this';
const OTHER = 'c-other';

const policy = shippedRamPolicy();
/** The policy as an operator installs it for {@link CLUSTER}. */
const installed = shippedRamPolicy(CLUSTER);
const allowed = (request: RamRequest): boolean => ramAllows(installed, request);

/** Every OpenAPI action the SDK adapter sends: the first argument of each `this.call(...)`. */
function actionsCalledInSource(): string[] {
  const source = readFileSync(new URL('../../../src/activities/ecs/alibaba-ecs-api.ts', import.meta.url), 'utf8');
  return [...new Set([...source.matchAll(/this\.call\(\s*'([A-Za-z0-9]+)'/g)].map((match) => match[1] ?? ''))].sort();
}

/** Actions that change an ENI that already exists: the ones a neighbour cluster must never be able to run. */
const CHANGES_EXISTING = [
  'DetachNetworkInterface',
  'DeleteNetworkInterface',
  'AssignPrivateIpAddresses',
  'UnassignPrivateIpAddresses',
  'AssignIpv6Addresses',
  'UnassignIpv6Addresses',
];

const createdHere = { creator: 'eniflow', [ENIFLOW_NODE_TAG]: 'node-a', [ENIFLOW_CLUSTER_TAG_KEY]: CLUSTER };
const terwayEni = { creator: 'terway' };
const legacyEni = { creator: 'eniflow', [ENIFLOW_NODE_TAG]: 'node-a' };
const adoptedTerwayEni = { ...terwayEni, ...adoptionTags({ clusterId: CLUSTER, nodeName: 'node-a' }) };
const otherClusters = { creator: 'eniflow', [ENIFLOW_NODE_TAG]: 'node-b', [ENIFLOW_CLUSTER_TAG_KEY]: OTHER };

describe('deploy/ram-policy.json', () => {
  it('allows exactly the actions the code calls, both ways, and nothing wildcarded', () => {
    assert.equal(policy.Version, '1');
    const called = actionsCalledInSource();
    assert.deepEqual(called, [...ECS_OPERATIONS].sort(), 'ECS_OPERATIONS names exactly what the adapter calls');
    const granted = [
      ...new Set(policy.Statement.filter((s) => s.Effect === 'Allow').flatMap((statement) => statement.Action)),
    ].sort();
    assert.deepEqual(granted, called.map(ramAction).sort());
    assert.ok(!policy.Statement.flatMap((statement) => statement.Action).some((action) => action.includes('*')));
    // Deny only narrows an action that is granted.
    for (const statement of policy.Statement.filter((s) => s.Effect === 'Deny')) {
      for (const action of statement.Action) assert.ok(granted.includes(action), action);
    }
  });

  it("conditions every change of an existing ENI on this cluster's tag, and creates on eniflow's tags too", () => {
    const clusterTag = { [`ecs:tag/${ENIFLOW_CLUSTER_TAG_KEY}`]: '${ENIFLOW_CLUSTER_ID}' };
    for (const operation of CHANGES_EXISTING) {
      const statements = policy.Statement.filter((statement) => statement.Action.includes(ramAction(operation)));
      assert.equal(statements.length, 1, operation);
      assert.deepEqual(statements[0]?.Condition, { StringEquals: clusterTag }, operation);
    }
    const create = policy.Statement.filter((statement) => statement.Action.includes('ecs:CreateNetworkInterface'));
    assert.deepEqual(create[0]?.Condition, {
      StringEquals: { [`ecs:tag/${ENIFLOW_CREATOR_TAG.key}`]: ENIFLOW_CREATOR_TAG.value, ...clusterTag },
    });
  });

  it('lets the role change its own and its adopted ENIs, and nothing of a neighbour or not yet adopted', () => {
    const table: { tags: Record<string, string>; changes: boolean }[] = [
      { tags: createdHere, changes: true },
      { tags: adoptedTerwayEni, changes: true },
      { tags: { ...legacyEni, ...adoptionTags({ clusterId: CLUSTER, nodeName: 'node-a' }) }, changes: true },
      { tags: terwayEni, changes: false },
      { tags: legacyEni, changes: false },
      { tags: otherClusters, changes: false },
      { tags: { ...terwayEni, [ENIFLOW_CLUSTER_TAG_KEY]: OTHER }, changes: false },
    ];
    for (const { tags, changes } of table) {
      for (const operation of CHANGES_EXISTING) {
        assert.equal(
          allowed({ action: ramAction(operation), resourceTags: tags }),
          changes,
          `${operation} on ${JSON.stringify(tags)}`,
        );
      }
    }
  });

  it("lets the role adopt an ENI without a cluster tag into its own cluster only, and never re-tag a cluster's ENI", () => {
    const adopt = (resourceTags: Record<string, string>, clusterId = CLUSTER): boolean =>
      allowed({
        action: 'ecs:TagResources',
        resourceTags,
        requestTags: adoptionTags({ clusterId, nodeName: 'node-a' }),
      });
    assert.equal(adopt(terwayEni), true, "Terway's ENI");
    assert.equal(adopt(legacyEni), true, 'an eniflow ENI from before the cluster tag');
    assert.equal(adopt(terwayEni, OTHER), false, "into another cluster's");
    assert.equal(adopt(otherClusters), false, "another cluster's ENI");
    assert.equal(adopt({ creator: 'eniflow', [ENIFLOW_CLUSTER_TAG_KEY]: '' }), false, 'an empty cluster tag');
    assert.equal(
      allowed({ action: 'ecs:TagResources', resourceTags: terwayEni, requestTags: { creator: 'eniflow' } }),
      false,
    );
    const tagAllows = shippedRamPolicy(CLUSTER).Statement.filter(
      (statement) => statement.Effect === 'Allow' && statement.Action.includes('ecs:TagResources'),
    );
    assert.deepEqual(
      tagAllows.map((statement) => statement.Resource),
      ['acs:ecs:*:*:eni/*'],
      'adoption may tag ENIs only, no other resource',
    );
  });

  it('creates only ENIs tagged for this cluster by eniflow', () => {
    const create = (requestTags: Record<string, string>): boolean =>
      allowed({ action: 'ecs:CreateNetworkInterface', requestTags });
    assert.equal(create(createdHere), true);
    assert.equal(create(otherClusters), false);
    assert.equal(create(adoptedTerwayEni), false);
  });
});
