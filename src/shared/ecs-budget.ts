/**
 * The cluster's ECS budget, as data every layer reads: the OpenAPI actions eniflow calls, Terway's per-minute
 * defaults, which activity calls which action, and the activity task queue of each action. Workflows schedule an ECS
 * activity on its action's queue, and every worker polls each queue with `maxTaskQueueActivitiesPerSecond` set to the
 * action's budget: the Temporal server then dispatches at most that many calls per second across all workers
 * (docs/decisions.md, "One ECS budget for the cluster").
 */

/** The ECS and VPC OpenAPI actions eniflow calls, named once (metric labels, budgets, queue names, logs). */
export const ECS_APIS = [
  'CreateNetworkInterface',
  'AttachNetworkInterface',
  'DetachNetworkInterface',
  'DeleteNetworkInterface',
  'DescribeNetworkInterfaces',
  'AssignPrivateIpAddresses',
  'UnassignPrivateIpAddresses',
  'AssignIpv6Addresses',
  'UnassignIpv6Addresses',
  'DescribeVSwitches',
  'TagResources',
] as const;

export type EcsApiName = (typeof ECS_APIS)[number];

/**
 * Calls per minute per action: Terway's controller defaults (`pkg/aliyun/client/ratelimit.go`), each action on its
 * own budget. The account's real quotas are per account, region and action; these are the best public proxy.
 */
export const DEFAULT_CALLS_PER_MINUTE: Readonly<Record<EcsApiName, number>> = {
  CreateNetworkInterface: 500,
  AttachNetworkInterface: 500,
  DetachNetworkInterface: 400,
  DeleteNetworkInterface: 500,
  DescribeNetworkInterfaces: 800,
  AssignPrivateIpAddresses: 400,
  UnassignPrivateIpAddresses: 400,
  AssignIpv6Addresses: 400,
  UnassignIpv6Addresses: 400,
  DescribeVSwitches: 300,
  // Not in Terway's map (Terway never tags an existing ENI): adoption, once per ENI taken over. The IP actions'
  // budget, so the default burst stays a quarter of the smallest queued budget.
  TagResources: 400,
};

/**
 * Keys of Terway's `rateLimit` map for actions eniflow never calls (instance limits come from the Node CR the daemon
 * writes; ENIs are read with DescribeNetworkInterfaces): accepted in an override, so a map copied from Terway's
 * config works, and ignored.
 */
export const UNUSED_TERWAY_APIS = ['DescribeInstanceTypes', 'DescribeNetworkInterfaceAttribute'] as const;

/**
 * The action each ECS activity calls: one activity task is one call of that action (the error-path describes of
 * attach and detach aside, see docs/decisions.md). A new ECS activity must be added here, or the worker refuses to
 * start (create-worker.ts checks the map against the activities it registers).
 */
export const ECS_ACTIVITY_APIS = {
  createEni: 'CreateNetworkInterface',
  attachEni: 'AttachNetworkInterface',
  waitEniStatus: 'DescribeNetworkInterfaces',
  detachEni: 'DetachNetworkInterface',
  deleteEni: 'DeleteNetworkInterface',
  describeNodeEnis: 'DescribeNetworkInterfaces',
  listEniflowEnis: 'DescribeNetworkInterfaces',
  describeEnisById: 'DescribeNetworkInterfaces',
  // One list per token (ECS tag filters must all match): several calls in one task, rare (open intents only).
  findEnisByIntent: 'DescribeNetworkInterfaces',
  assignIpv4: 'AssignPrivateIpAddresses',
  assignIpv6: 'AssignIpv6Addresses',
  unassignIpv4: 'UnassignPrivateIpAddresses',
  unassignIpv6: 'UnassignIpv6Addresses',
  // Prefixes are the same OpenAPI actions with `Ipv4PrefixCount` / `Ipv6Prefix.N`: same budgets, same queues.
  assignIpv4Prefixes: 'AssignPrivateIpAddresses',
  assignIpv6Prefixes: 'AssignIpv6Addresses',
  unassignIpv4Prefixes: 'UnassignPrivateIpAddresses',
  unassignIpv6Prefixes: 'UnassignIpv6Addresses',
  // Adoption: this cluster's tag on ENIs of a node that lack any cluster tag (see `enisToAdopt`).
  adoptEnis: 'TagResources',
} as const satisfies Record<string, EcsApiName>;

/**
 * ECS activities that run as local activities on the workflow's own worker, so not through a task queue: the
 * per-pass vSwitch read, answered by the worker's cache (a call per vSwitch per worker every 20 min, or on a resync).
 * The worker keeps a per-process token bucket at the action's budget for them.
 */
export const LOCAL_ECS_ACTIVITIES = { describeVSwitches: 'DescribeVSwitches' } as const satisfies Record<
  string,
  EcsApiName
>;

/** The actions that have a task queue: those some activity calls through one. */
export const QUEUED_ECS_APIS: readonly EcsApiName[] = ECS_APIS.filter((api) =>
  Object.values(ECS_ACTIVITY_APIS).includes(api as never),
);

/**
 * The burst the server's limiter admits on top of its rate with Temporal's defaults, measured: the limiter splits a
 * queue's rate over the queue's partitions (`matching.numTaskqueueReadPartitions`, 4 by default), each a small token
 * bucket holding `max(⌈rate per partition⌉, matching.minTaskThrottlingBurstSize)` tokens (the minimum is 1 by
 * default), and tokens saved while a partition was idle are spent at once. On our dev server (1.29.1) two workers at
 * 1/s and at 0.93/s saw up to 7 creates in one second and 59 and 61 in their busiest minute
 * (test/worker/ecs-budget.test.ts). The rate always leaves at least this much of the minute for the burst.
 */
