import { ENI_KIND_SHAPE } from './eni-plan.js';
import type { EniAllocation, EniKind } from './eni-plan.js';
import type { EniTrafficMode, NodeSpec } from './node-model.js';
import { eniKindOf } from './eni-plan.js';
import { sortedKeys } from './node-model.js';
import type { NetworkInterfaces } from './node-model.js';
import {
  ENIFLOW_CLUSTER_TAG_KEY,
  ENIFLOW_CREATOR_TAG,
  ENIFLOW_INTENT_TAG,
  ENIFLOW_NODE_TAG,
  hasBoundIp,
} from './eni-ownership.js';

type CreateEni = Extract<EniAllocation, { kind: 'createEni' }>;

/**
 * Every parameter of one `CreateNetworkInterface`, exactly as sent (the create activity's input). ECS's idempotency
 * holds only for the same token with the same parameters, so a re-issue sends this record unchanged, whatever the
 * spec says by then.
 */
export interface CreateEniRequest {
  eniKind: EniKind;
  /** `InstanceType` and `NetworkInterfaceTrafficMode` as sent. */
  eniType: 'Secondary' | 'Trunk';
  trafficMode: EniTrafficMode;
  vSwitchId: string;
  securityGroupIds: string[];
  resourceGroupId?: string;
  /** Addresses of the new ENI, its primary IPv4 included. */
  ipv4Count: number;
  ipv6Count: number;
  /** Prefix mode: prefixes the ENI is created with (`Ipv4PrefixCount`, `Ipv6PrefixCount`); absent: none. */
  ipv4PrefixCount?: number;
  ipv6PrefixCount?: number;
  /** The full tag map sent. */
  tags: Record<string, string>;
  clientToken: string;
}

/**
 * A create whose outcome is unknown: the request in full, when it was first sent, and when its last attempt was
 * scheduled. It outlives the pass and continue-as-new, and is closed only when the ENI it made is known, or when a
 * list by its intent tag, made after every attempt of it has ended, shows none (see {@link nextIntentStep}).
 */
export interface PendingCreate {
  request: CreateEniRequest;
  /** When its first attempt was made (epoch ms). */
  sinceMs: number;
  /** When its latest attempt was scheduled (epoch ms): no attempt of it can reach ECS after this + the horizon. */
  lastAttemptMs: number;
  /**
   * Re-issuing cannot tell any more (the token's answer was `IdempotentFailed`, a parameter mismatch, or a refusal on
   * a re-used token): only a list by the intent tag, once every attempt has ended, may close it.
   */
  listOnly?: true;
}

/**
 * How long after an attempt is scheduled it may still reach ECS, by default (the node setting
 * `createAttemptHorizonMs`): the create activity's start-to-close timeout (60 s) plus a margin for a request already
 * on the wire when the attempt timed out. Must stay at least that timeout (a unit test holds it to the policy).
 */
export const CREATE_ATTEMPT_HORIZON_MS = 90_000;

/**
 * The create request for a planned ENI: kind, vSwitch and counts from the plan, the rest from the spec now. The
 * node, cluster, intent and creator tags come after the spec's own, so a spec tag cannot pass the ENI off as
 * another node's or cluster's.
 */
export function buildCreateRequest(input: {
  allocation: CreateEni;
  spec: Pick<NodeSpec, 'eni'>;
  nodeName: string;
  clusterId: string;
  clientToken: string;
}): CreateEniRequest {
  const { allocation, spec } = input;
  const shape = ENI_KIND_SHAPE[allocation.eniKind];
  const resourceGroupId = spec.eni?.resourceGroupID;
  return {
    eniKind: allocation.eniKind,
    eniType: shape.type,
    trafficMode: shape.trafficMode,
    vSwitchId: allocation.vSwitchId,
    securityGroupIds: [...(spec.eni?.securityGroupIDs ?? [])],
    ...(resourceGroupId === undefined ? {} : { resourceGroupId }),
    ipv4Count: allocation.ipv4Count,
    ipv6Count: allocation.ipv6Count,
    ...prefixCountsOf(allocation),
    tags: {
      ...(spec.eni?.tag ?? {}),
      [ENIFLOW_NODE_TAG]: input.nodeName,
      [ENIFLOW_CLUSTER_TAG_KEY]: input.clusterId,
      [ENIFLOW_INTENT_TAG]: input.clientToken,
      [ENIFLOW_CREATOR_TAG.key]: ENIFLOW_CREATOR_TAG.value,
    },
    clientToken: input.clientToken,
  };
}

