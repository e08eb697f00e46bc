import type { EcsApiName } from '../../shared/ecs-budget.js';

/**
 * The ECS and VPC OpenAPI operations eniflow calls, named once in ../../shared/ecs-budget.ts (budgets, task queues,
 * metric labels and the `action` log field all take {@link EcsOperation}, so a misspelt key fails to compile).
 */
export { DEFAULT_CALLS_PER_MINUTE, ECS_APIS as ECS_OPERATIONS } from '../../shared/ecs-budget.js';

export type EcsOperation = EcsApiName;

/**
 * Error codes that mean an operation's goal already holds, per operation: the saga's clean-ups meet them all the
 * time (detaching an ENI that never got attached, deleting one that is already gone) and the activities treat them
 * as done, so metrics count them as `noop`, not as failures. Unassigning prefixes is the same action with
 * `Ipv4Prefix.N` / `Ipv6Prefix.N` and answers the same codes for a prefix that is already gone. Detach's `InvalidEniState` is the cloud's answer for
 * an ENI that is `Available` (never attached, or already detached); the activity confirms that with a describe.
 */
export const ALREADY_DONE_CODES: Readonly<Partial<Record<EcsOperation, readonly string[]>>> = {
  DetachNetworkInterface: ['InvalidEniId.NotFound', 'InvalidOperation.InvalidEniState'],
  DeleteNetworkInterface: ['InvalidEniId.NotFound'],
  UnassignPrivateIpAddresses: ['InvalidIp.IpUnassigned', 'InvalidEniId.NotFound'],
  UnassignIpv6Addresses: ['InvalidIp.IpUnassigned', 'InvalidEniId.NotFound'],
};
