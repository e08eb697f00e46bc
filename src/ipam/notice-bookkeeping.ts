/**
 * What a node's notices remember between passes (carried state): when each Event was last written, so repeats are
 * held back, and since when each pod has waited for its IP.
 */

/** The de-duplication key of an Event: the object, the reason and the series (or message). */
export function eventKey(input: { podId?: string | undefined; reason: string; series: string }): string {
  return `${input.podId === undefined ? '' : `${input.podId}:`}${input.reason}:${input.series}`;
}

/**
 * The most Event keys the record keeps. Per-pod Events are capped per node (see `POD_EVENT_CAP`), so a record
 * this large means many series at once; past it the oldest are forgotten (a repeat of one of them may then come
 * before its window ends), so a node's carried state stays bounded however many Events it writes.
 */
export const MAX_RECENT_EVENTS = 1_000;

const byKey = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Which of `keys` may be written now (at most once per `repeatMs` per key; a key twice in `keys` is written once),
 * and the record after writing them: entries past the window dropped, at most {@link MAX_RECENT_EVENTS} (the
 * newest), in key order, since the record is carried across continue-as-new. One pass over the record and the
 * keys and one sort: O((R + N) log(R + N)) for R recent entries and N keys.
 */
export function admitEvents(input: {
  recent: Readonly<Record<string, number>>;
  keys: readonly string[];
  nowMs: number;
  repeatMs: number;
}): { admitted: boolean[]; recent: Record<string, number> } {
  const times = new Map<string, number>();
  for (const [key, at] of Object.entries(input.recent)) {
    if (input.nowMs - at < input.repeatMs) times.set(key, at);
  }
  const admitted = input.keys.map((key) => {
    if (times.has(key)) return false;
    times.set(key, input.nowMs);
    return true;
  });
  let kept = [...times.entries()];
  if (kept.length > MAX_RECENT_EVENTS) {
    kept = kept.sort(([a, at], [b, bt]) => bt - at || byKey(a, b)).slice(0, MAX_RECENT_EVENTS);
  }
  kept.sort(([a], [b]) => byKey(a, b));
  return { admitted, recent: Object.fromEntries(kept) };
}

/** {@link admitEvents} for one key. */
export function admitEvent(input: {
  recent: Readonly<Record<string, number>>;
  key: string;
  nowMs: number;
  repeatMs: number;
}): { admitted: boolean; recent: Record<string, number> } {
  const { admitted, recent } = admitEvents({ ...input, keys: [input.key] });
  return { admitted: admitted[0] === true, recent };
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
  for (const podId of [...new Set(input.waitingPodIds)].sort(byKey)) {
    const first = input.previous[podId] ?? input.nowMs;
    since[podId] = first;
    if (input.nowMs - first >= input.eventAfterMs) due.push(podId);
  }
  return { since, due };
}
