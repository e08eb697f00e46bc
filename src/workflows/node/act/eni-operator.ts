import { uuid4 } from '@temporalio/workflow';

import {
  assignCalls,
  formatRfc3339,
  gcRemovalVerdict,
  planGc,
  planPrefixGc,
  prefixCallBatches,
} from '../../../ipam/index.js';
import type {
  AllocationWithIntent,
  EniAllocation,
  GcAction,
  IpFamily,
  NetworkInterfaces,
  PrefixAssign,
  PrefixGcAction,
  ReadyNodeSpec,
  VSwitchInfo,
} from '../../../ipam/index.js';
import { ECS_ACTIVITY_APIS } from '../../../shared/ecs-budget.js';
import type { GcResult } from '../../messages.js';
import { ecsRead, ipOps, release, wait } from './activities.js';
import { CreateSaga } from './create-saga.js';
import type { OperationTracker } from './operation-tracker.js';
import { describeStepFailure, emptyReport, failureOf } from '../memory/step-failure.js';
import type { StepReport } from '../memory/step-failure.js';

/** What {@link EniOperator.allocate} runs: the plan's allocations on the node's ENIs. */
export interface AllocationInput {
  allocations: readonly (AllocationWithIntent | PrefixAssign)[];
  enis: Readonly<NetworkInterfaces>;
  spec: ReadyNodeSpec;
  vSwitches: Record<string, VSwitchInfo>;
  /** The node's `createAttemptHorizonMs` setting: when an open intent's attempts have all ended. */
  createAttemptHorizonMs: number;
}

/**
 * Carries out the cloud side of a node's plans: allocations (IP assigns, the create saga) and GC (IP unassigns,
 * ENI removal). Every step runs concurrently, reports what it did, and leaves state to the pass.
 */
export class EniOperator {
  private readonly nodeName: string;
  private readonly instanceId: string;
  private readonly clusterId: string;
  private readonly tracker: OperationTracker;
  /** Set while degradation holds back releasing calls: a failed attach leaves its ENI for GC, not compensated. */
  private readonly holdReleases: boolean;
  /** ECS actions the node already knows fail with a retryable error: tried once per pass. */
  private readonly failingCalls: readonly string[];

  constructor(input: {
    nodeName: string;
    instanceId: string;
    clusterId: string;
    tracker: OperationTracker;
    holdReleases?: boolean;
    failingCalls?: readonly string[];
  }) {
    this.nodeName = input.nodeName;
    this.instanceId = input.instanceId;
    this.clusterId = input.clusterId;
    this.tracker = input.tracker;
    this.holdReleases = input.holdReleases === true;
    this.failingCalls = input.failingCalls ?? [];
  }

  /** Runs every allocation at once; the reports come back in plan order. */
  async allocate(input: AllocationInput): Promise<StepReport[]> {
    return Promise.all(this.startAllocations(input));
  }

  /** Starts every allocation at once: one promise per allocation, in plan order, for callers that await in steps. */
  startAllocations(input: AllocationInput): Promise<StepReport>[] {
    return input.allocations.map((allocation) =>
      allocation.kind === 'assignIps'
        ? this.assignIps({ allocation, vSwitchId: input.enis[allocation.eniId]?.vSwitchID })
        : allocation.kind === 'assignPrefixes'
          ? this.assignPrefixes({ allocation, vSwitchId: input.enis[allocation.eniId]?.vSwitchID })
          : new CreateSaga({
              nodeName: this.nodeName,
              clusterId: this.clusterId,
              instanceId: this.instanceId,
              tracker: this.tracker,
              horizonMs: input.createAttemptHorizonMs,
              holdReleases: this.holdReleases,
              failingCalls: this.failingCalls,
              assign: (fill) => this.assignIps(fill),
            }).run({
              allocation,
              spec: input.spec,
              vSwitches: input.vSwitches,
            }),
    );
  }

  /**
   * Assigns IPs to an ENI of this node, up to its quota in one pass: calls of at most ten, one after the other, IPv4
   * and IPv6 in turn (`assignCalls`); a failure stops the ENI's remaining calls (what earlier ones assigned is kept).
   */
  async assignIps(input: {
    allocation: Extract<EniAllocation, { kind: 'assignIps' }>;
    vSwitchId: string | undefined;
  }): Promise<StepReport> {
    const { allocation } = input;
    const report = emptyReport();
    for (const { family, count } of assignCalls(allocation)) {
      try {
        const assigned = await this.tracker.track(
          { kind: 'assignIps', action: assignAction(family), eniId: allocation.eniId, detail: `${count} ${family}` },
          () =>
            (family === 'ipv4' ? ipOps.assignIpv4 : ipOps.assignIpv6)({
              eniId: allocation.eniId,
              count,
              clientToken: uuid4(),
              ...(input.vSwitchId === undefined ? {} : { vSwitchId: input.vSwitchId }),
            }),
        );
        report.succeededCalls += 1;
        report.outcomes.push({ kind: 'ipsAssigned', eniId: allocation.eniId, family, ips: assigned.ips });
      } catch (error) {
        return withAssignFailure(report, {
          operation: `assign${family === 'ipv4' ? 'Ipv4' : 'Ipv6'}`,
          eniId: allocation.eniId,
          vSwitchId: input.vSwitchId,
          error,
        });
      }
    }
    return report;
  }

