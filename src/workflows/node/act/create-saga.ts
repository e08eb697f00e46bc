import { CancellationScope, uuid4 } from '@temporalio/workflow';

import {
  buildCreateRequest,
  createFailureVerdict,
  fillAfterAttach,
  formatRfc3339,
  isDefiniteAttachFailure,
  nextIntentStep,
} from '../../../ipam/index.js';
import type {
  AllocationWithIntent,
  AttachResult,
  CloudEni,
  CreateEniRequest,
  EniAllocation,
  NodeSpec,
  PendingCreate,
  VSwitchInfo,
} from '../../../ipam/index.js';
import { ECS_ACTIVITY_APIS } from '../../../shared/ecs-budget.js';
import { attach, attachOnce, create, ecsRead, release, wait } from './activities.js';
import { attachResultOfFailure, reportAttach } from './attach-metric.js';
import type { OperationTracker } from './operation-tracker.js';
import { appendReport, emptyReport, failureOf } from '../memory/step-failure.js';
import type { StepFailure, StepReport } from '../memory/step-failure.js';

type CreateAllocation = AllocationWithIntent & { kind: 'createEni' };

/** Assigns addresses to an attached ENI in calls of ten (the operator's `assignIps`). */
export type AssignStep = (input: {
  allocation: Extract<EniAllocation, { kind: 'assignIps' }>;
  vSwitchId: string | undefined;
}) => Promise<StepReport>;

/** What every attach step of one saga run shares: the vSwitches (for the new ENI's CIDRs) and the run's report. */
interface AttachContext {
  vSwitches: Record<string, VSwitchInfo>;
  report: StepReport;
}

/**
 * create → attach → wait InUse, as one saga, with the create intent that makes it safe across lost answers.
 *
 * - The create is sent once per pass under one ClientToken; when its outcome is unknown the whole request is kept
 *   as an intent, re-issued byte for byte, or resolved by listing ENIs by its intent tag once every attempt has
 *   ended (`nextIntentStep`, `createFailureVerdict`). An intent is never dropped on an ambiguous answer.
 * - A definite attach failure (fell back to Available, refused) is compensated: detach, wait, delete; if that fails
 *   too, the ENI is recorded `Deleting` for the GC. Any other attach failure keeps the ENI, recorded `Available` in
 *   the CR, for the next pass that needs it. Either way no ENI the workflow created is ever unknown to the CR.
 * - Once attached, the ENI gets what the planned create could not carry (ECS takes at most 49 IPv4 and 10 IPv6
 *   addresses at creation) by assigns in the same run, so the node needs no second ENI and no second pass for it.
 */
export class CreateSaga {
  private readonly nodeName: string;
  private readonly clusterId: string;
  private readonly instanceId: string;
  private readonly tracker: OperationTracker;
  private readonly horizonMs: number;
  private readonly holdReleases: boolean;
  /** The node's ledger has AttachNetworkInterface failing with a retryable error: one attempt, no retries. */
  private readonly attachKnownFailing: boolean;
  private readonly assign: AssignStep;

  constructor(input: {
    nodeName: string;
    clusterId: string;
    instanceId: string;
    tracker: OperationTracker;
    horizonMs: number;
    /** Degradation l1: no detach or delete; an ENI whose attach failed for good is left for GC (run once lifted). */
    holdReleases?: boolean;
    /** ECS actions the node's failure ledger has failing with a retryable error (`callsFailingRetryably`). */
    failingCalls?: readonly string[];
    /** Assigns to the attached ENI what its create could not carry. */
    assign: AssignStep;
  }) {
    this.nodeName = input.nodeName;
    this.clusterId = input.clusterId;
    this.instanceId = input.instanceId;
    this.tracker = input.tracker;
    this.horizonMs = input.horizonMs;
    this.holdReleases = input.holdReleases === true;
    this.attachKnownFailing = input.failingCalls?.includes(ECS_ACTIVITY_APIS.attachEni) === true;
    this.assign = input.assign;
  }

  async run(input: {
    allocation: CreateAllocation;
    spec: Pick<NodeSpec, 'eni'>;
    vSwitches: Record<string, VSwitchInfo>;
  }): Promise<StepReport> {
    const report = await this.createAndAttach(input);
    await this.fill({ allocation: input.allocation, report });
    return report;
  }

