/**
 * How many address pairs beyond the demand a plan's creates and assigns may carry, so that the pods arriving next
 * find their addresses without a call: a create carries up to 49 at no extra cost and an assign up to ten per call,
 * while each later top-up is one call (and, for the pods it serves, one pass).
 * - A node's first ENI opened for waiting pods (no usable normal ENI yet) takes its whole quota (`fillFirst`): a node
 *   whose first pods wait is being filled (a scale-up, a cold pool), and the pods scheduled while the ENI attaches
 *   would otherwise cost a top-up assign on it, or a second create. Terway creates with at most 10 and assigns the
 *   rest ten per reconcile. The price when no more pods come: the idle addresses above `maxPoolSize` are released one
 *   pool period later (the usual shrink, one unassign per ten).
 * - Otherwise up to `maxPoolSize` idle once the demand is served (`idle`): the pool keeps that many idle anyway, so
 *   this headroom never costs an unassign. An assign carries it only as far as it adds no call.
 * With no pod waiting (a `minPoolSize` top-up), or while warm-up's rest is more than the pods (its target is the
 * user's own sizing), the plan carries exactly what the pool asks for.
 */
export interface CreateHeadroom {
  /** The plan's first new normal ENI is created at its quota. */
  fillFirst: boolean;
  /** Pairs the plan may add beyond the demand, on creates and assigns, used up as they take them. */
  idle: number;
}

export function planHeadroom(input: {
  /** Whether the node has a usable (InUse, schedulable) ENI of the normal pool. */
  hasNormalEni: boolean;
  /** Idle pairs on those ENIs, after the local pool served what it could. */
  idleNow: number;
  /** Pods waiting for an address of the normal pool. */
  waiting: number;
  /** The plan's normal demand (pairs): the waiting pods, the `minPoolSize` top-up, or warm-up's rest. */
  demand: number;
  minPoolSize: number;
  maxPoolSize: number;
  /** Addresses warm-up still asks for (0 once complete). */
  warmUpDemand: number;
}): CreateHeadroom {
  const { waiting, idleNow } = input;
  const minPoolTopUp = Math.max(0, input.minPoolSize - idleNow);
  if (waiting === 0 || input.warmUpDemand > waiting + minPoolTopUp) return { fillFirst: false, idle: 0 };
  // What stays idle once the waiting pods have theirs: today's idle plus what the demand adds beyond those pods.
  const idleAfter = idleNow + Math.max(0, input.demand - waiting);
  return { fillFirst: !input.hasNormalEni, idle: Math.max(0, input.maxPoolSize - idleAfter) };
}

/** The number of assign calls of at most `perCall` addresses that `counts` takes (each family on its own). */
export function assignCallCount(counts: { ipv4: number; ipv6: number }, perCall: number): number {
  return Math.ceil(Math.max(0, counts.ipv4) / perCall) + Math.ceil(Math.max(0, counts.ipv6) / perCall);
}
