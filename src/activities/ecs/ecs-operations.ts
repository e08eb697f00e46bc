/**
 * The ECS and VPC OpenAPI operations eniflow calls, named once: rate-limiter keys, metric labels and the `action`
 * log field all take {@link EcsOperation}, so a misspelt key fails to compile (Terway's seed had two).
 */
export const ECS_OPERATIONS = [
  'CreateNetworkInterface',
  'AttachNetworkInterface',
  'DetachNetworkInterface',
  'DeleteNetworkInterface',
  'DescribeNetworkInterfaces',
  'AssignPrivateIpAddresses',
  'UnassignPrivateIpAddresses',
  'AssignIpv6Addresses',
  'UnassignIpv6Addresses',
  'DescribeVSwitches',
] as const;

export type EcsOperation = (typeof ECS_OPERATIONS)[number];

/**
 * Calls per minute per operation, Terway's client-side defaults, each with its own
 * bucket: the Unassign* calls and DescribeVSwitches get their own keys here, unlike the seed.
 */
export const DEFAULT_CALLS_PER_MINUTE: Readonly<Record<EcsOperation, number>> = {
  CreateNetworkInterface: 500,
  AttachNetworkInterface: 500,
  DetachNetworkInterface: 400,
  DeleteNetworkInterface: 500,
  DescribeNetworkInterfaces: 800,
  AssignPrivateIpAddresses: 400,
  UnassignPrivateIpAddresses: 400,
  AssignIpv6Addresses: 400,
  UnassignIpv6Addresses: 400,
  DescribeVSwitches: 300,
};

/**
 * Error codes that mean an operation's goal already holds, per operation: the saga's clean-ups meet them all the
 * time (detaching an ENI that never got attached, deleting one that is already gone) and the activities treat them
 * as done, so metrics count them as `noop`, not as failures. Detach's `InvalidEniState` is the cloud's answer for
 * an ENI that is `Available` (never attached, or already detached); the activity confirms that with a describe.
 */
export const ALREADY_DONE_CODES: Readonly<Partial<Record<EcsOperation, readonly string[]>>> = {
  DetachNetworkInterface: ['InvalidEniId.NotFound', 'InvalidOperation.InvalidEniState'],
  DeleteNetworkInterface: ['InvalidEniId.NotFound'],
  UnassignPrivateIpAddresses: ['InvalidIp.IpUnassigned', 'InvalidEniId.NotFound'],
  UnassignIpv6Addresses: ['InvalidIp.IpUnassigned', 'InvalidEniId.NotFound'],
};
