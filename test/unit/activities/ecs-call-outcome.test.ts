/** What each ECS answer counts as in `eniflow_ecs_calls_total`: the saga's clean-ups are noop, never failures. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { ecsCallOutcome } from '../../../src/worker/metrics.js';
import type { EcsCallOutcome } from '../../../src/worker/metrics.js';
import type { EcsFailureType } from '../../../src/activities/ecs/ecs-errors.js';
import type { EcsOperation } from '../../../src/activities/ecs/ecs-operations.js';

const TABLE: { operation: EcsOperation; code: string; failureType?: EcsFailureType; expected: EcsCallOutcome }[] = [
  { operation: 'CreateNetworkInterface', code: 'OK', expected: 'success' },
  // Detaching an ENI that never attached (the saga after a failed attach) and deleting one already gone.
  {
    operation: 'DetachNetworkInterface',
    code: 'InvalidOperation.InvalidEniState',
    failureType: 'EcsInvalidState',
    expected: 'noop',
  },
  { operation: 'DetachNetworkInterface', code: 'InvalidEniId.NotFound', failureType: 'EcsNotFound', expected: 'noop' },
  { operation: 'DeleteNetworkInterface', code: 'InvalidEniId.NotFound', failureType: 'EcsNotFound', expected: 'noop' },
  {
    operation: 'UnassignPrivateIpAddresses',
    code: 'InvalidIp.IpUnassigned',
    failureType: 'EcsInvalidRequest',
    expected: 'noop',
  },
  // The same codes where they do not mean "already done" are failures.
  {
    operation: 'AttachNetworkInterface',
    code: 'InvalidEniId.NotFound',
    failureType: 'EcsNotFound',
    expected: 'failure',
  },
  {
    operation: 'DeleteNetworkInterface',
    code: 'InvalidOperation.InvalidEniState',
    failureType: 'EcsInvalidState',
    expected: 'failure',
  },
  {
    operation: 'AssignPrivateIpAddresses',
    code: 'Throttling.User',
    failureType: 'EcsThrottled',
    expected: 'throttled',
  },
  {
    operation: 'CreateNetworkInterface',
    code: 'InvalidVSwitchId.IpNotEnough',
    failureType: 'EcsVSwitchExhausted',
    expected: 'failure',
  },
];

describe('ecsCallOutcome', () => {
  for (const row of TABLE) {
    it(`${row.operation} ${row.code} → ${row.expected}`, () => {
      assert.equal(ecsCallOutcome(row), row.expected);
    });
  }
});
