/**
 * Every reason eniflow writes on a Kubernetes Event or a core Node condition, with what it means and whether it is
 * Terway's. A reason is an API users alert on (`kubectl get events --field-selector reason=…`): where eniflow raises
 * a condition Terway raises, it uses Terway's reason. Notices name their entry here; no reason is written inline.
 * The runbook's "Event reasons" table is checked against this module by a unit test.
 */

export type EventType = 'Normal' | 'Warning';

/** One Event reason: its type, the objects it is written on, what it means, and Terway's use of it. */
export interface EventReason {
  reason: string;
  type: EventType;
  /** The objects the Event is written on. */
  on: string;
  meaning: string;
  /** How Terway v1.17 uses the same reason for the same condition; `undefined`: eniflow's own. */
  terway?: string;
}

/** One reason of a core Node condition eniflow writes. */
export interface ConditionReason {
  reason: string;
  condition: 'SufficientIP' | 'IPAMConfigValid' | 'ENIOperationsFailing';
  status: 'True' | 'False';
  meaning: string;
  terway?: string;
}

const NODE = 'Node CR and core Node';

export const EVENT_REASONS = {
  AllocIPFailed: {
    reason: 'AllocIPFailed',
    type: 'Warning',
    on: NODE,
    meaning:
      "A pass's allocation failed: the failing cloud calls (action, code, attempts, since when), or what each step " +
      'met when only capacity answers (vSwitch exhausted, quota) stopped it.',
    terway: "the multi-IP controller's Warning on the Node CR when a pass's allocation fails",
  },
  PrefixModeImmutable: {
    reason: 'PrefixModeImmutable',
    type: 'Warning',
    on: NODE,
    meaning:
      '`spec.eni.enableIPPrefix` differs from the mode the node was first seen in: the mode is fixed at creation, ' +
      'nothing changes; re-create the node to change it.',
    terway: "the daemon's Warning on the core Node when `enable_ip_prefix` changes after the Node CR was created",
  },
  InsufficientIP: {
    reason: 'InsufficientIP',
    type: 'Warning',
    on: NODE,
    meaning: "The core Node's `SufficientIP` condition turned False: no idle IP and no ENI can take more.",
    terway: 'the reason of the `SufficientIP=False` condition (Terway writes the condition only, no Event)',
  },
  IPAllocationPending: {
    reason: 'IPAllocationPending',
    type: 'Warning',
    on: 'Pod; Node CR and core Node (the count, past 50 waiting pods)',
    meaning:
      'On a pod: it has waited past `pendingPodEventAfterMs` for its IP, and why (the failing call or the plan). ' +
      'On the node, when more pods wait than get an Event each: how many wait, counted by cause.',
  },
  DaemonNotReady: {
    reason: 'DaemonNotReady',
    type: 'Warning',
    on: NODE,
    meaning:
      "Terway's daemon has not written `spec.eni` and `spec.pool` for `daemonWaitEventAfterMs`: no IP is allocated.",
  },
  InvalidNodeSpec: {
    reason: 'InvalidNodeSpec',
    type: 'Warning',
    on: NODE,
    meaning:
      'The Node CR spec cannot be acted on (the problems are listed), or a pool tuning field was dropped for its ' +
      'fallback.',
  },
  VSwitchBlocked: {
    reason: 'VSwitchBlocked',
    type: 'Warning',
    on: NODE,
    meaning: 'A vSwitch answered `InvalidVSwitchId.IpNotEnough` and is not used until its block ends or a resync.',
  },
  EniKeptUntouched: {
    reason: 'EniKeptUntouched',
    type: 'Warning',
    on: NODE,
    meaning: "An ENI the instance's listing left out still serves pods: kept, never detached or deleted by eniflow.",
  },
  EniReleased: {
    reason: 'EniReleased',
    type: 'Normal',
    on: NODE,
    meaning: "An ENI the instance's listing left out and no pod used was released.",
  },
  EniForgotten: {
    reason: 'EniForgotten',
    type: 'Normal',
    on: NODE,
    meaning: "An ENI the instance's listing left out no longer exists: dropped from the CR.",
  },
  IPRebound: {
    reason: 'IPRebound',
    type: 'Warning',
    on: 'Pod',
    meaning: "The pod's address is Invalid (the cloud does not have it) and unused: it was rebound, or waits.",
  },
  Recovered: {
    reason: 'Recovered',
    type: 'Normal',
    on: NODE,
    meaning: 'Cloud calls succeed again after failing; says how many pods the recovering pass served.',
  },
  DegradationHoldsBack: {
    reason: 'DegradationHoldsBack',
    type: 'Warning',
    on: NODE,
    meaning: 'The degradation switch (`l0`, `l1`) holds back work this node has; once per change of level.',
  },
  DegradationLifted: {
    reason: 'DegradationLifted',
    type: 'Normal',
    on: NODE,
    meaning: 'The degradation switch was lifted: cloud calls resume, held-back GC and sync run now.',
  },
  OrphanEniDeleted: {
    reason: 'OrphanEniDeleted',
    type: 'Warning',
    on: 'Node CR',
    meaning: 'The janitor deleted an Available ENI eniflow made for this node and no Node CR knows.',
  },
} as const satisfies Record<string, EventReason>;

