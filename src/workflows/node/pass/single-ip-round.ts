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
} from '../../../ipam/index.js';
import type {
  DegradationGates,
  EniAllocationPlan,
  IpFamily,
  NetworkInterfaces,
  NodeStatus,
  PodDemand,
  ReadyNodeCr,
  ReadyNodeSpec,
} from '../../../ipam/index.js';
import type { NodeSnapshot } from '../../../activities/index.js';
import { allocate } from './allocate.js';
import type { Acted, Allocated } from './allocate.js';
import type { CloudSide } from './cloud-side.js';
import type { EniOperator } from '../act/eni-operator.js';
import { statusWithSyncTimes } from '../act/io.js';
import { blockedVSwitchesOf, exhaustedVSwitchesOf } from '../tell/state-view.js';
import type { PassContext } from './context.js';
import { PoolPass } from './pool.js';
import type { RoundResult, RoundSummary } from './round.js';

type Served = ReturnType<typeof assignIpsFromLocalPool>;
type PoolSettled = ReturnType<PoolPass['settle']>;

interface RoundInput {
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
}

/**
 * The single-IP round: release the IPs of gone pods, serve pods from the local pool (written before any cloud call),
 * plan ENI allocations for the pods left and warm-up, then the allocate step with this mode's hooks: pods the
 * assigns can serve are written before the creates end, the local pool serves again after the fold, and the pool
 * tuning (warm-up, idle reclaim) marks its releases before the GC. Degradation gates decide what may act.
 */
export async function singleIpRound(ctx: PassContext, input: RoundInput): Promise<RoundResult> {
  return new SingleIpRound(ctx, input).run();
}

class SingleIpRound {
  private readonly ctx: PassContext;
  private readonly input: RoundInput;
  private readonly primaryFamily: IpFamily;
  private readonly released: ReturnType<typeof releaseIpsOfGonePods>;
  private readonly local: Served;
  private readonly pool: PoolPass;
  private readonly plan: EniAllocationPlan;
  private readonly early: EarlyWrites;
  /** The local pool's bindings, served again after the allocations' fold when they changed anything. */
  private served: Served;
  private poolStatus: PoolSettled | undefined;
  private releaseWanted = false;

  /** The plan, made before any call (pure). */
  constructor(ctx: PassContext, input: RoundInput) {
    this.ctx = ctx;
    this.input = input;
    const { node, spec, cloud, nowMs } = input;
    const { requests } = input.demand;
    const primaryFamily = primaryFamilyOf(spec.eni);
    this.primaryFamily = primaryFamily;
    this.released = releaseIpsOfGonePods({ enis: cloud.enis, requests, nodeRuntime: input.snapshot.nodeRuntime });
    this.local = assignIpsFromLocalPool({ enis: this.released.enis, requests, primaryFamily });
    this.served = this.local;
    this.pool = new PoolPass({ nodeName: ctx.nodeName, nowMs, node, gcPeriodMs: ctx.settings.gcPeriodMs });
    this.plan = planEniAllocations({
      spec,
      enis: withoutEnisAwaitingAttach(this.local.enis),
      unsatisfied: this.local.unsatisfied,
      vSwitches: cloud.vSwitches,
      randomValue: Math.random(),
      warmUpDemand: this.pool.warmUpDemand(),
    });
    this.early = new EarlyWrites(ctx, { current: node.status ?? {}, times: cloud.times });
  }

  private serveLocally(enis: NetworkInterfaces): Served {
    return assignIpsFromLocalPool({ enis, requests: this.input.demand.requests, primaryFamily: this.primaryFamily });
  }

  private podsServed(acted: Acted): number {
    return this.local.newlyBound.length + this.early.bound + (acted.changed ? this.served.newlyBound.length : 0);
  }

  async run(): Promise<RoundResult> {
    const { ctx, input, local, plan, early } = this;
    const result = await allocate(ctx, {
      operator: input.operator,
      spec: input.spec,
      vSwitches: input.cloud.vSwitches,
      enis: local.enis,
      planned: { allocations: plan.allocations, demand: plan.demand, problems: plan.problems },
      gates: input.gates,
      nowMs: input.nowMs,
      gcDeferral: () => ctx.degradation.gcDeferral(),
      // The pods the local pool served are written before the pass's cloud calls: those may wait for the ECS budget.
      beforeActing: async () => {
        if (local.newlyBound.length > 0) await early.write(local.enis);
      },
      // Pods the assigns can serve are written before the pass's creates and attaches end (seconds later).
      serveEarly: async (assigned) => early.serve(this.serveLocally(assigned)),
      serve: (acted) => {
        this.served = this.serveLocally(acted.enis);
        return this.served.enis;
      },
      markReleases: (enis, acted) => this.markReleases(enis, acted),
    });
    return this.result(result);
  }

