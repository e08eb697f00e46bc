/** Added latency for an action: a fixed delay, or a uniform draw from the seeded PRNG. */
export type LatencySpec = { fixedMs: number } | { minMs: number; maxMs: number };

/** How long the asynchronous ENI states last before the end state (0 = immediate). */
export interface TransitionDelays {
  /** Attaching → InUse (or back to Available when an attach failure is injected). */
  attachMs: number;
  /** Detaching → Available. */
  detachMs: number;
  /** Deleting → gone. */
  deleteMs: number;
}

/** API limits that Alibaba Cloud's API reference states inconsistently, so they are configurable. */
export interface EmulatorLimits {
  /** Most addresses one Assign/Unassign call may add or remove (Terway's batch size is 10). */
  maxIpsPerCall: number;
  /** Cap on IPv4 addresses (primary included) of an ENI that is not attached; attached ENIs use the instance type. */
  maxIpv4OnDetachedEni: number;
  /** Cap on IPv6 addresses of an ENI that is not attached. */
  maxIpv6OnDetachedEni: number;
  /**
   * How long a ClientToken's first use is remembered (ms, on the emulator's clock), for replays, mismatches and
   * `IdempotentFailed`. ECS documents no window; 24 h is an assumption.
   */
  clientTokenRetentionMs: number;
}

/** Everything about the emulator's behaviour that is not cloud state; all of it can change at run time. */
export interface EmulatorSettings {
  /** Seed of the PRNG behind random fault rates and latency ranges. */
  seed: number;
  /** Verify v3 and v2 request signatures against the accepted AccessKeys. */
  verifySignatures: boolean;
  transitionDelays: TransitionDelays;
  /** Per action; the key `*` applies to actions without their own entry. */
  latency: Record<string, LatencySpec>;
  /** Calls per minute per action (`*` = every action without its own entry); empty = no rate limiting. */
  rateLimitsPerMinute: Record<string, number>;
  /** Entries kept in the call-log ring buffer. */
  callLogCapacity: number;
  limits: EmulatorLimits;
}

/** The defaults: verification on, 200 ms transitions, no latency, no rate limits, a 10,000-entry call log. */
export function defaultSettings(): EmulatorSettings {
  return {
    seed: 1,
    verifySignatures: true,
    transitionDelays: { attachMs: 200, detachMs: 200, deleteMs: 200 },
    latency: {},
    rateLimitsPerMinute: {},
    callLogCapacity: 10_000,
    limits: {
      maxIpsPerCall: 10,
      maxIpv4OnDetachedEni: 50,
      maxIpv6OnDetachedEni: 10,
      clientTokenRetentionMs: 24 * 3_600_000,
    },
  };
}

/** A partial update of {@link EmulatorSettings}; nested objects merge field by field, maps are replaced. */
export interface SettingsPatch {
  seed?: number;
  verifySignatures?: boolean;
  transitionDelays?: Partial<TransitionDelays>;
  latency?: Record<string, LatencySpec>;
  rateLimitsPerMinute?: Record<string, number>;
  callLogCapacity?: number;
  limits?: Partial<EmulatorLimits>;
}

function isNonNegativeNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}

function checkLatency(spec: unknown, where: string): LatencySpec {
  if (typeof spec === 'object' && spec !== null) {
    const record = spec as Record<string, unknown>;
    if (isNonNegativeNumber(record['fixedMs'])) return { fixedMs: record['fixedMs'] };
    const { minMs, maxMs } = record as { minMs?: unknown; maxMs?: unknown };
    if (isNonNegativeNumber(minMs) && isNonNegativeNumber(maxMs) && minMs <= maxMs) return { minMs, maxMs };
  }
  throw new Error(`${where}: expected {fixedMs} or {minMs, maxMs} with 0 ≤ minMs ≤ maxMs`);
}

function checkNumberMap(value: unknown, where: string): Record<string, number> {
  if (typeof value !== 'object' || value === null) throw new Error(`${where}: expected an object`);
  const result: Record<string, number> = {};
  for (const [key, entry] of Object.entries(value)) {
    if (!isNonNegativeNumber(entry)) throw new Error(`${where}.${key}: expected a number ≥ 0`);
    result[key] = entry;
  }
  return result;
}

function mergeNumbers<T extends object>(target: T, patch: unknown, where: string): T {
  if (typeof patch !== 'object' || patch === null) throw new Error(`${where}: expected an object`);
  const merged = { ...target } as Record<string, number>;
  for (const [key, value] of Object.entries(patch)) {
    if (!(key in target)) throw new Error(`${where}.${key}: unknown setting`);
    if (!isNonNegativeNumber(value)) throw new Error(`${where}.${key}: expected a number ≥ 0`);
    merged[key] = value;
  }
  return merged as T;
}

/** Applies an untrusted (JSON) patch to `current`, throwing an Error naming the first bad field. */
export function applySettingsPatch(current: EmulatorSettings, patch: unknown): EmulatorSettings {
  if (typeof patch !== 'object' || patch === null) throw new Error('settings: expected an object');
  const input = patch as Record<string, unknown>;
  const next: EmulatorSettings = { ...current };
  for (const key of Object.keys(input)) {
    const value = input[key];
    switch (key) {
      case 'seed':
        if (!Number.isInteger(value)) throw new Error('settings.seed: expected an integer');
        next.seed = value as number;
        break;
      case 'verifySignatures':
        if (typeof value !== 'boolean') throw new Error('settings.verifySignatures: expected a boolean');
        next.verifySignatures = value;
        break;
      case 'transitionDelays':
        next.transitionDelays = mergeNumbers(current.transitionDelays, value, 'settings.transitionDelays');
        break;
      case 'limits':
        next.limits = mergeNumbers(current.limits, value, 'settings.limits');
        break;
      case 'latency': {
        if (typeof value !== 'object' || value === null) throw new Error('settings.latency: expected an object');
        const latency: Record<string, LatencySpec> = {};
        for (const [action, spec] of Object.entries(value))
          latency[action] = checkLatency(spec, `settings.latency.${action}`);
        next.latency = latency;
        break;
      }
      case 'rateLimitsPerMinute':
        next.rateLimitsPerMinute = checkNumberMap(value, 'settings.rateLimitsPerMinute');
        break;
      case 'callLogCapacity':
        if (!Number.isInteger(value) || (value as number) < 1) {
          throw new Error('settings.callLogCapacity: expected ≥ 1');
        }
        next.callLogCapacity = value as number;
        break;
      default:
        throw new Error(`settings.${key}: unknown setting`);
    }
  }
  return next;
}
