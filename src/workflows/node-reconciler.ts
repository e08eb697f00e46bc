import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  log,
  patched,
  proxyActivities,
  proxyLocalActivities,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';

import {
  applyJsonDelta,
  assignIpsFromLocalPool,
  canonicalJson,
  countIdleIps,
  ENIFLOW_NODE_TAG,
  eniConditionsAfterAllocation,
  eniKindOf,
  eniOperationsCondition,
  explainPendingPod,
  failureBackoffMs,
  forgetEni,
  forgetIps,
  formatRfc3339,
  isCloudFailureType,
  jsonDelta,
  mergeSeenVersions,
  mergeOpenApiEnis,
  noteOperationFailure,
  operationFailureNotice,
  parseRfc3339,
  PENDING_REASONS,
  pendingPodNotice,
  planEniAllocations,
  planGc,
  planPoolRelease,
  podIpRequestsFromPods,
  primaryFamilyOf,
  recordAssignedIps,
  recordCreatedEni,
  recordEniForDeletion,
  releaseIpsOfGonePods,
  resolveUnlistedEnis,
  settleOperationFailures,
  sortedKeys,
  sufficientIpCondition,
  unschedulableEniIds,
} from '../ipam/index.js';
import type {
  EniAllocation,
  EniAllocationError,
  EniAllocationPlan,
  FailingOperations,
  GcAction,
  NetworkInterface,
  NetworkInterfaces,
  NodeCr,
  NodeSpec,
  NodeStatus,
  SpecProblem,
  UnlistedEniReport,
  UnsatisfiedPod,
  VSwitchInfo,
} from '../ipam/index.js';
import type { Activities, NodeSnapshot, NodeView } from '../activities/index.js';
import { ACTIVITY_POLICIES, LOCAL_ACTIVITY_POLICIES } from './activity-policies.js';
import { proxyActivitiesWithSummaries } from './activity-summaries.js';
import { DEFAULT_NODE_SETTINGS } from './messages.js';
import type {
  GcResult,
  IpamState,
  NodeIpamSettings,
  NodeWorkflowState,
  PendingOperation,
  ReconcileReason,
  RecordedError,
} from './messages.js';

const kubeRead = proxyActivities<Activities>(ACTIVITY_POLICIES.kubeRead);
const statusWrite = proxyActivities<Activities>(ACTIVITY_POLICIES.statusWrite);
const kubeNotice = proxyActivities<Activities>(ACTIVITY_POLICIES.kubeNotice);
const ecsRead = proxyActivitiesWithSummaries(ACTIVITY_POLICIES.ecsRead);
const create = proxyActivitiesWithSummaries(ACTIVITY_POLICIES.createEni);
const attach = proxyActivitiesWithSummaries(ACTIVITY_POLICIES.attachEni);
const wait = proxyActivitiesWithSummaries(ACTIVITY_POLICIES.waitEniStatus);
const release = proxyActivitiesWithSummaries(ACTIVITY_POLICIES.releaseEni);
const ipOps = proxyActivitiesWithSummaries(ACTIVITY_POLICIES.ipOps);
const kubeReadLocal = proxyLocalActivities<Activities>(LOCAL_ACTIVITY_POLICIES.kubeRead);
const ecsReadLocal = proxyLocalActivities<Activities>(LOCAL_ACTIVITY_POLICIES.ecsRead);

export { DEFAULT_NODE_SETTINGS as DEFAULT_SETTINGS } from './messages.js';
export type { NodeIpamSettings } from './messages.js';

/**
 * The patch guarding the data-plane safety rules (lookup of unlisted ENIs, guarded ENI removal, rebinding and
 * daemon-wait events): histories recorded before it replay the old command sequence (docs/decisions.md).
 */
const DATA_PLANE_SAFETY_PATCH = 'data-plane-safety';
/** The due time of the next OpenAPI sync is read from the CR by a new run (before it, every new run synced). */
const SYNC_TIME_FROM_CR_PATCH = 'sync-time-from-cr';
/** Create intents outlive a pass (before it, a create lost on every attempt was re-planned under a new token). */
const CREATE_INTENT_PATCH = 'create-intent';
/**
 * Events name the failing call and repeat as one series, the core Node gets `ENIOperationsFailing` and `Recovered`,
 * transient failures back off briefly, and a resync re-reads blocked vSwitches (docs/decisions.md, "Truthful
 * events"). Before it, events were deduplicated by message and every failure backed off up to the long cap.
 */
const TRUTHFUL_EVENTS_PATCH = 'truthful-events';
/**
 * Small histories: the pass reads the node as changes since the view it holds (`readNodeView`, a local activity),
 * describes its vSwitches in a local activity, and writes only the ENI entries it changed
 * (`writeNodeStatusChanges`). Histories recorded before it scheduled `readNodeSnapshot`, `describeVSwitches` and
 * `writeNodeStatus` as activities, whose results and inputs replay only on the old path.
 */
const COMPACT_HISTORY_PATCH = 'compact-history';
/** Depth of the status write's changes (see `STATUS_CHANGE_DEPTH` in kube-activities.ts). */
const STATUS_CHANGE_DEPTH = 3;

/** The snapshot the core reads, from the compact view (pods in `namespace/name` order). */
function snapshotOfView(view: NodeView): NodeSnapshot {
  const snapshot: NodeSnapshot = {
    nodeName: view.nodeName,
    pods: sortedKeys(view.pods).flatMap((key) => view.pods[key] ?? []),
  };
  if (view.cr !== undefined) snapshot.cr = view.cr;
  if (view.nodeRuntime !== undefined) snapshot.nodeRuntime = view.nodeRuntime;
  if (view.coreNode !== undefined) snapshot.coreNode = view.coreNode;
  return snapshot;
}

/**
 * Version of {@link CarriedState}. Bump it when a field changes meaning or becomes required, and teach
 * {@link upgradeCarriedState} to bring the previous version forward: a run may be started from a state written by
 * the previous release. Version 1 (unversioned) lacks the optional fields added since; they default to absent.
 */
export const CARRIED_STATE_VERSION = 2;

/** What survives continue-as-new: only what the CR does not already hold. */
export interface CarriedState {
  /** {@link CARRIED_STATE_VERSION} of the run that wrote it; absent in version 1. */
  version?: number;
  /** The ENIs as the workflow knows them, kept only while the CR has not yet been told (status write pending). */
  unwrittenEnis?: NetworkInterfaces;
  needResync: boolean;
  lastGcMs?: number;
  reconcileCount: number;
  signalsReceived: number;
  failureStreak: number;
  lastErrors: RecordedError[];
  eventTimes: Record<string, number>;
  /** When each pod still waiting for an IP was first seen waiting (epoch ms), by pod id. */
  pendingSince?: Record<string, number>;
  /** Since when (epoch ms) the daemon has not written `spec.eni`/`spec.pool`, and whether that was reported. */
  daemonWait?: { sinceMs: number; reported: boolean };
  /** What the last OpenAPI sync decided about ENIs the instance's listing left out. */
  unlistedEnis?: UnlistedEniReport[];
  /**
   * Creates whose outcome is unknown (every attempt lost: worker killed, responses dropped, partition). The next
   * pass re-issues each with the same ClientToken and parameters before anything else, so an ENI the cloud did
   * create is found and used (or released), never abandoned while another is created under a new token.
   */
  pendingCreates?: PendingCreate[];
  /** Cloud calls failing over consecutive passes, by call and code: what events and conditions report. */
  failingOperations?: FailingOperations;
  /**
   * The newest resourceVersions the workflow knows of, by informer: from the watcher's signals and its own status
   * writes. A read answers from a worker's cache only once that cache has seen as much.
   */
  seenVersions?: Record<string, string>;
}

/** A create intent: what was asked and under which ClientToken. */
export interface PendingCreate {
  clientToken: string;
  eniKind: Extract<EniAllocation, { kind: 'createEni' }>['eniKind'];
  vSwitchId: string;
  ipv4Count: number;
  ipv6Count: number;
  sinceMs: number;
}

/** Failure types after which ECS has certainly created nothing (the same token's last answer was a refusal). */
const DEFINITE_CREATE_REFUSALS = ['EcsVSwitchExhausted', 'EcsQuotaExceeded', 'EcsInvalidRequest', 'EcsNotFound'];

