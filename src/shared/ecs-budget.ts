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
  // budget, so it does not lower the default burst (the smallest queued budget).
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

/** Temporal's default number of read partitions of a task queue (`matching.numTaskqueueReadPartitions`). */
export const TEMPORAL_DEFAULT_PARTITIONS = 4;

/**
 * The calls of one action the Temporal server lets through at once, by default (`ENIFLOW_ECS_BURST`): the server's
 * `matching.minTaskThrottlingBurstSize` on the ECS queues times their read partitions (the matching service gives
 * each partition of a rate-limited queue a token bucket of `max(⌈rate per partition⌉, that setting)` tokens; its
 * default, 1, admits about 10 at once). Terway's bucket per action (`rate.NewLimiter(v/60, v)`) admits a whole
 * minute's budget at once, 500 creates; the server setting is one value for every queue wherever it cannot be
 * constrained per task queue (the dev server's `--dynamic-config-value`), so one burst serves all ECS queues and it
 * is the smallest budget of a queued action, 400 (DetachNetworkInterface, the IP actions, TagResources): never more
 * than any action's budget, 4/5 of Terway's for creates and attaches (docs/decisions.md, "One ECS budget for the
 * cluster").
 */
export const DEFAULT_ECS_BURST = Math.min(...QUEUED_ECS_APIS.map((api) => DEFAULT_CALLS_PER_MINUTE[api]));

/**
 * The server setting that gives each ECS queue a burst of `burst` calls: `matching.minTaskThrottlingBurstSize`, per
 * partition, so the burst divided by the partitions, rounded down (never more than the burst the workers declare).
 */
export function serverMinBurstSize(burst: number, partitions = TEMPORAL_DEFAULT_PARTITIONS): number {
  return Math.max(1, Math.floor(burst / partitions));
}

/**
 * An action's queue rate: its budget per second, `v / 60`, Terway's refill. With a burst `b ≤ v` on top, the worst
 * 60-second window holds `b + v ≤ 2v` calls, as Terway's own (`v + v`); a sustained demand gets `v` a minute.
 */
export function queueRatePerSecond(callsPerMinute: number): number {
  return callsPerMinute / 60;
}

/**
 * The most calls of an action any 60-second window can hold: the burst the server admits at once plus a minute at
 * the queue's rate (for Terway's bucket, `v + v`).
 */
export function worstMinute(input: { callsPerMinute: number; burst: number }): number {
  return input.burst + input.callsPerMinute;
}

/**
 * The actions whose budget is smaller than the burst: a burst is at most one minute's budget of every queued action
 * (Terway's bucket is exactly one minute's), so no window holds more than twice the budget.
 */
export function burstProblems(input: {
  burst: number;
  callsPerMinute: Readonly<Record<EcsApiName, number>>;
  source: string;
}): string[] {
  const tooSmall = QUEUED_ECS_APIS.filter((api) => input.burst > input.callsPerMinute[api]);
  if (tooSmall.length === 0) return [];
  const budgets = tooSmall.map((api) => `${api} ${input.callsPerMinute[api]}`).join(', ');
  return [
    `${input.source} ${input.burst} is more than the budget of ${budgets} per minute: lower ${input.source} ` +
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
