import { isOpenApiSyncDue, syncTimesOf } from '../../../ipam/index.js';
import type { DegradationGates, NetworkInterfaces, NodeCr, ReadyNodeSpec, VSwitchInfo } from '../../../ipam/index.js';
import { readVSwitches } from '../act/io.js';
import { syncEnisIfDue } from '../act/openapi-sync.js';
import type { PassContext } from './context.js';

/** The cloud side of a ready node as every round (single-IP, prefix) starts from it. */
export interface CloudSide {
  enis: NetworkInterfaces;
  times: { lastSyncMs?: number; nextSyncMs?: number };
  vSwitches: Record<string, VSwitchInfo>;
  /** Whether this pass ran the OpenAPI sync (its unlisted-ENI decisions are then told). */
  synced: boolean;
  /** A due sync the degradation held back (work to name in its Event). */
  syncHeldBack: boolean;
}

/**
 * The head of every ready pass: the node's vSwitches, then the OpenAPI sync when it is due. Under degradation l0
 * no vSwitch is read; with the sync held back it stays due (needResync, the CR's times) and runs once lifted.
 */
export async function readCloudSide(
  ctx: PassContext,
  input: {
    node: NodeCr;
    spec: ReadyNodeSpec;
    enis: NetworkInterfaces;
    instanceId: string;
    /** The core Node's `spec.providerID` (see `enisToAdopt`). */
    providerId: string | undefined;
    podCount: number;
    nowMs: number;
    gates: Pick<DegradationGates, 'cloud' | 'sync'>;
  },
): Promise<CloudSide> {
  const { spec, gates } = input;
  const { state, schedule, settings } = ctx;
  const status = input.node.status;
  // The CR shows the sync time and ENI count of the workflow's own last status: nothing has rewritten it since.
  const own = state.ownStatus;
  const crIsOwnWrite =
    own !== undefined &&
    own.lastSyncOpenAPITime === status?.lastSyncOpenAPITime &&
    own.enis === Object.keys(status.networkInterfaces ?? {}).length;
  let { enis } = input;
  // A refresh asks the cloud about the vSwitches again, lifting blocks it no longer backs.
  const refresh = ctx.vSwitchRefreshRequested || state.needResync;
  const vSwitches = gates.cloud ? await readVSwitches({ spec, enis, refresh, peek: ctx.reader.vSwitchPeek }) : {};
  if (gates.cloud) ctx.vSwitchRefreshRequested = false;
  const syncHeldBack =
    !gates.sync &&
    isOpenApiSyncDue({
      needResync: state.needResync || state.firstSyncDue === true,
      lastSyncMs: syncTimesOf(status).lastSyncMs,
      nextSyncMs: schedule.nextSyncMs ?? syncTimesOf(status).nextSyncMs,
      podCount: input.podCount,
      eniCount: Object.keys(enis).length,
      nowMs: input.nowMs,
      crIsOwnWrite,
    });
  const sync = !gates.sync
    ? { enis, times: syncTimesOf(status), synced: false }
    : await syncEnisIfDue({
        enis,
        status,
        runNextSyncMs: schedule.nextSyncMs,
        podCount: input.podCount,
        crIsOwnWrite,
        instanceId: input.instanceId,
        providerId: input.providerId,
        clusterId: settings.clusterId,
        nodeName: input.node.metadata.name,
        spec,
        vSwitches,
        state,
        record: ctx.record,
        periodMs: settings.openApiSyncPeriodMs,
      });
  if (sync.synced) ctx.resyncServed();
  enis = sync.enis;
  schedule.nextSyncMs = sync.times.nextSyncMs;
  return { enis, times: sync.times, vSwitches, synced: sync.synced, syncHeldBack };
}
