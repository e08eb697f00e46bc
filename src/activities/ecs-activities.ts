import { ApplicationFailure } from '@temporalio/common';

import type { CloudEni, CreateEniRequest, VSwitchInfo } from '../ipam/index.js';
import {
  adoptionTags,
  IPV4_PREFIX_SIZE,
  ENIFLOW_CLUSTER_TAG_KEY,
  ENIFLOW_CREATOR_TAG,
  ENIFLOW_INTENT_TAG,
  ENIFLOW_NODE_TAG,
} from '../ipam/index.js';
import type { Logger } from '../logger.js';
import { activityLogger } from './activity-log.js';
import type { EcsApi } from './ecs/ecs-api.js';
import { ecsApplicationFailure } from './ecs/ecs-application-failure.js';
import { createEcsCallRunner, failureOf } from './ecs/ecs-call-runner.js';
import type { CloudOutcomes } from './ecs/ecs-call-runner.js';
import { ALREADY_DONE_CODES } from './ecs/ecs-operations.js';
import { AttachPollSchedule } from './ecs/attach-polls.js';
import { createWaitEniStatus } from './ecs/wait-eni-status.js';
import type { VSwitchCache } from './ecs/vswitch-cache.js';

/** What the ECS activities need, built once per worker process. */
export interface EcsActivityDeps {
  ecs: EcsApi;
  vSwitches: VSwitchCache;
  logger: Logger;
  /** How often `waitEniStatus` polls; Terway starts at 3–5 s, tests use less. */
  eniPollIntervalMs?: number;
  /** Told, by activity type, of every classified cloud failure and of every success (`CloudRecoveryNotifier`). */
  cloudOutcomes?: CloudOutcomes;
}

/**
 * The prefixes a new ENI is created with, next to the recorded `CreateEniRequest` (prefix mode): ECS takes them in
 * the same `CreateNetworkInterface` call (`Ipv4PrefixCount`, `Ipv6PrefixCount`); omitted or 0 means none.
 */
export interface CreateEniPrefixCounts {
  ipv4PrefixCount?: number;
  ipv6PrefixCount?: number;
}

/** Most resources one `TagResources` call takes (`ResourceId.N`, 1–50). */
const TAG_RESOURCES_MAX_IDS = 50;

export { ENI_STATUS_PENDING } from './ecs/wait-eni-status.js';

