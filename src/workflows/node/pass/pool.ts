import {
  addressesReturnedBy,
  countIdleIps,
  initialWarmUp,
  planPoolRelease,
  planPoolStatus,
  poolPeriodMs,
  poolShrinkGate,
  warmUpDemand,
} from '../../../ipam/index.js';
import type {
  IpFamily,
  NetworkInterfaces,
  PoolStatusPlan,
  ReadyNodeCr,
  ReadyNodeSpec,
  WarmUpStatus,
} from '../../../ipam/index.js';
import type { StepReport } from '../memory/step-failure.js';

/**
 * The pool tuning of one ready pass (warm-up, idle reclaim, the node's own pool period), kept out of the
 * reconciler: before planning it gives the warm-up demand, after allocating the status fields and the reclaim batch.
 */
export class PoolPass {
  private readonly nodeName: string;
  private readonly nowMs: number;
  private readonly node: ReadyNodeCr;
  private readonly spec: ReadyNodeSpec;
  private readonly warmUp: WarmUpStatus;
  /** `spec.pool.poolSyncPeriod`, or the controller's GC period. */
  readonly periodMs: number;

  constructor(input: { nodeName: string; nowMs: number; node: ReadyNodeCr; gcPeriodMs: number }) {
    this.nodeName = input.nodeName;
    this.nowMs = input.nowMs;
    this.node = input.node;
    this.spec = input.node.spec;
    this.warmUp = initialWarmUp({ status: input.node.status ?? {}, warmUpSize: this.spec.pool.warmUpSize });
    this.periodMs = poolPeriodMs({ poolSyncPeriod: this.spec.pool.poolSyncPeriod, gcPeriodMs: input.gcPeriodMs });
  }

  /** Addresses warm-up still asks the plan for. */
  warmUpDemand(): number {
    return warmUpDemand(this.warmUp);
  }

  /** After allocation and serving: the status fields to write and whether an idle reclaim batch is due. */
  settle(input: {
    allocated: readonly StepReport[];
    /** Allocations planned (an allocation started) and pods newly bound to pool IPs in this pass. */
    plannedAllocations: number;
    newlyBound: number;
    enis: NetworkInterfaces;
    family: IpFamily;
    /** GC asked for by an update, and when the pool period last started (the carried `lastGcMs`). */
    gc: { requested: boolean; lastGcMs: number | undefined };
    /** False while the degradation switch holds back releases: nothing is marked for release. */
    mayRelease?: boolean;
  }): PoolStatusPlan & { enis: NetworkInterfaces; poolPeriodStartMs: number | undefined } {
    const idle = countIdleIps({ enis: input.enis, family: input.family });
    const planned = planPoolStatus({
      nodeName: this.nodeName,
      spec: this.spec,
      current: this.node.status,
      nowMs: this.nowMs,
      warmUp: this.warmUp,
      returnedAddresses: addressesReturnedBy(
        input.allocated.flatMap((report) => report.outcomes),
        input.family,
      ),
      poolTouched: input.plannedAllocations > 0 || input.newlyBound > 0,
      idle,
      reachableIdleFloor: planPoolRelease({ spec: this.spec, enis: input.enis, extraRelease: idle }).idleAfter,
    });
    const gate = poolShrinkGate({
      nowMs: this.nowMs,
      periodMs: this.periodMs,
      periodStartMs: input.gc.lastGcMs,
      gcRequested: input.gc.requested,
      reclaimBatch: planned.extraRelease,
      warmUpGotAddresses: planned.warmUpGotAddresses,
      mayRelease: input.mayRelease ?? true,
    });
    const enis = gate.shrink
      ? planPoolRelease({ spec: this.spec, enis: input.enis, extraRelease: planned.extraRelease }).enis
      : input.enis;
    return { ...planned, enis, poolPeriodStartMs: gate.periodStartMs };
  }
}
