import { Client } from '@temporalio/client';
import type { ConnectionLike } from '@temporalio/client';

import type { EcsApi } from '../activities/ecs/ecs-api.js';
import type { VSwitchCache } from '../activities/ecs/vswitch-cache.js';
import type { Logger } from '../logger.js';
import { EXHAUSTED_VSWITCHES_SEARCH_ATTRIBUTE, queryLiteral } from '../shared/workflow-ids.js';
import { listRunningNodes, signalReconcile } from './node-wakeups.js';

const VSWITCH_ID = /^[A-Za-z0-9-]{1,64}$/;

/**
 * Polls after which a vSwitch no stuck node names any more is forgotten. Not at once: a node that leaves the stuck
 * state for a few failed passes and comes back must not look like a first look, or a vSwitch whose describe shows
 * addresses that calls refuse would wake it on every other poll. Not never: a count remembered from long ago could
 * hide a vSwitch that was filled and freed again meanwhile.
 */
const FORGET_AFTER_POLLS = 5;

/** The reason of the `reconcile` signal that wakes a node stuck on a vSwitch that gained addresses. */
export const VSWITCH_GAINED_REASON = 'vswitch-gained-addresses';

export interface VSwitchWakeOptions {
  /** How often the vSwitches named by stuck nodes are described (default 60 s): one call per vSwitch, not per node. */
  pollMs?: number;
  /** A vSwitch's nodes are woken at most this often (default 10 s), so a flapping vSwitch cannot storm them. */
  minWakeIntervalMs?: number;
  /** At most this many nodes are listed (per poll) and woken (per vSwitch) at once (default 500). */
  maxWorkflows?: number;
  /** At most this many vSwitches are described per poll (default 20), the rest on the next polls. */
  maxVSwitchesPerPoll?: number;
}

/**
 * Wakes nodes stuck on exhausted vSwitches when one gains addresses. A stuck node sleeps `stuckBackoffMs` and names
 * the vSwitches it waits on in its `EniflowExhaustedVSwitches` search attribute; nothing inside a workflow can see a
 * vSwitch change, but the worker can, two ways:
 * - a call of another node on a blocked vSwitch got addresses (the cache lifts the block: {@link gained});
 * - its own poll: every `pollMs` it lists the stuck nodes (one visibility query), describes each vSwitch they name
 *   (one DescribeVSwitches per vSwitch, however many nodes wait on it) and wakes them when the free count grew
 *   since it last looked (or, first look after a start, is above 0). The poll needs no memory to be right: a worker
 *   that restarted, or a replica that never saw the block, finds the stuck nodes in visibility.
 * The wake is a `reconcile` signal naming the vSwitch, so the pass asks the cloud instead of a cache that may still
 * hold the block. Waking is bounded per vSwitch ({@link VSwitchWakeOptions.minWakeIntervalMs}).
 */
export class VSwitchWakeNotifier {
  private readonly client: Client;
  private readonly taskQueue: string;
  private readonly logger: Logger;
  private readonly ecs: Pick<EcsApi, 'describeVSwitch'>;
  private readonly vSwitches: Pick<VSwitchCache, 'refresh'>;
  private readonly pollMs: number;
  private readonly minWakeIntervalMs: number;
  private readonly maxWorkflows: number;
  private readonly maxVSwitchesPerPoll: number;
  /** Free addresses of each watched vSwitch at its last poll, oldest first. */
  private readonly lastSeen = new Map<string, { free?: number; namedAtPoll: number }>();
  private polls = 0;
  private readonly lastWakeMs = new Map<string, number>();
  /** Where the next poll starts in the sorted vSwitch list, so every vSwitch gets its turn under the cap. */
  private cursor = 0;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(input: {
    connection: ConnectionLike;
    namespace: string;
    taskQueue: string;
    logger: Logger;
    ecs: Pick<EcsApi, 'describeVSwitch'>;
    vSwitches: Pick<VSwitchCache, 'refresh'>;
    options?: VSwitchWakeOptions;
  }) {
    this.client = new Client({ connection: input.connection, namespace: input.namespace });
    this.taskQueue = input.taskQueue;
    this.logger = input.logger.child({ component: 'vswitch-wake' });
    this.ecs = input.ecs;
    this.vSwitches = input.vSwitches;
    this.pollMs = input.options?.pollMs ?? 60_000;
    this.minWakeIntervalMs = input.options?.minWakeIntervalMs ?? 10_000;
    this.maxWorkflows = input.options?.maxWorkflows ?? 500;
    this.maxVSwitchesPerPoll = input.options?.maxVSwitchesPerPoll ?? 20;
  }

  /** Starts the poll (the timer does not keep the process alive); it stops by itself once `alive` says no. */
  start(alive: () => boolean = () => true): void {
    if (this.closed || this.timer !== undefined) return;
    this.timer = setInterval(() => {
      if (alive()) this.enqueue(() => this.poll());
      else void this.close();
    }, this.pollMs);
    this.timer.unref();
  }

