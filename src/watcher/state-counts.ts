import { IPAM_STATES } from '../workflows/messages.js';
import type { IpamState } from '../workflows/messages.js';

/**
 * The order in which states are counted: the one nearly every node is in first, so a healthy cluster's poll stops
 * after two counts.
 */
const COUNT_ORDER: readonly IpamState[] = ['Ready', ...IPAM_STATES.filter((state) => state !== 'Ready')];

/**
 * Node workflows by IPAM state, from visibility counts: the total, then one state after another until the states
 * counted account for the total (the rest are 0), and `Unknown` for what no state accounts for (a workflow that has
 * not published its state yet). `count(undefined)` counts every node workflow, `count(state)` those in the state.
 *
 * Each count is a `CountWorkflowExecutions` call, and a server limits them per namespace
 * (`frontend.namespaceRPS.visibility`, 10/s with a burst of 10 by default; docs/deploy.md); the SQL visibility stores
 * group counts by `ExecutionStatus` only, so one grouped count by `IpamState` is not possible. Stopping early keeps a
 * poll at 2 calls in a healthy cluster and at most 1 + the number of states. The counts are not one snapshot: a node
 * that changes state between two counts may be missed or counted twice until the next poll.
 */
export async function countNodesByState(
  count: (state?: IpamState) => Promise<number>,
): Promise<Record<string, number>> {
  const total = await count();
  // Keys in IPAM_STATES order, as the metric's series are listed.
  const counts: Record<string, number> = Object.fromEntries(IPAM_STATES.map((state) => [state, 0]));
  let known = 0;
  for (const state of COUNT_ORDER) {
    if (known >= total) break;
    const inState = await count(state);
    counts[state] = inState;
    known += inState;
  }
  counts['Unknown'] = Math.max(0, total - known);
  return counts;
}