export const SERVER_LIMITER_BURST = 10;

/** Temporal's default number of read partitions of a task queue (`matching.numTaskqueueReadPartitions`). */
export const TEMPORAL_DEFAULT_PARTITIONS = 4;

/**
 * The calls of one action the Temporal server lets through at once, by default (`ENIFLOW_ECS_BURST`): the server's
 * `matching.minTaskThrottlingBurstSize` on the ECS queues times their read partitions. Terway's per-process bucket
 * (`rate.NewLimiter(v/60, v)`) lets a whole minute's budget through at once; Temporal's limiter, left at its
 * defaults, only about 10, so a scale-out's creates wait in line at the budget's pace (80 creates for 40 cold nodes
 * took 9 s). 100 is a quarter of the smallest default budget (400 a minute): the dev server, the compose server and
 * the Helm chart's documented server settings use it, and the queue rate gives it back (see `queueRatePerSecond`).
 */
export const DEFAULT_ECS_BURST = 100;

/**
 * The server setting that gives each ECS queue a burst of `burst` calls: `matching.minTaskThrottlingBurstSize`, per
 * partition, so the burst divided by the partitions, rounded up.
 */
export function serverMinBurstSize(burst: number, partitions = TEMPORAL_DEFAULT_PARTITIONS): number {
  return Math.max(1, Math.ceil(burst / partitions));
}

/**
 * The queue rate that keeps a budget in every minute, burst included: `(budget − burst) / 60` per second, the burst
 * being at least what the server admits by default ({@link SERVER_LIMITER_BURST}). A burst larger than half the
 * budget is a configuration error (see {@link burstProblems}); for a budget too small for the default burst the rate
 * is never below half the budget (its first minute may then exceed by the burst).
 */
export function queueRatePerSecond(callsPerMinute: number, burst = SERVER_LIMITER_BURST): number {
  return Math.max(callsPerMinute - Math.max(burst, SERVER_LIMITER_BURST), callsPerMinute / 2) / 60;
}

/**
 * The actions whose budget is too small for the burst: a burst must leave at least half of each budget to the
 * steady rate (else a minute would hold more calls than the budget, or almost no calls after the burst).
 */
export function burstProblems(input: {
  burst: number;
  callsPerMinute: Readonly<Record<EcsApiName, number>>;
  source: string;
}): string[] {
  const tooSmall = QUEUED_ECS_APIS.filter((api) => input.burst > input.callsPerMinute[api] / 2);
  if (tooSmall.length === 0) return [];
  const budgets = tooSmall.map((api) => `${api} ${input.callsPerMinute[api]}`).join(', ');
  return [
    `${input.source} ${input.burst} is more than half the budget of ${budgets} per minute: lower ${input.source} ` +
      "(and the Temporal server's matching.minTaskThrottlingBurstSize on those queues) or raise the budget",
  ];
}

/** The activity task queue of an action, next to the workflows' queue (`eniflow-ecs-CreateNetworkInterface`). */
export function ecsTaskQueue(taskQueue: string, api: EcsApiName): string {
  return `${taskQueue}-ecs-${api}`;
}

/** The queue an ECS activity is scheduled on, or undefined for any other activity (Kubernetes, local reads). */
export function ecsActivityTaskQueue(taskQueue: string, activityType: string): string | undefined {
  const api = (ECS_ACTIVITY_APIS as Readonly<Record<string, EcsApiName>>)[activityType];
  return api === undefined ? undefined : ecsTaskQueue(taskQueue, api);
}

/**
 * Parses a per-action override map, Terway's `rateLimit` (`{"CreateNetworkInterface": 60}`, calls per minute), over
 * the defaults. Every problem is reported (unknown action, not a positive number); Terway keys eniflow never calls
 * are listed in `ignored`.
 */
export function parseCallsPerMinute(
  text: string,
  source: string,
): { callsPerMinute: Record<EcsApiName, number>; problems: string[]; ignored: string[] } {
  const callsPerMinute: Record<EcsApiName, number> = { ...DEFAULT_CALLS_PER_MINUTE };
  const problems: string[] = [];
  const ignored: string[] = [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    problems.push(`${source} is not JSON: ${error instanceof Error ? error.message : String(error)}`);
    return { callsPerMinute, problems, ignored };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    problems.push(`${source} must be a JSON object of calls per minute by action, e.g. {"CreateNetworkInterface": 60}`);
    return { callsPerMinute, problems, ignored };
  }
  for (const [key, value] of Object.entries(parsed)) {
    if ((UNUSED_TERWAY_APIS as readonly string[]).includes(key)) {
      ignored.push(key);
      continue;
    }
    if (!(ECS_APIS as readonly string[]).includes(key)) {
      problems.push(`${source}: unknown action "${key}" (known: ${ECS_APIS.join(', ')})`);
      continue;
    }
    if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
      problems.push(`${source}: ${key} must be a positive number of calls per minute, got ${JSON.stringify(value)}`);
      continue;
    }
    callsPerMinute[key as EcsApiName] = value;
  }
  return { callsPerMinute, problems, ignored };
}
