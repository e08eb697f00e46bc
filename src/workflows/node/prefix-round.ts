import {
  applyAllocationConditions,
  enisAwaitingAttach,
  foldEniOutcomes,
  pairCreatesWithIntents,
  planPrefixAllocations,
  sortedKeys,
  unfreezeExpiredPrefixes,
  unschedulableEniIds,
  withoutEnisAwaitingAttach,
} from '../../ipam/index.js';
import type {
  GcAction,
  NetworkInterfaces,
  PendingCreate,
  PrefixAssign,
  PrefixPlan,
  ReadyNodeSpec,
  VSwitchInfo,
} from '../../ipam/index.js';
import type { GcResult } from '../messages.js';
import { setOpenIntents } from './carried-state.js';
import type { CarriedState } from './carried-state.js';
import type { EniOperator } from './eni-operator.js';
import { blockedVSwitchesOf, exhaustedVSwitchesOf } from './node-view.js';
import type { PassSummary } from './node-view.js';
import type { StepReport } from './step-failure.js';

/**
 * What a prefix pass found, for the schedule and the `state` query. The daemon binds pods to prefix addresses, which
 * the CR does not show: pods and idle IPs read 0.
 */
export function prefixPassFindings(input: {
  plan: PrefixPlan;
  gc: GcAction[];
  enis: NetworkInterfaces;
  vSwitches: Record<string, VSwitchInfo>;
  failed: boolean;
}): {
  plan: {
    allocations: PrefixPlan['allocations'];
    problems: PrefixPlan['problems'];
    unmetDemand: { normal: number; erdma: number };
  };
  summary: Omit<PassSummary, 'lastPassEndMs' | 'skipReason' | 'instanceId' | 'stuck'>;
} {
  const { plan, enis, vSwitches } = input;
  const unmetDemand = { normal: plan.unmet.ipv4 + plan.unmet.ipv6, erdma: 0 };
  return {
    plan: { allocations: plan.allocations, problems: plan.problems, unmetDemand },
    summary: {
      ipamState: input.failed ? 'Error' : 'Ready',
      lastPlan: { allocations: plan.allocations, gc: input.gc, unmetDemand },
      pods: { total: 0, withIp: 0, pending: 0 },
      enis: { total: Object.keys(enis).length, idleIps: 0 },
      unschedulableEnis: unschedulableEniIds(enis),
      awaitingCniDelete: 0,
      blockedVSwitches: blockedVSwitchesOf(vSwitches),
      exhaustedVSwitches: exhaustedVSwitchesOf(vSwitches),
      vSwitchIds: sortedKeys(vSwitches),
    },
  };
}

/**
 * The prefix half of a ready pass in prefix mode (the daemon binds pods, so there is no local pool, no per-pod
 * allocation and no pool release): expired `Frozen` prefixes back to `Valid` → plan prefixes → pair the plan's
 * creates with ENIs awaiting attach and open create intents → act → fold in plan order → ENI conditions → GC
 * (`Deleting` ENIs and IPs as always, and `Deleting` prefixes) → fold.
 */
export async function prefixRound(input: {
  state: CarriedState;
  operator: EniOperator;
  spec: ReadyNodeSpec;
  vSwitches: Record<string, VSwitchInfo>;
  enis: NetworkInterfaces;
  createAttemptHorizonMs: number;
  nowMs: number;
  /** What the degradation switch lets the round do (absent: everything). */
  gates?: { allocate: boolean; release: boolean };
  /** The GC answer while releases are held back. */
  gcDeferral?: GcResult | undefined;
}): Promise<{
  plan: PrefixPlan;
  allocated: StepReport[];
  gc: { actions: GcAction[]; reports: StepReport[]; result: GcResult };
  enis: NetworkInterfaces;
  openIntents: PendingCreate[];
  unfrozen: number;
}> {
  const { state, spec, vSwitches } = input;
  const thawed = unfreezeExpiredPrefixes({ enis: input.enis, nowMs: input.nowMs });
  const plan = planPrefixAllocations({
    spec,
    enis: withoutEnisAwaitingAttach(thawed.enis),
    vSwitches,
    randomValue: Math.random(),
  });
  const creates = plan.allocations.filter((allocation) => allocation.kind === 'createEni');
  const assigns = plan.allocations.filter((allocation): allocation is PrefixAssign => allocation.kind !== 'createEni');
  const { allocations, unneeded } = pairCreatesWithIntents({
    allocations: creates,
    intents: state.pendingCreates ?? [],
    awaiting: enisAwaitingAttach(thawed.enis),
    demand: { normal: plan.unmet.ipv4 + plan.unmet.ipv6 + creates.length, erdma: 0 },
  });
  const mayAllocate = input.gates?.allocate ?? true;
  // Held back (degradation l0): nothing is asked of the cloud and the open intents stay as they are.
  const allocated = mayAllocate
    ? await input.operator.allocate({
        allocations: [...assigns, ...allocations],
        enis: thawed.enis,
        spec,
        vSwitches,
        createAttemptHorizonMs: input.createAttemptHorizonMs,
      })
    : [];
  const openIntents = mayAllocate
    ? allocated.flatMap((report) => report.openIntent ?? [])
    : (state.pendingCreates ?? []);
  if (mayAllocate) setOpenIntents(state, openIntents);
  let enis = foldEniOutcomes(thawed.enis, [
    ...allocated.flatMap((report) => report.outcomes),
    ...(mayAllocate ? unneeded : []).map((eniId) => ({ kind: 'eniLeftForGc' as const, eniId })),
  ]);
  enis = applyAllocationConditions({
    enis,
    errors: [
      ...(mayAllocate ? plan.problems : []).flatMap((problem) =>
        problem.kind === 'vSwitchExhausted'
          ? [{ eniId: problem.eniId, error: { kind: 'ipNotEnough' as const, vSwitchId: problem.vSwitchId } }]
          : [],
      ),
      ...allocated.flatMap((report) => report.eniErrors),
    ],
    nowMs: input.nowMs,
  });
  // Held back (degradation l1, l0): no releasing call; `Deleting` marks wait for the lift.
  const gc =
    (input.gates?.release ?? true)
      ? await input.operator.collectGarbage(enis, { prefixes: true })
      : { actions: [], reports: [], result: input.gcDeferral ?? { releasedIps: [], removedEnis: [], failed: [] } };
  enis = foldEniOutcomes(
    enis,
    gc.reports.flatMap((report) => report.outcomes),
  );
  return { plan, allocated, gc, enis, openIntents, unfrozen: thawed.unfrozen.length };
}
