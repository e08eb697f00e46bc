import { isPrefixMode, planPrefixGc } from './prefix-plan.js';
import { fullJitterMs } from './backoff.js';
import { planGc } from './gc-plan.js';
import { parseGoDuration } from './go-duration.js';
import type { UnsatisfiedPod } from './local-pool.js';
import type { NetworkInterfaces, NodeSpec } from './node-model.js';
import { failureBackoffMs } from './operation-failures.js';
import { planPoolRelease } from './release-plan.js';
import { nextPendingPodEventMs } from './stuck-wait.js';
import type { StuckCause } from './stuck-wait.js';

/** Why a node's next pass is due without any signal. */
export type NextPassReason =
  | 'failureBackoff'
  | 'stuckBackoff'
  | 'pendingPodEvent'
  | 'openApiSync'
  | 'gcPeriod'
  | 'idleReclaim'
  | 'warmUp'
  | 'frozenPrefixExpiry'
  | 'daemonWaitEvent'
  | 'runAge'
  | 'safetyNet';

/** What each reason means to an operator (the `state` query, the Web UI). */
export const NEXT_PASS_REASONS: Readonly<Record<NextPassReason, string>> = {
  failureBackoff: 'retry after failed pass(es) (backoff)',
  stuckBackoff:
    'pods wait on something that does not change by itself (long backoff; a pod or spec change, a vSwitch ' +
    'with free addresses for what waits, the cloud answering a failing call again or a resync wakes the node sooner)',
  pendingPodEvent: 'a waiting pod is due its Warning event',
  openApiSync: 'OpenAPI sync due',
  gcPeriod: 'GC period (idle IPs to release or pods waiting)',
  idleReclaim: 'idle IP reclaim batch due (spec.pool.reclaim)',
  warmUp: 'warm-up continues: the last pass got addresses and more are due',
  frozenPrefixExpiry: 'a Frozen prefix reaches its frozenExpireAt and returns to Valid',
  daemonWaitEvent: 'daemon still not ready: Warning event due',
  runAge: 'run age limit: the workflow continues as new',
  safetyNet: 'safety-net wake, unless a change comes first',
};

export interface NextPassInput {
  /** End of the last pass (epoch ms); 0 before the first. */
  lastPassEndMs: number;
  /** Passes failed in a row. */
  failureStreak: number;
  /** Failure types of the last pass: when every one may fix itself, the backoff starts short. */
  lastFailureTypes: readonly string[];
  /** Passes in a row the last pass's most repeated failure failed (same call, same code): a repeat waits longer. */
  failureRepeats?: number | undefined;
  /** A fraction in [0, 1) fixed per node, so that the safety nets of many nodes do not fire together. */
  jitter: number;
  /**
   * A fraction in [0, 1) drawn by the workflow after each failed pass: the failure backoff is full jitter under its
   * cap, so nodes failing together (an account-wide throttle) do not retry together. Absent: the cap itself.
   */
  backoffRandom?: number | undefined;
  settings: {
    idleWakeMs: number;
    gcPeriodMs: number;
    maxFailureBackoffMs: number;
    transientFailureBackoffMs: number;
    daemonWaitEventAfterMs: number;
    stuckBackoffMs: number;
    pendingPodEventAfterMs: number;
  };
  /** The last pass left work for the GC period: idle IPs to release, removals, pods waiting. */
  hasPendingWork: boolean;
  /** The node's own pool period (`spec.pool.poolSyncPeriod`, see `poolPeriodMs`): replaces `gcPeriodMs`. */
  poolPeriodMs?: number | undefined;
  /** When the next idle reclaim batch is due (`planIdleReclaim`); absent: none planned, no timer. */
  idleReclaimAtMs?: number | undefined;
  /** Warm-up made progress in the last pass and is not complete: the next pass follows at once. */
  warmUpContinues?: boolean | undefined;
  /**
   * Prefix mode: the earliest `frozenExpireAt` of a `Frozen` prefix (see `nextFrozenExpiryMs`). The daemon may use the
   * prefix again only once the CR says `Valid`, so an idle node must not sleep past it.
   */
  frozenExpiryMs?: number | undefined;
  lastGcMs?: number | undefined;
  nextSyncMs?: number | undefined;
  daemonWait?: { sinceMs: number; reported: boolean } | undefined;
  /** Set when the last pass found its waiting pods stuck (see `stuckWaitOf`): a long backoff instead of retries. */
  stuck?: StuckCause | undefined;
  /** Since when each waiting pod has waited (epoch ms): a stuck node still wakes to tell a newly waiting pod why. */
  pendingSince?: Readonly<Record<string, number>> | undefined;
  /** When the run must hand over to a new one (continue-as-new), whatever else happens. */
  runDeadlineMs?: number | undefined;
}

