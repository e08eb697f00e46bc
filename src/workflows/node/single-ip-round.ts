import {
  assignIpsFromLocalPool,
  countIdleIps,
  hasWorkForGcPeriod,
  planEniAllocations,
  planGc,
  primaryFamilyOf,
  releaseIpsOfGonePods,
  sortedKeys,
  unschedulableEniIds,
  withoutEnisAwaitingAttach,
} from '../../ipam/index.js';
import type {
  DegradationGates,
  NetworkInterfaces,
  NodeStatus,
  PodDemand,
  ReadyNodeCr,
  ReadyNodeSpec,
} from '../../ipam/index.js';
import type { NodeSnapshot } from '../../activities/index.js';
import { allocate } from './allocate.js';
import type { Acted } from './allocate.js';
import type { CloudSide } from './cloud-side.js';
import type { EniOperator } from './eni-operator.js';
import { statusWithSyncTimes } from './node-io.js';
import { blockedVSwitchesOf, exhaustedVSwitchesOf } from './node-view.js';
import type { PassContext } from './pass-context.js';
import { PoolPass } from './pool-pass.js';
import type { RoundResult } from './round.js';

type Served = ReturnType<typeof assignIpsFromLocalPool>;
type PoolSettled = ReturnType<PoolPass['settle']>;

/**
 * The single-IP round: release the IPs of gone pods, serve pods from the local pool (written before any cloud call),
 * plan ENI allocations for the pods left and warm-up, then the allocate step with this mode's hooks: pods the
 * assigns can serve are written before the creates end, the local pool serves again after the fold, and the pool
 * tuning (warm-up, idle reclaim) marks its releases before the GC. Degradation gates decide what may act.
 */
