import { workflowInfo } from '@temporalio/workflow';

import {
  assignIpsFromLocalPool,
  CONDITION_REASONS,
  EVENT_REASONS,
  eniOperationsCondition,
  explainPendingPod,
  formatRfc3339,
  hasFailingCalls,
  operationFailureNotice,
  pendingNotices,
  recoveredNotice,
  podIpRequestsFromPods,
  primaryFamilyOf,
  sortedKeys,
  sufficientIpCondition,
  trackPendingPods,
} from '../../../ipam/index.js';
import type {
  EniAllocationPlan,
  EniSpec,
  FailureLedger,
  IpFamily,
  NetworkInterfaces,
  SpecProblem,
  UnlistedEniReport,
  UnsatisfiedPod,
} from '../../../ipam/index.js';
import type { NodeSnapshot } from '../../../activities/index.js';
import type { NodeIpamSettings } from '../../messages.js';
import { kubeNotice } from '../act/activities.js';
import type { CarriedState } from '../memory/carried-state.js';
import { EventWriter } from './event-writer.js';
import type { EventInput } from './event-writer.js';
import { describeStepFailure, failureOf } from '../memory/step-failure.js';
import type { StepFailure } from '../memory/step-failure.js';

const CONFIG_CONDITION_TYPE = 'IPAMConfigValid';

type CoreNode = NodeSnapshot['coreNode'];

/**
 * Every Event and condition a node's passes write: on the Node CR (and the core Node), on pods, and the core
 * Node's `SufficientIP`, `IPAMConfigValid` and `ENIOperationsFailing`. Best effort: a notice that cannot be
 * written is reported through `onFailure` and the pass goes on. What they remember between passes (when each
 * Event was written, since when pods wait, the daemon wait) lives in the carried state.
 */
export class NodeNotices {
  private readonly nodeName: string;
  private readonly settings: NodeIpamSettings;
  private readonly memory: Pick<CarriedState, 'eventTimes' | 'pendingSince' | 'daemonWait'>;
  private readonly onFailure: (failed: StepFailure) => void;
  private readonly writer: EventWriter;
  private coreNode: CoreNode;
  /** Whether this run set `IPAMConfigValid` to False (the core Node read may not show it yet). */
  private configConditionFalse = false;
  /** Whether cloud calls were failing when the current pass began (a pass that clears them is recovering). */
  private callsFailingAtPassStart = false;

  constructor(input: {
    nodeName: string;
    settings: NodeIpamSettings;
    memory: Pick<CarriedState, 'eventTimes' | 'pendingSince' | 'daemonWait'>;
    onFailure: (failed: StepFailure) => void;
  }) {
    this.nodeName = input.nodeName;
    this.settings = input.settings;
    this.memory = input.memory;
    this.onFailure = input.onFailure;
    this.writer = new EventWriter({
      nodeName: input.nodeName,
      repeatMs: input.settings.eventRepeatMs,
      memory: input.memory,
      onFailure: input.onFailure,
    });
  }

  passStarting(input: { callsFailing: boolean }): void {
    this.callsFailingAtPassStart = input.callsFailing;
  }

  /** What the pass read: node Events go on the CR (by uid) and on the core Node too. */
  readObjects(snapshot: NodeSnapshot): void {
    this.coreNode = snapshot.coreNode;
    this.writer.readObjects(snapshot);
  }

  /** An Event on the Node CR (and the core Node) or on a pod, at most once per `eventRepeatMs` per series. */
  private async event(input: EventInput): Promise<void> {
    await this.writer.event(input);
  }

  private async patchCondition(condition: Parameters<typeof kubeNotice.patchNodeCondition>[0]['condition']) {
    try {
      await kubeNotice.patchNodeCondition({ nodeName: this.nodeName, condition });
      return true;
    } catch (error) {
      this.onFailure({ operation: 'patchNodeCondition', failure: failureOf(error) });
      return false;
    }
  }

  /** The node's degradation Event, once per change of level (see `NodeDegradation.owedNotice`). */
  async degradationChanged(notice: EventInput | undefined): Promise<void> {
    if (notice !== undefined) await this.event(notice);
  }

