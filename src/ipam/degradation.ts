/**
 * The degradation switch of a cloud incident, as Terway's controlplane `degradation` (l0 / l1): what a node's pass may
 * still ask of the cloud. Set cluster-wide by an operator; each node workflow holds the newest setting it was told.
 */
import { compareResourceVersions } from './resource-version.js';
import { EVENT_REASONS } from './event-reasons.js';
import type { NodeEventReason } from './event-reasons.js';

/** `off`: everything; `l1`: no releasing call; `l0`: no cloud call at all. */
export const DEGRADATION_LEVELS = ['off', 'l1', 'l0'] as const;
export type DegradationLevel = (typeof DEGRADATION_LEVELS)[number];

/**
 * A level and where it stands in the order of settings: the resourceVersion of the ConfigMap that set it (`0` for the
 * configured default). A workflow takes a setting only when it is not older than the one it holds, so a signal that
 * overtook a newer one (retries, two watcher replicas in a handover) never brings an old level back.
 */
export interface DegradationSetting {
  level: DegradationLevel;
  revision: string;
}

export const NO_DEGRADATION: DegradationSetting = { level: 'off', revision: '0' };

/** What a pass may do at a level. */
export interface DegradationGates {
  /** Any cloud call: vSwitch reads, allocation, release, sync. */
  cloud: boolean;
  /** Create, attach and assign calls (and the reads they need). */
  allocate: boolean;
  /** GC: unassign, detach, delete; pool shrink; the janitor; a deleted node's release. */
  release: boolean;
  /** The periodic (or asked-for) OpenAPI sync, which may forget or release what the listing left out. */
  sync: boolean;
}

const GATES: Record<DegradationLevel, DegradationGates> = {
  off: { cloud: true, allocate: true, release: true, sync: true },
  l1: { cloud: true, allocate: true, release: false, sync: false },
  l0: { cloud: false, allocate: false, release: false, sync: false },
};

export function degradationGates(level: DegradationLevel): DegradationGates {
  return GATES[level];
}

/** Whether the level holds back anything at all. */
export function isDegraded(level: DegradationLevel): boolean {
  return level !== 'off';
}

/**
 * The operator's text (ConfigMap value, environment, CLI) as a level: empty, `off` and `none` mean no degradation;
 * case and surrounding blanks do not matter. Anything else is refused with a message naming what is accepted.
 */
export function parseDegradationLevel(
  text: string | undefined,
): { ok: true; level: DegradationLevel } | { ok: false; message: string } {
  const value = (text ?? '').trim().toLowerCase();
  if (value === '' || value === 'off' || value === 'none') return { ok: true, level: 'off' };
  if (value === 'l0' || value === 'l1') return { ok: true, level: value };
  return { ok: false, message: `degradation must be "l0", "l1" or "off" (or empty), got "${text ?? ''}"` };
}

/**
 * Whether `offered` should replace `held`: a newer or equal revision (equal: the same setting again, harmless), or a
 * revision that does not compare (not a decimal resourceVersion: the newest word wins, as the sender meant it).
 */
export function isNewerDegradation(held: DegradationSetting | undefined, offered: DegradationSetting): boolean {
  if (held === undefined) return true;
  return compareResourceVersions(offered.revision, held.revision) !== -1;
}

/** What a level holds back, in words for Events, the `state` query and the CLI. */
export function degradationSummary(level: DegradationLevel): string {
  switch (level) {
    case 'off':
      return 'no degradation: every cloud call is made';
    case 'l1':
      return 'degradation l1: no releasing cloud call (no GC, no pool shrink, no OpenAPI sync); allocation goes on';
    case 'l0':
      return 'degradation l0: no cloud call at all; pods get IPs only from the idle IPs the node already has';
  }
}

/**
 * The Event a node owes for a level it now runs at, once per change: none while the level is the one last told
 * (`told`; undefined: never told, as for a node that has always run without degradation).
 */
export function degradationNotice(input: {
  level: DegradationLevel;
  told: DegradationLevel | undefined;
  /** What the pass found held back (see {@link heldBackWork}), named in the message. */
  heldBack?: readonly string[];
}): { reason: NodeEventReason; message: string } | undefined {
  const told = input.told ?? 'off';
  if (input.level === told) return undefined;
  if (input.level === 'off') {
    return {
      reason: EVENT_REASONS.DegradationLifted,
      message: `degradation ${told} lifted: cloud calls resume, held-back GC and sync run now`,
    };
  }
  const held = (input.heldBack ?? []).length > 0 ? `; held back now: ${(input.heldBack ?? []).join(', ')}` : '';
  return {
    reason: EVENT_REASONS.DegradationHoldsBack,
    message: `${degradationSummary(input.level)} (set by operator${held})`,
  };
}

/** The gates a change of level opens: what was held back and is due now (GC asked for, sync as scheduled). */
export function openedGates(before: DegradationLevel, after: DegradationLevel): (keyof DegradationGates)[] {
  const was = degradationGates(before);
  const now = degradationGates(after);
  return (Object.keys(now) as (keyof DegradationGates)[]).filter((gate) => now[gate] && !was[gate]).sort();
}

/** Whether a signal's payload is a setting (a malformed one is ignored and logged, never trusted). */
export function isDegradationSetting(value: unknown): value is DegradationSetting {
  if (typeof value !== 'object' || value === null) return false;
  const { level, revision } = value as Record<string, unknown>;
  return (DEGRADATION_LEVELS as readonly unknown[]).includes(level) && typeof revision === 'string';
}

/** What a pass wanted of the cloud, before the gates. */
export interface PassWants {
  /** The OpenAPI sync was due (period, resync asked). */
  sync: boolean;
  /** IPs to assign or ENIs to create (pods waiting, `minPoolSize`, open create intents). */
  allocate: boolean;
  /** IPs to unassign or ENIs to remove (GC due or asked, a deleted node's ENIs). */
  release: boolean;
}

/**
 * What the level held back of what the pass wanted, sorted: the node is held back (and told so, once per change of
 * level) only when this is not empty. A node with nothing to do is not held back by any level.
 */
export function heldBackWork(level: DegradationLevel, wants: PassWants): (keyof PassWants)[] {
  const gates = degradationGates(level);
  return (['allocate', 'release', 'sync'] as const).filter((want) => wants[want] && !gates[want]);
}
