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
  ReadyNodeSpec,
  UnsatisfiedPod,
  VSwitchInfo,
} from '../../ipam/index.js';
import { setOpenIntents } from './carried-state.js';
import type { CarriedState } from './carried-state.js';
import type { EniOperator } from './eni-operator.js';
import type { StepReport } from './step-failure.js';

/**
 * The allocation half of a ready pass: plan → pair the plan's creates with the ENIs awaiting attach and the open
 * create intents → act → fold the outcomes in plan order. ENIs created earlier whose attach failed are out of the
 * plan (a planned create of their kind attaches them); one that no demand wants any more goes to the GC. The open
 * intents the steps report replace the carried ones.
 *
 * Pods the local pool served are the caller's to write before any call is made (`beforeActing`). Assigns take a
 * fraction of a second, a create with its attach several seconds: when the plan has both, the assigns'
 * outcomes are folded (in plan order) as soon as they are all in, and `serveEarly` may serve pods from them and write
 * the status before the creates end. The ENIs it returns (its bindings included) are the base the creates' outcomes
 * are then folded onto, so a pod served early keeps its address. Assigns and creates touch different ENIs, so the
 * result is the fold in plan order whatever order the calls end in.
 */
export async function allocateForDemand(input: {
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
  /**
   * Called with the ENIs and the assigns' outcomes once every assign of a plan that also creates is in: it may serve
   * pods and write them; it returns the ENIs with its bindings, or undefined when it served nobody.
   */
  serveEarly?: (enis: NetworkInterfaces) => Promise<NetworkInterfaces | undefined>;
  /**
   * Called once the plan is known to make cloud calls, before it makes them: the pods the local pool served need no
   * call, and the calls may wait seconds for the ECS budget (a pool top-up after a burst), so they are written first.
   */
  beforeActing?: () => Promise<void>;
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
  const { allocations, unneeded } = pairCreatesWithIntents({
    allocations: plan.allocations,
    intents: state.pendingCreates ?? [],
    awaiting: enisAwaitingAttach(local.enis),
    demand: plan.demand,
  });
  if (allocations.length > 0) await input.beforeActing?.();
  const runs = input.operator.startAllocations({
    allocations,
    enis: local.enis,
    spec,
    vSwitches,
    createAttemptHorizonMs: input.createAttemptHorizonMs,
  });
  const isCreate = allocations.map((allocation) => allocation.kind === 'createEni');
  const early =
    input.serveEarly !== undefined && isCreate.includes(true) && isCreate.includes(false)
      ? await serveAssignsEarly({ runs, isCreate, enis: local.enis, serve: input.serveEarly })
      : undefined;
  const allocated = await Promise.all(runs);
  const rest = allocated.filter((_, i) => early === undefined || isCreate[i] === true);
  const enis = foldEniOutcomes(early ?? local.enis, [
    ...rest.flatMap((report) => report.outcomes),
    ...unneeded.map((eniId) => ({ kind: 'eniLeftForGc' as const, eniId })),
  ]);
  const openIntents = allocated.flatMap((report) => report.openIntent ?? []);
  setOpenIntents(state, openIntents);
  return { plan, allocated, enis, changed: allocations.length > 0 || unneeded.length > 0, openIntents };
}

/** Waits for the assigns (plan order), folds their outcomes and lets `serve` use them before the creates end. */
async function serveAssignsEarly(input: {
  runs: readonly Promise<StepReport>[];
  isCreate: readonly boolean[];
  enis: NetworkInterfaces;
  serve: (enis: NetworkInterfaces) => Promise<NetworkInterfaces | undefined>;
}): Promise<NetworkInterfaces | undefined> {
  const assigns = await Promise.all(input.runs.filter((_, i) => input.isCreate[i] !== true));
  const outcomes = assigns.flatMap((report) => report.outcomes);
  if (outcomes.length === 0) return undefined;
  return input.serve(foldEniOutcomes(input.enis, outcomes));
}