  /**
   * A daemon that never writes its part of the spec looks exactly like a slow one: after `daemonWaitEventAfterMs`
   * one Warning says so, so an operator can tell them apart (the wait itself is not an error).
   */
  async daemonNotReady(): Promise<void> {
    const now = Date.now();
    const wait = this.memory.daemonWait ?? { sinceMs: now, reported: false };
    this.memory.daemonWait = wait;
    if (wait.reported || now - wait.sinceMs < this.settings.daemonWaitEventAfterMs) return;
    wait.reported = true;
    const minutes = Math.round((now - wait.sinceMs) / 60_000);
    await this.event({
      reason: EVENT_REASONS.DaemonNotReady,
      message:
        `Terway's daemon has not written spec.eni and spec.pool of this Node CR for ${minutes} min; no IP is ` +
        'allocated until it does (is the terway daemon running on this node, with ipam_type crd?)',
    });
  }

  daemonReady(): void {
    delete this.memory.daemonWait;
  }

  /** A spec eniflow cannot act on: a Warning Event, and `IPAMConfigValid=False` on the core Node. */
  async invalidSpec(problems: readonly SpecProblem[]): Promise<void> {
    const message = problems
      .filter((problem) => problem.severity !== 'info')
      .map((problem) => problem.message)
      .join('; ')
      .slice(0, 1024);
    await this.event({ reason: EVENT_REASONS.InvalidNodeSpec, message });
    if (this.coreNode !== undefined) await this.configCondition({ valid: false, message });
  }

  /**
   * Clears `IPAMConfigValid=False` once the spec is valid (as the core Node shows it, so a fix after a restart too).
   * A pool tuning field dropped for its fallback (a bad `poolSyncPeriod` or `reclaim.jitterFactor`, see
   * validate-pool-spec.ts) is told by a Warning Event, at most once per `eventRepeatMs`.
   */
  async validSpec(problems: readonly SpecProblem[] = []): Promise<void> {
    const fallbacks = problems.filter(
      (problem) => problem.severity === 'warning' && problem.path.startsWith('spec.pool.'),
    );
    if (fallbacks.length > 0) {
      const message = fallbacks
        .map((problem) => problem.message)
        .join('; ')
        .slice(0, 1024);
      await this.event({ reason: EVENT_REASONS.InvalidNodeSpec, message, series: 'PoolSpecFallback' });
    }
    if (this.coreNode === undefined) return;
    const shownFalse = this.coreNode.ipamConfigValid?.status === 'False';
    if (!this.configConditionFalse && !shownFalse) return;
    await this.configCondition({ valid: true, message: 'Node CR spec is valid' });
  }

  private async configCondition(input: { valid: boolean; message: string }): Promise<void> {
    const now = formatRfc3339(Date.now());
    const patched = await this.patchCondition({
      type: CONFIG_CONDITION_TYPE,
      status: input.valid ? 'True' : 'False',
      reason: (input.valid ? CONDITION_REASONS.ValidNodeSpec : CONDITION_REASONS.InvalidNodeSpec).reason,
      message: input.message,
      lastHeartbeatTime: now,
      lastTransitionTime: now,
    });
    if (patched) this.configConditionFalse = !input.valid;
  }

  /** The spec's `enableIPPrefix` differs from the mode recorded at first sight: told, and ignored. */
  async prefixModeChangeIgnored(input: { prefixMode: boolean; asked: boolean }): Promise<void> {
    await this.event({
      reason: EVENT_REASONS.PrefixModeImmutable,
      message:
        `spec.eni.enableIPPrefix is ${String(input.asked)} but this node runs in ` +
        `${input.prefixMode ? 'IP prefix' : 'single-IP'} mode since its Node CR was first seen: the mode is fixed ` +
        'at creation (as Terway does), so nothing changes; re-create the node to change it',
    });
  }