/**
 * When the next pass is due without a signal, and why. Cost follows change: a node in good health with nothing
 * to release sleeps until a signal, a due OpenAPI sync, its run's age limit or the jittered safety net; a failing
 * node retries on its backoff alone.
 */
export function nextPass(input: NextPassInput): { atMs: number; reason: NextPassReason } {
  const last = input.lastPassEndMs;
  const { settings } = input;
  // Stuck: waking every few seconds or minutes would only plan the same nothing again; the change wakes the node.
  if (input.stuck !== undefined) return stuckPass(input);
  if (input.failureStreak > 0) {
    const capMs = failureBackoffMs({
      streak: input.failureStreak,
      repeats: input.failureRepeats,
      maxMs: settings.maxFailureBackoffMs,
      transientMaxMs: settings.transientFailureBackoffMs,
      lastFailureTypes: input.lastFailureTypes,
    });
    const backoff = input.backoffRandom === undefined ? capMs : fullJitterMs({ capMs, random: input.backoffRandom });
    return { atMs: last + backoff, reason: 'failureBackoff' };
  }
  // Earlier candidates win ties: a sync and a GC due together are reported as the sync.
  const candidates: { atMs: number; reason: NextPassReason }[] = [];
  if (input.nextSyncMs !== undefined) candidates.push({ atMs: input.nextSyncMs, reason: 'openApiSync' });
  if (input.hasPendingWork) {
    const periodMs = input.poolPeriodMs ?? settings.gcPeriodMs;
    candidates.push({ atMs: (input.lastGcMs ?? last) + periodMs, reason: 'gcPeriod' });
  }
  if (input.idleReclaimAtMs !== undefined) candidates.push({ atMs: input.idleReclaimAtMs, reason: 'idleReclaim' });
  if (input.warmUpContinues === true) candidates.push({ atMs: last, reason: 'warmUp' });
  if (input.frozenExpiryMs !== undefined) {
    candidates.push({ atMs: input.frozenExpiryMs, reason: 'frozenPrefixExpiry' });
  }
  const wait = input.daemonWait;
  if (wait !== undefined && !wait.reported) {
    candidates.push({ atMs: wait.sinceMs + settings.daemonWaitEventAfterMs, reason: 'daemonWaitEvent' });
  }
  if (input.runDeadlineMs !== undefined) candidates.push({ atMs: input.runDeadlineMs, reason: 'runAge' });
  candidates.push({ atMs: last + Math.round(settings.idleWakeMs * (1 + input.jitter / 4)), reason: 'safetyNet' });
  return candidates.reduce((best, candidate) => (candidate.atMs < best.atMs ? candidate : best));
}

/**
 * The next pass of a stuck node: the long backoff (jittered per node like the safety net, so nodes stuck on one
 * vSwitch do not wake together), unless a pod's first Warning Event, a due sync, the daemon-wait Event or the run's
 * age limit comes first. No GC period and no failure backoff: both only retry what cannot succeed yet.
 */