export type EventReasonName = keyof typeof EVENT_REASONS;

type EventReasonEntry = (typeof EVENT_REASONS)[EventReasonName];

/** The reasons whose `on` names a pod: only these may be written on one (the Event writer's types hold to it). */
export type PodEventReason = Extract<EventReasonEntry, { on: `Pod${string}` }>;

/** The reasons whose `on` names the node's Node CR: only these may be written on the node. */
export type NodeEventReason = Extract<EventReasonEntry, { on: `${string}Node CR${string}` }>;

export const CONDITION_REASONS = {
  SufficientIP: {
    reason: 'SufficientIP',
    condition: 'SufficientIP',
    status: 'True',
    meaning: 'An ENI has an idle IP or can take more, or a new ENI can be attached.',
    terway: 'the same condition and reason',
  },
  InsufficientIP: {
    reason: 'InsufficientIP',
    condition: 'SufficientIP',
    status: 'False',
    meaning: 'No idle IP and no ENI (existing or new) can take more.',
    terway: 'the same condition and reason',
  },
  ValidNodeSpec: {
    reason: 'ValidNodeSpec',
    condition: 'IPAMConfigValid',
    status: 'True',
    meaning: 'The Node CR spec is valid again.',
  },
  InvalidNodeSpec: {
    reason: 'InvalidNodeSpec',
    condition: 'IPAMConfigValid',
    status: 'False',
    meaning: 'The Node CR spec cannot be acted on; the message lists why.',
  },
  CloudCallsFailing: {
    reason: 'CloudCallsFailing',
    condition: 'ENIOperationsFailing',
    status: 'True',
    meaning: 'Cloud calls fail (capacity answers excluded); the message counts attempts as the failure ledger does.',
  },
  CloudCallsSucceed: {
    reason: 'CloudCallsSucceed',
    condition: 'ENIOperationsFailing',
    status: 'False',
    meaning: 'The cloud calls that failed succeed again.',
  },
} as const satisfies Record<string, ConditionReason>;

export type ConditionReasonName = keyof typeof CONDITION_REASONS;

/** The reasons of one condition's catalogue entries. */
export type ConditionReasonOf<C extends ConditionReason['condition']> = Extract<
  (typeof CONDITION_REASONS)[ConditionReasonName],
  { condition: C }
>['reason'];

export type SufficientIpReason = ConditionReasonOf<'SufficientIP'>;
export type EniOperationsReason = ConditionReasonOf<'ENIOperationsFailing'>;