  /** The vSwitches the worker holds as exhausted: one Event series each. */
  async blockedVSwitches(blocked: readonly { vSwitchId: string; blockedForMs: number }[]): Promise<void> {
    await this.writer.events(
      blocked.map((block) => ({
        reason: EVENT_REASONS.VSwitchBlocked,
        message:
          `vSwitch ${block.vSwitchId} answered InvalidVSwitchId.IpNotEnough and is not used for another ` +
          `${Math.ceil(block.blockedForMs / 60_000)} min; a resync signal asks the cloud again`,
        series: `VSwitchBlocked:${block.vSwitchId}`,
      })),
    );
  }

  /** What the OpenAPI sync decided about ENIs the instance's listing left out: one Event each. */
  async unlistedEnis(reports: readonly UnlistedEniReport[]): Promise<void> {
    await this.writer.events(
      reports.map((report) => {
        const kept = report.outcome.startsWith('kept');
        return {
          reason: kept
            ? EVENT_REASONS.EniKeptUntouched
            : report.outcome === 'released'
              ? EVENT_REASONS.EniReleased
              : EVENT_REASONS.EniForgotten,
          message: report.message,
        };
      }),
    );
  }

  /** Tells a pod whose binding to an `Invalid` address was dropped what it has now (or that it waits). */
  async reboundPods(input: {
    dropped: readonly { podId: string; family: IpFamily; ref: { eniId: string; ip: string } }[];
    enis: NetworkInterfaces;
  }): Promise<void> {
    if (input.dropped.length === 0) return;
    const now: Record<string, string> = {};
    for (const eniId of sortedKeys(input.enis)) {
      const eni = input.enis[eniId];
      for (const family of ['ipv4', 'ipv6'] as const) {
        for (const ip of sortedKeys(eni?.[family])) {
          const podId = eni?.[family]?.[ip]?.podID;
          if (podId !== undefined && podId !== '') now[`${podId}|${family}`] = ip;
        }
      }
    }
    await this.writer.events(
      input.dropped.map((dropped) => {
        const [namespace = '', name = ''] = dropped.podId.split('/');
        const next = now[`${dropped.podId}|${dropped.family}`];
        return {
          reason: EVENT_REASONS.IPRebound,
          message:
            `${dropped.ref.ip} on ${dropped.ref.eniId} is Invalid (the cloud does not have it) and the pod does ` +
            `not use it: ${next === undefined ? 'waiting for a valid address' : `rebound to ${next}`}`,
          pod: { namespace, name },
        };
      }),
    );
  }

  /**
   * Tells the pods that have waited longer than `pendingPodEventAfterMs` for their IP why: the failing call when one
   * is the cause, else the plan's reason. One Event series per pod and cause, for at most `POD_EVENT_CAP` pods (those
   * waiting longest); past that one Event on the node counts them all by cause (see `pendingNotices`).
   */
  async pendingPods(input: {
    unsatisfied: readonly UnsatisfiedPod[];
    isNodeReady: boolean;
    plan?: EniAllocationPlan;
    failureTypes: readonly string[];
    ledger: FailureLedger;
    /** Degradation l0: no allocation was tried, whatever the plan says. */
    allocationHeldBack?: boolean;
  }): Promise<void> {
    const byPod = new Map(input.unsatisfied.map((pod) => [pod.request.podId, pod]));
    const tracked = trackPendingPods({
      previous: this.memory.pendingSince ?? {},
      waitingPodIds: [...byPod.keys()],
      nowMs: Date.now(),
      eventAfterMs: this.settings.pendingPodEventAfterMs,
    });
    this.memory.pendingSince = tracked.since;
    if (tracked.due.length === 0) return;
    const due = tracked.due.flatMap((podId) => {
      const pod = byPod.get(podId);
      if (pod === undefined) return [];
      const reason = explainPendingPod({
        podReason: pod.reason,
        isNodeReady: input.isNodeReady,
        failureTypes: input.failureTypes,
        ...(input.plan === undefined ? {} : { plan: input.plan }),
        ...(input.allocationHeldBack === true ? { allocationHeldBack: true } : {}),
      });
      return [{ podId, sinceMs: tracked.since[podId] ?? 0, reason }];
    });
    const notices = pendingNotices({
      due,
      failing: input.ledger,
      workflowId: workflowInfo().workflowId,
      recovering: this.callsFailingAtPassStart && !hasFailingCalls(input.ledger),
    });
    // All of them in one activity (per batch): a node with 30 stuck pods must not pay 30 activities a pass.
    await this.writer.events([
      ...(notices.summary === undefined ? [] : [{ reason: EVENT_REASONS.IPAllocationPending, ...notices.summary }]),
      ...notices.pods.map((notice): EventInput => {
        const [namespace = '', name = ''] = notice.podId.split('/');
        const podUid = byPod.get(notice.podId)?.request.podUid ?? '';
        return {
          reason: EVENT_REASONS.IPAllocationPending,
          message: notice.message,
          series: notice.series,
          pod: { namespace, name, ...(podUid === '' ? {} : { uid: podUid }) },
        };
      }),
    ]);
  }