/** Error codes by which ECS says the token's earlier use decides the answer, not this request. */
const IDEMPOTENCY_CODES = ['IdempotentParameterMismatch', 'IdempotentFailed', 'InvalidIdempotenceParameter.Mismatch'];

/**
 * Failure types by which ECS refuses a request without acting on it: out of addresses or quota, a bad parameter,
 * a missing vSwitch or security group. They prove that nothing was created only when this was the token's one and
 * only use (see {@link createFailureVerdict}).
 */
const REFUSAL_TYPES = ['EcsVSwitchExhausted', 'EcsQuotaExceeded', 'EcsInvalidRequest', 'EcsNotFound'];

export type CreateFailureVerdict =
  /** Nothing was created: the intent is closed (a new create, if still needed, takes a new token). */
  | 'closed'
  /** The outcome is unknown but the same request may still tell: re-issue it. */
  | 'reissue'
  /** The outcome is unknown and re-issuing cannot tell: list by the intent tag once every attempt has ended. */
  | 'listOnly';

/**
 * What a failed create proves. A refusal (vSwitch exhausted, quota, invalid parameter, not found) proves that ECS
 * created nothing only on the token's first use: the first attempt of a create never sent before. On any later
 * attempt an earlier one may have created the ENI and lost its answer (ECS would replay that success, unless the
 * earlier attempt is still waiting to reach it or the token was forgotten), so the refusal proves nothing about the
 * earlier attempts. The idempotency answers (`IdempotentParameterMismatch`, `IdempotentFailed`) speak of an earlier
 * use whose outcome we do not know, never of this one. Everything else (5xx, throttling, timeouts, a lost worker,
 * unknown codes) leaves the outcome open and is worth a re-issue.
 */
export function createFailureVerdict(input: {
  type: string;
  code?: string | undefined;
  /** The attempt of the create activity that answered (1-based); undefined when the activity did not say. */
  attempt?: number | undefined;
  /** Whether the request was sent in an earlier pass (an open intent re-issued). */
  reissued: boolean;
}): CreateFailureVerdict {
  if (input.code !== undefined && IDEMPOTENCY_CODES.includes(input.code)) return 'listOnly';
  if (!REFUSAL_TYPES.includes(input.type)) return 'reissue';
  const firstUse = !input.reissued && input.attempt === 1;
  return firstUse ? 'closed' : 'listOnly';
}

/** What the pass does with an open intent before anything else. */
export type IntentStep =
  /** Send the recorded request again, same token, same parameters. */
  | 'reissue'
  /** Every attempt has ended: list ENIs by the intent tag; the list decides. */
  | 'list'
  /** An attempt may still reach ECS and a re-issue cannot tell: wait for the horizon. */
  | 'wait';

/**
 * The next step for an open intent at `nowMs`. Once every attempt has ended (the last one's schedule time plus
 * `horizonMs`, {@link CREATE_ATTEMPT_HORIZON_MS} by default), a list by the intent tag is final: nothing can appear later. Before that, a
 * re-issue is safe (ECS de-duplicates the token) unless the token's answers ruled it out.
 */
export function nextIntentStep(input: { intent: PendingCreate; nowMs: number; horizonMs: number }): IntentStep {
  const { intent } = input;
  const attemptsEnded = input.nowMs >= intent.lastAttemptMs + input.horizonMs;
  if (attemptsEnded) return 'list';
  return intent.listOnly === true ? 'wait' : 'reissue';
}

/** The create an intent stands for, with exactly the parameters its token was first sent with. */
export function intentAllocation(intent: PendingCreate): CreateEni {
  return {
    kind: 'createEni',
    eniKind: intent.request.eniKind,
    vSwitchId: intent.request.vSwitchId,
    ipv4Count: intent.request.ipv4Count,
    ipv6Count: intent.request.ipv6Count,
    ...prefixCountsOf(intent.request),
  };
}

/** The prefix counts of a create, only when set, so a create without prefixes is recorded exactly as before. */
function prefixCountsOf(counts: { ipv4PrefixCount?: number; ipv6PrefixCount?: number }) {
  return {
    ...((counts.ipv4PrefixCount ?? 0) > 0 ? { ipv4PrefixCount: counts.ipv4PrefixCount } : {}),
    ...((counts.ipv6PrefixCount ?? 0) > 0 ? { ipv6PrefixCount: counts.ipv6PrefixCount } : {}),
  };
}

/**
 * A planned create, possibly standing in for an open intent (`intent`), or served by an ENI created earlier that is
 * still waiting to be attached (`awaitingEniId`). `planned` is the create the plan asked for, when there was one: a
 * closed intent gives way to it.
 */
