import {
  applyAllocationConditions,
  assignIpsFromLocalPool,
  countIdleIps,
  foldEniOutcomes,
  hasWorkForGcPeriod,
  planGc,
  podIpRequestsFromPods,
  primaryFamilyOf,
  releaseIpsOfGonePods,
  sortedKeys,
  unschedulableEniIds,
} from '../../ipam/index.js';
import type {
  DegradationGates,
  NetworkInterfaces,
  NodeStatus,
  PodDemand,
  ReadyNodeCr,
  ReadyNodeSpec,
} from '../../ipam/index.js';
import type { NodeSnapshot } from '../../activities/index.js';
import type { NodeIpamSettings } from '../messages.js';
import { allocateForDemand } from './allocation-round.js';
import type { CarriedState } from './carried-state.js';
import { readCloudSide } from './cloud-side.js';
import type { CloudSide } from './cloud-side.js';
import type { EniOperator } from './eni-operator.js';
import type { GcRequests } from './gc-requests.js';
import type { NodeDegradation } from './node-degradation.js';
import { statusWithSyncTimes } from './node-io.js';
import type { StatusWrite, VSwitchPeek } from './node-io.js';
import type { NodeNotices } from './node-notices.js';
import { blockedVSwitchesOf, exhaustedVSwitchesOf } from './node-view.js';
import type { PassSummary } from './node-view.js';
import type { PassRecord } from './pass-record.js';
import type { PassSchedule } from './pass-schedule.js';
import { PoolPass } from './pool-pass.js';
import { prefixPass } from './prefix-pass.js';

/** What a ready pass reports to and asks; the reconciler owns them. */
export interface ReadyPassTools {
  record: PassRecord;
  gc: GcRequests;
  schedule: PassSchedule;
  notices: NodeNotices;
  degradation: NodeDegradation;
  writeStatus: (write: StatusWrite) => Promise<boolean>;
  /** Shows what the pass found in the `state` query at once, while its notices are still being written. */
  showSummary: (summary: Partial<PassSummary>) => void;
}

/**
 * A ready node's pass: the cloud side read and synced (`readCloudSide`), then the single-IP pass or, in prefix mode,
 * `prefixPass`: plan → act → fold → write → settle the ledger → tell. Returns whether it failed and what it found.
 */
export async function readyPass(input: {
  nodeName: string;
  node: ReadyNodeCr;
  snapshot: NodeSnapshot;
  /** The spec with the node's recorded mode (see `withPrefixMode`). */
  spec: ReadyNodeSpec;
  prefixMode: boolean;
  instanceId: string;
  /** ENIs to start from (the CR's, or those of a status write that did not land). */
  enis: NetworkInterfaces;
  nowMs: number;
  vSwitchRefresh: { requested: boolean; served: () => void };
  vSwitchPeek: VSwitchPeek;
  settings: Pick<NodeIpamSettings, 'clusterId' | 'openApiSyncPeriodMs' | 'gcPeriodMs' | 'createAttemptHorizonMs'>;
  state: CarriedState;
  /** Made once the cloud side is read: it holds releases back as the degradation is then. */
  newOperator: () => EniOperator;
  tools: ReadyPassTools;
}): Promise<{ failed: boolean; summary: Partial<PassSummary> }> {
  const { nodeName, node, spec, state, settings, tools } = input;
  const gates = tools.degradation.gates();
  const demand = podIpRequestsFromPods({ pods: input.snapshot.pods, eniSpec: spec.eni });
  const cloud = await readCloudSide({
    node,
    spec,
    enis: input.enis,
    instanceId: input.instanceId,
    providerId: input.snapshot.coreNode?.providerId,
    podCount: demand.requests.length,
    nowMs: input.nowMs,
    gates,
    vSwitchRefresh: input.vSwitchRefresh,
    vSwitchPeek: input.vSwitchPeek,
    settings,
    state,
    record: tools.record,
    schedule: tools.schedule,
  });
  const { createAttemptHorizonMs } = settings;
  if (!input.prefixMode) {
    const { snapshot, nowMs } = input;
    const operator = input.newOperator();
    const { gcPeriodMs } = settings;
    return singleIpPass({
      nodeName,
      node,
      snapshot,
      spec,
      demand,
      cloud,
      nowMs,
      gates,
      state,
      operator,
      gcPeriodMs,
      createAttemptHorizonMs,
      tools,
    });
  }
  // The prefix pass takes the gates as they are after the sync (a signal may have changed them meanwhile).
  return prefixPass({
    state,
    createAttemptHorizonMs,
    spec,
    enis: cloud.enis,
    times: cloud.times,
    vSwitches: cloud.vSwitches,
    synced: cloud.synced,
    current: node.status ?? {},
    operator: input.newOperator(),
    gates: tools.degradation.gates(),
    gcDeferral: tools.degradation.gcDeferral(),
    tools,
  });
}