  /** Pods of a node that is not Ready wait without any allocation: they are told so once they have waited long. */
  async podsOfUnreadyNode(input: {
    pods: NodeSnapshot['pods'];
    enis: NetworkInterfaces;
    eniSpec: EniSpec | undefined;
    ledger: FailureLedger;
  }): Promise<void> {
    if (input.eniSpec === undefined) return;
    const demand = podIpRequestsFromPods({ pods: input.pods, eniSpec: input.eniSpec });
    const local = assignIpsFromLocalPool({
      enis: input.enis,
      requests: demand.requests,
      primaryFamily: primaryFamilyOf(input.eniSpec),
    });
    await this.pendingPods({
      unsatisfied: local.unsatisfied,
      isNodeReady: false,
      failureTypes: [],
      ledger: input.ledger,
    });
  }

  /** The core Node's `SufficientIP` (Terway's capacity meaning), and a Warning when it turns False. */
  async sufficientIp(capacity: { hasIdleIp: boolean; hasAllocatableEni: boolean }): Promise<void> {
    if (this.coreNode === undefined) return;
    const condition = sufficientIpCondition({
      capacity,
      existing: this.coreNode.sufficientIp,
      nowMs: Date.now(),
    });
    if (condition === undefined) return;
    await this.patchCondition(condition);
    if (condition.status === 'False') {
      await this.event({ reason: EVENT_REASONS.InsufficientIP, message: 'node has insufficient IP' });
    }
  }

  /**
   * The node-level Warning of a pass whose allocations failed: the failing calls when calls fail, else (capacity
   * answers only) what each step met.
   */
  async allocationFailed(input: { failures: readonly StepFailure[]; ledger: FailureLedger }): Promise<void> {
    if (input.failures.length === 0) return;
    const notice = operationFailureNotice({ failing: input.ledger, workflowId: workflowInfo().workflowId }) ?? {
      message: input.failures.map(describeStepFailure).join('; '),
      series: 'capacity',
    };
    await this.event({ reason: EVENT_REASONS.AllocIPFailed, ...notice });
  }

  /**
   * After a pass that made cloud calls: the core Node's `ENIOperationsFailing` follows the ledger, and a pass that
   * ended a run of failing calls with calls that succeeded says `Recovered`.
   */
  async operationHealth(input: {
    ledger: FailureLedger;
    recovered: boolean;
    pods: { withIp: number; total: number; pending: number; served: number };
  }): Promise<void> {
    const workflowId = workflowInfo().workflowId;
    const core = this.coreNode;
    if (core !== undefined) {
      const condition = eniOperationsCondition({
        failing: input.ledger,
        existing: core.eniOperationsFailing,
        workflowId,
        nowMs: Date.now(),
      });
      if (condition !== undefined && (await this.patchCondition(condition))) {
        this.coreNode = { ...core, eniOperationsFailing: condition };
      }
    }
    if (!input.recovered) return;
    await this.event({ reason: EVENT_REASONS.Recovered, ...recoveredNotice({ pods: input.pods, workflowId }) });
  }

  /** Whether the core Node shows `ENIOperationsFailing=True` (a recovery must clear it even after a restart). */
  showsCallsFailing(): boolean {
    return this.coreNode?.eniOperationsFailing?.status === 'True';
  }
}
