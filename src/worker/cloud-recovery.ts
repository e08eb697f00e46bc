import { Client } from '@temporalio/client';
import type { ConnectionLike } from '@temporalio/client';

import type { EcsFailure } from '../activities/ecs/ecs-errors.js';
import type { Logger } from '../logger.js';
import { IPAM_STATE_SEARCH_ATTRIBUTE } from '../shared/workflow-ids.js';
import { listRunningNodes, signalReconcile } from './node-wakeups.js';

/** Failures that end on their own (the cloud recovers): the only ones whose end is worth telling other nodes. */
const TRANSIENT = new Set(['EcsTransient', 'EcsThrottled', 'EcsUnknown']);

/**
 * Ends other nodes' failure backoff when the cloud recovers. Workflows are isolated: a node backing off after 5xx
 * answers cannot see that another node's call of the same kind just succeeded. The worker can: it sees every ECS
 * call of its region. When an activity type that failed transiently succeeds again, the notifier signals
 * `reconcile` to the running node workflows of its task queue whose `IpamState` is `Error`, at most once per
 * `minIntervalMs` and to at most `maxWorkflows` of them, so a flapping API cannot turn into a signal storm.
 */
export class CloudRecoveryNotifier {
  private readonly client: Client;
  private readonly taskQueue: string;
  private readonly logger: Logger;
  private readonly minIntervalMs: number;
  private readonly maxWorkflows: number;
  /** Activity types whose last outcome was a transient failure, with when the failures began. */
  private readonly failing = new Map<string, number>();
  private lastNotifyMs = Number.NEGATIVE_INFINITY;
  private scheduled: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(input: {
    connection: ConnectionLike;
    namespace: string;
    taskQueue: string;
    logger: Logger;
    minIntervalMs?: number;
    maxWorkflows?: number;
  }) {
    this.client = new Client({ connection: input.connection, namespace: input.namespace });
    this.taskQueue = input.taskQueue;
    this.logger = input.logger.child({ component: 'cloud-recovery' });
    this.minIntervalMs = input.minIntervalMs ?? 10_000;
    this.maxWorkflows = input.maxWorkflows ?? 100;
  }

  failed(activityType: string, failure: EcsFailure): void {
    if (TRANSIENT.has(failure.type) && !this.failing.has(activityType)) this.failing.set(activityType, Date.now());
  }

  succeeded(activityType: string): void {
    const since = this.failing.get(activityType);
    if (since === undefined) return;
    this.failing.delete(activityType);
    this.logger.info({ activityType, failingForMs: Date.now() - since }, 'Cloud calls succeed again');
    this.schedule();
  }

  /** Settles once any notification in flight has ended; cancels a scheduled one. */
  async close(): Promise<void> {
    if (this.scheduled !== undefined) clearTimeout(this.scheduled);
    this.scheduled = undefined;
    await this.running;
  }

  private schedule(): void {
    if (this.scheduled !== undefined) return;
    const delay = Math.max(0, this.lastNotifyMs + this.minIntervalMs - Date.now());
    this.scheduled = setTimeout(() => {
      this.scheduled = undefined;
      this.lastNotifyMs = Date.now();
      this.running = this.notify().catch((error: unknown) => {
        this.logger.warn({ err: error }, 'Could not wake nodes after the cloud recovered');
      });
    }, delay);
    this.scheduled.unref();
  }

  private async notify(): Promise<void> {
    const nodes = await listRunningNodes({
      client: this.client,
      taskQueue: this.taskQueue,
      extra: [`${IPAM_STATE_SEARCH_ATTRIBUTE.name} = "Error"`],
      max: this.maxWorkflows,
    });
    const workflowIds = nodes.map((execution) => execution.workflowId);
    await signalReconcile({
      client: this.client,
      workflowIds,
      reason: { reason: 'cloud-recovered' },
      logger: this.logger,
    });
    if (workflowIds.length > 0) {
      this.logger.info({ nodes: workflowIds.length }, 'Woke nodes backing off after cloud failures');
    }
  }
}
