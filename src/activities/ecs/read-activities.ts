import type { CloudEni, VSwitchInfo } from '../../ipam/index.js';
import {
  ENIFLOW_CLUSTER_TAG_KEY,
  ENIFLOW_CREATOR_TAG,
  ENIFLOW_INTENT_TAG,
  ENIFLOW_NODE_TAG,
} from '../../ipam/index.js';
import type { EcsContext } from './ecs-context.js';

/** The ECS reads: ENIs by instance, by tag, by intent and by id, and the node's vSwitches through the cache. */
export function createReadActivities(ctx: EcsContext) {
  const { ecs, run, logFor } = ctx;
  const { vSwitches } = ctx.deps;

  return {
    /** The ENIs attached to the node's instance (its OpenAPI view), filtered by the daemon's tag filter. */
    async describeNodeEnis(input: { instanceId: string; tagFilter?: Record<string, string> }): Promise<CloudEni[]> {
      const log = logFor({ instanceId: input.instanceId });
      const enis = await run(log, () =>
        ecs.describeEnis({
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
        ecs.describeEnis({ tags, ...(input.vpcId === undefined ? {} : { vpcId: input.vpcId }) }),
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
        const enis = await run(log, () => ecs.describeEnis({ tags: { [ENIFLOW_INTENT_TAG]: clientToken } }));
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
      const enis = await run(log, () => ecs.describeEnis({ eniIds: [...input.eniIds].sort() }));
      return (enis ?? []).sort(byEniId);
    },

    /**
     * The node's candidate vSwitches, through the worker's cache; blocked ones report 0 free addresses and how long
     * the block lasts. `refresh` (a node's resync) asks the cloud again, lifting blocks the cloud no longer backs.
     */
    async describeVSwitches(input: { vSwitchIds: string[]; refresh?: boolean }): Promise<Record<string, VSwitchInfo>> {
      const log = logFor({});
      if (input.refresh === true) {
        const lifted = vSwitches.refresh(input.vSwitchIds);
        if (lifted.length > 0) log.info({ vSwitchIds: lifted }, 'Resync: vSwitch blocks lifted, asking the cloud');
      }
      const found: Record<string, VSwitchInfo> = {};
      for (const vSwitchId of [...new Set(input.vSwitchIds)].sort()) {
        const info = await run(log, () => vSwitches.get(vSwitchId, () => ecs.describeVSwitch({ vSwitchId })));
        if (info !== undefined) found[vSwitchId] = info;
      }
      return found;
    },
  };
}

/** ENIs in id order (code-unit order, as the cloud's ids compare), so lists are stable from call to call. */
function byEniId(a: CloudEni, b: CloudEni): number {
  return a.eniId < b.eniId ? -1 : a.eniId > b.eniId ? 1 : 0;
}
