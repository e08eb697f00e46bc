import {
  applyAllocationConditions,
  enisAwaitingAttach,
  foldEniOutcomes,
  pairCreatesWithIntents,
} from '../../../ipam/index.js';
import type {
  EniAllocation,
  EniAllocationPlan,
  GcAction,
  NetworkInterfaces,
  PendingCreate,
  PrefixAssign,
  ReadyNodeSpec,
  VSwitchInfo,
} from '../../../ipam/index.js';
import type { GcResult } from '../../messages.js';
import { setOpenIntents } from '../memory/carried-state.js';
import type { EniOperator } from '../act/eni-operator.js';
import type { PassContext } from './context.js';
import type { StepReport } from '../memory/step-failure.js';

/** What the GC of a pass did: its actions, their reports (plan order) and the answer for a `gc` update. */
export interface GcOutcome {
  actions: GcAction[];
  reports: StepReport[];
  result: GcResult;
}

/** What a round's plan hands the allocate step. */
export interface PlannedAllocations {
  /** Allocations to pair with the ENIs awaiting attach and the open create intents, in plan order. */
  allocations: readonly EniAllocation[];
  /** Allocations acted on first, unpaired (prefix assigns). */
  leading?: readonly PrefixAssign[];
  /** The plan's demand: an ENI awaiting attach that no create takes is released only when nothing wants its kind. */
  demand: { normal: number; erdma: number };
  /** The plan's problems: a vSwitch out of addresses sets `InsufficientIP` on the ENI the plan wanted to use. */
  problems: EniAllocationPlan['problems'];
}

/** What the allocate step did. */
export interface Allocated {
  allocated: StepReport[];
  gc: GcOutcome;
  /** The ENIs with every outcome folded in, GC's included. */
  enis: NetworkInterfaces;
  openIntents: PendingCreate[];
  /** Whether anything was allocated or released (only then may the local pool serve more). */
  changed: boolean;
}

/** The allocate step before its conditions and GC: the reports, the ENIs with their outcomes, the open intents. */
export type Acted = Omit<Allocated, 'gc'>;

/**
 * The one allocate step of a ready pass, whatever the mode: pair the plan's creates with the ENIs awaiting attach and
 * the open create intents → act → fold the outcomes in plan order (an ENI no demand wants goes to the GC) → the open
 * intents the steps report replace the carried ones → ENI conditions → GC, when the degradation lets releases run.
 * The round's own steps hook in: `beforeActing` (once the plan is known to make calls), `serveEarly` (the assigns'
 * outcomes before the creates end), `serve` (after the fold, when it changed anything) and `markReleases` (before
 * the GC).
 *
 * Held back (degradation l0), nothing is asked of the cloud, the open intents stay as they are and the plan's
 * problems are not told on the ENIs. Assigns and creates touch different ENIs, so the fold is the one in plan order
 * whatever order the calls end in.
 */
export async function allocate(
  ctx: PassContext,
  input: {
    operator: EniOperator;
    spec: ReadyNodeSpec;
    vSwitches: Record<string, VSwitchInfo>;
    enis: NetworkInterfaces;
    planned: PlannedAllocations;
    gates: { allocate: boolean; release: boolean };
    nowMs: number;
    /** The answer to a `gc` update while releases are held back. */
    gcDeferral: () => GcResult | undefined;
    /** Prefix mode: the GC also releases `Deleting` prefixes. */
    prefixes?: boolean;
    beforeActing?: () => Promise<void>;
    serveEarly?: (enis: NetworkInterfaces) => Promise<NetworkInterfaces | undefined>;
    serve?: (acted: Acted) => NetworkInterfaces;
    markReleases?: (enis: NetworkInterfaces, acted: Acted) => NetworkInterfaces;
  },
): Promise<Allocated> {
  const { operator, planned, gates } = input;
  const acted: Acted = gates.allocate
    ? await act(ctx, input)
    : { allocated: [], enis: input.enis, changed: false, openIntents: ctx.state.pendingCreates ?? [] };
  let enis = input.serve !== undefined && acted.changed ? input.serve(acted) : acted.enis;
  enis = applyAllocationConditions({
    enis,
    errors: [
      ...(gates.allocate ? planned.problems : []).flatMap((problem) =>
        problem.kind === 'vSwitchExhausted'
          ? [{ eniId: problem.eniId, error: { kind: 'ipNotEnough' as const, vSwitchId: problem.vSwitchId } }]
          : [],
      ),
      ...acted.allocated.flatMap((report) => report.eniErrors),
    ],
    nowMs: input.nowMs,
  });
  if (input.markReleases !== undefined) enis = input.markReleases(enis, acted);
  // Held back (degradation l1, l0): no releasing call; `Deleting` marks wait for the lift.
  const gc: GcOutcome = gates.release
    ? await operator.collectGarbage(enis, input.prefixes === true ? { prefixes: true } : {})
    : { actions: [], reports: [], result: input.gcDeferral() ?? { releasedIps: [], removedEnis: [], failed: [] } };
  enis = foldEniOutcomes(
    enis,
    gc.reports.flatMap((report) => report.outcomes),
  );
  return { ...acted, gc, enis };
}

/** Pair → act → fold → open intents (see {@link allocate}). */
async function act(ctx: PassContext, input: Parameters<typeof allocate>[1]): Promise<Acted> {
  const { planned, enis: base } = input;
  const { allocations: paired, unneeded } = pairCreatesWithIntents({
    allocations: planned.allocations,
    intents: ctx.state.pendingCreates ?? [],
    awaiting: enisAwaitingAttach(base),
    demand: planned.demand,
  });
  const allocations = [...(planned.leading ?? []), ...paired];
  if (allocations.length > 0) await input.beforeActing?.();
  const runs = input.operator.startAllocations({
    allocations,
    enis: base,
    spec: input.spec,
    vSwitches: input.vSwitches,
    createAttemptHorizonMs: ctx.settings.createAttemptHorizonMs,
  });
  const isCreate = allocations.map((allocation) => allocation.kind === 'createEni');
  const early =
    input.serveEarly !== undefined && isCreate.includes(true) && isCreate.includes(false)
      ? await serveAssignsEarly({ runs, isCreate, enis: base, serve: input.serveEarly })
      : undefined;
  const allocated = await Promise.all(runs);
  const rest = allocated.filter((_, i) => early === undefined || isCreate[i] === true);
  const enis = foldEniOutcomes(early ?? base, [
    ...rest.flatMap((report) => report.outcomes),
    ...unneeded.map((eniId) => ({ kind: 'eniLeftForGc' as const, eniId })),
  ]);
  const openIntents = allocated.flatMap((report) => report.openIntent ?? []);
  setOpenIntents(ctx.state, openIntents);
  return { allocated, enis, changed: allocations.length > 0 || unneeded.length > 0, openIntents };
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