/** A failure of one activity, reduced to what the workflow decides on. */
interface StepFailure {
  type: string;
  message: string;
  code?: string;
  requestId?: string;
  /** The cloud call that failed (ECS action), when the activity said. */
  call?: string;
  /** How many attempts the activity made before giving up. */
  attempts?: number;
}

function stepFailure(error: unknown): StepFailure {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  if (cause instanceof ApplicationFailure) {
    const details = (cause.details?.[0] ?? {}) as {
      code?: unknown;
      requestId?: unknown;
      operation?: unknown;
      attempt?: unknown;
    };
    const failure: StepFailure = { type: cause.type ?? 'Unknown', message: cause.message };
    if (typeof details.code === 'string') failure.code = details.code;
    if (typeof details.requestId === 'string') failure.requestId = details.requestId;
    if (typeof details.operation === 'string') failure.call = details.operation;
    if (typeof details.attempt === 'number') failure.attempts = details.attempt;
    return failure;
  }
  return { type: 'Unknown', message: cause instanceof Error ? cause.message : String(cause) };
}

const MAX_RECORDED_ERRORS = 20;

/** Epoch ms as ISO 8601, for what people read (the `state` query, the Web UI). */
function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}

/** The create a pending intent stands for, with exactly the parameters its token was first sent with. */
function intentAllocation(intent: PendingCreate): Extract<EniAllocation, { kind: 'createEni' }> {
  return {
    kind: 'createEni',
    eniKind: intent.eniKind,
    vSwitchId: intent.vSwitchId,
    ipv4Count: intent.ipv4Count,
    ipv6Count: intent.ipv6Count,
  };
}

/** The carried state of a node's first run. */
function newCarriedState(): CarriedState {
  return {
    version: CARRIED_STATE_VERSION,
    needResync: false,
    reconcileCount: 0,
    signalsReceived: 0,
    failureStreak: 0,
    lastErrors: [],
    eventTimes: {},
  };
}

/** Brings a carried state of an earlier version forward (see {@link CARRIED_STATE_VERSION}). */
export function upgradeCarriedState(carried: CarriedState): CarriedState {
  const version = carried.version ?? 1;
  if (version > CARRIED_STATE_VERSION) {
    // Written by a newer release and read by an older one (a rollback): keep what this version knows.
    return { ...carried };
  }
  // 1 → 2 added only optional fields (daemonWait, unlistedEnis, pendingCreates, version).
  return { ...carried, version: CARRIED_STATE_VERSION };
}

/** A fraction in [0, 1) fixed per node (FNV-1a of its name), so timers of many nodes spread out, same on replay. */
function jitterOf(nodeName: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < nodeName.length; i += 1) {
    hash ^= nodeName.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash / 2 ** 32;
}

/** An ENI kept in the CR but out of every plan, with the reason as its `OperationErr` condition. */
function keepEniUntouched(eniId: string, eni: NetworkInterface | undefined, message: string): NetworkInterface {
  const base: NetworkInterface = eni ?? { id: eniId, status: 'Deleting' };
  return {
    ...base,
    unschedulable: true,
    conditions: { ...base.conditions, OperationErr: { observedTime: formatRfc3339(Date.now()), message } },
  };
}
const CONFIG_CONDITION_TYPE = 'IPAMConfigValid';

/** Does one node's reconcile passes; all state lives here and survives continue-as-new through {@link carry}. */
export class NodeReconciler {
  readonly nodeName: string;
  readonly settings: NodeIpamSettings;
  private state: CarriedState;
  private instanceId: string | undefined;
  private ipamState: IpamState = 'Starting';
  private skipReason: string | undefined;
  private lastPassMs: number | undefined;
  private lastPlan: NodeWorkflowState['lastPlan'] = { allocations: [], gc: [], unmetDemand: { normal: 0, erdma: 0 } };
  private podCounts = { total: 0, withIp: 0, pending: 0 };
  private eniCounts = { total: 0, idleIps: 0 };
  private pending: PendingOperation[] = [];
  private nextSyncMs: number | undefined;
  private unschedulableEnis: string[] = [];
  /** Set by a pass that left work for later: GC work (surplus idle IPs, removals, CNI deletes) or waiting pods. */
  private hasPendingWork = false;
  private awaitingCniDelete = 0;
  /** True once the node's CR is gone: the workflow then ends. */
  finished = false;
  /** Set by signals and updates; cleared when a pass starts. */
  dirty = true;
  gcRequested = false;
  gcRequestSeq = 0;
  gcDoneSeq = 0;
  lastGcResult: GcResult = { releasedIps: [], removedEnis: [], failed: [] };
  passesThisRun = 0;
  /** Failure types met during the current pass, to explain why pods wait. */
  private passFailureTypes: string[] = [];
  /** Errors recorded during the current pass, for its log line. */
  private passErrors: Omit<RecordedError, 'atMs'>[] = [];
  /** Whether this pass runs under {@link TRUTHFUL_EVENTS_PATCH}. */
  private truthful = false;
  private passStartMs = 0;
  /** Set when the pass called the cloud, so what it saw says whether calls fail or succeed now. */
  private reachedCloud = false;
  /** Whether cloud calls were failing when this pass started. */
  private callsFailedBefore = false;
  /** The core Node as the pass read it: events go there too, and its `ENIOperationsFailing` is compared. */
  private coreNode: NodeSnapshot['coreNode'];
  private crUid: string | undefined;
  private blockedVSwitches: NonNullable<NodeWorkflowState['blockedVSwitches']> = [];
  /** Set by a `resync` signal; the next pass's vSwitch read then asks the cloud again (lifting blocks). */
  private vSwitchRefreshRequested = false;
  /**
   * The node as the last read left it, and its digest: the base of the next read's changes. Rebuilt on replay from
   * the reads in history (a run starts without one, so its first read is in full); never carried.
   */
  private nodeView: { digest: string; view: NodeView } | undefined;

  constructor(input: { nodeName: string; settings?: Partial<NodeIpamSettings>; carried?: CarriedState }) {
    this.nodeName = input.nodeName;
    this.settings = { ...DEFAULT_NODE_SETTINGS, ...input.settings };
    this.state = input.carried === undefined ? newCarriedState() : upgradeCarriedState(input.carried);
  }

  carry(): CarriedState {
    return {
      ...this.state,
      version: CARRIED_STATE_VERSION,
      lastErrors: [...this.state.lastErrors],
      eventTimes: { ...this.state.eventTimes },
    };
  }

  noteSignal(reason?: ReconcileReason): void {
    if (reason?.seen !== undefined) this.state.seenVersions = mergeSeenVersions(this.state.seenVersions, reason.seen);
    this.state.signalsReceived += 1;
    this.dirty = true;
  }

  requestResync(): void {
    this.state.needResync = true;
    this.vSwitchRefreshRequested = true;
    this.dirty = true;
  }

  requestGc(): number {
    this.gcRequested = true;
    this.gcRequestSeq += 1;
    this.dirty = true;
    return this.gcRequestSeq;
  }

  /** Epoch ms at which the next pass is due without any signal. */
  nextWakeMs(): number {
    const last = this.lastPassMs ?? 0;
    if (this.state.failureStreak > 0 && this.truthful) {
      return (
        last +
        failureBackoffMs({
          streak: this.state.failureStreak,
          maxMs: this.settings.maxFailureBackoffMs,
          transientMaxMs: this.settings.transientFailureBackoffMs ?? DEFAULT_NODE_SETTINGS.transientFailureBackoffMs,
          lastFailureTypes: this.passFailureTypes,
        })
      );
    }
    if (this.state.failureStreak > 0) {
      return last + Math.min(this.settings.maxFailureBackoffMs, 1_000 * 2 ** (this.state.failureStreak - 1));
    }
    // Cost follows change: an idle node with nothing to release sleeps until a signal, a due sync or the safety net.
    const candidates = [last + Math.round(this.settings.idleWakeMs * (1 + jitterOf(this.nodeName) / 4))];
    if (this.hasPendingWork) candidates.push((this.state.lastGcMs ?? last) + this.settings.gcPeriodMs);
    if (this.nextSyncMs !== undefined) candidates.push(this.nextSyncMs);
    const wait = this.state.daemonWait;
    if (wait !== undefined && !wait.reported) {
      candidates.push(wait.sinceMs + (this.settings.daemonWaitEventAfterMs ?? 0));
    }
    return Math.min(...candidates);
  }

