import { CancellationScope, uuid4 } from '@temporalio/workflow';

import {
  DEFINITE_CREATE_REFUSALS,
  ENIFLOW_CLUSTER_TAG_KEY,
  ENIFLOW_NODE_TAG,
  formatRfc3339,
  gcRemovalVerdict,
  planGc,
} from '../../ipam/index.js';
import type {
  AllocationWithIntent,
  EniAllocation,
  EniAllocationError,
  EniOutcome,
  GcAction,
  IpFamily,
  NetworkInterfaces,
  NodeSpec,
  PendingCreate,
  VSwitchInfo,
} from '../../ipam/index.js';
import type { GcResult } from '../messages.js';
import { attach, create, ecsRead, ipOps, release, wait } from './activities.js';
import type { CreatedEni } from './activities.js';
import type { OperationTracker } from './operation-tracker.js';
import { stepFailure } from './step-failure.js';
import type { FailedStep } from './step-failure.js';

export type ReadyNodeSpec = NodeSpec & Required<Pick<NodeSpec, 'eni' | 'pool'>>;

/**
 * What one planned step did: the changes to fold into the ENIs, the failures met, and what the next pass needs.
 * Steps never write the node's state: the pass folds their reports in plan order.
 */
export interface StepReport {
  outcomes: EniOutcome[];
  failed: FailedStep[];
  /** Conditions to set on the ENIs the step concerned (`InsufficientIP`, `OperationErr`). */
  eniErrors: { eniId: string; error: EniAllocationError }[];
  /** A create whose outcome is unknown, to be re-issued under its token by the next pass. */
  openIntent?: PendingCreate;
  /** Cloud calls that succeeded: only these say that the cloud answers again. */
  succeededCalls: number;
}

