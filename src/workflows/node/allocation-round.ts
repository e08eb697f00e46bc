import {
  enisAwaitingAttach,
  foldEniOutcomes,
  pairCreatesWithIntents,
  planEniAllocations,
  withoutEnisAwaitingAttach,
} from '../../ipam/index.js';
import type {
  EniAllocationPlan,
  NetworkInterfaces,
  PendingCreate,
  UnsatisfiedPod,
  VSwitchInfo,
} from '../../ipam/index.js';
import { adoptLegacyIntents, setOpenIntents } from './carried-state.js';
import type { CarriedState } from './carried-state.js';
import type { EniOperator, ReadyNodeSpec } from './eni-operator.js';
import type { StepReport } from './step-failure.js';

/**
 * The allocation half of a ready pass: plan → pair the plan's creates with the ENIs awaiting attach and the open
 * create intents → act → fold the outcomes in plan order. ENIs created earlier whose attach failed are out of the
 * plan (a planned create of their kind attaches them); one that no demand wants any more goes to the GC. The open
 * intents the steps report replace the carried ones.
 */
export async function allocateForDemand(input: {
  nodeName: string;
  state: CarriedState;
  operator: EniOperator;
  spec: ReadyNodeSpec;
  vSwitches: Record<string, VSwitchInfo>;
  /** The ENIs after the local pool served what it could, and the pods it could not serve. */
  local: { enis: NetworkInterfaces; unsatisfied: UnsatisfiedPod[] };
  /** The node's `createAttemptHorizonMs` setting. */
  createAttemptHorizonMs: number;
  /** False while degradation l0 holds back every cloud call: the plan is made (it explains waiting pods), not acted on. */
  allocate?: boolean;
  /** Addresses warm-up still asks for (0 once it is complete). */
  warmUpDemand: number;
}): Promise<{
  plan: EniAllocationPlan;
  allocated: StepReport[];
  /** The ENIs with the outcomes folded in. */
  enis: NetworkInterfaces;
  /** Whether anything was allocated or released: only then may the local pool serve more. */
  changed: boolean;
  openIntents: PendingCreate[];
}> {
  const { state, spec, vSwitches, local } = input;
  const plan = planEniAllocations({
    spec,
    enis: withoutEnisAwaitingAttach(local.enis),
    unsatisfied: local.unsatisfied,
    vSwitches,
    randomValue: Math.random(),
    warmUpDemand: input.warmUpDemand,
  });
  if (input.allocate === false) {
    return { plan, allocated: [], enis: local.enis, changed: false, openIntents: state.pendingCreates ?? [] };
  }
  adoptLegacyIntents({ state, spec, nodeName: input.nodeName });
  const { allocations, unneeded } = pairCreatesWithIntents({
    allocations: plan.allocations,
    intents: state.pendingCreates ?? [],
    awaiting: enisAwaitingAttach(local.enis),
    demand: plan.demand,
  });
  const allocated = await input.operator.allocate({
    allocations,
    enis: local.enis,
    spec,
    vSwitches,
    createAttemptHorizonMs: input.createAttemptHorizonMs,
  });
  const enis = foldEniOutcomes(local.enis, [
    ...allocated.flatMap((report) => report.outcomes),
    ...unneeded.map((eniId) => ({ kind: 'eniLeftForGc' as const, eniId })),
  ]);
  const openIntents = allocated.flatMap((report) => report.openIntent ?? []);
  setOpenIntents(state, openIntents);
  return { plan, allocated, enis, changed: allocations.length > 0 || unneeded.length > 0, openIntents };
}
