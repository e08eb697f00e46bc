import { workflowInfo } from '@temporalio/workflow';

import { hasWorkForGcPeriod, jitterOf, nextPass, stuckWaitOf } from '../../../ipam/index.js';
import type {
  EniAllocationPlan,
  NetworkInterfaces,
  NextPassReason,
  NodeSpec,
  PoolStatusPlan,
  StuckCause,
  StuckWaitInput,
  UnsatisfiedPod,
} from '../../../ipam/index.js';
import type { NodeIpamSettings } from '../../messages.js';
import type { CarriedState } from './carried-state.js';

/** What a ready pass found that decides whether its waiting pods are stuck (see `stuckWaitOf`). */
export type StuckFacts = Omit<StuckWaitInput, 'failureTypes' | 'failureStreak' | 'failureRepeats'>;

/**
 * The scheduling facts of a node's last pass, run-local: GC work left, the due OpenAPI sync, the pass's failure
 * types, and whether its waiting pods are stuck. From them, when the next pass is due without a signal.
 */
export class PassSchedule {
  private hasPendingWork = false;
  nextSyncMs: number | undefined;
  private lastFailureTypes: string[] = [];
  /** Passes in a row the last pass's most repeated failure failed: a failure that keeps coming back waits longer. */
  private failureRepeats = 0;
  /** Set when the last pass found its waiting pods stuck: the node then sleeps `stuckBackoffMs`. */
  stuck: StuckCause | undefined;
  /** Drawn once per failed pass (seeded, so the same on replay): the failure backoff's full jitter. */
  private backoffRandom: number | undefined;
  /** What the last ready pass found; a pass stopped at the gate has none and is never stuck. */
  private facts: StuckFacts | undefined;

  /** The node's pool period (`spec.pool.poolSyncPeriod`) and its next idle reclaim batch, from the last ready pass. */
  private poolPeriodMs: number | undefined;
  private idleReclaimAtMs: number | undefined;
  private warmUpContinues = false;
  /** Prefix mode: the earliest expiry of a `Frozen` prefix the last pass wrote. */
  private frozenExpiryMs: number | undefined;

  passStarting(): void {
    this.frozenExpiryMs = undefined;
    this.hasPendingWork = false;
    this.facts = undefined;
    this.idleReclaimAtMs = undefined;
    this.warmUpContinues = false;
  }

  /** A prefix pass's timer: the earliest `frozenExpireAt` still ahead (an expired one was thawed by the pass). */
  prefixTimers(frozenExpiryMs: number | undefined): void {
    this.frozenExpiryMs = frozenExpiryMs;
  }

  /** A ready pass's pool timers: the period its GC work is retried on, and when an idle reclaim batch is due. */
  poolTimers(periodMs: number, plan: Pick<PoolStatusPlan, 'nextReclaimMs' | 'warmUpContinues'>): void {
    this.poolPeriodMs = periodMs;
    this.idleReclaimAtMs = plan.nextReclaimMs;
    this.warmUpContinues = plan.warmUpContinues;
  }

  /** A ready pass's findings: GC work left, and whether its waiting pods can be served by another pass. */
  found(input: {
    spec: NodeSpec;
    enis: NetworkInterfaces;
    unsatisfied: readonly UnsatisfiedPod[];
    awaitingCniDelete: number;
    plan: Pick<EniAllocationPlan, 'problems' | 'unmetDemand'> & { allocations: readonly unknown[] };
    openIntents: readonly unknown[];
  }): void {
    const { spec, enis, awaitingCniDelete, plan } = input;
    this.hasPendingWork = hasWorkForGcPeriod({ spec, enis, unsatisfied: input.unsatisfied, awaitingCniDelete });
    this.facts = {
      waitingPods: input.unsatisfied.length,
      plannedAllocations: plan.allocations.length,
      planProblems: plan.problems.length,
      unmetDemand: plan.unmetDemand.normal + plan.unmetDemand.erdma,
      otherWork: hasWorkForGcPeriod({ spec, enis, unsatisfied: [], awaitingCniDelete }),
      openIntents: input.openIntents.length,
    };
  }

  /** Degradation holds back cloud calls: only local work (IPs awaiting the CNI delete) sets the GC-period timer. */
  heldBack(input: { awaitingCniDelete: number }): void {
    this.hasPendingWork = input.awaitingCniDelete > 0;
  }

  /** After the pass, once its failures are settled. */
  passEnded(input: { failed: boolean; failureTypes: string[]; failureRepeats: number; failureStreak: number }): void {
    this.lastFailureTypes = input.failed ? input.failureTypes : [];
    this.failureRepeats = input.failed ? input.failureRepeats : 0;
    // Drawn here, on the workflow's path, never in next(): the `state` query calls that, and a query must not
    // advance the workflow's random sequence.
    this.backoffRandom = input.failed ? Math.random() : undefined;
    const facts = this.facts;
    this.stuck =
      facts === undefined
        ? undefined
        : stuckWaitOf({
            ...facts,
            failureTypes: this.lastFailureTypes,
            failureRepeats: this.failureRepeats,
            failureStreak: input.failureStreak,
          });
  }

  next(input: { nodeName: string; settings: NodeIpamSettings; state: CarriedState; lastPassEndMs: number }): {
    atMs: number;
    reason: NextPassReason;
  } {
    const { state, settings } = input;
    return nextPass({
      lastPassEndMs: input.lastPassEndMs,
      failureStreak: state.failureStreak,
      lastFailureTypes: this.lastFailureTypes,
      failureRepeats: this.failureRepeats,
      backoffRandom: this.backoffRandom,
      jitter: jitterOf(input.nodeName),
      settings,
      hasPendingWork: this.hasPendingWork,
      poolPeriodMs: this.poolPeriodMs,
      idleReclaimAtMs: this.idleReclaimAtMs,
      warmUpContinues: this.warmUpContinues,
      frozenExpiryMs: this.frozenExpiryMs,
      lastGcMs: state.lastGcMs,
      nextSyncMs: this.nextSyncMs,
      daemonWait: state.daemonWait,
      stuck: this.stuck,
      pendingSince: state.pendingSince,
      runDeadlineMs: workflowInfo().runStartTime.getTime() + settings.maxRunAgeMs,
    });
  }
}