  lastPassEndMs(): number {
    return this.lastPassMs ?? 0;
  }

  currentIpamState(): IpamState {
    return this.ipamState;
  }

  currentInstanceId(): string | undefined {
    return this.instanceId;
  }

  /** Passes failed in a row: while above 0 the node waits out its failure backoff between passes. */
  failedPasses(): number {
    return this.state.failureStreak;
  }

  view(): NodeWorkflowState {
    const view: NodeWorkflowState = {
      nodeName: this.nodeName,
      ipamState: this.ipamState,
      reconcileCount: this.state.reconcileCount,
      signalsReceived: this.state.signalsReceived,
      lastPlan: this.lastPlan,
      pods: { ...this.podCounts },
      enis: { ...this.eniCounts },
      pendingOperations: this.pending.map((operation) => ({ ...operation, startedAt: isoTime(operation.startedAtMs) })),
      lastErrors: this.state.lastErrors.map((error) => ({ ...error, at: isoTime(error.atMs) })),
      failedPasses: this.state.failureStreak,
    };
    if (this.instanceId !== undefined) view.instanceId = this.instanceId;
    if (this.skipReason !== undefined) view.skipReason = this.skipReason;
    if (this.lastPassMs !== undefined) {
      view.lastReconcileMs = this.lastPassMs;
      view.lastReconcileAt = isoTime(this.lastPassMs);
      const nextMs = this.nextWakeMs();
      view.nextPass = { at: isoTime(nextMs), reason: this.nextPassReason(nextMs) };
    }
    const waitingSince = Object.values(this.state.pendingSince ?? {});
    if (waitingSince.length > 0) view.oldestPendingSince = isoTime(Math.min(...waitingSince));
    if (this.state.unlistedEnis !== undefined) view.unlistedEnis = [...this.state.unlistedEnis];
    if (this.unschedulableEnis.length > 0) view.unschedulableEnis = [...this.unschedulableEnis];
    if (this.awaitingCniDelete > 0) view.podsAwaitingCniDelete = this.awaitingCniDelete;
    if ((this.state.pendingCreates?.length ?? 0) > 0) view.pendingCreates = this.state.pendingCreates?.length ?? 0;
    const failing = Object.values(this.state.failingOperations ?? {});
    if (failing.length > 0) view.failingOperations = failing.map((failure) => ({ ...failure }));
    if (this.blockedVSwitches.length > 0) view.blockedVSwitches = this.blockedVSwitches.map((block) => ({ ...block }));
    return view;
  }

  /** Why the pass at `atMs` (from {@link nextWakeMs}) is due, for the `state` query and the Web UI. */
  private nextPassReason(atMs: number): string {
    if (this.state.failureStreak > 0) return `retry after ${this.state.failureStreak} failed pass(es) (backoff)`;
    if (atMs === this.nextSyncMs) return 'OpenAPI sync due';
    if (this.hasPendingWork && atMs === (this.state.lastGcMs ?? this.lastPassEndMs()) + this.settings.gcPeriodMs) {
      return 'GC period (idle IPs to release or pods waiting)';
    }
    const wait = this.state.daemonWait;
    if (wait !== undefined && !wait.reported && atMs === wait.sinceMs + (this.settings.daemonWaitEventAfterMs ?? 0)) {
      return 'daemon still not ready: Warning event due';
    }
    return 'safety-net wake, unless a change comes first';
  }

  private recordError(input: Omit<RecordedError, 'atMs'> & { call?: string; attempts?: number }): void {
    const { call, attempts, ...error } = input;
    this.passFailureTypes.push(error.type);
    this.passErrors.push(error);
    this.state.lastErrors = [...this.state.lastErrors, { atMs: Date.now(), ...error }].slice(-MAX_RECORDED_ERRORS);
    if (this.truthful && isCloudFailureType(error.type)) {
      this.state.failingOperations = noteOperationFailure({
        current: this.state.failingOperations ?? {},
        failure: {
          operation: call ?? error.operation,
          code: error.code ?? error.type,
          type: error.type,
          attempts: attempts ?? 1,
        },
        nowMs: Date.now(),
      });
    }
  }

  private async track<T>(operation: Omit<PendingOperation, 'startedAtMs'>, run: () => Promise<T>): Promise<T> {
    const entry: PendingOperation = { ...operation, startedAtMs: Date.now() };
    this.pending = [...this.pending, entry];
    try {
      return await run();
    } finally {
      this.pending = this.pending.filter((item) => item !== entry);
    }
  }

  /**
   * Records a Warning/Normal event on the Node CR (or on a pod), at most once per `eventRepeatMs` for the same
   * object, reason and message. With a `series` key (under the truthful-events patch) the message may change:
   * repeats of one series are one Event whose count grows, and node events also go on the core Node.
   */
  private async event(input: {
    type: 'Normal' | 'Warning';
    reason: string;
    message: string;
    uid?: string;
    pod?: { namespace: string; name: string; uid?: string };
    series?: string;
  }) {
    const series = this.truthful ? (input.series ?? input.message) : undefined;
    const key = `${input.pod === undefined ? '' : `${input.pod.namespace}/${input.pod.name}:`}${input.reason}:${series ?? input.message}`;
    const now = Date.now();
    const last = this.state.eventTimes[key];
    if (last !== undefined && now - last < this.settings.eventRepeatMs) return;
    // Only recent entries are kept (the map is carried across continue-as-new), in key order.
    const recent: [string, number][] = Object.entries(this.state.eventTimes).filter(
      ([, at]) => now - at < this.settings.eventRepeatMs,
    );
    recent.push([key, now]);
    recent.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    this.state.eventTimes = Object.fromEntries(recent);
    try {
      await kubeNotice.recordEvent({
        nodeName: this.nodeName,
        involved:
          input.pod === undefined
            ? {
                kind: 'Node',
                apiVersion: 'network.alibabacloud.com/v1beta1',
                name: this.nodeName,
                ...(input.uid === undefined ? {} : { uid: input.uid }),
              }
            : {
                kind: 'Pod',
                apiVersion: 'v1',
                name: input.pod.name,
                namespace: input.pod.namespace,
                ...(input.pod.uid === undefined ? {} : { uid: input.pod.uid }),
              },
        type: input.type,
        reason: input.reason,
        message: input.message,
        ...(series === undefined ? {} : { series }),
        ...(series === undefined || input.pod !== undefined || this.coreNode === undefined
          ? {}
          : { coreNode: this.coreNode.uid === '' ? {} : { uid: this.coreNode.uid } }),
      });
    } catch (error) {
      this.recordError({ operation: 'recordEvent', ...stepFailure(error) });
    }
  }

  /** One reconcile pass: read, plan with the core, act through activities, fold, write. */
  async pass(): Promise<void> {
    this.state.reconcileCount += 1;
    this.passesThisRun += 1;
    this.passFailureTypes = [];
    this.passErrors = [];
    this.hasPendingWork = false;
    this.truthful = patched(TRUTHFUL_EVENTS_PATCH);
    this.passStartMs = Date.now();
    this.reachedCloud = false;
    this.callsFailedBefore =
      operationFailureNotice({ failing: this.state.failingOperations ?? {}, workflowId: '' }) !== undefined;
    // GC requests that arrive while this pass runs are answered by the next pass, not with this one's result.
    const gcSeq = this.gcRequestSeq;
    if (this.gcRequested) this.lastGcResult = { releasedIps: [], removedEnis: [], failed: [] };
    let failed = false;
    try {
      failed = await this.reconcile();
    } catch (error) {
      failed = true;
      this.ipamState = 'Error';
      const failure = stepFailure(error);
      if (isCloudFailureType(failure.type)) this.reachedCloud = true;
      this.recordError({ operation: 'reconcile', ...failure });
    } finally {
      this.state.failureStreak = failed ? this.state.failureStreak + 1 : 0;
      this.lastPassMs = Date.now();
      // An update asking for GC is answered when the pass ends, after the status write (or when it was skipped).
      this.gcDoneSeq = Math.max(this.gcDoneSeq, gcSeq);
      this.gcRequested = this.gcRequestSeq > gcSeq;
      if (this.gcRequested) this.dirty = true;
      if (failed) this.logFailedPass();
    }
    if (this.truthful) await this.reportOperationHealth();
  }

