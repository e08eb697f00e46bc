import { parseRfc3339 } from './rfc3339.js';
import type { NodeStatus } from './node-model.js';

/** The OpenAPI sync times the CR records. */
export function syncTimesOf(status: NodeStatus | undefined): { lastSyncMs?: number; nextSyncMs?: number } {
  const times: { lastSyncMs?: number; nextSyncMs?: number } = {};
  const last = status?.lastSyncOpenAPITime === undefined ? undefined : parseRfc3339(status.lastSyncOpenAPITime);
  const next = status?.nextSyncOpenAPITime === undefined ? undefined : parseRfc3339(status.nextSyncOpenAPITime);
  if (last !== undefined) times.lastSyncMs = last;
  if (next !== undefined) times.nextSyncMs = next;
  return times;
}

/**
 * Whether a pass lists the instance's ENIs from the cloud: on a forced resync (signal, quota, a lost write), the
 * first sync, a node with pods but no ENIs, or once the next sync is due. A new run (restart, continue-as-new) takes
 * the due time the CR records rather than syncing at once.
 *
 * "Pods but no ENIs" is the reference's guard against a CR that lost its ENIs. It is skipped when the CR is the
 * status this workflow wrote itself after its last sync (`crIsOwnWrite`): nothing else has touched it, so its empty
 * ENI list is the cloud as last listed plus what the workflow did since — a cold node's first pods (pool minimum 0)
 * then go straight to the create, one DescribeNetworkInterfaces and a round trip sooner.
 */
export function isOpenApiSyncDue(input: {
  needResync: boolean;
  lastSyncMs?: number | undefined;
  /** The due time this run set, else the CR's. */
  nextSyncMs?: number | undefined;
  podCount: number;
  eniCount: number;
  nowMs: number;
  /** The CR read shows the status this workflow last wrote (its sync time and ENI count). */
  crIsOwnWrite?: boolean;
}): boolean {
  if (input.needResync || input.lastSyncMs === undefined) return true;
  if (input.podCount > 0 && input.eniCount === 0 && input.crIsOwnWrite !== true) return true;
  return input.nextSyncMs === undefined || input.nowMs >= input.nextSyncMs;
}
