import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';

import { CREATE_ATTEMPT_HORIZON_MS } from '../ipam/index.js';
import type {
  DegradationLevel,
  DegradationSetting,
  EniAllocation,
  LedgerEntry,
  GcAction,
  PrefixAssign,
  StuckCause,
  UnlistedEniReport,
} from '../ipam/index.js';

/** Why the watcher woke a node's workflow; pod churn is summarised, never the pod objects themselves. */
export interface ReconcileReason {
  /** e.g. `pod-added`, `pod-deleted`, `node-cr-changed`, `core-node-changed`, `watcher-start`. */
  reason: string;
  /**
   * vSwitches the worker saw gain addresses (`vswitch-gained-addresses`): the pass asks the cloud about the node's
   * vSwitches again instead of trusting its worker's cache, which may still hold a block.
   */
  vSwitchesGained?: string[];
  /** Pod changes coalesced into this signal, by kind. */
  podChanges?: { added: number; updated: number; deleted: number };
  /**
   * The newest resourceVersion the watcher saw, by informer (`pods`, `node-crs`, `core-nodes`): the worker's read
   * waits for its own cache to have seen as much (else reads live), so a pass never plans on an older view.
   */
  seen?: Record<string, string>;
  /**
   * The cluster's degradation setting as the watcher knows it: every signal carries it, so a workflow that missed a
   * `degradation` signal (sent while a watcher restarted) is put right by the next signal at no history cost.
   */
  degradation?: DegradationSetting;
}

/** Wakes the workflow for a reconcile pass; bursts are coalesced (one pass per minimum interval). */
export const reconcileSignal = defineSignal<[ReconcileReason]>('reconcile');
/** Operator's manual GC: release idle IPs above `maxPoolSize` now, ignoring the GC period. */
export const gcSignal = defineSignal('gc');
/** Forces a full OpenAPI sync of the node's ENIs on the next pass. */
export const resyncSignal = defineSignal('resync');
/**
 * The cluster's degradation switch changed (Terway's controlplane `degradation`): what the node's passes may ask of
 * the cloud from now on. Sent by the watcher to every running node workflow and the janitor; an older revision than
 * the one held is ignored.
 */
export const degradationSignal = defineSignal<[DegradationSetting]>('degradation');

/** What a GC pass gave back to the cloud. */
export interface GcResult {
  releasedIps: { eniId: string; family: 'ipv4' | 'ipv6'; ips: string[] }[];
  removedEnis: string[];
  /** Prefix mode: `Deleting` prefixes unassigned. */
  releasedPrefixes?: { eniId: string; family: 'ipv4' | 'ipv6'; prefixes: string[] }[];
  /** GC steps that failed and stay pending for the next pass. */
  failed: { action: GcAction; error: string }[];
  /**
   * Set when the update was answered at once instead of after a pass: the node is in failure backoff, so a pass
   * would only meet the same failure. The GC still runs with the next pass.
   */
  deferred?: string;
}

/** Runs GC now and returns what it released (same as the `gc` signal, but the caller gets the outcome). */
export const gcUpdate = defineUpdate<GcResult>('gc');

/** One cloud operation the workflow has in flight. */
export interface PendingOperation {
  /** The plan's step (as in `lastPlan`): an allocation or a GC action. */
  kind: 'createEni' | 'assignIps' | 'removeEni' | 'unassignIps' | 'assignPrefixes' | 'unassignPrefixes';
  /** The ECS action in flight (`AttachNetworkInterface`), the name the operation goes by in the CLI and logs. */
  action: string;
  eniId?: string;
  startedAtMs: number;
  /** `startedAtMs` as ISO 8601 (in the `state` query). */
  startedAt?: string;
  detail: string;
}

/** A failure the last passes saw, as operators need it: what, which cloud code, which request. */
export interface RecordedError {
  atMs: number;
  /** `atMs` as ISO 8601 (in the `state` query). */
  at?: string;
  operation: string;
  type: string;
  message: string;
  code?: string;
  requestId?: string;
  eniId?: string;
}