export type AllocationWithIntent =
  | Exclude<EniAllocation, CreateEni>
  | (CreateEni & { intent?: PendingCreate; awaitingEniId?: string; planned?: CreateEni });

/**
 * The pass's allocations with the ENIs awaiting attach and the open intents folded in. Each planned create of a
 * kind first takes an ENI of that kind that waits to be attached (it exists: attaching it serves the demand without
 * a new ENI), then an intent of that kind (first planned first, intents in the order they were opened). An intent
 * no create stands for runs on its own after the plan (the ENI may exist; if it is not needed, the pool releases
 * it). Awaiting ENIs no create takes are returned in `unneeded`.
 */
export function pairCreatesWithIntents(input: {
  allocations: readonly EniAllocation[];
  intents: readonly PendingCreate[];
  awaiting?: readonly { eniId: string; eniKind: EniKind }[];
  /** The plan's demand: an awaiting ENI no create takes is released only when its pool wants nothing. */
  demand?: { normal: number; erdma: number };
}): { allocations: AllocationWithIntent[]; unneeded: string[] } {
  const intents = [...input.intents];
  const awaiting = [...(input.awaiting ?? [])];
  const paired: AllocationWithIntent[] = input.allocations.map((allocation) => {
    if (allocation.kind !== 'createEni') return allocation;
    const waiting = awaiting.findIndex((eni) => eni.eniKind === allocation.eniKind);
    if (waiting >= 0) {
      const [eni] = awaiting.splice(waiting, 1);
      return eni === undefined ? allocation : { ...allocation, awaitingEniId: eni.eniId, planned: allocation };
    }
    const index = intents.findIndex((intent) => intent.request.eniKind === allocation.eniKind);
    const [intent] = index < 0 ? [] : intents.splice(index, 1);
    return intent === undefined ? allocation : { ...intentAllocation(intent), intent, planned: allocation };
  });
  for (const intent of intents) paired.push({ ...intentAllocation(intent), intent });
  const wanted = (kind: EniKind): number => (kind === 'erdma' ? input.demand?.erdma : input.demand?.normal) ?? 0;
  const unneeded = awaiting.filter((eni) => wanted(eni.eniKind) === 0).map((eni) => eni.eniId);
  return { allocations: paired, unneeded };
}

/**
 * ENIs eniflow created whose attach kept failing (5xx, timeouts): recorded in the CR as the cloud has them,
 * `Available`, which the daemon never hands out (it uses `InUse` ENIs only), and attached again by a later pass that
 * still needs an ENI of their kind. Any idle, schedulable ENI of a managed kind the CR holds as `Available` is one.
 */
export function enisAwaitingAttach(enis: Readonly<NetworkInterfaces>): { eniId: string; eniKind: EniKind }[] {
  return sortedKeys(enis).flatMap((eniId) => {
    const eni = enis[eniId];
    if (eni?.status !== 'Available' || eni.unschedulable === true || hasBoundIp(eni)) return [];
    const eniKind = eniKindOf(eni);
    return eniKind === undefined ? [] : [{ eniId, eniKind }];
  });
}

/**
 * The ENIs the allocation plan sees: those awaiting attach are left out, so they neither use an adapter of the
 * instance nor stand for a slot; they come back through {@link pairCreatesWithIntents}.
 */
export function withoutEnisAwaitingAttach(enis: Readonly<NetworkInterfaces>): NetworkInterfaces {
  const awaiting = new Set(enisAwaitingAttach(enis).map((eni) => eni.eniId));
  return Object.fromEntries(
    sortedKeys(enis).flatMap((id) => (awaiting.has(id) ? [] : [[id, enis[id]]])),
  ) as NetworkInterfaces;
}

/**
 * Failure types of attach (or of the wait for `InUse`) that say this attach will not work: the ENI fell back to
 * `Available` after `Attaching`, the request was invalid, the instance or ENI is gone, the instance is full. The
 * created ENI is then detached and deleted. Anything else (5xx, throttling, timeouts, a state in transition,
 * unknown codes) may pass: the ENI is kept, recorded `Available` in the CR, and attached again by the next pass that
 * needs it, so a node whose attaches keep failing does not create and delete an ENI on every pass.
 */
const DEFINITE_ATTACH_FAILURES = ['EniAttachFailed', 'EcsInvalidRequest', 'EcsNotFound', 'EcsQuotaExceeded'];

export function isDefiniteAttachFailure(failureType: string): boolean {
  return DEFINITE_ATTACH_FAILURES.includes(failureType);
}
