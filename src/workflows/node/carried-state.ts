import { buildCreateRequest, ENIFLOW_INTENT_TAG } from '../../ipam/index.js';
import type {
  DegradationLevel,
  DegradationSetting,
  EniKind,
  FailureLedger,
  NetworkInterfaces,
  NodeSpec,
  PendingCreate,
  UnlistedEniReport,
} from '../../ipam/index.js';
import type { RecordedError } from '../messages.js';

export type { PendingCreate } from '../../ipam/index.js';

/**
 * Version of {@link CarriedState}. Bump it when a field changes meaning or becomes required, and teach
 * {@link upgradeCarriedState} to bring the previous version forward: a run may be started from a state written by
 * the previous release.
 * - 1 (unversioned): the base fields.
 * - 2: optional `daemonWait`, `unlistedEnis`, `pendingCreates`.
 * - 3: the failure ledger `failures` replaces `failingOperations` (entries gain `message`).
 * - 4: a create intent holds its whole request (`request`: security groups, resource group, tags, ENI type and
 *   traffic mode as sent) and the time of its last attempt; a version 3 intent waits in `legacyPendingCreates`
 *   until a pass fills in what it lacks from the spec (`completeLegacyIntents`).
 * - 5: optional `prefixMode` (the node's `enableIPPrefix` as first seen, fixed from then on), the degradation
 *   switch as last told (`degradation`, `degradationTold`, `degradationHeldBack`) and the node's `instanceId`. A
 *   version 4 state has none of them and needs no change: version 4 refused prefix mode, so the next ready pass
 *   records the mode from the spec it reads, a node never told of a degradation runs without one until the watcher
 *   tells it, and the next ready pass records the instance. Later, still before any release: optional
 *   `ownStatus` (absent, the node syncs as before until its next status write).
 */
export const CARRIED_STATE_VERSION = 5;

/** What survives continue-as-new: only what the CR does not already hold. */
export interface CarriedState {
  /** {@link CARRIED_STATE_VERSION} of the run that wrote it; absent in version 1. */
  version?: number;
  /** The ENIs as the workflow knows them, kept only while the CR has not yet been told (status write pending). */
  unwrittenEnis?: NetworkInterfaces;
  /** A resync was asked for (signal, quota refusal, failed status write): the next pass syncs and re-reads vSwitches. */
  needResync: boolean;
  /**
   * Set only in a node's first run until its first OpenAPI sync: that pass lists the instance's ENIs whatever the CR
   * shows, but, unlike a resync, leaves the worker's vSwitch cache (and its blocks) alone.
   */
  firstSyncDue?: boolean;
  /** When the pool period last started: the pool's last shrink, or the last pass warm-up got addresses in. */
  lastGcMs?: number;
  reconcileCount: number;
  signalsReceived: number;
  failureStreak: number;
  lastErrors: RecordedError[];
  /** When each Event was last written, by its de-duplication key (recent ones only). */
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
  /**
   * Version 3 intents, brought forward as they were: their security groups, resource group and tags were never
   * recorded, so the next pass that has the spec completes them ({@link completeLegacyIntents}).
   */
  legacyPendingCreates?: PendingCreateV3[];
  /** The failure ledger: what fails, by operation and code, since when (absent while nothing fails). */
  failures?: FailureLedger;
  /**
   * The newest resourceVersions the workflow knows of, by informer: from the watcher's signals and its own status
   * writes. A read answers from a worker's cache only once that cache has seen as much.
   */
  seenVersions?: Record<string, string>;
  /**
   * `spec.eni.enableIPPrefix` as the workflow first saw the daemon's spec: Terway writes it once, at CR creation, so
   * it is the node's mode for good; a later change of the spec raises a Warning Event and changes nothing.
   */
  prefixMode?: boolean;
  /** The cluster's degradation setting as last told (absent: never told, so none). */
  degradation?: DegradationSetting;
  /** The level the node's last degradation Event told of, so that each change gets one Event, not each pass. */
  degradationTold?: DegradationLevel;
  /** Set once a pass found work the degradation held back: lifting it then wakes a pass (and asks for GC). */
  degradationHeldBack?: boolean;
  /**
   * The node's ECS instance as the last ready pass read it: a CR that vanishes (deleted without eniflow's
   * finalizer) no longer says it, and the ENIs made for the node are detached from it (see `releaseVanishedNode`).
   */
  instanceId?: string;
  /**
   * The status this workflow last wrote (or found already written), as far as the OpenAPI sync rule needs it: its
   * sync time and how many ENIs it listed. A CR that still shows both is the workflow's own status (see
   * `isOpenApiSyncDue`). Absent after a failed write.
   */
  ownStatus?: { lastSyncOpenAPITime: string; enis: number };
}

/**
 * The carried state of a node's first run. Its first pass lists the instance's ENIs whatever sync times the CR
 * shows (Terway's, when the cluster moves to eniflow): it adopts the ENIs it takes over before it changes them.
 */