  /**
   * After a pass that called the cloud: causes that did not fail again are over; the core Node's
   * `ENIOperationsFailing` follows, and the pass that ends a run of failures says `Recovered`.
   */
  private async reportOperationHealth(): Promise<void> {
    if (!this.reachedCloud || this.finished) return;
    const failing = settleOperationFailures({
      current: this.state.failingOperations ?? {},
      passStartMs: this.passStartMs,
    });
    if (Object.keys(failing).length === 0) delete this.state.failingOperations;
    else this.state.failingOperations = failing;
    const workflowId = workflowInfo().workflowId;
    const callsFail = operationFailureNotice({ failing, workflowId }) !== undefined;
    const shownFailing = this.coreNode?.eniOperationsFailing?.status === 'True';
    if (this.coreNode !== undefined) {
      const condition = eniOperationsCondition({
        failing,
        existing: this.coreNode.eniOperationsFailing,
        workflowId,
        nowMs: Date.now(),
      });
      if (condition !== undefined) {
        try {
          await kubeNotice.patchNodeCondition({ nodeName: this.nodeName, condition });
          this.coreNode = { ...this.coreNode, eniOperationsFailing: condition };
        } catch (error) {
          this.recordError({ operation: 'patchNodeCondition', ...stepFailure(error) });
        }
      }
    }
    if (!callsFail && (this.callsFailedBefore || shownFailing)) {
      await this.event({
        type: 'Normal',
        reason: 'Recovered',
        message: `ENI and IP operations succeed again; ${this.podCounts.withIp} of ${this.podCounts.total} pods hold their IPs (workflow ${workflowId})`,
        series: 'Recovered',
        ...(this.crUid === undefined || this.crUid === '' ? {} : { uid: this.crUid }),
      });
    }
  }

  /**
   * The one warning of a failed pass, naming the node and what failed. Activities log their failed attempts below
   * warn, so this line is how a failure reaches an operator once. The logger is a sink: nothing enters history, and
   * nothing is logged on replay.
   */
  private logFailedPass(): void {
    log.warn('Reconcile pass failed', {
      nodeName: this.nodeName,
      pass: this.state.reconcileCount,
      failureStreak: this.state.failureStreak,
      ipamState: this.ipamState,
      errors: this.passErrors.map((error) => ({
        operation: error.operation,
        type: error.type,
        message: error.message,
        ...(error.code === undefined ? {} : { code: error.code }),
        ...(error.requestId === undefined ? {} : { requestId: error.requestId }),
        ...(error.eniId === undefined ? {} : { eniId: error.eniId }),
      })),
    });
  }

  private skip(state: IpamState, reason: string): boolean {
    this.ipamState = state;
    this.skipReason = reason;
    return false;
  }

  /** Returns true when the pass failed (so the next one backs off). */
  private async reconcile(): Promise<boolean> {
    const snapshot = patched(COMPACT_HISTORY_PATCH)
      ? await this.readNode()
      : await kubeRead.readNodeSnapshot({ nodeName: this.nodeName });
    this.skipReason = undefined;
    this.coreNode = snapshot.coreNode;
    this.crUid = snapshot.cr?.uid;
    const cr = snapshot.cr;
    if (cr === undefined) {
      this.finished = true;
      return this.skip('Gone', 'the Node CR does not exist');
    }
    const validation = cr.validation;
    if (!validation.ok) {
      await this.reportInvalidSpec({ problems: validation.problems, snapshot });
      return this.skip('InvalidSpec', validation.problems.map((problem) => problem.message).join('; '));
    }
    if (cr.isDeleting) return this.cleanUpDeletedNode(validation.node);
    if (validation.readiness === 'daemonNotReady') {
      await this.reportDaemonWait(cr.uid);
      return this.skip('WaitingForDaemon', 'Terway daemon has not written spec.eni and spec.pool yet');
    }
    delete this.state.daemonWait;
    if (validation.isBlocked) {
      await this.reportInvalidSpec({ problems: validation.problems, snapshot });
      return this.skip(
        'InvalidSpec',
        validation.problems
          .filter((problem) => problem.severity === 'blocking')
          .map((problem) => problem.message)
          .join('; '),
      );
    }
    await this.clearInvalidSpecCondition(snapshot);
    const node = validation.node;
    const crMode = (node.metadata.labels?.['k8s.aliyun.com/exclusive-mode-eni-type'] ?? 'default').toLowerCase();
    if (crMode === 'enionly' || snapshot.coreNode?.exclusiveEniMode === 'enionly') {
      return this.skip('ExclusiveEniMode', 'the node uses exclusive ENI mode');
    }
    if (snapshot.coreNode?.isReady !== true) {
      const spec = node.spec;
      if (spec.eni !== undefined) {
        const demand = podIpRequestsFromPods({ pods: snapshot.pods, eniSpec: spec.eni });
        const local = assignIpsFromLocalPool({
          enis: this.startingEnis(node),
          requests: demand.requests,
          primaryFamily: primaryFamilyOf(spec.eni),
        });
        await this.reportPendingPods({ unsatisfied: local.unsatisfied, isNodeReady: false });
      }
      return this.skip('NodeNotReady', 'the core Node is missing or not Ready');
    }
    return this.reconcileReadyNode({ node, snapshot, uid: cr.uid });
  }

  /** Reads the node as changes since the view held (or in full), and keeps the result as the next base. */
  private async readNode(): Promise<NodeSnapshot> {
    const held = this.nodeView;
    const after = this.state.seenVersions;
    const reply = await kubeReadLocal.readNodeView({
      nodeName: this.nodeName,
      ...(held === undefined ? {} : { base: held.digest }),
      ...(after === undefined ? {} : { after }),
    });
    let view: NodeView;
    if ('full' in reply) view = reply.full;
    else if (held?.digest === reply.base) view = applyJsonDelta(held.view, reply.changes);
    else {
      // Cannot happen (the activity answers against the base sent); the next read, without a base, is in full.
      this.nodeView = undefined;
      throw ApplicationFailure.retryable(`read answered against base ${reply.base}`, 'KubeStaleBase');
    }
    this.nodeView = { digest: reply.digest, view };
    return snapshotOfView(view);
  }

  /**
   * A daemon that never writes its part of the spec looks exactly like a slow one: after `daemonWaitEventAfterMs`
   * one Warning event says so, so an operator can tell them apart (the wait itself is not an error).
   */
  private async reportDaemonWait(uid: string): Promise<void> {
    if (!patched(DATA_PLANE_SAFETY_PATCH)) return;
    const now = Date.now();
    const wait = this.state.daemonWait ?? { sinceMs: now, reported: false };
    this.state.daemonWait = wait;
    const afterMs = this.settings.daemonWaitEventAfterMs ?? DEFAULT_NODE_SETTINGS.daemonWaitEventAfterMs ?? 0;
    if (wait.reported || now - wait.sinceMs < afterMs) return;
    wait.reported = true;
    const minutes = Math.round((now - wait.sinceMs) / 60_000);
    await this.event({
      type: 'Warning',
      reason: 'DaemonNotReady',
      message:
        `Terway's daemon has not written spec.eni and spec.pool of this Node CR for ${minutes} min; no IP is ` +
        'allocated until it does (is the terway daemon running on this node, with ipam_type crd?)',
      ...(uid === '' ? {} : { uid }),
    });
  }

  private async reportInvalidSpec(input: { problems: readonly SpecProblem[]; snapshot: NodeSnapshot }) {
    const blocking = input.problems.filter((problem) => problem.severity !== 'info');
    const message = blocking
      .map((problem) => problem.message)
      .join('; ')
      .slice(0, 1024);
    await this.event({ type: 'Warning', reason: 'InvalidNodeSpec', message, ...this.uidOf(input.snapshot) });
    if (input.snapshot.coreNode !== undefined) {
      await this.patchConfigCondition({ valid: false, message });
    }
  }

