import { setTimeout as sleep } from 'node:timers/promises';

import { activityInfo, cancellationSignal, heartbeat } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';

import type { CloudEni, CreateEniRequest, VSwitchInfo } from '../ipam/index.js';
import { ENIFLOW_CREATOR_TAG, ENIFLOW_INTENT_TAG } from '../ipam/index.js';
import type { Logger } from '../logger.js';
import { activityLogger, attemptWillBeRetried } from './activity-log.js';
import type { EcsApi } from './ecs/ecs-api.js';
import { EcsCallError } from './ecs/ecs-errors.js';
import type { EcsFailure } from './ecs/ecs-errors.js';
import { ALREADY_DONE_CODES } from './ecs/ecs-operations.js';
import type { VSwitchCache } from './ecs/vswitch-cache.js';

/** What the ECS activities need, built once per worker process. */
export interface EcsActivityDeps {
  ecs: EcsApi;
  vSwitches: VSwitchCache;
  logger: Logger;
  /** How often `waitEniStatus` polls; Terway starts at 3–5 s, tests use less. */
  eniPollIntervalMs?: number;
  /** Told, by activity type, of every classified cloud failure and of every success (`CloudRecoveryNotifier`). */
  cloudOutcomes?: { failed(activityType: string, failure: EcsFailure): void; succeeded(activityType: string): void };
}

/** The attempt of the running activity (1 outside one), so the workflow can say how many calls failed. */
function currentAttempt(): number {
  try {
    return activityInfo().attempt;
  } catch {
    return 1;
  }
}

/** The Temporal failure for a classified ECS error: its type, retryability, the server's retry hint, and details. */
export function ecsApplicationFailure(failure: EcsFailure): ApplicationFailure {
  return ApplicationFailure.create({
    type: failure.type,
    message: `${failure.operation}: ${failure.code}${failure.requestId === undefined ? '' : ` (RequestId ${failure.requestId})`}`,
    nonRetryable: !failure.retryable,
    details: [{ ...failure, attempt: currentAttempt() }],
    ...(failure.retryAfterMs === undefined ? {} : { nextRetryDelay: failure.retryAfterMs }),
  });
}

function failureOf(error: unknown): EcsFailure | undefined {
  return error instanceof EcsCallError ? error.failure : undefined;
}

