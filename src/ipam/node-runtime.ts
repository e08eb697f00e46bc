import { parseRfc3339 } from './rfc3339.js';

/** The CNI states Terway's daemon records per pod in its `NodeRuntime` CR. */
export type CniStatus = 'initial' | 'deleted';

/**
 * What the daemon's `NodeRuntime` CR (cluster-scoped, named after the node) says, reduced to what the release of
 * a gone pod's IP needs: the final CNI status per pod UID. Absent when the daemon writes no NodeRuntime (Terway
 * older than v1.11.3): then an IP is freed as soon as its pod is gone, as before.
 */
export interface NodeRuntimeView {
  cniStatusByPodUid: Record<string, CniStatus>;
}

/**
 * The final CNI status of one pod from its `status` map (`{ initial: { lastUpdateTime }, deleted: { … } }`): the
 * entry written last wins, `deleted` on a tie (a CNI DEL recorded in the same second as the ADD is still a DEL).
 */
export function finalCniStatus(raw: unknown): CniStatus | undefined {
  if (raw === null || typeof raw !== 'object') return undefined;
  const statuses = raw as Record<string, unknown>;
  let best: { status: CniStatus; at: number } | undefined;
  for (const status of ['initial', 'deleted'] as const) {
    const info = statuses[status];
    if (info === undefined || info === null) continue;
    const text = typeof info === 'object' ? (info as Record<string, unknown>)['lastUpdateTime'] : undefined;
    const at = typeof text === 'string' ? (parseRfc3339(text) ?? 0) : 0;
    if (best === undefined || at >= best.at) best = { status, at };
  }
  return best?.status;
}