  private uidOf(snapshot: NodeSnapshot): { uid?: string } {
    return snapshot.cr?.uid === undefined ? {} : { uid: snapshot.cr.uid };
  }

  private configConditionFalse = false;

  private async clearInvalidSpecCondition(snapshot: NodeSnapshot): Promise<void> {
    if (snapshot.coreNode === undefined) return;
    // The core Node says what it shows (so a fix after continue-as-new or a restart still clears it).
    const shownFalse = snapshot.coreNode.ipamConfigValid?.status === 'False';
    if (!this.configConditionFalse && !shownFalse) return;
    await this.patchConfigCondition({ valid: true, message: 'Node CR spec is valid' });
  }

  private async patchConfigCondition(input: { valid: boolean; message: string }): Promise<void> {
    const now = formatRfc3339(Date.now());
    try {
      await kubeNotice.patchNodeCondition({
        nodeName: this.nodeName,
        condition: {
          type: CONFIG_CONDITION_TYPE,
          status: input.valid ? 'True' : 'False',
          reason: input.valid ? 'ValidNodeSpec' : 'InvalidNodeSpec',
          message: input.message,
          lastHeartbeatTime: now,
          lastTransitionTime: now,
        },
      });
      this.configConditionFalse = !input.valid;
    } catch (error) {
      this.recordError({ operation: 'patchNodeCondition', ...stepFailure(error) });
    }
  }

  /** ENIs to start from: the CR's, unless the workflow knows better because its last status write did not land. */
  private startingEnis(node: NodeCr): NetworkInterfaces {
    return this.state.unwrittenEnis ?? node.status?.networkInterfaces ?? {};
  }

  private async reconcileReadyNode(input: { node: NodeCr; snapshot: NodeSnapshot; uid: string }): Promise<boolean> {
    const { node, snapshot } = input;
    const spec = node.spec as NodeSpec & Required<Pick<NodeSpec, 'eni' | 'pool'>>;
    const now = Date.now();
    const instanceId = spec.nodeMetadata?.instanceID ?? '';
    this.instanceId = instanceId;
    let enis = this.startingEnis(node);
    let failed = false;
    const eniErrors = new Map<string, EniAllocationError[]>();
    const addEniError = (eniId: string, error: EniAllocationError): void => {
      eniErrors.set(eniId, [...(eniErrors.get(eniId) ?? []), error]);
    };

    const vSwitchIds = [
      ...new Set([...(spec.eni.vSwitchOptions ?? []), ...sortedKeys(enis).flatMap((id) => enis[id]?.vSwitchID ?? [])]),
    ].sort();
    // A resync also asks the cloud about the vSwitches, lifting blocks it no longer backs.
    // Its own flag, not `needResync`: a resync signal that lands after this read but before the OpenAPI sync clears
    // `needResync` would otherwise never reach the vSwitches.
    const refresh = this.truthful && (this.vSwitchRefreshRequested || this.state.needResync);
    if (refresh) this.vSwitchRefreshRequested = false;
    // Served from the worker's vSwitch cache mostly: local under the small-history patch.
    const vSwitches = await (patched(COMPACT_HISTORY_PATCH) ? ecsReadLocal : ecsRead).describeVSwitches({
      vSwitchIds,
      ...(refresh ? { refresh: true } : {}),
    });
    if (this.truthful) {
      this.reachedCloud = true;
      await this.reportBlockedVSwitches({ vSwitches, uid: input.uid });
    }

    const demand = podIpRequestsFromPods({ pods: snapshot.pods, eniSpec: spec.eni });
    const times = this.syncTimes(node.status);
    if (
      this.isOpenApiSyncDue({
        enis,
        podCount: demand.requests.length,
        lastSyncMs: times.lastSyncMs,
        crNextSyncMs: times.nextSyncMs,
        now,
      })
    ) {
      const remote = await ecsRead.describeNodeEnis({
        instanceId,
        ...(spec.eni.tagFilter === undefined ? {} : { tagFilter: spec.eni.tagFilter }),
      });
      const merged = mergeOpenApiEnis({ current: enis, remote, vSwitchCidrs: vSwitches, eniSpec: spec.eni });
      enis = merged.enis;
      if (merged.unlisted.length > 0) {
        enis = await this.resolveUnlisted({ enis, unlisted: merged.unlisted, instanceId, spec, uid: input.uid });
      } else {
        delete this.state.unlistedEnis;
      }
      times.lastSyncMs = now;
      times.nextSyncMs = now + this.settings.openApiSyncPeriodMs * (1 + Math.random());
      this.state.needResync = false;
    }
    this.nextSyncMs = times.nextSyncMs;

    const primaryFamily = primaryFamilyOf(spec.eni);
    const released = releaseIpsOfGonePods({ enis, requests: demand.requests, nodeRuntime: snapshot.nodeRuntime });
    const local = assignIpsFromLocalPool({ enis: released.enis, requests: demand.requests, primaryFamily });
    enis = local.enis;
    const plan = planEniAllocations({
      spec,
      enis,
      unsatisfied: local.unsatisfied,
      vSwitches,
      randomValue: Math.random(),
    });
    for (const problem of plan.problems) {
      if (problem.kind === 'vSwitchExhausted')
        addEniError(problem.eniId, { kind: 'ipNotEnough', vSwitchId: problem.vSwitchId });
    }

    const outcome = await this.executeAllocations({
      allocations: plan.allocations,
      enis,
      spec,
      instanceId,
      vSwitches,
      addEniError,
    });
    enis = outcome.enis;
    failed ||= outcome.failed;
    let bound = local.bound.length;
    let unsatisfied = local.unsatisfied;
    if (plan.allocations.length > 0) {
      const again = assignIpsFromLocalPool({ enis, requests: demand.requests, primaryFamily });
      enis = again.enis;
      bound = again.bound.length;
      unsatisfied = again.unsatisfied;
    }
    const pending = unsatisfied.length;
    await this.reportReboundPods({ dropped: local.droppedInvalid, enis });
    await this.reportPendingPods({ unsatisfied, isNodeReady: true, plan });
    enis = this.applyEniConditions({ enis, eniErrors, now });
    await this.updateSufficientIp({ capacity: plan.capacity, snapshot, outcome });

    const gc = await this.runGc({ enis, spec, instanceId, now });
    enis = gc.enis;
    failed ||= gc.result.failed.length > 0;

    const status: NodeStatus = { networkInterfaces: enis };
    if (times.lastSyncMs !== undefined) status.lastSyncOpenAPITime = formatRfc3339(times.lastSyncMs);
    if (times.nextSyncMs !== undefined) status.nextSyncOpenAPITime = formatRfc3339(times.nextSyncMs);
    const written = await this.writeStatusIfChanged({ status, current: node.status ?? {}, enis });
    failed ||= !written;

    this.lastPlan = { allocations: plan.allocations, gc: gc.actions, unmetDemand: plan.unmetDemand };
    this.podCounts = { total: demand.requests.length, withIp: bound, pending };
    this.eniCounts = { total: Object.keys(enis).length, idleIps: countIdleIps({ enis, family: primaryFamily }) };
    this.unschedulableEnis = unschedulableEniIds(enis);
    this.awaitingCniDelete = released.awaitingCniDelete.length;
    const shrink = planPoolRelease({ spec, enis });
    this.hasPendingWork =
      unsatisfied.some((pod) => pod.reason === 'noIdleIp') ||
      this.awaitingCniDelete > 0 ||
      planGc({ enis }).length > 0 ||
      shrink.enisToDelete.length + shrink.ipsToRelease.length > 0;
    if (outcome.errors.length > 0) {
      const notice = this.truthful
        ? operationFailureNotice({
            failing: settleOperationFailures({
              current: this.state.failingOperations ?? {},
              passStartMs: this.passStartMs,
            }),
            workflowId: workflowInfo().workflowId,
          })
        : undefined;
      await this.event({
        type: 'Warning',
        reason: 'AllocIPFailed',
        message: notice?.message ?? outcome.errors.join('; '),
        series: notice?.series ?? 'capacity',
        uid: input.uid,
      });
    }
    const short = plan.unmetDemand.normal + plan.unmetDemand.erdma > 0 || outcome.anyVSwitchExhausted;
    this.ipamState = pending > 0 && short ? 'InsufficientIP' : failed ? 'Error' : 'Ready';
    return failed;
  }

