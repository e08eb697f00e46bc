import { nextFrozenExpiryMs } from '../../ipam/index.js';
import type { NetworkInterfaces, NodeSpec, NodeStatus, ReadyNodeSpec, VSwitchInfo } from '../../ipam/index.js';
import type { GcResult } from '../messages.js';
import type { CarriedState } from './carried-state.js';
import type { EniOperator } from './eni-operator.js';
import type { GcRequests } from './gc-requests.js';
import { statusWithSyncTimes } from './node-io.js';
import type { NodeNotices } from './node-notices.js';
import type { PassSummary } from './node-view.js';
import type { PassRecord } from './pass-record.js';
import type { PassSchedule } from './pass-schedule.js';
import { prefixPassFindings, prefixRound } from './prefix-round.js';

/**
 * `spec.eni.enableIPPrefix` is fixed when the workflow first sees the daemon's spec (Terway writes it once, at CR
 * creation). Returns the node's mode and, when the spec says otherwise now, the value it asks for (to be told in a
 * Warning Event; nothing changes).
 */
export function settlePrefixMode(input: { state: CarriedState; spec: Pick<NodeSpec, 'eni'> }): {
  prefixMode: boolean;
  ignoredChange?: boolean;
} {
  const asked = input.spec.eni?.enableIPPrefix === true;
  input.state.prefixMode ??= asked;
  const prefixMode = input.state.prefixMode;
  return prefixMode === asked ? { prefixMode } : { prefixMode, ignoredChange: asked };
}

/** The spec with the node's recorded mode, whatever the CR says now. */
export function withPrefixMode<T extends Pick<NodeSpec, 'eni'>>(spec: T, prefixMode: boolean): T {
  if ((spec.eni?.enableIPPrefix === true) === prefixMode) return spec;
  return { ...spec, eni: { ...spec.eni, enableIPPrefix: prefixMode } };
}

/** What the ready pass hands over once the cloud side is read and synced. */
export interface PrefixPassInput {
  spec: ReadyNodeSpec;
  enis: NetworkInterfaces;
  times: { lastSyncMs?: number | undefined; nextSyncMs?: number | undefined };
  vSwitches: Record<string, VSwitchInfo>;
  /** The CR's status as read, for the status write. */
  current: NodeStatus;
  /** Whether this pass ran the OpenAPI sync (its unlisted-ENI decisions are then told). */
  synced: boolean;
}

/**
 * A ready pass in prefix mode after the sync: the prefix round (see `prefixRound`), then the status write, the
 * ledger, the schedule's facts and the notices, as a single-IP pass has them (no pod or capacity notices: the daemon
 * binds pods to prefix addresses).
 */
export async function prefixPass(
  input: PrefixPassInput & {
    state: CarriedState;
    operator: EniOperator;
    createAttemptHorizonMs: number;
    gates: { allocate: boolean; release: boolean };
    gcDeferral: GcResult | undefined;
    tools: {
      record: PassRecord;
      gc: GcRequests;
      schedule: PassSchedule;
      notices: NodeNotices;
      writeStatus: (write: { status: NodeStatus; current: NodeStatus; enis: NetworkInterfaces }) => Promise<boolean>;
    };
  },
): Promise<{ failed: boolean; summary: Partial<PassSummary> }> {
  const { spec, vSwitches, state, tools } = input;
  const round = await prefixRound({
    state,
    operator: input.operator,
    spec,
    vSwitches,
    enis: input.enis,
    createAttemptHorizonMs: input.createAttemptHorizonMs,
    nowMs: Date.now(),
    gates: input.gates,
    gcDeferral: input.gcDeferral,
  });
  const { plan, gc, enis } = round;
  tools.gc.served(gc.result);
  const allocationFailures = tools.record.foldReports(round.allocated);
  tools.record.foldReports(gc.reports);
  // A quota answer may mean the CR misses ENIs the cloud has: the next pass lists them.
  if (allocationFailures.some((step) => step.failure.type === 'EcsQuotaExceeded')) state.needResync = true;
  const status = statusWithSyncTimes(enis, input.times);
  const written = await tools.writeStatus({ status, current: input.current, enis });
  const failed = allocationFailures.length > 0 || gc.result.failed.length > 0 || !written;
  const found = prefixPassFindings({ plan, gc: gc.actions, enis, vSwitches, failed });
  tools.schedule.found({
    spec,
    enis,
    unsatisfied: [],
    awaitingCniDelete: 0,
    plan: found.plan,
    openIntents: round.openIntents,
  });
  tools.schedule.prefixTimers(nextFrozenExpiryMs(enis));
  tools.record.settle('completed');
  await tools.notices.blockedVSwitches(found.summary.blockedVSwitches);
  await tools.notices.unlistedEnis(input.synced ? (state.unlistedEnis ?? []) : []);
  await tools.notices.allocationFailed({ failures: allocationFailures, ledger: state.failures ?? {} });
  return { failed, summary: found.summary };
}