/** The node's IPAM state as the `state` query returns it. */
export interface NodeWorkflowState {
  nodeName: string;
  instanceId?: string;
  ipamState: IpamState;
  /** Why the last pass did nothing, when it did nothing (daemon not ready, invalid spec…). */
  skipReason?: string;
  lastReconcileMs?: number;
  /** End of the last pass, ISO 8601. */
  lastReconcileAt?: string;
  /** Set while a pass runs: `reconcileCount` counts it already, `lastReconcileAt` is still the one before. */
  passRunning?: true;
  /** Passes failed in a row (the failure backoff grows with it); 0 when the last pass succeeded. */
  failedPasses?: number;
  /** When the next pass is due without any signal, ISO 8601, and why. */
  nextPass?: { at: string; reason: string };
  /** The failure keeping the node from `Ready`, as the `EniflowErrorCode`/`EniflowErrorSince` search attributes. */
  stuckOn?: { code: string; since: string; operation: string; message: string };
  /** When the pod waiting longest for an IP was first seen waiting, ISO 8601. */
  oldestPendingSince?: string;
  /** Signals sent under a name this workflow does not know, latest last (they are logged and otherwise ignored). */
  ignoredSignals?: { name: string; at: string }[];
  reconcileCount: number;
  signalsReceived: number;
  lastPlan: {
    allocations: (EniAllocation | PrefixAssign)[];
    gc: GcAction[];
    unmetDemand: { normal: number; erdma: number };
  };
  pods: { total: number; withIp: number; pending: number };
  enis: { total: number; idleIps: number };
  pendingOperations: PendingOperation[];
  lastErrors: RecordedError[];
  /** What the last OpenAPI sync decided about ENIs the instance's listing left out (kept, forgotten, released). */
  unlistedEnis?: UnlistedEniReport[];
  /** ENIs in the CR that are never assigned, grown, reclaimed or removed (blocked by tag, unmanaged, unaccounted). */
  unschedulableEnis?: string[];
  /** Gone pods whose IPs wait for the daemon's CNI delete in its NodeRuntime before they are freed. */
  podsAwaitingCniDelete?: number;
  /** Creates whose outcome is unknown, to be re-issued with their ClientToken by the next pass. */
  pendingCreates?: number;
  /** Cloud calls failing over consecutive passes: call, code, attempts, since when (epoch ms). */
  failingOperations?: LedgerEntry[];
  /** vSwitches the worker holds as exhausted, and for how long still (ms), unless a resync lifts the block. */
  blockedVSwitches?: { vSwitchId: string; blockedForMs: number }[];
  /**
   * Set while the node's waiting pods are stuck on something a retry cannot fix: the node sleeps `stuckBackoffMs`
   * between passes and is woken by the change (for exhausted vSwitches: the worker's signal when one of
   * `wakeOnVSwitches` gains addresses).
   */
  stuckWait?: { cause: StuckCause; message: string; wakeOnVSwitches?: string[] };
  /**
   * The degradation setting this workflow runs at (absent: never told of one, so none) and what it holds back:
   * `heldBack` names the gates closed (`cloud`, `allocate`, `release`, `sync`).
   */
  degradation?: {
    level: DegradationLevel;
    revision: string;
    heldBack: string[];
    summary: string;
    /**
     * Set while a pass that took its gates at this other (earlier) level still runs: it finishes the calls its gates
     * allowed (as Terway's reconcile reads the level once), and `level` holds from the next pass on.
     */
    passRunningAt?: DegradationLevel;
  };
}

export const IPAM_STATES = [
  'Starting',
  'Ready',
  'InsufficientIP',
  'WaitingForDaemon',
  'InvalidSpec',
  'NodeNotReady',
  'ExclusiveEniMode',
  'Deleting',
  'Gone',
  'Error',
] as const;
/** The `IpamState` search attribute: where the node stands, for finding stuck nodes in the Web UI. */
export type IpamState = (typeof IPAM_STATES)[number];

/** Returns the node's current state, plan, pending operations and last errors. */
export const stateQuery = defineQuery<NodeWorkflowState>('state');

/**
 * Tunables of a node workflow; defaults follow Terway's controller config. They are recorded workflow input: the
 * watcher starts each workflow with {@link DEFAULT_NODE_SETTINGS} in full, and a run hands its own settings to the
 * next at continue-as-new, so changing a default never changes what a running workflow replays.
 */