  /** The pool tuning: held back by degradation, nothing is marked for release (marked IPs would be lost to pods). */
  private markReleases(enis: NetworkInterfaces, acted: Acted): NetworkInterfaces {
    const { ctx, pool, input } = this;
    const { gates, nowMs, spec } = input;
    const settled = pool.settle({
      allocated: acted.allocated,
      plannedAllocations: this.plan.allocations.length,
      newlyBound: this.podsServed(acted),
      enis,
      family: this.primaryFamily,
      gc: { requested: ctx.gc.pending, lastGcMs: ctx.state.lastGcMs },
      mayRelease: gates.release,
    });
    this.poolStatus = settled;
    if (settled.poolPeriodStartMs !== undefined) ctx.state.lastGcMs = settled.poolPeriodStartMs;
    const { lastGcMs } = ctx.state;
    const gcDue = ctx.gc.pending || lastGcMs === undefined || nowMs - lastGcMs >= pool.periodMs;
    // Only a node that had something to release is held back by the gate (and told so).
    this.releaseWanted =
      !gates.release &&
      (planGc({ enis: settled.enis }).length > 0 ||
        (gcDue && hasWorkForGcPeriod({ spec, enis: settled.enis, unsatisfied: [], awaitingCniDelete: 0 })));
    return settled.enis;
  }

  private result(allocated: Allocated): RoundResult {
    const { ctx, plan, served, local, input } = this;
    const { gates, cloud } = input;
    const poolStatus = this.poolStatus;
    if (poolStatus === undefined) throw new Error('the allocate step marks releases before its GC');
    const awaitingCniDelete = this.released.awaitingCniDelete.length;
    return {
      ...allocated,
      current: this.early.current,
      pool: poolStatus.fields,
      found: { unsatisfied: served.unsatisfied, awaitingCniDelete, plan },
      timers: (schedule) => {
        // Work the degradation holds back is no reason for a timer: lifting it signals every node.
        if (ctx.degradation.level !== 'off') schedule.heldBack({ awaitingCniDelete });
        // A reclaim batch held back by degradation is no reason for a timer either.
        const timed = gates.release ? poolStatus : { ...poolStatus, nextReclaimMs: undefined };
        schedule.poolTimers(this.pool.periodMs, timed);
      },
      summary: (outcome) => this.summary(allocated, outcome),
      wants: {
        sync: cloud.syncHeldBack,
        allocate: local.unsatisfied.length > 0 || plan.allocations.length > 0 || allocated.openIntents.length > 0,
        release: this.releaseWanted,
      },
      tell: async (notices, outcome) => {
        await notices.reboundPods({ dropped: local.droppedInvalid, enis: allocated.enis });
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

  private summary(allocated: Allocated, outcome: { failed: boolean; failureTypes: string[] }): RoundSummary {
    const { plan, served } = this;
    const { enis } = allocated;
    const { vSwitches } = this.input.cloud;
    const pending = served.unsatisfied.length;
    const short = plan.unmetDemand.normal + plan.unmetDemand.erdma > 0 || outcome.failureTypes.includes(EXHAUSTED);
    return {
      ipamState: pending > 0 && short ? 'InsufficientIP' : outcome.failed ? 'Error' : 'Ready',
      lastPlan: { allocations: plan.allocations, gc: allocated.gc.actions, unmetDemand: plan.unmetDemand },
      pods: { total: this.input.demand.requests.length, withIp: served.bound.length, pending },
      podsServed: this.podsServed(allocated),
      enis: { total: Object.keys(enis).length, idleIps: countIdleIps({ enis, family: this.primaryFamily }) },
      unschedulableEnis: unschedulableEniIds(enis),
      awaitingCniDelete: this.released.awaitingCniDelete.length,
      blockedVSwitches: blockedVSwitchesOf(vSwitches),
      exhaustedVSwitches: exhaustedVSwitchesOf(vSwitches),
      vSwitchIds: sortedKeys(vSwitches),
    };
  }
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