  /**
   * ENIs the CR holds that the instance's listing left out (hidden by `tagFilter`, attached elsewhere, gone): each
   * is looked up by id and {@link resolveUnlistedEnis} decides; nothing a pod uses is ever detached or deleted.
   * Each decision is an Event on the Node CR and stays in the `state` query until the next sync.
   */
  private async resolveUnlisted(input: {
    enis: NetworkInterfaces;
    unlisted: string[];
    instanceId: string;
    spec: NodeSpec & Required<Pick<NodeSpec, 'eni'>>;
    uid: string;
  }): Promise<NetworkInterfaces> {
    if (!patched(DATA_PLANE_SAFETY_PATCH)) {
      // The pre-patch behaviour, kept only so that histories recorded before it replay.
      let enis = input.enis;
      for (const eniId of input.unlisted) enis = recordEniForDeletion({ enis, eniId });
      await this.event({
        type: 'Warning',
        reason: 'EniVanished',
        message: `ENIs no longer on instance ${input.instanceId}, to be deleted: ${input.unlisted.join(', ')}`,
        uid: input.uid,
      });
      return enis;
    }
    const cloud = await ecsRead.describeEnisById({ eniIds: input.unlisted });
    const resolved = resolveUnlistedEnis({
      enis: input.enis,
      unlisted: input.unlisted,
      cloud,
      instanceId: input.instanceId,
      eniSpec: input.spec.eni,
      nowRfc3339: formatRfc3339(Date.now()),
    });
    this.state.unlistedEnis = resolved.reports;
    for (const report of resolved.reports) {
      const kept = report.outcome.startsWith('kept');
      await this.event({
        type: kept ? 'Warning' : 'Normal',
        reason: kept ? 'EniKeptUntouched' : report.outcome === 'released' ? 'EniReleased' : 'EniForgotten',
        message: report.message,
        uid: input.uid,
      });
    }
    return resolved.enis;
  }

  /** Shows the vSwitches the worker holds as exhausted: in the `state` query and as one event series each. */
  private async reportBlockedVSwitches(input: { vSwitches: Record<string, VSwitchInfo>; uid: string }): Promise<void> {
    this.blockedVSwitches = sortedKeys(input.vSwitches).flatMap((vSwitchId) => {
      const blockedForMs = input.vSwitches[vSwitchId]?.blockedForMs;
      return blockedForMs === undefined ? [] : [{ vSwitchId, blockedForMs }];
    });
    for (const block of this.blockedVSwitches) {
      await this.event({
        type: 'Warning',
        reason: 'VSwitchBlocked',
        message:
          `vSwitch ${block.vSwitchId} answered InvalidVSwitchId.IpNotEnough and is not used for another ` +
          `${Math.ceil(block.blockedForMs / 60_000)} min; a resync signal asks the cloud again`,
        series: `VSwitchBlocked:${block.vSwitchId}`,
        uid: input.uid,
      });
    }
  }

  /** Tells a pod whose binding to an `Invalid` address was dropped what it has now (or that it waits). */
  private async reportReboundPods(input: {
    dropped: readonly { podId: string; family: 'ipv4' | 'ipv6'; ref: { eniId: string; ip: string } }[];
    enis: NetworkInterfaces;
  }): Promise<void> {
    if (input.dropped.length === 0 || !patched(DATA_PLANE_SAFETY_PATCH)) return;
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
    for (const dropped of input.dropped) {
      const [namespace = '', name = ''] = dropped.podId.split('/');
      const next = now[`${dropped.podId}|${dropped.family}`];
      await this.event({
        type: 'Warning',
        reason: 'IPRebound',
        message:
          `${dropped.ref.ip} on ${dropped.ref.eniId} is Invalid (the cloud does not have it) and the pod does not ` +
          `use it: ${next === undefined ? 'waiting for a valid address' : `rebound to ${next}`}`,
        pod: { namespace, name },
      });
    }
  }

  /**
   * Tells each pod that has waited longer than `pendingPodEventAfterMs` for its IP why, with a Warning event on the
   * pod (repeated at most once per `eventRepeatMs`). Introduced behind a patch: histories recorded before it
   * replay without these activities.
   */
  private async reportPendingPods(input: {
    unsatisfied: readonly UnsatisfiedPod[];
    isNodeReady: boolean;
    plan?: EniAllocationPlan;
  }): Promise<void> {
    if (!patched('pending-pod-events')) return;
    const now = Date.now();
    const previous = this.state.pendingSince ?? {};
    const since: Record<string, number> = {};
    for (const pod of [...input.unsatisfied].sort((a, b) => (a.request.podId < b.request.podId ? -1 : 1))) {
      const first = previous[pod.request.podId] ?? now;
      since[pod.request.podId] = first;
      const waitedMs = now - first;
      if (waitedMs < this.settings.pendingPodEventAfterMs) continue;
      const reason = explainPendingPod({
        podReason: pod.reason,
        isNodeReady: input.isNodeReady,
        failureTypes: this.passFailureTypes,
        ...(input.plan === undefined ? {} : { plan: input.plan }),
      });
      const [namespace = '', name = ''] = pod.request.podId.split('/');
      const notice = this.truthful
        ? pendingPodNotice({
            reason,
            failing: settleOperationFailures({
              current: this.state.failingOperations ?? {},
              passStartMs: this.passStartMs,
            }),
            workflowId: workflowInfo().workflowId,
          })
        : undefined;
      await this.event({
        type: 'Warning',
        reason: 'IPAllocationPending',
        // Repeats are held back while the reason stays (before the patch: the message; under it: the series, so
        // a message counting attempts updates one Event instead of adding one per pass).
        message: notice?.message ?? `no IP yet: ${PENDING_REASONS[reason]}`,
        ...(notice === undefined ? {} : { series: notice.series }),
        pod: { namespace, name, ...(pod.request.podUid === '' ? {} : { uid: pod.request.podUid }) },
      });
    }
    this.state.pendingSince = since;
  }

  private syncTimes(status: NodeStatus | undefined): { lastSyncMs?: number; nextSyncMs?: number } {
    const times: { lastSyncMs?: number; nextSyncMs?: number } = {};
    const last = status?.lastSyncOpenAPITime === undefined ? undefined : parseRfc3339(status.lastSyncOpenAPITime);
    const next = status?.nextSyncOpenAPITime === undefined ? undefined : parseRfc3339(status.nextSyncOpenAPITime);
    if (last !== undefined) times.lastSyncMs = last;
    if (next !== undefined) times.nextSyncMs = next;
    return times;
  }

  /** First sync, a node with pods but no ENIs, the period elapsed, or a forced resync (signal, quota, lost write). */
  private isOpenApiSyncDue(input: {
    enis: NetworkInterfaces;
    podCount: number;
    lastSyncMs?: number | undefined;
    crNextSyncMs?: number | undefined;
    now: number;
  }) {
    if (this.state.needResync || input.lastSyncMs === undefined) return true;
    if (input.podCount > 0 && Object.keys(input.enis).length === 0) return true;
    // A new run (worker restart, continue-as-new) takes the due time the CR records instead of forcing a sync.
    const next = this.nextSyncMs ?? (patched(SYNC_TIME_FROM_CR_PATCH) ? input.crNextSyncMs : undefined);
    return next === undefined || input.now >= next;
  }