function emptyReport(): StepReport {
  return { outcomes: [], failed: [], eniErrors: [], succeededCalls: 0 };
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

  constructor(input: { nodeName: string; instanceId: string; clusterId: string; tracker: OperationTracker }) {
    this.nodeName = input.nodeName;
    this.instanceId = input.instanceId;
    this.clusterId = input.clusterId;
    this.tracker = input.tracker;
  }

  /** Runs every allocation at once; the reports come back in plan order. */
  async allocate(input: {
    allocations: readonly AllocationWithIntent[];
    enis: Readonly<NetworkInterfaces>;
    spec: ReadyNodeSpec;
    vSwitches: Record<string, VSwitchInfo>;
  }): Promise<StepReport[]> {
    return Promise.all(
      input.allocations.map((allocation) =>
        allocation.kind === 'assignIps'
          ? this.assignIps({ allocation, vSwitchId: input.enis[allocation.eniId]?.vSwitchID })
          : this.createEniSaga({ allocation, spec: input.spec, vSwitches: input.vSwitches }),
      ),
    );
  }

  /** Assigns IPs to an ENI of this node: IPv4 first, then IPv6; a failure stops the ENI's remaining family. */
  async assignIps(input: {
    allocation: Extract<EniAllocation, { kind: 'assignIps' }>;
    vSwitchId: string | undefined;
  }): Promise<StepReport> {
    const { allocation } = input;
    const report = emptyReport();
    for (const family of ['ipv4', 'ipv6'] as const satisfies readonly IpFamily[]) {
      const count = family === 'ipv4' ? allocation.ipv4Count : allocation.ipv6Count;
      if (count === 0) continue;
      try {
        const assigned = await this.tracker.track(
          { kind: 'assignIps', eniId: allocation.eniId, detail: `${count} ${family}` },
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
        const failure = stepFailure(error);
        report.failed.push({
          operation: `assign${family === 'ipv4' ? 'Ipv4' : 'Ipv6'}`,
          eniId: allocation.eniId,
          failure,
        });
        report.eniErrors.push({
          eniId: allocation.eniId,
          error:
            failure.type === 'EcsVSwitchExhausted'
              ? { kind: 'ipNotEnough', vSwitchId: input.vSwitchId ?? '' }
              : { kind: 'operation', message: failure.message },
        });
        return report;
      }
    }
    return report;
  }

  /**
   * create → attach → wait InUse, as one saga: if attach or the wait fails for good, the ENI is detached and
   * deleted; if that fails too, it is handed to the GC by recording it `Deleting` in the CR. Either way no ENI
   * the workflow created is ever unknown to the CR or left undeleted.
   */
  private async createEniSaga(input: {
    allocation: AllocationWithIntent & { kind: 'createEni' };
    spec: ReadyNodeSpec;
    vSwitches: Record<string, VSwitchInfo>;
  }): Promise<StepReport> {
    const { allocation, spec } = input;
    const intent = 'intent' in allocation ? allocation.intent : undefined;
    const report = emptyReport();
    // Same token on every retry, on replay and, through the intent, on the next passes: a lost response cannot
    // create a second ENI.
    const clientToken = intent?.clientToken ?? uuid4();
    let created: CreatedEni;
    try {
      created = (
        await this.tracker.track(
          { kind: 'createEni', detail: `${allocation.eniKind} in ${allocation.vSwitchId}` },
          () =>
            create.createEni({
              eniKind: allocation.eniKind,
              vSwitchId: allocation.vSwitchId,
              securityGroupIds: spec.eni.securityGroupIDs ?? [],
              ...(spec.eni.resourceGroupID === undefined ? {} : { resourceGroupId: spec.eni.resourceGroupID }),
              ipv4Count: allocation.ipv4Count,
              ipv6Count: allocation.ipv6Count,
              // Node and cluster last, so a spec tag cannot pass the ENI off as another node's or cluster's.
              tags: {
                ...(spec.eni.tag ?? {}),
                [ENIFLOW_NODE_TAG]: this.nodeName,
                [ENIFLOW_CLUSTER_TAG_KEY]: this.clusterId,
              },
              clientToken,
            }),
        )
      ).eni;
    } catch (error) {
      const failure = stepFailure(error);
      report.failed.push({ operation: 'createEni', failure });
      if (!DEFINITE_CREATE_REFUSALS.includes(failure.type)) {
        report.openIntent = intent ?? {
          clientToken,
          eniKind: allocation.eniKind,
          vSwitchId: allocation.vSwitchId,
          ipv4Count: allocation.ipv4Count,
          ipv6Count: allocation.ipv6Count,
          sinceMs: Date.now(),
        };
      }
      return report;
    }
    report.succeededCalls += 1;
    const eniId = created.eniId;
    try {
      await this.tracker.track({ kind: 'createEni', eniId, detail: 'attach' }, async () => {
        await attach.attachEni({ eniId, instanceId: this.instanceId });
        await wait.waitEniStatus({ eniId, status: 'InUse' });
      });
      report.succeededCalls += 1;
      report.outcomes.push({
        kind: 'eniCreated',
        cloud: { ...created, status: 'InUse' },
        cidrs: input.vSwitches[allocation.vSwitchId],
      });
      return report;
    } catch (error) {
      report.failed.push({ operation: 'attachEni', eniId, failure: stepFailure(error) });
    }
    const compensation = await CancellationScope.nonCancellable(async () => {
      try {
        await this.tracker.track({ kind: 'removeEni', eniId, detail: 'compensate failed attach' }, async () => {
          await release.detachEni({ eniId, instanceId: this.instanceId });
          await wait.waitEniStatus({ eniId, status: 'Available', goneIsDone: true });
          await release.deleteEni({ eniId });
        });
        return undefined;
      } catch (error) {
        return { operation: 'deleteEni', eniId, failure: stepFailure(error) } satisfies FailedStep;
      }
    });
    if (compensation !== undefined) {
      report.failed.push(compensation);
      report.outcomes.push({ kind: 'eniLeftForGc', eniId });
    }
    return report;
  }

  /** Runs the GC's clean-ups of the `Deleting` marks; the reports and the summary follow the plan's order. */
  async collectGarbage(
    enis: Readonly<NetworkInterfaces>,
  ): Promise<{ actions: GcAction[]; reports: StepReport[]; result: GcResult }> {
    const actions = planGc({ enis });
    const reports = await Promise.all(actions.map((action) => this.runGcAction(action)));
    const result: GcResult = { releasedIps: [], removedEnis: [], failed: [] };
    actions.forEach((action, i) => {
      const report = reports[i];
      const failed = report?.failed[0];
      if (failed !== undefined) {
        result.failed.push({ action, error: failed.failure.message });
        return;
      }
      for (const outcome of report?.outcomes ?? []) {
        if (outcome.kind === 'eniRemoved') result.removedEnis.push(outcome.eniId);
        if (outcome.kind === 'ipsReleased') {
          result.releasedIps.push({ eniId: outcome.eniId, family: outcome.family, ips: outcome.ips });
        }
      }
    });
    return { actions, reports, result };
  }

  private async runGcAction(action: GcAction): Promise<StepReport> {
    const report = emptyReport();
    try {
      if (action.kind === 'unassignIps') {
        await this.tracker.track(
          { kind: 'unassignIps', eniId: action.eniId, detail: `${action.ips.length} ${action.family}` },
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
        { kind: 'removeEni', eniId: action.eniId, detail: 'detach and delete' },
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
      report.failed.push({ operation: action.kind, eniId: action.eniId, failure: stepFailure(error) });
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