  /**
   * Prefix mode: adds prefixes to an ENI of this node, IPv4 then IPv6, in calls of at most ten each; a failure stops
   * the ENI's remaining calls (what the earlier calls assigned is reported and kept).
   */
  async assignPrefixes(input: { allocation: PrefixAssign; vSwitchId: string | undefined }): Promise<StepReport> {
    const { allocation } = input;
    const report = emptyReport();
    for (const family of ['ipv4', 'ipv6'] as const satisfies readonly IpFamily[]) {
      const total = family === 'ipv4' ? allocation.ipv4PrefixCount : allocation.ipv6PrefixCount;
      for (const count of prefixCallBatches(total)) {
        try {
          const assigned = await this.tracker.track(
            {
              kind: 'assignPrefixes',
              action: assignAction(family),
              eniId: allocation.eniId,
              detail: `${count} ${family} prefixes`,
            },
            () =>
              (family === 'ipv4' ? ipOps.assignIpv4Prefixes : ipOps.assignIpv6Prefixes)({
                eniId: allocation.eniId,
                count,
                clientToken: uuid4(),
                ...(input.vSwitchId === undefined ? {} : { vSwitchId: input.vSwitchId }),
              }),
          );
          report.succeededCalls += 1;
          report.outcomes.push({
            kind: 'prefixesAssigned',
            eniId: allocation.eniId,
            family,
            prefixes: assigned.prefixes,
          });
        } catch (error) {
          return withAssignFailure(report, {
            operation: `assign${family === 'ipv4' ? 'Ipv4' : 'Ipv6'}Prefixes`,
            eniId: allocation.eniId,
            vSwitchId: input.vSwitchId,
            error,
          });
        }
      }
    }
    return report;
  }

  /**
   * Runs the GC's clean-ups of the `Deleting` marks (prefix mode: `Deleting` prefixes too); the reports and the
   * summary follow the plan's order.
   */
  async collectGarbage(
    enis: Readonly<NetworkInterfaces>,
    options: { prefixes?: boolean } = {},
  ): Promise<{ actions: GcAction[]; reports: StepReport[]; result: GcResult }> {
    const actions: GcAction[] = [...planGc({ enis }), ...(options.prefixes === true ? planPrefixGc({ enis }) : [])];
    const reports = await Promise.all(actions.map((action) => this.runGcAction(action)));
    const result: GcResult = { releasedIps: [], removedEnis: [], failed: [] };
    actions.forEach((action, i) => {
      const report = reports[i];
      const failed = report?.failed[0];
      if (failed !== undefined) {
        result.failed.push({ action, error: describeStepFailure(failed) });
        return;
      }
      for (const outcome of report?.outcomes ?? []) {
        if (outcome.kind === 'eniRemoved') result.removedEnis.push(outcome.eniId);
        if (outcome.kind === 'ipsReleased') {
          result.releasedIps.push({ eniId: outcome.eniId, family: outcome.family, ips: outcome.ips });
        }
        if (outcome.kind === 'prefixesReleased') {
          const { eniId, family, prefixes } = outcome;
          (result.releasedPrefixes ??= []).push({ eniId, family, prefixes });
        }
      }
    });
    return { actions, reports, result };
  }