  /** A call on a blocked vSwitch got addresses: the nodes waiting on it are woken (no describe needed). */
  gained(vSwitchId: string): void {
    this.enqueue(async () => {
      await this.wake(vSwitchId, undefined);
    });
  }

  /** Stops polling; settles once the work in flight has ended. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** One thing at a time: a slow poll is not overlapped by the next. */
  private enqueue(work: () => Promise<void>): void {
    if (this.closed) return;
    this.running = this.running.then(work).catch((error: unknown) => {
      this.logger.warn({ err: error }, 'Could not wake nodes stuck on exhausted vSwitches');
    });
  }

  private async poll(): Promise<void> {
    const nodesByVSwitch = new Map<string, string[]>();
    const stuck = await listRunningNodes({
      client: this.client,
      taskQueue: this.taskQueue,
      extra: [`${EXHAUSTED_VSWITCHES_SEARCH_ATTRIBUTE.name} IS NOT NULL`],
      max: this.maxWorkflows,
    });
    for (const execution of stuck) {
      for (const vSwitchId of execution.typedSearchAttributes.get(EXHAUSTED_VSWITCHES_SEARCH_ATTRIBUTE) ?? []) {
        nodesByVSwitch.set(vSwitchId, [...(nodesByVSwitch.get(vSwitchId) ?? []), execution.workflowId]);
      }
    }
    this.polls += 1;
    for (const vSwitchId of nodesByVSwitch.keys()) {
      this.lastSeen.set(vSwitchId, { ...this.lastSeen.get(vSwitchId), namedAtPoll: this.polls });
    }
    for (const [vSwitchId, seen] of [...this.lastSeen]) {
      if (this.polls - seen.namedAtPoll >= FORGET_AFTER_POLLS) this.lastSeen.delete(vSwitchId);
    }
    const now = Date.now();
    for (const [vSwitchId, atMs] of [...this.lastWakeMs]) {
      if (now - atMs >= this.minWakeIntervalMs) this.lastWakeMs.delete(vSwitchId);
    }
    const all = [...nodesByVSwitch.keys()].sort();
    const turn = takeTurn(all, this.cursor, this.maxVSwitchesPerPoll);
    this.cursor = turn.next;
    for (const vSwitchId of turn.items) {
      if (!VSWITCH_ID.test(vSwitchId)) continue;
      const info = await this.ecs.describeVSwitch({ vSwitchId });
      const free = info?.availableIpCount ?? 0;
      const seen = this.lastSeen.get(vSwitchId);
      const before = seen?.free;
      if (seen !== undefined) seen.free = free;
      if (free > 0 && (before === undefined || free > before)) {
        this.logger.info({ vSwitchId, free, before }, 'Exhausted vSwitch gained addresses');
        // This worker's cache must not answer the woken node's read with a stale block.
        this.vSwitches.refresh([vSwitchId]);
        await this.wake(vSwitchId, nodesByVSwitch.get(vSwitchId));
      }
    }
  }

  private async wake(vSwitchId: string, known: string[] | undefined): Promise<void> {
    // The id goes into a visibility query: only what a vSwitch id can look like.
    if (!VSWITCH_ID.test(vSwitchId)) return;
    const now = Date.now();
    if (now - (this.lastWakeMs.get(vSwitchId) ?? Number.NEGATIVE_INFINITY) < this.minWakeIntervalMs) return;
    this.lastWakeMs.set(vSwitchId, now);
    const ids = (known ?? (await this.nodesWaitingOn(vSwitchId))).slice(0, this.maxWorkflows);
    await signalReconcile({
      client: this.client,
      workflowIds: ids,
      reason: { reason: VSWITCH_GAINED_REASON, vSwitchesGained: [vSwitchId] },
      logger: this.logger,
    });
    if (ids.length > 0) this.logger.info({ vSwitchId, nodes: ids.length }, 'Woke nodes stuck on the vSwitch');
  }

  private async nodesWaitingOn(vSwitchId: string): Promise<string[]> {
    const nodes = await listRunningNodes({
      client: this.client,
      taskQueue: this.taskQueue,
      extra: [`${EXHAUSTED_VSWITCHES_SEARCH_ATTRIBUTE.name} = ${queryLiteral(vSwitchId)}`],
      max: this.maxWorkflows,
    });
    return nodes.map((execution) => execution.workflowId);
  }
}

/** At most `max` items from `cursor` on, wrapping around, and where the next turn starts. */
export function takeTurn<T>(items: readonly T[], cursor: number, max: number): { items: T[]; next: number } {
  if (items.length <= max) return { items: [...items], next: 0 };
  const start = cursor % items.length;
  const out: T[] = [];
  for (let i = 0; i < max; i += 1) out.push(items[(start + i) % items.length] as T);
  return { items: out, next: (start + max) % items.length };
}
