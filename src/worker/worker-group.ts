import { Worker } from '@temporalio/worker';
import type { State, WorkerOptions, WorkerStatus } from '@temporalio/worker';

import {
  DEFAULT_ECS_BURST,
  ECS_ACTIVITY_APIS,
  ecsTaskQueue,
  LOCAL_ECS_ACTIVITIES,
  QUEUED_ECS_APIS,
  queueRatePerSecond,
} from '../shared/ecs-budget.js';
import type { EcsApiName } from '../shared/ecs-budget.js';

type ActivityFunctions = Record<string, (...args: never[]) => Promise<unknown>>;

/** One activity task queue of the worker process and what it runs there. */
export interface QueueActivities {
  taskQueue: string;
  activities: ActivityFunctions;
  /** The action whose budget this queue enforces; absent for the workflows' own queue. */
  api?: EcsApiName;
  /** The server-side dispatch rate of the queue across all workers (the budget per second). */
  maxTaskQueueActivitiesPerSecond?: number;
  /**
   * Activities of this queue the worker runs at once, at least: the burst, so a burst the server admits at once is
   * also called at once (ECS activities are awaited I/O; a slot costs a promise and a socket, not a thread).
   */
  minSlots?: number;
}

/**
 * Splits the worker's activities by task queue: each ECS activity on the queue of the action it calls, with that
 * action's budget as the queue's server-side rate; everything else (Kubernetes activities, the local vSwitch read)
 * on the workflows' queue. `ecsActivityNames` are the ECS activities: one missing from the routing tables is a bug
 * (its calls would escape the budget), so the worker refuses to start.
 */
export function routeActivities(input: {
  taskQueue: string;
  activities: ActivityFunctions;
  callsPerMinute: Readonly<Record<EcsApiName, number>>;
  /** Calls the server lets through at once on each ECS queue (`ENIFLOW_ECS_BURST`): each worker runs that many. */
  burst?: number;
  ecsActivityNames?: readonly string[];
}): QueueActivities[] {
  const routes = ECS_ACTIVITY_APIS as Readonly<Record<string, EcsApiName>>;
  const unrouted = (input.ecsActivityNames ?? []).filter(
    (name) => routes[name] === undefined && !(name in LOCAL_ECS_ACTIVITIES),
  );
  if (unrouted.length > 0) {
    throw new Error(
      `ECS activities without a budget queue: ${unrouted.join(', ')} (add them to ECS_ACTIVITY_APIS in src/shared/ecs-budget.ts)`,
    );
  }
  const main: QueueActivities = { taskQueue: input.taskQueue, activities: {} };
  const byApi = new Map<EcsApiName, QueueActivities>(
    QUEUED_ECS_APIS.map((api) => [
      api,
      {
        taskQueue: ecsTaskQueue(input.taskQueue, api),
        activities: {},
        api,
        maxTaskQueueActivitiesPerSecond: queueRatePerSecond(input.callsPerMinute[api]),
        minSlots: input.burst ?? DEFAULT_ECS_BURST,
      },
    ]),
  );
  for (const [name, fn] of Object.entries(input.activities)) {
    const api = routes[name];
    const queue = api === undefined ? main : byApi.get(api);
    if (queue !== undefined) queue.activities[name] = fn;
  }
  return [main, ...byApi.values()];
}

/**
 * The workers of one process, one per task queue (a TypeScript Worker polls one queue): they run, drain and stop
 * together, and a failure of one stops the others, so the process never runs half its queues.
 */
export class WorkerGroup {
  readonly workers: readonly Worker[];

  constructor(workers: readonly Worker[]) {
    this.workers = workers;
  }

  /** Creates the workers: the first entry with `mainOptions` (workflows), the others for their activities only. */
  static async create(input: {
    queues: readonly QueueActivities[];
    common: Omit<WorkerOptions, 'taskQueue' | 'activities' | 'workflowBundle' | 'workflowsPath' | 'sinks'>;
    mainOptions: Pick<
      WorkerOptions,
      'workflowBundle' | 'workflowsPath' | 'sinks' | 'maxConcurrentWorkflowTaskExecutions'
    > & {
      // Honoured by SDK 1.24 but gone from its public type; with eniflow's SDK patch it is the stuck guard's limit.
      isolateExecutionTimeout?: string;
    };
  }): Promise<WorkerGroup> {
    const created: Worker[] = [];
    for (const [i, queue] of input.queues.entries()) {
      created.push(
        await Worker.create({
          ...input.common,
          taskQueue: queue.taskQueue,
          activities: queue.activities,
          ...(i === 0 ? input.mainOptions : {}),
          ...(queue.maxTaskQueueActivitiesPerSecond === undefined
            ? {}
            : {
                maxTaskQueueActivitiesPerSecond: queue.maxTaskQueueActivitiesPerSecond,
                // The server paces dispatch to a few tasks a second, its burst aside: two pollers keep up.
                maxConcurrentActivityTaskPolls: 2,
              }),
          ...(queue.minSlots === undefined
            ? {}
            : {
                maxConcurrentActivityTaskExecutions: Math.max(
                  queue.minSlots,
                  input.common.maxConcurrentActivityTaskExecutions ?? 0,
                ),
              }),
        }),
      );
    }
    return new WorkerGroup(created);
  }

  /** Runs every worker; when one stops or fails, the others are shut down too. Rejects with the first failure. */
  async run(): Promise<void> {
    let firstError: unknown;
    await Promise.all(
      this.workers.map((worker) =>
        worker.run().then(
          () => {
            this.shutdown();
          },
          (error: unknown) => {
            firstError ??= error;
            this.shutdown();
          },
        ),
      ),
    );
    if (firstError !== undefined) {
      throw firstError instanceof Error ? firstError : new Error(JSON.stringify(firstError));
    }
  }

  /** Runs the workers until `fn` settles, then stops them (tests). */
  async runUntil<T>(fn: () => Promise<T>): Promise<T> {
    const running = this.run();
    try {
      return await fn();
    } finally {
      this.shutdown();
      await running;
    }
  }

  shutdown(): void {
    for (const worker of this.workers) if (worker.getState() === 'RUNNING') worker.shutdown();
  }

  /** The workflows' worker's state, or FAILED/STOPPING when any of the group is. */
  getState(): State {
    const states = this.workers.map((worker) => worker.getState());
    return states.find((state) => state === 'FAILED') ?? states.find((state) => state !== 'RUNNING') ?? 'RUNNING';
  }

  /** Every worker's status, the workflows' worker first. */
  getStatuses(): WorkerStatus[] {
    return this.workers.map((worker) => worker.getStatus());
  }
}