function stuckPass(input: NextPassInput): { atMs: number; reason: NextPassReason } {
  const last = input.lastPassEndMs;
  const { settings } = input;
  const candidates: { atMs: number; reason: NextPassReason }[] = [];
  if (input.nextSyncMs !== undefined) candidates.push({ atMs: input.nextSyncMs, reason: 'openApiSync' });
  const podEventMs = nextPendingPodEventMs({
    pendingSince: input.pendingSince ?? {},
    eventAfterMs: settings.pendingPodEventAfterMs,
    afterMs: last,
  });
  if (podEventMs !== undefined) candidates.push({ atMs: podEventMs, reason: 'pendingPodEvent' });
  if (input.runDeadlineMs !== undefined) candidates.push({ atMs: input.runDeadlineMs, reason: 'runAge' });
  candidates.push({
    atMs: last + Math.round(stuckSleepMs(input.stuck ?? 'vSwitchExhausted', settings) * (1 + input.jitter / 4)),
    reason: 'stuckBackoff',
  });
  return candidates.reduce((best, candidate) => (candidate.atMs < best.atMs ? candidate : best));
}

/**
 * How many failure backoffs a node stuck on a failing call sleeps at most: the worker's wake ends it when the call
 * answers again, and this bounds the wait when nothing the worker sees tells (a fault of the node's own resources).
 */
export const CALLS_FAILING_SLEEP_BACKOFFS = 3;

/**
 * A stuck node's sleep: `stuckBackoffMs`, but at most {@link CALLS_FAILING_SLEEP_BACKOFFS} maximum failure backoffs
 * when it is stuck on a failing call (which, unlike an exhausted vSwitch, ends by itself).
 */
export function stuckSleepMs(
  cause: StuckCause,
  settings: Pick<NextPassInput['settings'], 'stuckBackoffMs' | 'maxFailureBackoffMs'>,
): number {
  if (cause !== 'cloudCallsFailing') return settings.stuckBackoffMs;
  return Math.min(settings.stuckBackoffMs, CALLS_FAILING_SLEEP_BACKOFFS * settings.maxFailureBackoffMs);
}

/** A fraction in [0, 1) fixed per name (FNV-1a), the same on every replay. */
export function jitterOf(name: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < name.length; i += 1) {
    hash ^= name.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash / 2 ** 32;
}

/**
 * Whether a pass left work that the GC period retries: pods waiting for a new IP, IPs waiting for the daemon's CNI
 * delete, clean-ups of `Deleting` marks, or idle IPs above `maxPoolSize`. A node with none sets no such timer.
 */
export function hasWorkForGcPeriod(input: {
  spec: NodeSpec;
  enis: Readonly<NetworkInterfaces>;
  unsatisfied: readonly UnsatisfiedPod[];
  awaitingCniDelete: number;
}): boolean {
  if (input.unsatisfied.some((pod) => pod.reason === 'noIdleIp') || input.awaitingCniDelete > 0) return true;
  if (planGc({ enis: input.enis }).length > 0) return true;
  // Prefix mode has no pool to shrink: only Deleting prefixes are left for the GC.
  if (isPrefixMode(input.spec)) return planPrefixGc({ enis: input.enis }).length > 0;
  const shrink = planPoolRelease({ spec: input.spec, enis: input.enis });
  return shrink.enisToDelete.length + shrink.ipsToRelease.length > 0;
}

/** Terway's floor on a node's requeue period. */
export const MIN_POOL_PERIOD_MS = 1_000;

/**
 * The node's pool period: `spec.pool.poolSyncPeriod` when it is a Go duration (floored at 1 s, as Terway's
 * `requeueAfter`), else the controller's `gcPeriodMs`.
 */
export function poolPeriodMs(input: { poolSyncPeriod: string | undefined; gcPeriodMs: number }): number {
  const parsed = input.poolSyncPeriod === undefined ? undefined : parseGoDuration(input.poolSyncPeriod);
  return parsed === undefined ? input.gcPeriodMs : Math.max(MIN_POOL_PERIOD_MS, parsed);
}