export async function singleIpRound(
  ctx: PassContext,
  input: {
    node: ReadyNodeCr;
    snapshot: NodeSnapshot;
    spec: ReadyNodeSpec;
    demand: PodDemand;
    cloud: CloudSide;
    /** The pass's clock, read before the cloud side (its sync decision, pool times, conditions). */
    nowMs: number;
    /** The gates as the pass began. */
    gates: DegradationGates;
    operator: EniOperator;
  },
): Promise<RoundResult> {
  const { node, spec, cloud, nowMs, gates } = input;
  const { requests } = input.demand;
  const primaryFamily = primaryFamilyOf(spec.eni);
  const released = releaseIpsOfGonePods({ enis: cloud.enis, requests, nodeRuntime: input.snapshot.nodeRuntime });
  const local = assignIpsFromLocalPool({ enis: released.enis, requests, primaryFamily });
  const pool = new PoolPass({ nodeName: ctx.nodeName, nowMs, node, gcPeriodMs: ctx.settings.gcPeriodMs });
  const plan = planEniAllocations({
    spec,
    enis: withoutEnisAwaitingAttach(local.enis),
    unsatisfied: local.unsatisfied,
    vSwitches: cloud.vSwitches,
    randomValue: Math.random(),
    warmUpDemand: pool.warmUpDemand(),
  });
  const early = new EarlyWrites(ctx, { current: node.status ?? {}, times: cloud.times });
  let served: Served = local;
  const marked: { pool?: PoolSettled; releaseWanted: boolean } = { releaseWanted: false };
  const podsServed = (acted: Acted): number =>
    local.newlyBound.length + early.bound + (acted.changed ? served.newlyBound.length : 0);
  const result = await allocate(ctx, {
    operator: input.operator,
    spec,
    vSwitches: cloud.vSwitches,
    enis: local.enis,
    planned: { allocations: plan.allocations, demand: plan.demand, problems: plan.problems },
    gates,
    nowMs,
    gcDeferral: () => ctx.degradation.gcDeferral(),
    // The pods the local pool served are written before the pass's cloud calls: those may wait for the ECS budget.
    beforeActing: async () => {
      if (local.newlyBound.length > 0) await early.write(local.enis);
    },
    // Pods the assigns can serve are written before the pass's creates and attaches end (seconds later).
    serveEarly: async (assigned) => early.serve(assignIpsFromLocalPool({ enis: assigned, requests, primaryFamily })),
    serve: (acted) => {
      if (acted.changed) served = assignIpsFromLocalPool({ enis: acted.enis, requests, primaryFamily });
      return served.enis;
    },
    markReleases: (enis, acted) => {
      // Held back by degradation, nothing is marked for release (marked IPs would be lost to pods meanwhile).
      const settled = pool.settle({
        allocated: acted.allocated,
        plannedAllocations: plan.allocations.length,
        newlyBound: podsServed(acted),
        enis,
        family: primaryFamily,
        gc: { requested: ctx.gc.pending, lastGcMs: ctx.state.lastGcMs },
        mayRelease: gates.release,
      });
      marked.pool = settled;
      if (settled.poolPeriodStartMs !== undefined) ctx.state.lastGcMs = settled.poolPeriodStartMs;
      const { lastGcMs } = ctx.state;
      const gcDue = ctx.gc.pending || lastGcMs === undefined || nowMs - lastGcMs >= pool.periodMs;
      // Only a node that had something to release is held back by the gate (and told so).
      marked.releaseWanted =
        !gates.release &&
        (planGc({ enis: settled.enis }).length > 0 ||
          (gcDue && hasWorkForGcPeriod({ spec, enis: settled.enis, unsatisfied: [], awaitingCniDelete: 0 })));
      return settled.enis;
    },
  });
  const poolStatus = marked.pool;
  if (poolStatus === undefined) throw new Error('the allocate step marks releases before its GC');
  const { enis } = result;
  const awaitingCniDelete = released.awaitingCniDelete.length;
  const pending = served.unsatisfied.length;
  return {
    ...result,
    current: early.current,
    pool: poolStatus.fields,
    found: { unsatisfied: served.unsatisfied, awaitingCniDelete, plan },
    timers: (schedule) => {
      // Work the degradation holds back is no reason for a timer: lifting it signals every node.
      if (ctx.degradation.level !== 'off') schedule.heldBack({ awaitingCniDelete });
      // A reclaim batch held back by degradation is no reason for a timer either.
      schedule.poolTimers(pool.periodMs, gates.release ? poolStatus : { ...poolStatus, nextReclaimMs: undefined });
    },
    summary: ({ failed, failureTypes }) => {
      const short = plan.unmetDemand.normal + plan.unmetDemand.erdma > 0 || failureTypes.includes(EXHAUSTED);
      return {
        ipamState: pending > 0 && short ? 'InsufficientIP' : failed ? 'Error' : 'Ready',
        lastPlan: { allocations: plan.allocations, gc: result.gc.actions, unmetDemand: plan.unmetDemand },
        pods: { total: requests.length, withIp: served.bound.length, pending },
        podsServed: podsServed(result),
        enis: { total: Object.keys(enis).length, idleIps: countIdleIps({ enis, family: primaryFamily }) },
        unschedulableEnis: unschedulableEniIds(enis),
        awaitingCniDelete,
        blockedVSwitches: blockedVSwitchesOf(cloud.vSwitches),
        exhaustedVSwitches: exhaustedVSwitchesOf(cloud.vSwitches),
        vSwitchIds: sortedKeys(cloud.vSwitches),
      };
    },
    wants: {
      sync: cloud.syncHeldBack,
      allocate: local.unsatisfied.length > 0 || plan.allocations.length > 0 || result.openIntents.length > 0,
      release: marked.releaseWanted,
    },
    tell: async (notices, outcome) => {
      await notices.reboundPods({ dropped: local.droppedInvalid, enis });
      await notices.pendingPods({
        unsatisfied: served.unsatisfied,
        isNodeReady: true,
        plan,
        failureTypes: outcome.failureTypes,
        ledger: outcome.ledger,
        allocationHeldBack: !gates.allocate,
      });
      await notices.sufficientIp({
        hasIdleIp: plan.capacity.hasIdleIp,
        hasAllocatableEni: plan.capacity.hasAllocatableEni && !outcome.failureTypes.includes(EXHAUSTED),
      });
    },
  };
}

const EXHAUSTED = 'EcsVSwitchExhausted';

/** The status writes of a single-IP round before its final one, and what the CR holds after them. */
class EarlyWrites {
  private readonly ctx: PassContext;
  private readonly times: CloudSide['times'];
  /** What the CR holds: the status read, or the one written early in this pass. */
  current: NodeStatus;
  /** Pods served from the assigns' outcomes before the creates ended. */
  bound = 0;

  constructor(ctx: PassContext, input: { current: NodeStatus; times: CloudSide['times'] }) {
    this.ctx = ctx;
    this.current = input.current;
    this.times = input.times;
  }

  /**
   * An early write changes the ENIs and sync times only: the CR keeps its other fields (the pool's among them), which
   * the final write compares against.
   */
  async write(enis: NetworkInterfaces): Promise<void> {
    const status = statusWithSyncTimes(enis, this.times);
    if (await this.ctx.writeStatus({ status, current: this.current, enis })) {
      this.current = { ...this.current, ...status };
    }
  }

  /** Writes the pods the assigns served; the ENIs with their bindings, or undefined when none was served. */
  async serve(early: Served): Promise<NetworkInterfaces | undefined> {
    if (early.newlyBound.length === 0) return undefined;
    this.bound = early.newlyBound.length;
    await this.write(early.enis);
    return early.enis;
  }
}