/**
 * A ready pass in single-IP mode after the sync: plan with the pure core (release the IPs of
 * gone pods, serve pods from the local pool), act (the allocation round, pool tuning, GC) and fold in plan order,
 * write the status, then the ledger, the schedule's facts and the notices. Degradation gates decide what may act;
 * `tools.degradation` is asked live (a signal may change the level while an activity runs).
 */
async function singleIpPass(input: {
  nodeName: string;
  node: ReadyNodeCr;
  snapshot: NodeSnapshot;
  spec: ReadyNodeSpec;
  demand: PodDemand;
  cloud: CloudSide;
  /** The pass's clock, read before the cloud side (its sync decision, pool times, conditions). */
  nowMs: number;
  /** The gates as the pass began. */
  gates: DegradationGates;
  state: CarriedState;
  operator: EniOperator;
  gcPeriodMs: number;
  createAttemptHorizonMs: number;
  tools: ReadyPassTools;
}): Promise<{ failed: boolean; summary: Partial<PassSummary> }> {
  const { nodeName, node, spec, demand, cloud, nowMs: now, gates, state, operator, tools } = input;
  const { vSwitches } = cloud;
  let { enis } = cloud;

  // Plan.
  const primaryFamily = primaryFamilyOf(spec.eni);
  const released = releaseIpsOfGonePods({ enis, requests: demand.requests, nodeRuntime: input.snapshot.nodeRuntime });
  const local = assignIpsFromLocalPool({ enis: released.enis, requests: demand.requests, primaryFamily });
  const pool = new PoolPass({ nodeName, nowMs: now, node, gcPeriodMs: input.gcPeriodMs });
  // What the CR holds: the status read, or the one written early in this pass.
  let current: NodeStatus = node.status ?? {};
  let boundEarly = 0;
  // An early write changes the ENIs and sync times only: the CR keeps its other fields (the pool's among them), which
  // the final write compares against.
  const writeEarly = async (early: NetworkInterfaces): Promise<void> => {
    const status = statusWithSyncTimes(early, cloud.times);
    if (await tools.writeStatus({ status, current, enis: early })) current = { ...current, ...status };
  };
  // The pods the local pool served are written before the pass's cloud calls: those may wait for the ECS budget.
  const writeLocalFirst = async (): Promise<void> => {
    if (local.newlyBound.length > 0) await writeEarly(local.enis);
  };
  // Pods the assigns can serve are written before the pass's creates and attaches end (seconds later).
  const serveEarly = async (assigned: NetworkInterfaces): Promise<NetworkInterfaces | undefined> => {
    const early = assignIpsFromLocalPool({ enis: assigned, requests: demand.requests, primaryFamily });
    if (early.newlyBound.length === 0) return undefined;
    boundEarly = early.newlyBound.length;
    await writeEarly(early.enis);
    return early.enis;
  };
  // Act, then fold in plan order.
  const round = await allocateForDemand({
    state,
    operator,
    spec,
    vSwitches,
    local,
    createAttemptHorizonMs: input.createAttemptHorizonMs,
    allocate: gates.allocate,
    warmUpDemand: pool.warmUpDemand(),
    serveEarly,
    beforeActing: writeLocalFirst,
  });
  const { plan, allocated, openIntents } = round;
  const served = round.changed
    ? assignIpsFromLocalPool({ enis: round.enis, requests: demand.requests, primaryFamily })
    : local;
  enis = applyAllocationConditions({
    enis: served.enis,
    errors: [
      // A plan that was not acted on (degradation l0) reports nothing about the ENIs.
      ...(gates.allocate ? plan.problems : []).flatMap((problem) =>
        problem.kind === 'vSwitchExhausted'
          ? [{ eniId: problem.eniId, error: { kind: 'ipNotEnough' as const, vSwitchId: problem.vSwitchId } }]
          : [],
      ),
      ...allocated.flatMap((report) => report.eniErrors),
    ],
    nowMs: now,
  });
  // Held back by degradation, nothing is marked for release (marked IPs would be lost to pods meanwhile).
  const podsServed = local.newlyBound.length + boundEarly + (round.changed ? served.newlyBound.length : 0);
  const poolStatus = pool.settle({
    allocated,
    plannedAllocations: plan.allocations.length,
    newlyBound: podsServed,
    enis,
    family: primaryFamily,
    gc: { requested: tools.gc.pending, lastGcMs: state.lastGcMs },
    mayRelease: gates.release,
  });
  enis = poolStatus.enis;
  if (poolStatus.poolPeriodStartMs !== undefined) state.lastGcMs = poolStatus.poolPeriodStartMs;
  const gcDue = tools.gc.pending || state.lastGcMs === undefined || now - state.lastGcMs >= pool.periodMs;
  // Only a node that had something to release is held back by the gate (and told so).
  const releaseWanted =
    !gates.release &&
    (planGc({ enis }).length > 0 ||
      (gcDue && hasWorkForGcPeriod({ spec, enis, unsatisfied: [], awaitingCniDelete: 0 })));
  const gc = gates.release
    ? await operator.collectGarbage(enis)
    : {
        actions: [],
        reports: [],
        result: tools.degradation.gcDeferral() ?? { releasedIps: [], removedEnis: [], failed: [] },
      };
  enis = foldEniOutcomes(
    enis,
    gc.reports.flatMap((report) => report.outcomes),
  );
  tools.gc.served(gc.result);
  const allocationFailures = tools.record.foldReports(allocated);
  tools.record.foldReports(gc.reports);
  // A quota answer may mean the CR misses ENIs the cloud has: the next pass lists them.
  if (allocationFailures.some((step) => step.failure.type === 'EcsQuotaExceeded')) state.needResync = true;

  // Write.
  const status = statusWithSyncTimes(enis, cloud.times);
  const written = await tools.writeStatus({ status, current, enis, pool: poolStatus.fields });
  const failed = allocationFailures.length > 0 || gc.result.failed.length > 0 || !written;

  // What the pass found: in the query as soon as the CR has it, then told from the settled ledger.
  const failureTypes = allocationFailures.map((step) => step.failure.type);
  const vSwitchExhausted = failureTypes.includes('EcsVSwitchExhausted');
  const pending = served.unsatisfied.length;
  const awaitingCniDelete = released.awaitingCniDelete.length;
  tools.schedule.found({ spec, enis, unsatisfied: served.unsatisfied, awaitingCniDelete, plan, openIntents });
  // Work the degradation holds back is no reason for a timer: lifting it signals every node.
  if (tools.degradation.level !== 'off') tools.schedule.heldBack({ awaitingCniDelete });
  // A reclaim batch held back by degradation is no reason for a timer either.
  tools.schedule.poolTimers(pool.periodMs, gates.release ? poolStatus : { ...poolStatus, nextReclaimMs: undefined });
  const short = plan.unmetDemand.normal + plan.unmetDemand.erdma > 0 || vSwitchExhausted;
  const summary = {
    ipamState: pending > 0 && short ? 'InsufficientIP' : failed ? 'Error' : 'Ready',
    lastPlan: { allocations: plan.allocations, gc: gc.actions, unmetDemand: plan.unmetDemand },
    pods: { total: demand.requests.length, withIp: served.bound.length, pending },
    podsServed,
    enis: { total: Object.keys(enis).length, idleIps: countIdleIps({ enis, family: primaryFamily }) },
    unschedulableEnis: unschedulableEniIds(enis),
    awaitingCniDelete,
    blockedVSwitches: blockedVSwitchesOf(vSwitches),
    exhaustedVSwitches: exhaustedVSwitchesOf(vSwitches),
    vSwitchIds: sortedKeys(vSwitches),
  } satisfies Partial<PassSummary>;
  tools.showSummary(summary);
  tools.record.settle('completed');
  const ledger = state.failures ?? {};
  const { notices } = tools;
  await notices.degradationChanged(
    tools.degradation.owedNoticeFor({
      sync: cloud.syncHeldBack,
      allocate: local.unsatisfied.length > 0 || plan.allocations.length > 0 || openIntents.length > 0,
      release: releaseWanted,
    }),
  );
  await notices.blockedVSwitches(summary.blockedVSwitches);
  await notices.unlistedEnis(cloud.synced ? (state.unlistedEnis ?? []) : []);
  await notices.reboundPods({ dropped: local.droppedInvalid, enis });
  await notices.pendingPods({
    unsatisfied: served.unsatisfied,
    isNodeReady: true,
    plan,
    failureTypes,
    ledger,
    allocationHeldBack: !gates.allocate,
  });
  await notices.sufficientIp({
    hasIdleIp: plan.capacity.hasIdleIp,
    hasAllocatableEni: plan.capacity.hasAllocatableEni && !vSwitchExhausted,
  });
  await notices.allocationFailed({ failures: allocationFailures, ledger });
  return { failed, summary };
}
