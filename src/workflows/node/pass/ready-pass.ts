import { podIpRequestsFromPods } from '../../../ipam/index.js';
import type { NetworkInterfaces, ReadyNodeCr, ReadyNodeSpec } from '../../../ipam/index.js';
import type { NodeSnapshot } from '../../../activities/index.js';
import { readCloudSide } from './cloud-side.js';
import { finish } from './finish.js';
import type { PassContext } from './context.js';
import { prefixRound } from './prefix-round.js';
import { singleIpRound } from './single-ip-round.js';

/**
 * A ready node's pass: read the cloud side (vSwitches, the OpenAPI sync when due), run the round of the node's mode
 * (`singleIpRound`, `prefixRound`: plan → the allocate step), then `finish`: fold → write → schedule → settle the
 * ledger → tell. Returns whether the pass failed.
 */
export async function readyPass(
  ctx: PassContext,
  input: {
    node: ReadyNodeCr;
    snapshot: NodeSnapshot;
    /** The spec with the node's recorded mode (see `withPrefixMode`). */
    spec: ReadyNodeSpec;
    prefixMode: boolean;
    instanceId: string;
    /** ENIs to start from (the CR's, or those of a status write that did not land). */
    enis: NetworkInterfaces;
    nowMs: number;
  },
): Promise<boolean> {
  const { node, snapshot, spec, nowMs } = input;
  const gates = ctx.degradation.gates();
  const demand = podIpRequestsFromPods({ pods: snapshot.pods, eniSpec: spec.eni });
  const cloud = await readCloudSide(ctx, {
    node,
    spec,
    enis: input.enis,
    instanceId: input.instanceId,
    providerId: snapshot.coreNode?.providerId,
    podCount: demand.requests.length,
    nowMs,
    gates,
  });
  // Made once the cloud side is read: it holds releases back as the degradation is then.
  const operator = ctx.operator(input.instanceId);
  const round = input.prefixMode
    ? await prefixRound(ctx, { node, spec, cloud, operator })
    : await singleIpRound(ctx, { node, snapshot, spec, demand, cloud, nowMs, gates, operator });
  return finish(ctx, { spec, cloud, round });
}