export interface NodeIpamSettings {
  /** At most one pass per this interval; signals in between are coalesced (Terway: 1 s). */
  minReconcileIntervalMs: number;
  /**
   * Batching under load: while a node's changes keep coming within this long of its last pass, each next pass
   * waits twice as long after the previous one started (from `minReconcileIntervalMs`) up to this, and takes a
   * batch; a change after a quiet spell is served at once (`passDelayMs`).
   */
  maxBatchWindowMs: number;
  /**
   * Idle IPs above `maxPoolSize` are released at most this often, unless GC is asked for (Terway: 2 min). It is also
   * the retry period while GC has work left or pods wait for an IP; a node with neither sets no such timer.
   */
  gcPeriodMs: number;
  /** Full OpenAPI sync period; the next sync is due after a uniform draw in [period, 2·period) (Terway: 12 h). */
  openApiSyncPeriodMs: number;
  /**
   * The safety net: a pass runs at least this often without any signal (stretched by up to a quarter, per node, so
   * nodes do not wake together). Passes are otherwise driven by changes: signals, due syncs, GC work, failures.
   */
  idleWakeMs: number;
  /** After a failed pass the next one waits 1 s, doubling per failure up to this. */
  maxFailureBackoffMs: number;
  /**
   * The cap instead, when every failure of the pass may fix itself (5xx, throttling): a node is served again soon
   * after the cloud recovers.
   */
  transientFailureBackoffMs: number;
  /** Continue-as-new after this many passes (or earlier when the server suggests it). */
  maxPassesPerRun: number;
  /**
   * Continue-as-new once a run is this old, pass or no pass: no run outlives it, so a workflow code path can be
   * retired on a schedule (src/workflows/node/memory/patches.ts).
   */
  maxRunAgeMs: number;
  /**
   * How long a node whose waiting pods are stuck (vSwitches exhausted, instance or quota limits: nothing a retry
   * can fix) sleeps between passes, unless a change wakes it first: a pod or spec change, a vSwitch gaining
   * addresses (the worker signals), a `resync`. Stretched by up to a quarter per node.
   */
  stuckBackoffMs: number;
  /** The same Warning event is recorded at most this often. */
  eventRepeatMs: number;
  /** A pod still without its IP this long after it was first seen waiting gets a Warning event saying why. */
  pendingPodEventAfterMs: number;
  /** A node whose daemon has not written `spec.eni`/`spec.pool` this long gets one Warning event saying so. */
  daemonWaitEventAfterMs: number;
  /**
   * The cluster this node belongs to (`ENIFLOW_CLUSTER_ID`, the ACK cluster id where there is one): tagged on every
   * ENI the node creates, and required of every ENI its GC removes unless the ENI is attached to the node. It has no
   * default: a start without it fails at once.
   */
  clusterId: string;
  /**
   * How long after an attempt of a create is scheduled it may still reach ECS: an open create intent is listed by
   * its tag (and closed if no ENI has it) only this long after its last attempt. Never below the create activity's
   * start-to-close timeout (60 s) outside tests.
   */
  createAttemptHorizonMs: number;
}

/** The node settings that have defaults: all but the cluster identity, which only the configuration can give. */
export type NodeIpamTunables = Omit<NodeIpamSettings, 'clusterId'>;

export const DEFAULT_NODE_SETTINGS: NodeIpamTunables = {
  minReconcileIntervalMs: 1_000,
  maxBatchWindowMs: 4_000,
  gcPeriodMs: 2 * 60_000,
  openApiSyncPeriodMs: 12 * 3_600_000,
  idleWakeMs: 6 * 3_600_000,
  maxFailureBackoffMs: 5 * 60_000,
  transientFailureBackoffMs: 10_000,
  maxPassesPerRun: 500,
  maxRunAgeMs: 7 * 24 * 3_600_000,
  stuckBackoffMs: 30 * 60_000,
  eventRepeatMs: 60_000,
  pendingPodEventAfterMs: 30_000,
  daemonWaitEventAfterMs: 5 * 60_000,
  createAttemptHorizonMs: CREATE_ATTEMPT_HORIZON_MS,
};