  private async runGcAction(action: GcAction): Promise<StepReport> {
    if (action.kind === 'unassignPrefixes') return this.unassignPrefixes(action);
    const report = emptyReport();
    try {
      if (action.kind === 'unassignIps') {
        await this.tracker.track(
          {
            kind: 'unassignIps',
            action: unassignAction(action.family),
            eniId: action.eniId,
            detail: `${action.ips.length} ${action.family}`,
          },
          () =>
            (action.family === 'ipv4' ? ipOps.unassignIpv4 : ipOps.unassignIpv6)({
              eniId: action.eniId,
              ips: action.ips,
            }),
        );
        report.succeededCalls += 1;
        report.outcomes.push({ kind: 'ipsReleased', eniId: action.eniId, family: action.family, ips: action.ips });
        return report;
      }
      const removed = await this.tracker.track(
        { kind: 'removeEni', action: ECS_ACTIVITY_APIS.detachEni, eniId: action.eniId, detail: 'then delete' },
        () => this.removeEni(action.eniId),
      );
      report.succeededCalls += 1;
      if (removed !== 'removed') {
        // Never detached from another instance, never removed unless provably this node's: kept out of every
        // plan, dropped by the next sync if idle.
        const message =
          removed === 'attachedElsewhere'
            ? `ENI ${action.eniId} is attached to another instance: not detached or deleted`
            : `ENI ${action.eniId} is neither attached to this node's instance nor tagged as created by eniflow ` +
              `for this node of cluster ${this.clusterId}: not detached or deleted`;
        report.outcomes.push({
          kind: 'eniKeptUntouched',
          eniId: action.eniId,
          message,
          nowRfc3339: formatRfc3339(Date.now()),
        });
        report.failed.push({
          operation: 'removeEni',
          eniId: action.eniId,
          failure: { type: removed === 'attachedElsewhere' ? 'EniAttachedElsewhere' : 'EniNotProvablyOurs', message },
        });
        return report;
      }
      report.outcomes.push({ kind: 'eniRemoved', eniId: action.eniId });
    } catch (error) {
      report.failed.push({ operation: action.kind, eniId: action.eniId, failure: failureOf(error) });
    }
    return report;
  }

  private async unassignPrefixes(action: PrefixGcAction): Promise<StepReport> {
    const report = emptyReport();
    try {
      await this.tracker.track(
        {
          kind: 'unassignPrefixes',
          action: unassignAction(action.family),
          eniId: action.eniId,
          detail: `${action.prefixes.length} ${action.family} prefixes`,
        },
        () =>
          (action.family === 'ipv4' ? ipOps.unassignIpv4Prefixes : ipOps.unassignIpv6Prefixes)({
            eniId: action.eniId,
            prefixes: action.prefixes,
          }),
      );
      report.succeededCalls += 1;
      const { eniId, family, prefixes } = action;
      report.outcomes.push({ kind: 'prefixesReleased', eniId, family, prefixes });
    } catch (error) {
      report.failed.push({ operation: action.kind, eniId: action.eniId, failure: failureOf(error) });
    }
    return report;
  }

  /**
   * Detaches (when attached here) and deletes an ENI the GC may remove. The ENI is looked up first: one the cloud
   * does not know is just forgotten (no call); one attached to another instance is never detached; one neither
   * attached here nor tagged for this node and cluster is left alone ({@link gcRemovalVerdict}).
   */
  private async removeEni(eniId: string): Promise<'removed' | 'attachedElsewhere' | 'notProvablyOurs'> {
    const [cloud] = await ecsRead.describeEnisById({ eniIds: [eniId] });
    if (cloud === undefined) return 'removed';
    const verdict = gcRemovalVerdict({
      cloud,
      instanceId: this.instanceId,
      nodeName: this.nodeName,
      clusterId: this.clusterId,
    });
    if (verdict === 'attachedElsewhere' || verdict === 'notProvablyOurs') return verdict;
    if (cloud.status !== 'Available') {
      await release.detachEni({ eniId, instanceId: this.instanceId });
      await wait.waitEniStatus({ eniId, status: 'Available', goneIsDone: true });
    }
    await release.deleteEni({ eniId });
    return 'removed';
  }
}

/**
 * A failed assign (addresses or prefixes) in the step's report: the failed call, and the ENI's condition (an exhausted
 * vSwitch says which). The ENI's remaining calls are not made; what earlier calls assigned stays reported.
 */
function withAssignFailure(
  report: StepReport,
  input: { operation: string; eniId: string; vSwitchId: string | undefined; error: unknown },
): StepReport {
  const failure = failureOf(input.error);
  report.failed.push({ operation: input.operation, eniId: input.eniId, failure });
  report.eniErrors.push({
    eniId: input.eniId,
    error:
      failure.type === 'EcsVSwitchExhausted'
        ? { kind: 'ipNotEnough', vSwitchId: input.vSwitchId ?? '' }
        : { kind: 'operation', message: describeStepFailure({ operation: input.operation, failure }) },
  });
  return report;
}

/** The ECS action that assigns addresses or prefixes of a family. */
function assignAction(family: IpFamily): string {
  return ECS_ACTIVITY_APIS[family === 'ipv4' ? 'assignIpv4' : 'assignIpv6'];
}

/** The ECS action that unassigns addresses or prefixes of a family. */
function unassignAction(family: IpFamily): string {
  return ECS_ACTIVITY_APIS[family === 'ipv4' ? 'unassignIpv4' : 'unassignIpv6'];
}