/** The ECS activities. Each wraps one cloud call, is safe to retry, and throws only `ApplicationFailure`s. */
export function createEcsActivities(deps: EcsActivityDeps) {
  const pollMs = deps.eniPollIntervalMs ?? 3_000;
  // Learned by this worker process from the attaches it waits for (see attach-polls.ts).
  const attachPolls = new AttachPollSchedule(pollMs);
  const logFor = (fields: Record<string, string>): Logger => activityLogger(deps.logger, fields);
  const { run, reviseAfterRefusal, blockExhausted } = createEcsCallRunner(deps);
  const waitEniStatus = createWaitEniStatus({ ecs: deps.ecs, run, logFor, pollMs, attachPolls });

  return {
    /**
     * Creates an ENI (not attached) with a ClientToken, so a retried or lost-response create returns the same ENI.
     * The request is sent as the workflow recorded it (see `CreateEniRequest`): a re-issued intent must match its
     * first use parameter for parameter.
     */
    async createEni(input: CreateEniRequest & CreateEniPrefixCounts): Promise<{ eni: CloudEni; requestId: string }> {
      const log = logFor({ vSwitchId: input.vSwitchId });
      const prefixAddresses = IPV4_PREFIX_SIZE * (input.ipv4PrefixCount ?? 0);
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
            ...(input.ipv4PrefixCount === undefined ? {} : { ipv4PrefixCount: input.ipv4PrefixCount }),
            ...(input.ipv6PrefixCount === undefined ? {} : { ipv6PrefixCount: input.ipv6PrefixCount }),
            tags: { ...input.tags, [ENIFLOW_CREATOR_TAG.key]: ENIFLOW_CREATOR_TAG.value },
            clientToken: input.clientToken,
            description: 'interface created by eniflow',
          }),
        {
          onFailure: async (failure) => {
            // Prefix asks are not sized by the vSwitch's count: a refused one blocks it, as Terway does.
            if (prefixAddresses > 0) blockExhausted(failure, input.vSwitchId);
            else await reviseAfterRefusal(log, failure, { vSwitchId: input.vSwitchId, requested: input.ipv4Count });
          },
        },
      );
      if (result === undefined) throw ApplicationFailure.nonRetryable('create returned nothing', 'EcsUnknown');
      // The cloud just gave addresses from this vSwitch: whatever blocked it is out of date; else it has fewer now.
      if (!deps.vSwitches.unblock(input.vSwitchId))
        deps.vSwitches.took(input.vSwitchId, input.ipv4Count + prefixAddresses);
      log.info({ eniId: result.eni.eniId, requestId: result.requestId }, 'Created ENI');
      return result;
    },

    /** Attaches an ENI; an ENI already attaching or attached to this instance counts as done. */
    async attachEni(input: { eniId: string; instanceId: string }): Promise<void> {
      const log = logFor({ eniId: input.eniId, instanceId: input.instanceId });
      try {
        const result = await deps.ecs.attachEni(input);
        // Its answer's time, not the send's: a client-side limiter may hold the call, and an early describe is wasted.
        attachPolls.attachSent(input.eniId, Date.now());
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

    waitEniStatus,

    /** Detaches an ENI; one that is gone or already detached counts as done. */
    async detachEni(input: { eniId: string; instanceId: string }): Promise<void> {
      const log = logFor({ eniId: input.eniId, instanceId: input.instanceId });
      try {
        const result = await deps.ecs.detachEni(input);
        log.info({ requestId: result.requestId }, 'Detach requested');
      } catch (error) {
        const failure = failureOf(error);
        if (failure === undefined) throw error;
        // Gone, or its instance is: either way the ENI is not attached there.
        if (failure.type === 'EcsNotFound' || failure.type === 'EcsInstanceNotFound') return;
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

    /**
     * The ENIs carrying eniflow's creator tag, wherever they are attached (the janitor's view): with `clusterId`
     * only those tagged for that cluster, with `nodeName` only those created for that node, with `vpcId` only
     * those in that VPC (the cloud filters all three).
     */
    async listEniflowEnis(input: { clusterId?: string; nodeName?: string; vpcId?: string } = {}): Promise<CloudEni[]> {
      const log = logFor({});
      const tags: Record<string, string> = { [ENIFLOW_CREATOR_TAG.key]: ENIFLOW_CREATOR_TAG.value };
      if (input.clusterId !== undefined) tags[ENIFLOW_CLUSTER_TAG_KEY] = input.clusterId;
      if (input.nodeName !== undefined) tags[ENIFLOW_NODE_TAG] = input.nodeName;
      const enis = await run(log, () =>
        deps.ecs.describeEnis({ tags, ...(input.vpcId === undefined ? {} : { vpcId: input.vpcId }) }),
      );
      return (enis ?? []).sort(byEniId);
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
        found[clientToken] = (enis ?? []).sort(byEniId);
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
      return (enis ?? []).sort(byEniId);
    },

    /** Assigns `count` secondary IPv4 addresses with a ClientToken; an exhausted vSwitch is blocked for a TTL. */
    async assignIpv4(input: { eniId: string; vSwitchId?: string; count: number; clientToken: string }) {
      const log = logFor({ eniId: input.eniId });
      const result = await run(log, () => deps.ecs.assignIpv4(input), {
        onFailure: (failure) =>
          reviseAfterRefusal(log, failure, { vSwitchId: input.vSwitchId, requested: input.count }),
      });
      const ips = result?.ips ?? [];
      if (ips.length > 0 && input.vSwitchId !== undefined && !deps.vSwitches.unblock(input.vSwitchId)) {
        deps.vSwitches.took(input.vSwitchId, ips.length);
      }
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
     * Assigns `count` (1–10) IPv4 /28 prefixes with a ClientToken (AssignPrivateIpAddresses with Ipv4PrefixCount);
     * an exhausted vSwitch is blocked for a TTL, as for addresses.
     */
    async assignIpv4Prefixes(input: { eniId: string; vSwitchId?: string; count: number; clientToken: string }) {
      const log = logFor({ eniId: input.eniId });
      const result = await run(log, () => deps.ecs.assignIpv4Prefixes(input), {
        onFailure: (failure) => {
          blockExhausted(failure, input.vSwitchId);
        },
      });
      const prefixes = result?.prefixes ?? [];
      if (prefixes.length > 0 && input.vSwitchId !== undefined && !deps.vSwitches.unblock(input.vSwitchId)) {
        deps.vSwitches.took(input.vSwitchId, IPV4_PREFIX_SIZE * prefixes.length);
      }
      log.info({ requestId: result?.requestId, count: prefixes.length }, 'Assigned IPv4 prefixes');
      return { prefixes };
    },

    /** Assigns `count` (1–10) IPv6 /80 prefixes with a ClientToken (AssignIpv6Addresses with Ipv6PrefixCount). */
    async assignIpv6Prefixes(input: { eniId: string; vSwitchId?: string; count: number; clientToken: string }) {
      const log = logFor({ eniId: input.eniId });
      const result = await run(log, () => deps.ecs.assignIpv6Prefixes(input), {
        onFailure: (failure) => {
          blockExhausted(failure, input.vSwitchId);
        },
      });
      const prefixes = result?.prefixes ?? [];
      if (prefixes.length > 0 && input.vSwitchId !== undefined) deps.vSwitches.unblock(input.vSwitchId);
      log.info({ requestId: result?.requestId, count: prefixes.length }, 'Assigned IPv6 prefixes');
      return { prefixes };
    },

    /** Unassigns IPv4 prefixes (at most 10); prefixes or ENIs already gone count as done. */
    async unassignIpv4Prefixes(input: { eniId: string; prefixes: string[] }): Promise<void> {
      const log = logFor({ eniId: input.eniId });
      if (input.prefixes.length === 0) return;
      await run(log, () => deps.ecs.unassignIpv4Prefixes(input), {
        accept: ALREADY_DONE_CODES.UnassignPrivateIpAddresses ?? [],
      });
      log.info({ count: input.prefixes.length }, 'Unassigned IPv4 prefixes');
    },

    /** Unassigns IPv6 prefixes (at most 10); prefixes or ENIs already gone count as done. */
    async unassignIpv6Prefixes(input: { eniId: string; prefixes: string[] }): Promise<void> {
      const log = logFor({ eniId: input.eniId });
      if (input.prefixes.length === 0) return;
      await run(log, () => deps.ecs.unassignIpv6Prefixes(input), {
        accept: ALREADY_DONE_CODES.UnassignIpv6Addresses ?? [],
      });
      log.info({ count: input.prefixes.length }, 'Unassigned IPv6 prefixes');
    },

    /**
     * Adoption: tags ENIs of a node with this cluster's id and the node's name (`TagResources`, 50 ids a call), so
     * the RAM policy lets this cluster change them. Which ENIs is the workflow's decision (`enisToAdopt`): here only
     * the call. Re-tagging with the same values is harmless, so a retry is safe.
     */
    async adoptEnis(input: { eniIds: string[]; clusterId: string; nodeName: string }): Promise<void> {
      const eniIds = [...new Set(input.eniIds)].sort();
      const tags = adoptionTags({ clusterId: input.clusterId, nodeName: input.nodeName });
      for (let start = 0; start < eniIds.length; start += TAG_RESOURCES_MAX_IDS) {
        const batch = eniIds.slice(start, start + TAG_RESOURCES_MAX_IDS);
        const log = logFor({ eniId: batch.join(',') });
        const result = await run(log, () => deps.ecs.tagEnis({ eniIds: batch, tags }));
        log.info({ requestId: result?.requestId, tags }, 'Adopted ENIs: tagged for this cluster');
      }
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

/** ENIs in id order (code-unit order, as the cloud's ids compare), so lists are stable from call to call. */
function byEniId(a: CloudEni, b: CloudEni): number {
  return a.eniId < b.eniId ? -1 : a.eniId > b.eniId ? 1 : 0;
}
