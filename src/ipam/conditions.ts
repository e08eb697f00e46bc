import type { EniCondition, EniConditionType } from './node-model.js';
import { formatRfc3339, parseRfc3339 } from './rfc3339.js';
import { CONDITION_REASONS } from './event-reasons.js';
import type { SufficientIpReason } from './event-reasons.js';

/** Conditions are rewritten at most this often while unchanged, as in the reference. */
export const CONDITION_REFRESH_MS = 5 * 60 * 1000;
/** Terway truncates operation error messages to this many characters. */
export const OPERATION_ERROR_MAX_CHARS = 256;

/** What went wrong on one ENI during allocation. */
export type EniAllocationError = { kind: 'ipNotEnough'; vSwitchId: string } | { kind: 'operation'; message: string };

function isFresh(time: string | undefined, nowMs: number): boolean {
  const ms = time === undefined ? undefined : parseRfc3339(time);
  return ms !== undefined && nowMs - ms < CONDITION_REFRESH_MS;
}

/**
 * The ENI's conditions after an allocation attempt (the reference's `updateCrCondition`): no errors clear them;
 * an exhausted vSwitch sets `InsufficientIP` (refreshed at most every 5 minutes, so an unchanged condition does
 * not cause a status write on every pass); any other error sets `OperationErr` with the messages joined and cut
 * to 256 characters. A condition still backed by an error is kept.
 */
export function eniConditionsAfterAllocation(input: {
  current: Readonly<Partial<Record<EniConditionType, EniCondition>>> | undefined;
  errors: readonly EniAllocationError[];
  nowMs: number;
}): Partial<Record<EniConditionType, EniCondition>> | undefined {
  if (input.errors.length === 0) return undefined;
  const next: Partial<Record<EniConditionType, EniCondition>> = {};
  const now = formatRfc3339(input.nowMs);
  const notEnough = input.errors.filter((error) => error.kind === 'ipNotEnough');
  const operation = input.errors.filter((error) => error.kind === 'operation');
  const currentInsufficient = input.current?.InsufficientIP;
  const firstNotEnough = notEnough[0];
  if (firstNotEnough !== undefined) {
    next.InsufficientIP =
      currentInsufficient !== undefined && isFresh(currentInsufficient.observedTime, input.nowMs)
        ? { ...currentInsufficient }
        : { observedTime: now, message: `${firstNotEnough.vSwitchId} ip is not enough` };
  } else if (currentInsufficient !== undefined && operation.length > 0) {
    next.InsufficientIP = { ...currentInsufficient };
  }
  if (operation.length > 0) {
    const message = operation
      .map((error) => error.message)
      .join('; ')
      .slice(0, OPERATION_ERROR_MAX_CHARS);
    const currentOperation = input.current?.OperationErr;
    next.OperationErr =
      currentOperation?.message === message && isFresh(currentOperation.observedTime, input.nowMs)
        ? { ...currentOperation }
        : { observedTime: now, message };
  } else if (input.current?.OperationErr !== undefined) {
    next.OperationErr = { ...input.current.OperationErr };
  }
  return next;
}

/** The `SufficientIP` condition Terway puts on the core Kubernetes Node. */
export interface SufficientIpCondition {
  type: 'SufficientIP';
  status: 'True' | 'False';
  reason: SufficientIpReason;
  message: string;
  lastHeartbeatTime: string;
  lastTransitionTime: string;
}

/** A core Node condition as read from Kubernetes; only the fields the comparison needs. */
export interface NodeConditionSnapshot {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastHeartbeatTime?: string;
  lastTransitionTime?: string;
}

/**
 * The core Node's `SufficientIP` condition (the reference's `updateNodeCondition`): `False` only when no ENI has
 * an idle IPv4 left and no ENI (existing or new) can take more. Returns `undefined` when the same condition was
 * written less than 5 minutes ago (nothing to patch); an identical but older one keeps its transition time.
 */
export function sufficientIpCondition(input: {
  capacity: { hasIdleIp: boolean; hasAllocatableEni: boolean };
  existing: NodeConditionSnapshot | undefined;
  nowMs: number;
}): SufficientIpCondition | undefined {
  const sufficient = input.capacity.hasIdleIp || input.capacity.hasAllocatableEni;
  const wanted = {
    type: 'SufficientIP' as const,
    status: sufficient ? ('True' as const) : ('False' as const),
    reason: (sufficient ? CONDITION_REASONS.SufficientIP : CONDITION_REASONS.InsufficientIP).reason,
    message: sufficient ? 'node has sufficient IP' : 'node has insufficient IP',
  };
  const now = formatRfc3339(input.nowMs);
  const existing = input.existing;
  const same =
    existing?.status === wanted.status && existing.reason === wanted.reason && existing.message === wanted.message;
  if (same && isFresh(existing.lastHeartbeatTime, input.nowMs)) return undefined;
  return {
    ...wanted,
    lastHeartbeatTime: now,
    lastTransitionTime: same && existing.lastTransitionTime !== undefined ? existing.lastTransitionTime : now,
  };
}
