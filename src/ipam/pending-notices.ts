import { pendingCause, pendingPodNotice } from './operation-failures.js';
import type { FailureLedger } from './operation-failures.js';
import type { PendingReason } from './pending-reasons.js';

/**
 * The most pods of one node told by an Event of their own. `kubectl describe pod` of any of them shows why it
 * waits; past this many, one Event on the node counts them all by cause, so a node with 10,000 waiting pods writes
 * one batch of Events (and one activity's worth of history) per repeat window, not 10,000.
 */
export const POD_EVENT_CAP = 50;

/** A pod due an Event: it has waited past the threshold since `sinceMs`, for `reason`. */
export interface DuePod {
  podId: string;
  sinceMs: number;
  reason: PendingReason;
}

/** The Events a pass owes its waiting pods: one per told pod, and the node's summary when some are not told. */
export interface PendingNotices {
  pods: { podId: string; message: string; series: string }[];
  summary?: { message: string; series: string };
}

const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Causes that say the pod's IP is on its way: no reason to warn in the pass that recovered. */
const IN_PROGRESS: readonly PendingReason[] = ['waitingForAttach', 'allocating'];

/**
 * The Events about pods waiting for an IP: each of the {@link POD_EVENT_CAP} (or `cap`) that have waited longest
 * (then in pod order) gets its own, in pod order; when more are due, one Event on the node counts every due pod by
 * cause (most first), so nobody is left unexplained. A summary series names the set of causes (sorted), not the counts or their rank: its
 * repeats update one Event. O(N log N) for N due pods.
 */
export function pendingNotices(input: {
  due: readonly DuePod[];
  failing: FailureLedger;
  workflowId: string;
  cap?: number;
  /**
   * Set in the pass that ended a run of failing calls: pods whose wait is now only work in progress (an ENI being
   * created and attached, allocation under way) are not told (the `Recovered` Event counts them, and the next pass
   * serves them or tells them); a cause that outlasts the failure (capacity, an unready node) is told as ever.
   */
  recovering?: boolean;
}): PendingNotices {
  const cap = Math.max(0, input.cap ?? POD_EVENT_CAP);
  const due = input.recovering === true ? input.due.filter((pod) => !IN_PROGRESS.includes(pod.reason)) : input.due;
  const longest = [...due].sort((a, b) => a.sinceMs - b.sinceMs || byText(a.podId, b.podId));
  const told = longest.slice(0, cap).sort((a, b) => byText(a.podId, b.podId));
  const pods = told.map((pod) => ({
    podId: pod.podId,
    ...pendingPodNotice({ reason: pod.reason, failing: input.failing, workflowId: input.workflowId }),
  }));
  if (longest.length <= cap) return { pods };
  const causes = new Map<string, { cause: string; count: number }>();
  for (const reason of new Set(longest.map((pod) => pod.reason))) {
    const { cause, series } = pendingCause({ reason, failing: input.failing });
    const count = longest.filter((pod) => pod.reason === reason).length;
    const known = causes.get(series);
    causes.set(series, { cause, count: (known?.count ?? 0) + count });
  }
  const ranked = [...causes.entries()].sort(([a, x], [b, y]) => y.count - x.count || byText(a, b));
  const why = ranked.map(([, { cause, count }]) => `${count} because ${cause}`).join('; ');
  return {
    pods,
    summary: {
      message:
        `${longest.length} pods have waited for an IP: ${why}. The ${told.length} waiting longest have an Event ` +
        `each; the other ${longest.length - told.length} are counted here (workflow ${input.workflowId})`,
      // In key order, not count order: causes that swap rank still update the same Event.
      series: `pendingPods:${[...causes.keys()].sort(byText).join(',')}`,
    },
  };
}
