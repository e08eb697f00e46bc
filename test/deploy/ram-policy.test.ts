/**
 * deploy/ram-policy.json, the least-privilege RAM policy of docs/security.md: it grants exactly the ECS and VPC
 * actions the code calls (ECS_OPERATIONS), and every action that changes an existing ENI is conditioned on
 * eniflow's creator tag and this cluster's tag.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

import { ECS_OPERATIONS } from '../../src/activities/ecs/ecs-operations.js';
import { ENIFLOW_CLUSTER_TAG_KEY, ENIFLOW_CREATOR_TAG } from '../../src/ipam/index.js';

interface Statement {
  Effect: string;
  Action: string[];
  Resource: string;
  Condition?: { StringEquals?: Record<string, string> };
}

const policy = JSON.parse(readFileSync(new URL('../../deploy/ram-policy.json', import.meta.url), 'utf8')) as {
  Version: string;
  Statement: Statement[];
};

/** The RAM action of an operation: DescribeVSwitches is the VPC service's, the rest are ECS's. */
function ramAction(operation: string): string {
  return operation === 'DescribeVSwitches' ? `vpc:${operation}` : `ecs:${operation}`;
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

describe('deploy/ram-policy.json', () => {
  it('allows exactly the actions eniflow calls, and nothing is denied or wildcarded', () => {
    assert.equal(policy.Version, '1');
    assert.ok(policy.Statement.every((statement) => statement.Effect === 'Allow'));
    const granted = policy.Statement.flatMap((statement) => statement.Action).sort();
    assert.deepEqual(granted, [...ECS_OPERATIONS].map(ramAction).sort());
    assert.ok(!granted.some((action) => action.includes('*')));
  });

  it("conditions create and every change of an existing ENI on eniflow's tags and this cluster's id", () => {
    const expected = {
      [`ecs:tag/${ENIFLOW_CREATOR_TAG.key}`]: ENIFLOW_CREATOR_TAG.value,
      [`ecs:tag/${ENIFLOW_CLUSTER_TAG_KEY}`]: '${ENIFLOW_CLUSTER_ID}',
    };
    for (const operation of ['CreateNetworkInterface', ...CHANGES_EXISTING]) {
      const statements = policy.Statement.filter((statement) => statement.Action.includes(ramAction(operation)));
      assert.equal(statements.length, 1, operation);
      assert.deepEqual(statements[0]?.Condition?.StringEquals, expected, operation);
    }
  });
});
