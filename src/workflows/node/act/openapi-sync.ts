import { log } from '@temporalio/workflow';

import {
  enisToAdopt,
  formatRfc3339,
  isOpenApiSyncDue,
  mergeOpenApiEnis,
  providerIdNamesInstance,
  resolveUnlistedEnis,
  syncTimesOf,
} from '../../../ipam/index.js';
import type {
  NetworkInterfaces,
  NodeStatus,
  ReadyNodeSpec,
  UnlistedEniReport,
  VSwitchInfo,
} from '../../../ipam/index.js';
import { adopt, ecsRead } from './activities.js';
import type { CarriedState } from '../memory/carried-state.js';
import type { PassRecord } from '../memory/pass-record.js';

/**
 * Tags the ENIs {@link enisToAdopt} picks from the listing with this cluster's id (one call): attached to this
 * node's instance, listed in its CR, carrying no cluster tag. Best effort: a refusal (a RAM policy without
 * `ecs:TagResources`) is logged and tried again at the next sync; the pass goes on. Returns the calls made.
 */
async function adoptListedEnis(input: {
  remote: Parameters<typeof enisToAdopt>[0]['remote'];
  enis: NetworkInterfaces;
  instanceId: string;
  providerId: string | undefined;
  clusterId: string;
  nodeName: string;
  spec: ReadyNodeSpec;
}): Promise<number> {
  if (!providerIdNamesInstance({ providerId: input.providerId, instanceId: input.instanceId })) {
    log.info("no ENI adopted: the core Node's spec.providerID does not name the CR's instance", {
      instanceId: input.instanceId,
      providerId: input.providerId ?? '',
    });
    return 0;
  }
  const eniIds = enisToAdopt({
    remote: input.remote,
    crEnis: input.enis,
    instanceId: input.instanceId,
    providerId: input.providerId,
    clusterId: input.clusterId,
    eniSpec: input.spec.eni,
  });
  if (eniIds.length === 0) return 0;
  try {
    await adopt.adoptEnis({ eniIds, clusterId: input.clusterId, nodeName: input.nodeName });
    return 1;
  } catch (error) {
    log.warn('adopting ENIs (tagging them for this cluster) failed; tried again at the next OpenAPI sync', {
      eniIds,
      error: error instanceof Error ? error.message : String(error),
    });
    return 0;
  }
}

/**
 * Lists the instance's ENIs from the cloud and merges them into the node's (the reference's OpenAPI sync). ENIs
 * the CR holds that the listing left out (hidden by `tagFilter`, attached elsewhere, gone) are looked up by id and
 * {@link resolveUnlistedEnis} decides: nothing a pod uses is ever detached or deleted. A failed read fails the pass.
 * ENIs of this node without a cluster tag are adopted (see {@link adoptListedEnis}) before the pass changes them.
 */
export async function syncWithOpenApi(input: {
  enis: NetworkInterfaces;
  instanceId: string;
  /** The core Node's `spec.providerID`, adoption's evidence that the CR's instance is this node's. */
  providerId: string | undefined;
  clusterId: string;
  nodeName: string;
  spec: ReadyNodeSpec;
  vSwitches: Record<string, VSwitchInfo>;
}): Promise<{ enis: NetworkInterfaces; unlisted: UnlistedEniReport[]; calls: number }> {
  const { spec } = input;
  const remote = await ecsRead.describeNodeEnis({
    instanceId: input.instanceId,
    ...(spec.eni.tagFilter === undefined ? {} : { tagFilter: spec.eni.tagFilter }),
  });
  const adoptCalls = await adoptListedEnis({ ...input, remote });
  const merged = mergeOpenApiEnis({ current: input.enis, remote, vSwitchCidrs: input.vSwitches, eniSpec: spec.eni });
  if (merged.unlisted.length === 0) return { enis: merged.enis, unlisted: [], calls: 1 + adoptCalls };
  const cloud = await ecsRead.describeEnisById({ eniIds: merged.unlisted });
  const resolved = resolveUnlistedEnis({
    enis: merged.enis,
    unlisted: merged.unlisted,
    cloud,
    instanceId: input.instanceId,
    eniSpec: spec.eni,
    nowRfc3339: formatRfc3339(Date.now()),
    clusterId: input.clusterId,
  });
  return { enis: resolved.enis, unlisted: resolved.reports, calls: 2 + adoptCalls };
}

/**
 * The OpenAPI sync when it is due (see `isOpenApiSyncDue`), and the sync times the CR records after it: the next
 * one is drawn uniformly in [period, 2·period) so the nodes of a cluster spread out. The resync it served is the
 * caller's to mark done (`synced`).
 */
export async function syncEnisIfDue(input: {
  enis: NetworkInterfaces;
  status: NodeStatus | undefined;
  /** The due time this run set (a new run takes the CR's). */
  runNextSyncMs: number | undefined;
  podCount: number;
  /** The CR read is the workflow's own last status write (see `isOpenApiSyncDue`). */
  crIsOwnWrite: boolean;
  instanceId: string;
  /** The core Node's `spec.providerID`, adoption's evidence that the CR's instance is this node's. */
  providerId: string | undefined;
  clusterId: string;
  nodeName: string;
  spec: ReadyNodeSpec;
  vSwitches: Record<string, VSwitchInfo>;
  state: CarriedState;
  record: PassRecord;
  periodMs: number;
}): Promise<{ enis: NetworkInterfaces; times: { lastSyncMs?: number; nextSyncMs?: number }; synced: boolean }> {
  const { state } = input;
  const now = Date.now();
  const times = syncTimesOf(input.status);
  const due = isOpenApiSyncDue({
    needResync: state.needResync || state.firstSyncDue === true,
    lastSyncMs: times.lastSyncMs,
    nextSyncMs: input.runNextSyncMs ?? times.nextSyncMs,
    podCount: input.podCount,
    eniCount: Object.keys(input.enis).length,
    nowMs: now,
    crIsOwnWrite: input.crIsOwnWrite,
  });
  if (!due) return { enis: input.enis, times, synced: false };
  const synced = await syncWithOpenApi(input);
  input.record.succeededCalls += synced.calls;
  if (synced.unlisted.length > 0) state.unlistedEnis = synced.unlisted;
  else delete state.unlistedEnis;
  delete state.firstSyncDue;
  return {
    enis: synced.enis,
    times: { lastSyncMs: now, nextSyncMs: now + input.periodMs * (1 + Math.random()) },
    synced: true,
  };
}
