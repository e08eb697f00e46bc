import type { EniAllocationPlan } from './eni-plan.js';
import type { UnsatisfiedReason } from './local-pool.js';

/** Why pods still wait for an IP, in words an operator reads on the pod's Events. */
export const PENDING_REASONS = {
  nodeNotReady: 'the node is not Ready, so no IP is allocated for it',
  throttled: 'the ECS API is throttling eniflow; allocation is retried with backoff',
  vSwitchExhausted: "the node's vSwitches have no free IP address (vSwitch exhausted)",
  instanceEniLimit: "the instance's ENI limit is reached and every ENI is at its IP quota",
  waitingForAttach: 'a new ENI is being created and attached for it',
  foreignIp: 'the pod already runs with an IP this node does not hold',
  allocating: 'IP allocation is in progress',
  degradedL0:
    'the degradation switch l0 holds back every cloud call; only idle IPs already on the node are handed out until it is lifted',
} as const;

export type PendingReason = keyof typeof PENDING_REASONS;

/**
 * The most useful explanation for a pod still without its IP after a pass, from what the pass saw: its own
 * unsatisfied reason, the plan (problems, unmet demand, ENIs being created), and the failure types of the pass.
 */
export function explainPendingPod(input: {
  podReason: UnsatisfiedReason;
  isNodeReady: boolean;
  plan?: Pick<EniAllocationPlan, 'allocations' | 'problems' | 'unmetDemand'>;
  failureTypes: readonly string[];
  /** Set while degradation (l0) holds back allocation: the plan, if any, was not acted on. */
  allocationHeldBack?: boolean;
}): PendingReason {
  if (!input.isNodeReady) return 'nodeNotReady';
  if (input.podReason === 'statusIpNotInPool') return 'foreignIp';
  if (input.allocationHeldBack === true) return 'degradedL0';
  if (input.failureTypes.includes('EcsThrottled')) return 'throttled';
  const plan = input.plan;
  // Both plan problems (an exhausted ENI vSwitch, no vSwitch for a new ENI) mean the vSwitches are out of IPs.
  const exhausted = input.failureTypes.includes('EcsVSwitchExhausted') || (plan?.problems.length ?? 0) > 0;
  if (exhausted) return 'vSwitchExhausted';
  if (plan !== undefined && plan.unmetDemand.normal + plan.unmetDemand.erdma > 0) return 'instanceEniLimit';
  if (plan?.allocations.some((allocation) => allocation.kind === 'createEni') === true) return 'waitingForAttach';
  return 'allocating';
}
