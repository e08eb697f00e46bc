import { mergeSeenVersions } from '../../../ipam/index.js';
import type {
  DegradationLevel,
  DegradationSetting,
  FailureLedger,
  NetworkInterfaces,
  PendingCreate,
  UnlistedEniReport,
} from '../../../ipam/index.js';
import type { RecordedError } from '../../messages.js';

export type { PendingCreate } from '../../../ipam/index.js';

/**
 * Version of {@link CarriedState}, the shape a run hands to the next at continue-as-new (recorded in the next run's
 * history). eniflow has had no release, so the state starts at 1, with no upgrade: a run handed any other version,
 * or a malformed state, fails at its start (`UnsupportedCarriedState`, see {@link carriedStateProblem}). From the
 * first tagged release on, the release rule of docs/patches.md holds: a field that changes meaning, a new required
 * field or a removed one bumps this version and adds an upgrade from each older version a supported release
 * writes, kept until the oldest supported release's runs are gone (a new optional field the code reads safely as
 * absent needs no bump).
 */
export const CARRIED_STATE_VERSION = 1;

/** What survives continue-as-new: only what the CR does not already hold. */
export interface CarriedState {
  /** {@link CARRIED_STATE_VERSION} of the run that wrote it. */
  version: number;
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

const isCount = (value: unknown): boolean => typeof value === 'number' && Number.isFinite(value);
const isRecord = (value: unknown): boolean => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The fields every carried state has, each with its check. */
const REQUIRED_FIELDS: Record<string, (value: unknown) => boolean> = {
  needResync: (value) => typeof value === 'boolean',
  reconcileCount: isCount,
  signalsReceived: isCount,
  failureStreak: isCount,
  lastErrors: Array.isArray,
  eventTimes: isRecord,
};

/**
 * Why a run cannot take `carried` as its state, or undefined when it can: this release takes version
 * {@link CARRIED_STATE_VERSION} with its required fields, and nothing else. Another version comes from another
 * release (a rollback, or an upgrade past the releases this one reads); guessing at it could lose an open create
 * intent or mislead the GC, so the run is refused, saying which version it got and which it takes.
 */
export function carriedStateProblem(carried: unknown): string | undefined {
  const takes = `this release takes carried state version ${CARRIED_STATE_VERSION} only (see docs/patches.md)`;
  if (!isRecord(carried)) return `carried state is not an object; ${takes}`;
  const state = carried as Record<string, unknown>;
  const version = state['version'];
  if (version !== CARRIED_STATE_VERSION) {
    const got = version === undefined ? 'no version' : `version ${JSON.stringify(version)}`;
    return `carried state has ${got}; ${takes}`;
  }
  const bad = Object.keys(REQUIRED_FIELDS).filter((field) => REQUIRED_FIELDS[field]?.(state[field]) !== true);
  return bad.length === 0 ? undefined : `carried state version ${version} is malformed (${bad.join(', ')}); ${takes}`;
}

/** The state handed to the next run: a copy, so later changes of this run's state do not reach it. */
export function carryState(state: CarriedState): CarriedState {
  return { ...state, lastErrors: [...state.lastErrors], eventTimes: { ...state.eventTimes } };
}

/** Records the create intents still open (none: the field goes). */
export function setOpenIntents(state: CarriedState, intents: readonly PendingCreate[]): void {
  if (intents.length > 0) state.pendingCreates = [...intents];
  else delete state.pendingCreates;
}

/** Records resourceVersions the workflow now knows of (a signal's, its own status write's): the newest per informer. */
export function noteSeenVersions(state: CarriedState, seen: Record<string, string>): void {
  state.seenVersions = mergeSeenVersions(state.seenVersions, seen);
}