  private async executeAllocations(input: {
    allocations: readonly EniAllocation[];
    enis: NetworkInterfaces;
    spec: NodeSpec & Required<Pick<NodeSpec, 'eni'>>;
    instanceId: string;
    vSwitches: Record<string, VSwitchInfo>;
    addEniError: (eniId: string, error: EniAllocationError) => void;
  }): Promise<{ enis: NetworkInterfaces; failed: boolean; errors: string[]; anyVSwitchExhausted: boolean }> {
    let enis = input.enis;
    const errors: string[] = [];
    let anyVSwitchExhausted = false;
    const note = (failure: StepFailure, context: { operation: string; eniId?: string }): void => {
      this.recordError({ ...context, ...failure });
      errors.push(`${context.operation}${context.eniId === undefined ? '' : ` ${context.eniId}`}: ${failure.message}`);
      if (failure.type === 'EcsQuotaExceeded') this.state.needResync = true;
      if (failure.type === 'EcsVSwitchExhausted') anyVSwitchExhausted = true;
    };

    // Unresolved creates go first, under their own token and parameters: each stands in for a planned create of
    // its kind, or runs on its own when none is planned (the ENI may exist; if unneeded the pool releases it).
    const intents = [...(this.state.pendingCreates ?? [])];
    delete this.state.pendingCreates;
    const allocations: (EniAllocation & { intent?: PendingCreate })[] = input.allocations.map((allocation) => {
      if (allocation.kind !== 'createEni') return allocation;
      const index = intents.findIndex((intent) => intent.eniKind === allocation.eniKind);
      if (index < 0) return allocation;
      const [intent] = intents.splice(index, 1);
      return intent === undefined ? allocation : { ...intentAllocation(intent), intent };
    });
    for (const intent of intents) allocations.push({ ...intentAllocation(intent), intent });

    await Promise.all(
      allocations.map(async (allocation) => {
        if (allocation.kind === 'assignIps') {
          const eni = enis[allocation.eniId];
          const vSwitchId = eni?.vSwitchID;
          for (const family of ['ipv4', 'ipv6'] as const) {
            const count = family === 'ipv4' ? allocation.ipv4Count : allocation.ipv6Count;
            if (count === 0) continue;
            try {
              const assigned = await this.track(
                { kind: 'assignIps', eniId: allocation.eniId, detail: `${count} ${family}` },
                () =>
                  (family === 'ipv4' ? ipOps.assignIpv4 : ipOps.assignIpv6)({
                    eniId: allocation.eniId,
                    count,
                    clientToken: uuid4(),
                    ...(vSwitchId === undefined ? {} : { vSwitchId }),
                  }),
              );
              enis = recordAssignedIps({ enis, eniId: allocation.eniId, family, ips: assigned.ips });
            } catch (error) {
              const failure = stepFailure(error);
              note(failure, { operation: `assign${family === 'ipv4' ? 'Ipv4' : 'Ipv6'}`, eniId: allocation.eniId });
              input.addEniError(
                allocation.eniId,
                failure.type === 'EcsVSwitchExhausted'
                  ? { kind: 'ipNotEnough', vSwitchId: vSwitchId ?? '' }
                  : { kind: 'operation', message: failure.message },
              );
              return;
            }
          }
          return;
        }
        const result = await this.createEniSaga({
          allocation,
          spec: input.spec,
          instanceId: input.instanceId,
          note,
          ...(allocation.intent === undefined ? {} : { intent: allocation.intent }),
        });
        if (result.kind === 'created') {
          enis = recordCreatedEni({ enis, cloud: result.eni, cidrs: input.vSwitches[allocation.vSwitchId] });
        } else if (result.kind === 'leftForGc') {
          enis = recordEniForDeletion({ enis, eniId: result.eniId });
        }
      }),
    );
    return { enis, failed: errors.length > 0, errors, anyVSwitchExhausted };
  }

  /**
   * create → attach → wait InUse, as one saga: if attach or the wait fails for good, the ENI is detached and
   * deleted; if that fails too, it is handed to the GC by recording it `Deleting` in the CR. Either way no ENI
   * the workflow created is ever unknown to the CR or left undeleted.
   */
  private async createEniSaga(input: {
    allocation: Extract<EniAllocation, { kind: 'createEni' }>;
    spec: NodeSpec & Required<Pick<NodeSpec, 'eni'>>;
    instanceId: string;
    note: (failure: StepFailure, context: { operation: string; eniId?: string }) => void;
    /** A create whose outcome an earlier pass did not learn: re-issued with its token and parameters. */
    intent?: PendingCreate;
  }): Promise<
    | { kind: 'created'; eni: Awaited<ReturnType<Activities['createEni']>>['eni'] }
    | { kind: 'failed' }
    | { kind: 'leftForGc'; eniId: string }
  > {
    const { allocation, spec } = input;
    // Same token on every retry, on replay and, through the intent, on the next passes: a lost response cannot
    // create a second ENI.
    const clientToken = input.intent?.clientToken ?? uuid4();
    let created: Awaited<ReturnType<Activities['createEni']>>;
    try {
      created = await this.track(
        { kind: 'createEni', detail: `${allocation.eniKind} in ${allocation.vSwitchId}` },
        () =>
          create.createEni({
            eniKind: allocation.eniKind,
            vSwitchId: allocation.vSwitchId,
            securityGroupIds: spec.eni.securityGroupIDs ?? [],
            ...(spec.eni.resourceGroupID === undefined ? {} : { resourceGroupId: spec.eni.resourceGroupID }),
            ipv4Count: allocation.ipv4Count,
            ipv6Count: allocation.ipv6Count,
            tags: { ...(spec.eni.tag ?? {}), [ENIFLOW_NODE_TAG]: this.nodeName },
            clientToken,
          }),
      );
    } catch (error) {
      const failure = stepFailure(error);
      input.note(failure, { operation: 'createEni' });
      if (!DEFINITE_CREATE_REFUSALS.includes(failure.type) && patched(CREATE_INTENT_PATCH)) {
        const intent: PendingCreate = input.intent ?? {
          clientToken,
          eniKind: allocation.eniKind,
          vSwitchId: allocation.vSwitchId,
          ipv4Count: allocation.ipv4Count,
          ipv6Count: allocation.ipv6Count,
          sinceMs: Date.now(),
        };
        this.state.pendingCreates = [...(this.state.pendingCreates ?? []), intent];
      }
      return { kind: 'failed' };
    }
    const eniId = created.eni.eniId;
    try {
      await this.track({ kind: 'createEni', eniId, detail: 'attach' }, async () => {
        await attach.attachEni({ eniId, instanceId: input.instanceId });
        await wait.waitEniStatus({ eniId, status: 'InUse' });
      });
      return { kind: 'created', eni: { ...created.eni, status: 'InUse' } };
    } catch (error) {
      input.note(stepFailure(error), { operation: 'attachEni', eniId });
    }
    const compensated = await CancellationScope.nonCancellable(async () => {
      try {
        await this.track({ kind: 'removeEni', eniId, detail: 'compensate failed attach' }, async () => {
          await release.detachEni({ eniId, instanceId: input.instanceId });
          await wait.waitEniStatus({ eniId, status: 'Available', goneIsDone: true });
          await release.deleteEni({ eniId });
        });
        return true;
      } catch (error) {
        input.note(stepFailure(error), { operation: 'deleteEni', eniId });
        return false;
      }
    });
    return compensated ? { kind: 'failed' } : { kind: 'leftForGc', eniId };
  }

  private applyEniConditions(input: {
    enis: NetworkInterfaces;
    eniErrors: Map<string, EniAllocationError[]>;
    now: number;
  }): NetworkInterfaces {
    const enis: NetworkInterfaces = { ...input.enis };
    for (const eniId of sortedKeys(enis)) {
      const eni = enis[eniId];
      if (eni?.status !== 'InUse' || eniKindOf(eni) === undefined || eni.unschedulable === true) continue;
      const conditions = eniConditionsAfterAllocation({
        current: eni.conditions,
        errors: input.eniErrors.get(eniId) ?? [],
        nowMs: input.now,
      });
      const next = { ...eni };
      if (conditions === undefined) delete next.conditions;
      else next.conditions = conditions;
      enis[eniId] = next;
    }
    return enis;
  }

  private async updateSufficientIp(input: {
    capacity: { hasIdleIp: boolean; hasAllocatableEni: boolean };
    snapshot: NodeSnapshot;
    outcome: { anyVSwitchExhausted: boolean };
  }): Promise<void> {
    if (input.snapshot.coreNode === undefined) return;
    const capacity = {
      hasIdleIp: input.capacity.hasIdleIp,
      hasAllocatableEni: input.capacity.hasAllocatableEni && !input.outcome.anyVSwitchExhausted,
    };
    const condition = sufficientIpCondition({
      capacity,
      existing: input.snapshot.coreNode.sufficientIp,
      nowMs: Date.now(),
    });
    if (condition === undefined) return;
    try {
      await kubeNotice.patchNodeCondition({ nodeName: this.nodeName, condition });
    } catch (error) {
      this.recordError({ operation: 'patchNodeCondition', ...stepFailure(error) });
    }
    if (condition.status === 'False') {
      await this.event({
        type: 'Warning',
        reason: 'InsufficientIP',
        message: 'node has insufficient IP',
        ...this.uidOf(input.snapshot),
      });
    }
  }

