import type { FailureLedger, NetworkInterfaces, PendingCreate, UnlistedEniReport } from '../../ipam/index.js';
import type { RecordedError } from '../messages.js';

export type { PendingCreate } from '../../ipam/index.js';

/**
 * Version of {@link CarriedState}. Bump it when a field changes meaning or becomes required, and teach
 * {@link upgradeCarriedState} to bring the previous version forward: a run may be started from a state written by
 * the previous release.
 * - 1 (unversioned): the base fields.
 * - 2: optional `daemonWait`, `unlistedEnis`, `pendingCreates`.
 * - 3: the failure ledger `failures` replaces `failingOperations` (entries gain `message`).
 */
export const CARRIED_STATE_VERSION = 3;

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
}

/** The carried state of a node's first run. */
export function newCarriedState(): CarriedState {
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

/** Version 2's record of failing cloud calls, read only to bring it forward. */
interface CarriedStateV2 extends CarriedState {
  failingOperations?: Record<string, Omit<FailureLedger[string], 'message'> & { message?: string }>;
}

/** Brings a carried state of an earlier version forward (see {@link CARRIED_STATE_VERSION}). */
export function upgradeCarriedState(carried: CarriedState): CarriedState {
  const version = carried.version ?? 1;
  // Written by a newer release and read by an older one (a rollback): keep what this version knows, and the
  // version, so that the newer release still recognises its own fields when it runs again.
  if (version > CARRIED_STATE_VERSION) return { ...carried };
  const { failingOperations, ...rest } = carried as CarriedStateV2;
  const upgraded: CarriedState = { ...rest, version: CARRIED_STATE_VERSION };
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
