import { ApplicationFailure } from '@temporalio/common';

import type { CloudEni, CreateEniRequest } from '../../ipam/index.js';
import { adoptionTags, ENIFLOW_CREATOR_TAG, IPV4_PREFIX_SIZE } from '../../ipam/index.js';
import { AttachPollSchedule } from './attach-polls.js';
import { ecsApplicationFailure } from './ecs-application-failure.js';
import { failureOf } from './ecs-call-runner.js';
import type { EcsContext } from './ecs-context.js';
import { ALREADY_DONE_CODES } from './ecs-operations.js';
import { createWaitEniStatus } from './wait-eni-status.js';

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

/** The ENI's lifecycle: create, attach, wait for a status, detach, delete, and adoption's tagging. */
export function createEniActivities(ctx: EcsContext) {
  const { ecs, run, logFor, vSwitchRule } = ctx;
  const pollMs = ctx.deps.eniPollIntervalMs ?? 3_000;
  // Learned by this worker process from the attaches it waits for (see attach-polls.ts).
  const attachPolls = new AttachPollSchedule(pollMs);
  const cloudOutcomes = ctx.deps.cloudOutcomes;

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
          ecs.createEni({
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
          // An ask with IPv4 prefixes is not sized by the vSwitch's count: its refusal blocks, as Terway's does.
          onFailure: (failure) =>
            vSwitchRule.refused(log, failure, {
              vSwitchId: input.vSwitchId,
              ...(prefixAddresses > 0 ? {} : { sizedIpv4: input.ipv4Count }),
            }),
        },
      );
      if (result === undefined) throw ApplicationFailure.nonRetryable('create returned nothing', 'EcsUnknown');
      vSwitchRule.granted(input.vSwitchId, input.ipv4Count + prefixAddresses);
      log.info({ eniId: result.eni.eniId, requestId: result.requestId }, 'Created ENI');
      return result;
    },

    /** Attaches an ENI; an ENI already attaching or attached to this instance counts as done. */
    async attachEni(input: { eniId: string; instanceId: string }): Promise<void> {
      const log = logFor({ eniId: input.eniId, instanceId: input.instanceId });
      try {
        const result = await ecs.attachEni(input);
        // Its answer's time, not the send's: a client-side limiter may hold the call, and an early describe is wasted.
        attachPolls.attachSent(input.eniId, Date.now());
        cloudOutcomes?.succeeded('attachEni');
        log.info({ requestId: result.requestId }, 'Attach requested');
      } catch (error) {
        const failure = failureOf(error);
        if (failure !== undefined) cloudOutcomes?.failed('attachEni', failure);
        if (failure?.type === 'EcsInvalidState') {
          const [eni] = await ecs.describeEnis({ eniIds: [input.eniId] });
          if (eni !== undefined && (eni.status === 'Attaching' || eni.status === 'InUse')) return;
        }
        if (failure === undefined) throw error;
        throw ecsApplicationFailure(failure);
      }
    },

    waitEniStatus: createWaitEniStatus({ ecs, run, logFor, pollMs, attachPolls }),

    /** Detaches an ENI; one that is gone or already detached counts as done. */
    async detachEni(input: { eniId: string; instanceId: string }): Promise<void> {
      const log = logFor({ eniId: input.eniId, instanceId: input.instanceId });
      try {
        const result = await ecs.detachEni(input);
        log.info({ requestId: result.requestId }, 'Detach requested');
      } catch (error) {
        const failure = failureOf(error);
        if (failure === undefined) throw error;
        // Gone, or its instance is: either way the ENI is not attached there.
        if (failure.type === 'EcsNotFound' || failure.type === 'EcsInstanceNotFound') return;
        if (failure.type === 'EcsInvalidState') {
          const [eni] = await ecs.describeEnis({ eniIds: [input.eniId] });
          if (eni === undefined || eni.status === 'Available' || eni.status === 'Detaching') return;
        }
        throw ecsApplicationFailure(failure);
      }
    },

    /** Deletes a detached ENI; one that is already gone counts as done. */
    async deleteEni(input: { eniId: string }): Promise<void> {
      const log = logFor({ eniId: input.eniId });
      await run(log, () => ecs.deleteEni(input), { accept: ALREADY_DONE_CODES.DeleteNetworkInterface ?? [] });
      log.info('Deleted ENI');
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
        const result = await run(log, () => ecs.tagEnis({ eniIds: batch, tags }));
        log.info({ requestId: result?.requestId, tags }, 'Adopted ENIs: tagged for this cluster');
      }
    },
  };
}