  /** Pool shrink when due (or asked for), then the cloud clean-ups the `Deleting` marks call for. */
  private async runGc(input: {
    enis: NetworkInterfaces;
    spec: NodeSpec;
    instanceId: string;
    now: number;
  }): Promise<{ enis: NetworkInterfaces; actions: GcAction[]; result: GcResult }> {
    let enis = input.enis;
    const lastGc = this.state.lastGcMs;
    if (this.gcRequested || lastGc === undefined || input.now - lastGc >= this.settings.gcPeriodMs) {
      enis = planPoolRelease({ spec: input.spec, enis }).enis;
      this.state.lastGcMs = input.now;
    }
    const gc = await this.executeGc({ enis, instanceId: input.instanceId });
    // The update that asked for this GC is answered when the pass ends, after the status write.
    if (this.gcRequested) this.lastGcResult = gc.result;
    return gc;
  }

  private async executeGc(input: {
    enis: NetworkInterfaces;
    instanceId: string;
  }): Promise<{ enis: NetworkInterfaces; actions: GcAction[]; result: GcResult }> {
    let enis = input.enis;
    const actions = planGc({ enis });
    const result: GcResult = { releasedIps: [], removedEnis: [], failed: [] };
    await Promise.all(
      actions.map(async (action) => {
        try {
          if (action.kind === 'removeEni') {
            const outcome = await this.track(
              { kind: 'removeEni', eniId: action.eniId, detail: 'detach and delete' },
              () => this.removeEni({ eniId: action.eniId, instanceId: input.instanceId }),
            );
            if (outcome === 'attachedElsewhere') {
              // Never detached from another instance: kept out of every plan, dropped by the next sync if idle.
              const message = `ENI ${action.eniId} is attached to another instance: not detached or deleted`;
              enis = { ...enis, [action.eniId]: keepEniUntouched(action.eniId, enis[action.eniId], message) };
              this.recordError({ operation: 'removeEni', eniId: action.eniId, type: 'EniAttachedElsewhere', message });
              result.failed.push({ action, error: message });
              return;
            }
            enis = forgetEni({ enis, eniId: action.eniId });
            result.removedEnis.push(action.eniId);
            return;
          }
          await this.track(
            { kind: 'unassignIps', eniId: action.eniId, detail: `${action.ips.length} ${action.family}` },
            () =>
              (action.family === 'ipv4' ? ipOps.unassignIpv4 : ipOps.unassignIpv6)({
                eniId: action.eniId,
                ips: action.ips,
              }),
          );
          enis = forgetIps({ enis, eniId: action.eniId, family: action.family, ips: action.ips });
          result.releasedIps.push({ eniId: action.eniId, family: action.family, ips: action.ips });
        } catch (error) {
          const failure = stepFailure(error);
          this.recordError({ operation: action.kind, eniId: action.eniId, ...failure });
          result.failed.push({ action, error: failure.message });
        }
      }),
    );
    result.removedEnis.sort();
    result.releasedIps.sort((a, b) => canonicalJson(a).localeCompare(canonicalJson(b)));
    return { enis, actions, result };
  }

  /**
   * Detaches (when attached here) and deletes an ENI the GC may remove. Under the safety patch the ENI is looked
   * up first: one the cloud does not know is just forgotten (no call), one attached to another instance is never
   * detached.
   */
  private async removeEni(input: { eniId: string; instanceId: string }): Promise<'removed' | 'attachedElsewhere'> {
    if (patched(DATA_PLANE_SAFETY_PATCH)) {
      const [cloud] = await ecsRead.describeEnisById({ eniIds: [input.eniId] });
      if (cloud === undefined) return 'removed';
      const attachedTo = cloud.instanceId ?? '';
      if (attachedTo !== '' && attachedTo !== input.instanceId) return 'attachedElsewhere';
      if (cloud.status === 'Available') {
        await release.deleteEni({ eniId: input.eniId });
        return 'removed';
      }
    }
    await release.detachEni({ eniId: input.eniId, instanceId: input.instanceId });
    await wait.waitEniStatus({ eniId: input.eniId, status: 'Available', goneIsDone: true });
    await release.deleteEni({ eniId: input.eniId });
    return 'removed';
  }

  /**
   * Writes the owned status fields when they differ from the CR's. The write activity retries until it lands;
   * a write refused for good keeps the ENIs in the workflow (carried across continue-as-new) and forces an
   * OpenAPI resync, so nothing done to the cloud is forgotten.
   */
  private async writeStatusIfChanged(input: { status: NodeStatus; current: NodeStatus; enis: NetworkInterfaces }) {
    const owned = (status: NodeStatus) =>
      canonicalJson({
        networkInterfaces: status.networkInterfaces ?? {},
        lastSyncOpenAPITime: status.lastSyncOpenAPITime,
        nextSyncOpenAPITime: status.nextSyncOpenAPITime,
      });
    if (this.state.unwrittenEnis === undefined && owned(input.status) === owned(input.current)) return true;
    try {
      const result = patched(COMPACT_HISTORY_PATCH)
        ? await statusWrite.writeNodeStatusChanges({
            nodeName: this.nodeName,
            eniChanges: jsonDelta(input.current.networkInterfaces ?? {}, input.status.networkInterfaces ?? {}, {
              maxDepth: STATUS_CHANGE_DEPTH,
            }),
            ...(input.status.lastSyncOpenAPITime === undefined
              ? {}
              : { lastSyncOpenAPITime: input.status.lastSyncOpenAPITime }),
            ...(input.status.nextSyncOpenAPITime === undefined
              ? {}
              : { nextSyncOpenAPITime: input.status.nextSyncOpenAPITime }),
          })
        : await statusWrite.writeNodeStatus({ nodeName: this.nodeName, status: input.status });
      if (result.outcome === 'gone') this.finished = true;
      else if ('resourceVersion' in result && result.resourceVersion !== '' && patched(COMPACT_HISTORY_PATCH)) {
        // The next read must see this write: a cache that has not yet would plan on the status before it.
        this.state.seenVersions = mergeSeenVersions(this.state.seenVersions, { 'node-crs': result.resourceVersion });
      }
      delete this.state.unwrittenEnis;
      return true;
    } catch (error) {
      this.recordError({ operation: 'writeNodeStatus', ...stepFailure(error) });
      this.state.unwrittenEnis = input.enis;
      this.state.needResync = true;
      return false;
    }
  }

  /**
   * The CR is being deleted: every managed ENI is detached and deleted, the emptied status written, and the
   * finalizer removed so the CR can go. Failures are retried on the next pass (with backoff).
   */
  private async cleanUpDeletedNode(node: NodeCr): Promise<boolean> {
    this.ipamState = 'Deleting';
    const instanceId = node.spec.nodeMetadata?.instanceID ?? '';
    // The node is going away with its pods: their bindings go too, so the ENIs can be removed. Unschedulable ENIs
    // are not ours and stay attached.
    let enis = releaseIpsOfGonePods({ enis: this.startingEnis(node), requests: [] }).enis;
    for (const eniId of sortedKeys(enis)) {
      if (enis[eniId]?.unschedulable !== true) enis = recordEniForDeletion({ enis, eniId });
    }
    const gc = await this.executeGc({ enis, instanceId });
    enis = gc.enis;
    const written = await this.writeStatusIfChanged({
      status: { networkInterfaces: enis },
      current: node.status ?? {},
      enis,
    });
    if (gc.result.failed.length > 0 || !written || this.finished) return gc.result.failed.length > 0 || !written;
    try {
      await kubeRead.removeNodeFinalizer({ nodeName: this.nodeName });
    } catch (error) {
      this.recordError({ operation: 'removeNodeFinalizer', ...stepFailure(error) });
      return true;
    }
    this.finished = true;
    this.ipamState = 'Gone';
    return false;
  }
}
