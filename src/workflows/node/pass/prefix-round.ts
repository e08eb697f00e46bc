import {
  nextFrozenExpiryMs,
  planPrefixAllocations,
  sortedKeys,
  unfreezeExpiredPrefixes,
  unschedulableEniIds,
  withoutEnisAwaitingAttach,
} from '../../../ipam/index.js';
import type { PrefixAssign, ReadyNodeCr, ReadyNodeSpec } from '../../../ipam/index.js';
import { allocate } from './allocate.js';
import type { CloudSide } from './cloud-side.js';
import type { EniOperator } from '../act/eni-operator.js';
import { blockedVSwitchesOf, exhaustedVSwitchesOf } from '../tell/state-view.js';
import type { PassContext } from './context.js';
import type { RoundResult } from './round.js';

/**
 * The prefix round (the daemon binds pods to prefix addresses, so there is no local pool, no per-pod allocation and
 * no pool release): expired `Frozen` prefixes back to `Valid` → plan prefixes → the allocate step (the plan's creates
 * paired with ENIs awaiting attach and open create intents, its assigns first; the GC releases `Deleting` prefixes
 * too). It takes the gates as they are after the sync (a signal may have changed them meanwhile). No pod or capacity
 * notices of its own; pods and idle IPs read 0, since the CR does not show prefix bindings.
 */
export async function prefixRound(
  ctx: PassContext,
  input: { node: ReadyNodeCr; spec: ReadyNodeSpec; cloud: CloudSide; operator: EniOperator },
): Promise<RoundResult> {
  const { spec, cloud } = input;
  const gates = ctx.degradation.gates();
  const gcDeferral = ctx.degradation.gcDeferral();
  const nowMs = Date.now();
  const thawed = unfreezeExpiredPrefixes({ enis: cloud.enis, nowMs });
  const plan = planPrefixAllocations({
    spec,
    enis: withoutEnisAwaitingAttach(thawed.enis),
    vSwitches: cloud.vSwitches,
    randomValue: Math.random(),
  });
  const creates = plan.allocations.filter((allocation) => allocation.kind === 'createEni');
  const assigns = plan.allocations.filter((allocation): allocation is PrefixAssign => allocation.kind !== 'createEni');
  const result = await allocate(ctx, {
    operator: input.operator,
    spec,
    vSwitches: cloud.vSwitches,
    enis: thawed.enis,
    planned: {
      allocations: creates,
      leading: assigns,
      demand: { normal: plan.unmet.ipv4 + plan.unmet.ipv6 + creates.length, erdma: 0 },
      problems: plan.problems,
    },
    gates,
    nowMs,
    gcDeferral: () => gcDeferral,
    prefixes: true,
  });
  const { enis } = result;
  const unmetDemand = { normal: plan.unmet.ipv4 + plan.unmet.ipv6, erdma: 0 };
  return {
    ...result,
    current: input.node.status ?? {},
    found: {
      unsatisfied: [],
      awaitingCniDelete: 0,
      plan: { allocations: plan.allocations, problems: plan.problems, unmetDemand },
    },
    timers: (schedule) => {
      schedule.prefixTimers(nextFrozenExpiryMs(enis));
    },
    summary: ({ failed }) => ({
      ipamState: failed ? 'Error' : 'Ready',
      lastPlan: { allocations: plan.allocations, gc: result.gc.actions, unmetDemand },
      pods: { total: 0, withIp: 0, pending: 0 },
      enis: { total: Object.keys(enis).length, idleIps: 0 },
      unschedulableEnis: unschedulableEniIds(enis),
      awaitingCniDelete: 0,
      blockedVSwitches: blockedVSwitchesOf(cloud.vSwitches),
      exhaustedVSwitches: exhaustedVSwitchesOf(cloud.vSwitches),
      vSwitchIds: sortedKeys(cloud.vSwitches),
    }),
  };
}