/** The ECS activities. Each wraps one cloud call, is safe to retry, and throws only `ApplicationFailure`s. */
export function createEcsActivities(deps: EcsActivityDeps) {
  const pollMs = deps.eniPollIntervalMs ?? 3_000;
  const logFor = (fields: Record<string, string>): Logger => activityLogger(deps.logger, fields);

  /** Runs a cloud call and converts its failure; `accept` names failure codes that mean "already done". */
  async function run<T>(
    log: Logger,
    call: () => Promise<T>,
    options: { accept?: readonly string[]; onFailure?: (failure: EcsFailure) => void } = {},
  ): Promise<T | undefined> {
    try {
      const result = await call();
      deps.cloudOutcomes?.succeeded(activityInfo().activityType);
      return result;
    } catch (error) {
      const failure = failureOf(error);
      if (failure === undefined) throw error;
      if (options.accept?.includes(failure.code) === true) {
        log.info({ errorCode: failure.code, requestId: failure.requestId }, 'Treated as already done');
        return undefined;
      }
      deps.cloudOutcomes?.failed(activityInfo().activityType, failure);
      options.onFailure?.(failure);
      const applicationFailure = ecsApplicationFailure(failure);
      // A failure the server will retry is routine; the one that ends the activity reaches the workflow, whose
      // pass then logs one warning for the node.
      const level = attemptWillBeRetried(activityInfo(), applicationFailure) ? 'debug' : 'info';
      log[level]({ errorCode: failure.code, requestId: failure.requestId, failureType: failure.type }, failure.message);
      throw applicationFailure;
    }
  }

  return {
    /**
     * Creates an ENI (not attached) with a ClientToken, so a retried or lost-response create returns the same ENI.
     * The request is sent as the workflow recorded it (see `CreateEniRequest`): a re-issued intent must match its
     * first use parameter for parameter.
     */
    async createEni(input: CreateEniRequest): Promise<{ eni: CloudEni; requestId: string }> {
      const log = logFor({ vSwitchId: input.vSwitchId });
      const result = await run(
        log,
        () =>
          deps.ecs.createEni({
            vSwitchId: input.vSwitchId,
            securityGroupIds: input.securityGroupIds,
            ...(input.resourceGroupId === undefined ? {} : { resourceGroupId: input.resourceGroupId }),
            eniType: input.eniType,
            trafficMode: input.trafficMode,
            ipv4Count: input.ipv4Count,
            ipv6Count: input.ipv6Count,
            tags: { ...input.tags, [ENIFLOW_CREATOR_TAG.key]: ENIFLOW_CREATOR_TAG.value },
            clientToken: input.clientToken,
            description: 'interface created by eniflow',
          }),
        {
          onFailure: (failure) => {
            if (failure.type === 'EcsVSwitchExhausted') deps.vSwitches.block(input.vSwitchId);
          },
        },
      );
      if (result === undefined) throw ApplicationFailure.nonRetryable('create returned nothing', 'EcsUnknown');
      // The cloud just gave addresses from this vSwitch: whatever blocked it is out of date.
      deps.vSwitches.unblock(input.vSwitchId);
      log.info({ eniId: result.eni.eniId, requestId: result.requestId }, 'Created ENI');
      return result;
    },

    /** Attaches an ENI; an ENI already attaching or attached to this instance counts as done. */
    async attachEni(input: { eniId: string; instanceId: string }): Promise<void> {
      const log = logFor({ eniId: input.eniId, instanceId: input.instanceId });
      try {
        const result = await deps.ecs.attachEni(input);
        deps.cloudOutcomes?.succeeded('attachEni');
        log.info({ requestId: result.requestId }, 'Attach requested');
      } catch (error) {
        const failure = failureOf(error);
        if (failure !== undefined) deps.cloudOutcomes?.failed('attachEni', failure);
        if (failure?.type === 'EcsInvalidState') {
          const [eni] = await deps.ecs.describeEnis({ eniIds: [input.eniId] });
          if (eni !== undefined && (eni.status === 'Attaching' || eni.status === 'InUse')) return;
        }
        if (failure === undefined) throw error;
        throw ecsApplicationFailure(failure);
      }
    },

    /**
     * Polls until the ENI reaches `status`, heartbeating so a worker crash is noticed and cancellation is honoured.
     * Waiting for InUse, an ENI that falls back to Available has failed to attach: that is final.
     */
    async waitEniStatus(input: {
      eniId: string;
      status: 'InUse' | 'Available';
      goneIsDone?: boolean;
    }): Promise<string> {
      const log = logFor({ eniId: input.eniId });
      const signal = cancellationSignal();
      let sawAttaching = false;
      let availableStreak = 0;
      for (;;) {
        const enis = await run(log, () => deps.ecs.describeEnis({ eniIds: [input.eniId] }));
        const eni = enis?.[0];
        if (eni === undefined) {
          if (input.goneIsDone === true) return 'Gone';
          throw ApplicationFailure.nonRetryable(`ENI ${input.eniId} does not exist`, 'EcsNotFound');
        }
        heartbeat({ status: eni.status });
        if (eni.status === input.status) return eni.status;
        if (eni.status === 'Attaching') sawAttaching = true;
        availableStreak = eni.status === 'Available' ? availableStreak + 1 : 0;
        // Back to Available after Attaching, or Available poll after poll, means the attach failed. (A single
        // Available right after the attach call may just be the cloud not showing the change yet.)
        if (input.status === 'InUse' && availableStreak > 0 && (sawAttaching || availableStreak >= 3)) {
          throw ApplicationFailure.nonRetryable(
            `ENI ${input.eniId} fell back to Available: attach failed`,
            'EniAttachFailed',
          );
        }
        await sleep(pollMs, undefined, { signal });
      }
    },

    /** Detaches an ENI; one that is gone or already detached counts as done. */
    async detachEni(input: { eniId: string; instanceId: string }): Promise<void> {
      const log = logFor({ eniId: input.eniId, instanceId: input.instanceId });
      try {
        const result = await deps.ecs.detachEni(input);
        log.info({ requestId: result.requestId }, 'Detach requested');
      } catch (error) {
        const failure = failureOf(error);
        if (failure === undefined) throw error;
        if (failure.type === 'EcsNotFound') return;
        if (failure.type === 'EcsInvalidState') {
          const [eni] = await deps.ecs.describeEnis({ eniIds: [input.eniId] });
          if (eni === undefined || eni.status === 'Available' || eni.status === 'Detaching') return;
        }
        throw ecsApplicationFailure(failure);
      }
    },

    /** Deletes a detached ENI; one that is already gone counts as done. */
    async deleteEni(input: { eniId: string }): Promise<void> {
      const log = logFor({ eniId: input.eniId });
      await run(log, () => deps.ecs.deleteEni(input), { accept: ALREADY_DONE_CODES.DeleteNetworkInterface ?? [] });
      log.info('Deleted ENI');
    },

    /** The ENIs attached to the node's instance (its OpenAPI view), filtered by the daemon's tag filter. */
    async describeNodeEnis(input: { instanceId: string; tagFilter?: Record<string, string> }): Promise<CloudEni[]> {
      const log = logFor({ instanceId: input.instanceId });
      const enis = await run(log, () =>
        deps.ecs.describeEnis({
          instanceId: input.instanceId,
          ...(input.tagFilter === undefined ? {} : { tags: input.tagFilter }),
        }),
      );
      return enis ?? [];
    },

    /** Every ENI in the region that carries eniflow's creator tag, wherever it is (the janitor's view). */
    async listEniflowEnis(): Promise<CloudEni[]> {
      const log = logFor({});
      const enis = await run(log, () =>
        deps.ecs.describeEnis({ tags: { [ENIFLOW_CREATOR_TAG.key]: ENIFLOW_CREATOR_TAG.value } }),
      );
      return (enis ?? []).sort((a, b) => (a.eniId < b.eniId ? -1 : a.eniId > b.eniId ? 1 : 0));
    },

    /**
     * The ENIs each create intent made, found by the intent tag (its ClientToken) wherever they are: one list per
     * token, since ECS tag filters must all match. An empty list for a token means no ENI carries it now.
     */
    async findEnisByIntent(input: { clientTokens: string[] }): Promise<Record<string, CloudEni[]>> {
      const log = logFor({});
      const found: Record<string, CloudEni[]> = {};
      for (const clientToken of [...new Set(input.clientTokens)].sort()) {
        const enis = await run(log, () => deps.ecs.describeEnis({ tags: { [ENIFLOW_INTENT_TAG]: clientToken } }));
        found[clientToken] = (enis ?? []).sort((a, b) => (a.eniId < b.eniId ? -1 : a.eniId > b.eniId ? 1 : 0));
      }
      return found;
    },

    /**
     * Looks ENIs up by id wherever they are (no instance or tag filter): the ones returned exist, with the instance
     * they are attached to; the others do not exist.
     */
    async describeEnisById(input: { eniIds: string[] }): Promise<CloudEni[]> {
      const log = logFor({});
      if (input.eniIds.length === 0) return [];
      const enis = await run(log, () => deps.ecs.describeEnis({ eniIds: [...input.eniIds].sort() }));
      return (enis ?? []).sort((a, b) => (a.eniId < b.eniId ? -1 : a.eniId > b.eniId ? 1 : 0));
    },

    /** Assigns `count` secondary IPv4 addresses with a ClientToken; an exhausted vSwitch is blocked for a TTL. */
    async assignIpv4(input: { eniId: string; vSwitchId?: string; count: number; clientToken: string }) {
      const log = logFor({ eniId: input.eniId });
      const result = await run(log, () => deps.ecs.assignIpv4(input), {
        onFailure: (failure) => {
          if (failure.type === 'EcsVSwitchExhausted' && input.vSwitchId !== undefined)
            deps.vSwitches.block(input.vSwitchId);
        },
      });
      const ips = result?.ips ?? [];
      if (ips.length > 0 && input.vSwitchId !== undefined) deps.vSwitches.unblock(input.vSwitchId);
      log.info({ requestId: result?.requestId, count: ips.length }, 'Assigned IPv4 addresses');
      return { ips };
    },

    /** Assigns `count` IPv6 addresses with a ClientToken. */
    async assignIpv6(input: { eniId: string; vSwitchId?: string; count: number; clientToken: string }) {
      const log = logFor({ eniId: input.eniId });
      const result = await run(log, () => deps.ecs.assignIpv6(input), {
        onFailure: (failure) => {
          if (failure.type === 'EcsVSwitchExhausted' && input.vSwitchId !== undefined)
            deps.vSwitches.block(input.vSwitchId);
        },
      });
      const ips = result?.ips ?? [];
      if (ips.length > 0 && input.vSwitchId !== undefined) deps.vSwitches.unblock(input.vSwitchId);
      log.info({ requestId: result?.requestId, count: ips.length }, 'Assigned IPv6 addresses');
      return { ips };
    },

    /** Unassigns IPv4 addresses; addresses or ENIs already gone count as done. */
    async unassignIpv4(input: { eniId: string; ips: string[] }): Promise<void> {
      const log = logFor({ eniId: input.eniId });
      if (input.ips.length === 0) return;
      await run(log, () => deps.ecs.unassignIpv4(input), {
        accept: ALREADY_DONE_CODES.UnassignPrivateIpAddresses ?? [],
      });
      log.info({ count: input.ips.length }, 'Unassigned IPv4 addresses');
    },

    /** Unassigns IPv6 addresses; addresses or ENIs already gone count as done. */
    async unassignIpv6(input: { eniId: string; ips: string[] }): Promise<void> {
      const log = logFor({ eniId: input.eniId });
      if (input.ips.length === 0) return;
      await run(log, () => deps.ecs.unassignIpv6(input), { accept: ALREADY_DONE_CODES.UnassignIpv6Addresses ?? [] });
      log.info({ count: input.ips.length }, 'Unassigned IPv6 addresses');
    },

    /**
     * The node's candidate vSwitches, through the worker's cache; blocked ones report 0 free addresses and how long
     * the block lasts. `refresh` (a node's resync) asks the cloud again, lifting blocks the cloud no longer backs.
     */
    async describeVSwitches(input: { vSwitchIds: string[]; refresh?: boolean }): Promise<Record<string, VSwitchInfo>> {
      const log = logFor({});
      if (input.refresh === true) {
        const lifted = deps.vSwitches.refresh(input.vSwitchIds);
        if (lifted.length > 0) log.info({ vSwitchIds: lifted }, 'Resync: vSwitch blocks lifted, asking the cloud');
      }
      const found: Record<string, VSwitchInfo> = {};
      for (const vSwitchId of [...new Set(input.vSwitchIds)].sort()) {
        const info = await run(log, () => deps.vSwitches.get(vSwitchId, () => deps.ecs.describeVSwitch({ vSwitchId })));
        if (info !== undefined) found[vSwitchId] = info;
      }
      return found;
    },
  };
}

export type EcsActivities = ReturnType<typeof createEcsActivities>;
