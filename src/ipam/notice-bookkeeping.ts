/**
 * What a node's notices remember between passes (carried state): when each Event was last written, so repeats are
 * held back, and since when each pod has waited for its IP.
 */

/** The de-duplication key of an Event: the object, the reason and the series (or message). */
export function eventKey(input: { podId?: string | undefined; reason: string; series: string }): string {
  return `${input.podId === undefined ? '' : `${input.podId}:`}${input.reason}:${input.series}`;
}

/**
 * Whether an Event with `key` may be written now: at most once per `repeatMs` per key. The times kept are only
 * the recent ones, in key order, since the map is carried across continue-as-new.
 */
export function admitEvent(input: {
  recent: Readonly<Record<string, number>>;
  key: string;
  nowMs: number;
  repeatMs: number;
}): { admitted: boolean; recent: Record<string, number> } {
  const last = input.recent[input.key];
  if (last !== undefined && input.nowMs - last < input.repeatMs)
    return { admitted: false, recent: { ...input.recent } };
  const kept: [string, number][] = Object.entries(input.recent).filter(([, at]) => input.nowMs - at < input.repeatMs);
  kept.push([input.key, input.nowMs]);
  kept.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return { admitted: true, recent: Object.fromEntries(kept) };
}

/**
 * Since when each waiting pod has waited (pods no longer waiting are forgotten), and which of them have waited
 * at least `eventAfterMs`, in pod order: those are told why.
 */
export function trackPendingPods(input: {
  previous: Readonly<Record<string, number>>;
  waitingPodIds: readonly string[];
  nowMs: number;
  eventAfterMs: number;
}): { since: Record<string, number>; due: string[] } {
  const since: Record<string, number> = {};
  const due: string[] = [];
  for (const podId of [...new Set(input.waitingPodIds)].sort()) {
    const first = input.previous[podId] ?? input.nowMs;
    since[podId] = first;
    if (input.nowMs - first >= input.eventAfterMs) due.push(podId);
  }
  return { since, due };
}