export function newCarriedState(): CarriedState {
  return {
    version: CARRIED_STATE_VERSION,
    needResync: false,
    firstSyncDue: true,
    reconcileCount: 0,
    signalsReceived: 0,
    failureStreak: 0,
    lastErrors: [],
    eventTimes: {},
  };
}

/** Version 2's record of failing cloud calls, read only to bring it forward. */
interface CarriedStateV2 extends CarriedState {
  failingOperations?: Record<string, Omit<FailureLedger[string], 'message'> & { message?: string }>;
}

/** A create intent as versions 2 and 3 carried it: kind, vSwitch and counts, the rest re-read from the spec. */
export interface PendingCreateV3 {
  clientToken: string;
  eniKind: EniKind;
  vSwitchId: string;
  ipv4Count: number;
  ipv6Count: number;
  sinceMs: number;
}

function isLegacyIntent(intent: unknown): intent is PendingCreateV3 {
  return typeof intent === 'object' && intent !== null && !('request' in intent) && 'clientToken' in intent;
}

/** Brings a carried state of an earlier version forward (see {@link CARRIED_STATE_VERSION}). */
export function upgradeCarriedState(carried: CarriedState): CarriedState {
  const version = carried.version ?? 1;
  // Written by a newer release and read by an older one (a rollback): keep what this version knows, and the
  // version, so that the newer release still recognises its own fields when it runs again.
  if (version > CARRIED_STATE_VERSION) return { ...carried };
  const { failingOperations, ...rest } = carried as CarriedStateV2;
  const upgraded: CarriedState = { ...rest, version: CARRIED_STATE_VERSION };
  // Version 3 intents lack most of their request; they wait for a pass that has the spec (never dropped here).
  const intents: unknown[] = carried.pendingCreates ?? [];
  const legacy = intents.filter(isLegacyIntent);
  if (legacy.length > 0) {
    upgraded.legacyPendingCreates = [...(carried.legacyPendingCreates ?? []), ...legacy];
    const current = (carried.pendingCreates ?? []).filter((intent) => !isLegacyIntent(intent));
    if (current.length > 0) upgraded.pendingCreates = current;
    else delete upgraded.pendingCreates;
  }
  if (failingOperations !== undefined && Object.keys(failingOperations).length > 0) {
    upgraded.failures = Object.fromEntries(
      Object.entries(failingOperations).map(([key, entry]) => [key, { ...entry, message: entry.message ?? '' }]),
    );
  }
  return upgraded;
}

/** The state handed to the next run: a copy, keeping a newer release's version (see {@link upgradeCarriedState}). */
export function carryState(state: CarriedState): CarriedState {
  return {
    ...state,
    version: Math.max(state.version ?? 1, CARRIED_STATE_VERSION),
    lastErrors: [...state.lastErrors],
    eventTimes: { ...state.eventTimes },
  };
}

/**
 * Version 3 intents made whole from the spec as it is now, the best available: their kind, vSwitch, counts and
 * token are kept; security groups, resource group and tags are the spec's, with the node tag but without the intent
 * tag, which version 3 never sent (so a re-issue with an unchanged spec matches the first request). They are marked
 * `untagged`: a list by intent tag cannot find their ENI, so they are only ever re-issued.
 */
export function completeLegacyIntents(input: {
  legacy: readonly PendingCreateV3[];
  spec: Pick<NodeSpec, 'eni'>;
  nodeName: string;
}): PendingCreate[] {
  return input.legacy.map((old) => {
    const request = buildCreateRequest({
      allocation: {
        kind: 'createEni',
        eniKind: old.eniKind,
        vSwitchId: old.vSwitchId,
        ipv4Count: old.ipv4Count,
        ipv6Count: old.ipv6Count,
      },
      spec: input.spec,
      nodeName: input.nodeName,
      clientToken: old.clientToken,
    });
    const tags = Object.fromEntries(Object.entries(request.tags).filter(([key]) => key !== ENIFLOW_INTENT_TAG));
    return { request: { ...request, tags }, sinceMs: old.sinceMs, lastAttemptMs: old.sinceMs, untagged: true };
  });
}

/** Records the create intents still open (none: the field goes). */
export function setOpenIntents(state: CarriedState, intents: readonly PendingCreate[]): void {
  if (intents.length > 0) state.pendingCreates = [...intents];
  else delete state.pendingCreates;
}

/** Moves version 3 intents, made whole from the spec the pass has, to `pendingCreates` (see above). */
export function adoptLegacyIntents(input: {
  state: CarriedState;
  spec: Pick<NodeSpec, 'eni'>;
  nodeName: string;
}): void {
  const { state } = input;
  const legacy = state.legacyPendingCreates;
  if (legacy === undefined) return;
  const completed = completeLegacyIntents({ legacy, spec: input.spec, nodeName: input.nodeName });
  state.pendingCreates = [...(state.pendingCreates ?? []), ...completed];
  delete state.legacyPendingCreates;
}