  /**
   * The ENI attached in this run gets the addresses its planned create asked for and does not hold yet (`fillAfterAttach`):
   * the part a create cannot carry, or what an ENI standing for the create (an intent re-issued, an ENI awaiting
   * attach) lacks. An intent no planned create stands for is not filled: the next plan decides.
   */
  private async fill(input: { allocation: CreateAllocation; report: StepReport }): Promise<void> {
    const { allocation, report } = input;
    const planned = allocation.planned ?? (allocation.intent === undefined ? allocation : undefined);
    const attached = report.outcomes.find((outcome) => outcome.kind === 'eniCreated');
    if (planned === undefined || attached?.kind !== 'eniCreated') return;
    const { cloud } = attached;
    const counts = fillAfterAttach(planned, { ipv4: cloud.ipv4.length, ipv6: cloud.ipv6.length });
    if (counts.ipv4Count + counts.ipv6Count === 0) return;
    const filled = await this.assign({
      allocation: { kind: 'assignIps', eniId: cloud.eniId, ...counts },
      vSwitchId: cloud.vSwitchId,
    });
    appendReport(report, filled);
  }

  private async createAndAttach(input: {
    allocation: CreateAllocation;
    spec: Pick<NodeSpec, 'eni'>;
    vSwitches: Record<string, VSwitchInfo>;
  }): Promise<StepReport> {
    const { allocation } = input;
    const report = emptyReport();
    if (allocation.awaitingEniId !== undefined) {
      await this.attachAwaiting({ eniId: allocation.awaitingEniId, vSwitches: input.vSwitches, report });
      return report;
    }
    const intent = allocation.intent;
    let request: CreateEniRequest | undefined;
    if (intent !== undefined) {
      const step = nextIntentStep({ intent, nowMs: Date.now(), horizonMs: this.horizonMs });
      if (step === 'wait') {
        report.openIntent = intent;
        return report;
      }
      if (step === 'reissue') request = intent.request;
      if (step === 'list') {
        const found = await this.listByIntent(intent, report);
        if (found === undefined) return report;
        if (found.length > 0) {
          await this.adoptFound({ found, vSwitches: input.vSwitches, report });
          return report;
        }
        // Every attempt has ended and no ENI carries the token: nothing was created, the intent is closed.
      }
    }
    if (request === undefined) {
      // A closed intent gives way to the create the plan asked for, under a new token.
      const planned = intent === undefined ? allocation : allocation.planned;
      if (planned === undefined) return report;
      request = buildCreateRequest({
        allocation: planned,
        spec: input.spec,
        nodeName: this.nodeName,
        clusterId: this.clusterId,
        clientToken: uuid4(),
      });
    }
    // Only a re-issue continues the intent; a closed one's planned create starts afresh under its new token.
    const reissued = request === intent?.request ? intent : undefined;
    const created = await this.create({ request, intent: reissued, report });
    if (created !== undefined) {
      await this.attachCreated({ cloud: created, vSwitches: input.vSwitches, report });
    }
    return report;
  }

  /** Sends the create; on failure, decides whether the intent stays open (and how) or is closed. */
  private async create(input: {
    request: CreateEniRequest;
    /** The open intent this request re-issues, if it does. */
    intent: PendingCreate | undefined;
    report: StepReport;
  }): Promise<CloudEni | undefined> {
    const { request, intent, report } = input;
    const sentMs = Date.now();
    try {
      const created = await this.tracker.track(
        {
          kind: 'createEni',
          action: ECS_ACTIVITY_APIS.createEni,
          detail: `${request.eniKind} in ${request.vSwitchId}`,
        },
        () => create.createEni(request),
      );
      report.succeededCalls += 1;
      return created.eni;
    } catch (error) {
      const failure = failureOf(error);
      report.failed.push({ operation: 'createEni', failure });
      const verdict = createFailureVerdict({
        type: failure.type,
        code: failure.code,
        attempt: failure.attempts,
        reissued: intent !== undefined,
      });
      if (verdict === 'closed') return undefined;
      const listOnly = verdict === 'listOnly' || intent?.listOnly === true;
      report.openIntent = {
        request,
        sinceMs: intent?.sinceMs ?? sentMs,
        // Taken after the failure, so no later than any attempt's schedule time: a conservative horizon.
        lastAttemptMs: Date.now(),
        ...(listOnly ? { listOnly: true as const } : {}),
      };
      return undefined;
    }
  }

  /** Lists ENIs by the intent's tag; a failed list keeps the intent open for the next pass. */
  private async listByIntent(intent: PendingCreate, report: StepReport): Promise<CloudEni[] | undefined> {
    const token = intent.request.clientToken;
    try {
      const found = await this.tracker.track(
        { kind: 'createEni', action: ECS_ACTIVITY_APIS.findEnisByIntent, detail: `find intent ${token}` },
        () => ecsRead.findEnisByIntent({ clientTokens: [token] }),
      );
      report.succeededCalls += 1;
      return found[token] ?? [];
    } catch (error) {
      report.failed.push({ operation: 'findEnisByIntent', failure: failureOf(error) });
      report.openIntent = intent;
      return undefined;
    }
  }

