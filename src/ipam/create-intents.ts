import type { EniAllocation, EniKind } from './eni-plan.js';

type CreateEni = Extract<EniAllocation, { kind: 'createEni' }>;

/**
 * A create whose outcome is unknown (every attempt lost: worker killed, responses dropped, partition): what was
 * asked and under which ClientToken. It outlives the pass and is re-issued, same token and parameters, before any
 * new create, so an ENI the cloud did create is found and used, never abandoned while another is created.
 */
export interface PendingCreate {
  clientToken: string;
  eniKind: EniKind;
  vSwitchId: string;
  ipv4Count: number;
  ipv6Count: number;
  sinceMs: number;
}

/** Failure types after which ECS has certainly created nothing (the same token's last answer was a refusal). */
export const DEFINITE_CREATE_REFUSALS: readonly string[] = [
  'EcsVSwitchExhausted',
  'EcsQuotaExceeded',
  'EcsInvalidRequest',
  'EcsNotFound',
];

/** The create an intent stands for, with exactly the parameters its token was first sent with. */
export function intentAllocation(intent: PendingCreate): CreateEni {
  return {
    kind: 'createEni',
    eniKind: intent.eniKind,
    vSwitchId: intent.vSwitchId,
    ipv4Count: intent.ipv4Count,
    ipv6Count: intent.ipv6Count,
  };
}

export type AllocationWithIntent = EniAllocation | (CreateEni & { intent: PendingCreate });

/**
 * The pass's allocations with the open intents folded in: each intent stands in for a planned create of its kind
 * (first planned first, intents in the order they were opened), and an intent no create stands for runs on its own
 * after the plan (the ENI may exist; if it is not needed, the pool releases it).
 */
export function pairCreatesWithIntents(input: {
  allocations: readonly EniAllocation[];
  intents: readonly PendingCreate[];
}): AllocationWithIntent[] {
  const intents = [...input.intents];
  const paired: AllocationWithIntent[] = input.allocations.map((allocation) => {
    if (allocation.kind !== 'createEni') return allocation;
    const index = intents.findIndex((intent) => intent.eniKind === allocation.eniKind);
    const [intent] = index < 0 ? [] : intents.splice(index, 1);
    return intent === undefined ? allocation : { ...intentAllocation(intent), intent };
  });
  for (const intent of intents) paired.push({ ...intentAllocation(intent), intent });
  return paired;
}
