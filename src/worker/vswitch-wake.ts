import { Client } from '@temporalio/client';
import type { ConnectionLike } from '@temporalio/client';

import type { EcsApi } from '../activities/ecs/ecs-api.js';
import type { VSwitchCache } from '../activities/ecs/vswitch-cache.js';
import type { Logger } from '../logger.js';
import { EXHAUSTED_VSWITCHES_SEARCH_ATTRIBUTE, queryLiteral } from '../shared/workflow-ids.js';
import { listRunningNodes, signalReconcile } from './node-wakeups.js';

const VSWITCH_ID = /^[A-Za-z0-9-]{1,64}$/;

/**
 * Polls after which a node no longer named as waiting on a vSwitch is forgotten there. Not at once: a node that leaves
 * the stuck state for a few failed passes and comes back must not look like a first look, or a vSwitch whose describe
 * shows addresses that calls refuse would wake it on every other poll. Not never: a count remembered from long ago
 * could hide a vSwitch that was filled and freed again meanwhile.
 */
const FORGET_AFTER_POLLS = 5;

/**
 * What the poll remembers of each node waiting on each vSwitch: the free count it last saw there for that node. A
 * node is woken when its vSwitch has free addresses it has not been woken for: on the first look at its wait (a node
 * that got stuck on a vSwitch that already has some, because its asks were refused or its worker's cache was stale,
 * is served what is there) and whenever the count grew since. A node woken for a count that calls then refuse is not
 * woken again for the same count. Per node, not per vSwitch: a count the poll saw before a node began waiting says
 * nothing about whether that node was woken for it.
 */
export class WaitMemory {
  private readonly seen = new Map<string, Map<string, { free?: number; namedAtPoll: number }>>();
  private polls = 0;

  /** A new poll found these nodes waiting, by vSwitch; nodes not named for a while are forgotten. */
  named(nodesByVSwitch: ReadonlyMap<string, readonly string[]>): void {
    this.polls += 1;
    for (const [vSwitchId, nodes] of nodesByVSwitch) {
      const byNode = this.seen.get(vSwitchId) ?? new Map<string, { free?: number; namedAtPoll: number }>();
      for (const node of nodes) byNode.set(node, { ...byNode.get(node), namedAtPoll: this.polls });
      this.seen.set(vSwitchId, byNode);
    }
    for (const [vSwitchId, byNode] of [...this.seen]) {
      for (const [node, entry] of [...byNode]) {
        if (this.polls - entry.namedAtPoll >= FORGET_AFTER_POLLS) byNode.delete(node);
      }
      if (byNode.size === 0) this.seen.delete(vSwitchId);
    }
  }

  /** The waiting nodes (sorted) the vSwitch's `free` addresses should wake. */
  toWake(vSwitchId: string, waiting: readonly string[], free: number): string[] {
    if (free <= 0) return [];
    const byNode = this.seen.get(vSwitchId);
    return [...waiting].sort().filter((node) => {
      const before = byNode?.get(node)?.free;
      return before === undefined || free > before;
    });
  }

  /** The poll saw `free` addresses for these nodes (woken, or not to be woken). */
  saw(vSwitchId: string, nodes: readonly string[], free: number): void {
    const byNode = this.seen.get(vSwitchId);
    for (const node of nodes) {
      const entry = byNode?.get(node);
      if (entry !== undefined) entry.free = free;
    }
  }
}

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
 * Wakes nodes stuck on exhausted vSwitches when one has addresses for them. A stuck node sleeps `stuckBackoffMs` and names
 * the vSwitches it waits on in its `EniflowExhaustedVSwitches` search attribute; nothing inside a workflow can see a
 * vSwitch change, but the worker can, two ways:
 * - a call of another node on a blocked vSwitch got addresses (the cache lifts the block: {@link gained});
 * - its own poll: every `pollMs` it lists the stuck nodes (one visibility query), describes each vSwitch they name
 *   (one DescribeVSwitches per vSwitch, however many nodes wait on it) and wakes each node for which the vSwitch has
 *   free addresses it was not yet woken for ({@link WaitMemory}): the woken pass takes what is there, however little
 *   (the plan sizes its asks by the free count). The poll needs no memory to be right: a worker that restarted, or a
 *   replica that never saw the block, finds the stuck nodes in visibility.
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
  private readonly memory = new WaitMemory();
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
    this.memory.named(nodesByVSwitch);
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
      const waiting = nodesByVSwitch.get(vSwitchId) ?? [];
      const toWake = this.memory.toWake(vSwitchId, waiting, free);
      let signalled: string[] | undefined = [];
      if (toWake.length > 0) {
        this.logger.info({ vSwitchId, free, nodes: toWake.length }, 'vSwitch has addresses for nodes waiting on it');
        // This worker's cache must not answer the woken node's read with a stale block.
        this.vSwitches.refresh([vSwitchId]);
        signalled = await this.wake(vSwitchId, toWake);
      }
      this.memory.saw(vSwitchId, seenAfterWake({ waiting, toWake, signalled }), free);
    }
  }

  /**
   * Signals the nodes waiting on the vSwitch (`known`, or found in visibility), at most `maxWorkflows`: returns those
   * signalled, or undefined when the rate bound held it.
   */
  private async wake(vSwitchId: string, known: string[] | undefined): Promise<string[] | undefined> {
    // The id goes into a visibility query: only what a vSwitch id can look like.
    if (!VSWITCH_ID.test(vSwitchId)) return undefined;
    const now = Date.now();
    if (now - (this.lastWakeMs.get(vSwitchId) ?? Number.NEGATIVE_INFINITY) < this.minWakeIntervalMs) return undefined;
    this.lastWakeMs.set(vSwitchId, now);
    const ids = (known ?? (await this.nodesWaitingOn(vSwitchId))).slice(0, this.maxWorkflows);
    await signalReconcile({
      client: this.client,
      workflowIds: ids,
      reason: { reason: VSWITCH_GAINED_REASON, vSwitchesGained: [vSwitchId] },
      logger: this.logger,
    });
    if (ids.length > 0) this.logger.info({ vSwitchId, nodes: ids.length }, 'Woke nodes stuck on the vSwitch');
    return ids;
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

/**
 * The nodes a poll records as seen at the vSwitch's free count: those it did not mean to wake, and those it signalled.
 * A node meant to be woken but held back (the wake rate bound, or cut by `maxWorkflows`) keeps its turn.
 */
export function seenAfterWake(input: {
  waiting: readonly string[];
  toWake: readonly string[];
  signalled: readonly string[] | undefined;
}): string[] {
  const signalled = input.signalled ?? [];
  return input.waiting.filter((node) => !input.toWake.includes(node) || signalled.includes(node));
}

/** At most `max` items from `cursor` on, wrapping around, and where the next turn starts. */
export function takeTurn<T>(items: readonly T[], cursor: number, max: number): { items: T[]; next: number } {
  if (items.length <= max) return { items: [...items], next: 0 };
  const start = cursor % items.length;
  const out: T[] = [];
  for (let i = 0; i < max; i += 1) out.push(items[(start + i) % items.length] as T);
  return { items: out, next: (start + max) % items.length };
}