  /**
   * The ENIs an intent made, found by its tag: the first is used as if just created; any other (ECS created more
   * than one under a forgotten token) is recorded `Deleting`, so the GC removes it under its safety rules.
   */
  private async adoptFound(input: AttachContext & { found: CloudEni[] }): Promise<void> {
    const [first, ...extra] = input.found;
    for (const eni of extra) input.report.outcomes.push({ kind: 'eniLeftForGc', eniId: eni.eniId });
    if (first === undefined) return;
    await this.attachKnown({ cloud: first, vSwitches: input.vSwitches, report: input.report });
  }

  /** An ENI recorded `Available` by an earlier pass: looked up, then attached (or found attached). */
  private async attachAwaiting(input: AttachContext & { eniId: string }): Promise<void> {
    const { eniId, report } = input;
    let cloud: CloudEni | undefined;
    try {
      [cloud] = await ecsRead.describeEnisById({ eniIds: [eniId] });
      report.succeededCalls += 1;
    } catch (error) {
      report.failed.push({ operation: 'describeEnisById', eniId, failure: failureOf(error) });
      return;
    }
    if (cloud === undefined) {
      // Deleted behind our back: forgotten; the next pass plans a new create if it still needs one.
      report.outcomes.push({ kind: 'eniRemoved', eniId });
      return;
    }
    await this.attachKnown({ cloud, vSwitches: input.vSwitches, report });
  }

  /** Attaches an ENI eniflow made unless it is already attached: here (then only waits) or elsewhere (left alone). */
  private async attachKnown(input: AttachContext & { cloud: CloudEni }): Promise<void> {
    const { cloud, report } = input;
    const attachedTo = cloud.instanceId ?? '';
    if (attachedTo !== '' && attachedTo !== this.instanceId) {
      const message = `ENI ${cloud.eniId} is attached to another instance (${attachedTo}): not attached or deleted`;
      report.failed.push({
        operation: 'attachEni',
        eniId: cloud.eniId,
        failure: { type: 'EniAttachedElsewhere', message },
      });
      return;
    }
    await this.attachCreated({ ...input, alreadyAttached: attachedTo === this.instanceId });
  }

  private async attachCreated(input: AttachContext & { cloud: CloudEni; alreadyAttached?: boolean }): Promise<void> {
    const { cloud, report } = input;
    const eniId = cloud.eniId;
    const cidrs = input.vSwitches[cloud.vSwitchId];
    // Only an attach called here is timed: an ENI found attached was attached (and observed) by an earlier pass.
    const attaching = input.alreadyAttached !== true;
    const attachStartedMs = Date.now();
    const observe = (result: AttachResult | undefined): void => {
      if (attaching) reportAttach({ nodeName: this.nodeName, cloud, startedMs: attachStartedMs, result });
    };
    try {
      const action = attaching ? ECS_ACTIVITY_APIS.attachEni : ECS_ACTIVITY_APIS.waitEniStatus;
      await this.tracker.track({ kind: 'createEni', action, eniId, detail: 'until InUse' }, async () => {
        const attachCall = this.attachKnownFailing ? attachOnce : attach;
        if (attaching) await attachCall.attachEni({ eniId, instanceId: this.instanceId });
        await wait.waitEniStatus({ eniId, status: 'InUse' });
      });
      observe('success');
      report.succeededCalls += 1;
      report.outcomes.push({ kind: 'eniCreated', cloud: { ...cloud, status: 'InUse' }, cidrs });
      return;
    } catch (error) {
      observe(attachResultOfFailure(error));
      const failure = failureOf(error);
      report.failed.push({ operation: 'attachEni', eniId, failure });
      if (!isDefiniteAttachFailure(failure.type)) {
        report.outcomes.push({
          kind: 'eniAwaitingAttach',
          cloud,
          cidrs,
          message: `attach failed (${failure.code ?? failure.type}); attached again by the next pass that needs it`,
          nowRfc3339: formatRfc3339(Date.now()),
        });
        return;
      }
    }
    if (this.holdReleases) {
      report.outcomes.push({ kind: 'eniLeftForGc', eniId });
      return;
    }
    const compensation = await CancellationScope.nonCancellable(async () => {
      try {
        const detail = 'compensate failed attach, then delete';
        await this.tracker.track(
          { kind: 'removeEni', action: ECS_ACTIVITY_APIS.detachEni, eniId, detail },
          async () => {
            await release.detachEni({ eniId, instanceId: this.instanceId });
            await wait.waitEniStatus({ eniId, status: 'Available', goneIsDone: true });
            await release.deleteEni({ eniId });
          },
        );
        return undefined;
      } catch (error) {
        return { operation: 'deleteEni', eniId, failure: failureOf(error) } satisfies StepFailure;
      }
    });
    if (compensation !== undefined) {
      report.failed.push(compensation);
      report.outcomes.push({ kind: 'eniLeftForGc', eniId });
    }
  }
}
