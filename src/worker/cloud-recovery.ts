import { Client } from '@temporalio/client';
import type { ConnectionLike } from '@temporalio/client';

import type { EcsFailure } from '../activities/ecs/ecs-errors.js';
import { WATCHED_CALL_FAILURE_TYPES } from '../ipam/operation-failures.js';
import type { Logger } from '../logger.js';
import { IPAM_STATE_SEARCH_ATTRIBUTE } from '../shared/workflow-ids.js';
import type { CloudProbe } from './cloud-probe.js';
import { runningNodes, signalReconcile } from './node-wakeups.js';

/** The notifier's times, when a test shortens them (every default suits production). */
export interface CloudRecoveryOptions {
  minIntervalMs?: number;
  maxIntervalMs?: number;
  probeIntervalMs?: number;
}

/** An activity type whose last outcome was a transient failure. */
interface Failing {
  sinceMs: number;
  /** The last real call (an activity's) of this type: a probe is needed only when none was made lately. */
  lastCallMs: number;
  /** The probe met the failure too: its first answer afterwards means the action is back. */
  probeSawFailure: boolean;
  /**
   * Nodes woken by a probe's answer failed again soon after: the probe answers while real calls fail (a fault of
   * some nodes' own resources, not of the action), so only an answer after a probe failure counts.
   */
  probeBlind: boolean;
  /** RAM refused the probe (the policy does not allow it): it tells nothing, so it is not made again. */
  probeRefused: boolean;
}

/** How a wake finds and signals the running `Error` nodes; tests give their own. */
export interface ErrorNodes {
  /** Every running `Error` node's workflow id, page by page. */
  list: (pageSize: number) => AsyncIterable<string>;
  signal: (workflowIds: readonly string[]) => Promise<void>;
}

/**
 * Ends other nodes' failure backoff when the cloud recovers. Workflows are isolated: a node backing off after 5xx
 * answers cannot see that another node's call of the same kind just succeeded. The worker can: it sees every ECS
 * call of its region. When an activity type that failed transiently succeeds again, the notifier signals
 * `reconcile` to every running node workflow of its task queue whose `IpamState` is `Error` (listed `maxWorkflows`
 * a page), in at most one sweep per wake interval, so a flapping API cannot turn into a signal storm.
 *
 * Nodes that keep failing back off for minutes (or sleep as stuck), so they may make no call at all when the cloud
 * recovers: the notifier then probes. While an activity type fails and no real call of it was made for
 * `probeIntervalMs`, it makes one cheap call of the same action against ids that cannot exist (`ecsProbes`); the
 * first answer (`…NotFound`) after the real failures declares the action back (the outage may have ended before the
 * first probe). If nodes woken that way fail again within `minIntervalMs · 6`, the probe is blind to this fault (it
 * answers while some nodes' own resources fail): only an answer after a probe that met the failure counts, and the
 * blind probe stops until the type succeeds again. A RAM refusal (`Forbidden…`) of a probe counts as neither. Types
 * without a probe arm no probe timer.
 *
 * Wakes are spaced by `minIntervalMs`, doubling (up to `maxIntervalMs`) each time a transient failure follows a wake
 * within `minIntervalMs · 6` (woken nodes that fail again: one node's fault while others' calls succeed), and back to
 * `minIntervalMs` once no transient failure came for `maxIntervalMs`.
 */
export class CloudRecoveryNotifier {
  private readonly client: Client;
  private readonly taskQueue: string;
  private readonly logger: Logger;
  private readonly minIntervalMs: number;
  private readonly maxIntervalMs: number;
  private readonly maxWorkflows: number;
  private readonly probe: CloudProbe | undefined;
  private readonly probeIntervalMs: number;
  private readonly wakeNodes: () => Promise<void>;
  private readonly errorNodes: ErrorNodes;
  /** When a probe's answer last woke nodes for a type: a failure soon after makes that type's probe blind. */
  private readonly probeWokeMs = new Map<string, number>();
  private readonly refusalLogged = new Set<string>();
  private readonly failing = new Map<string, Failing>();
  private lastNotifyMs = Number.NEGATIVE_INFINITY;
  private lastFailureMs = Number.NEGATIVE_INFINITY;
  /** Wakes followed by failures: the wake interval is `minIntervalMs · 2^flaps`. */
  private flaps = 0;
  /** Whether a failure already counted as a flap of the last wake. */
  private flapCounted = false;
  private scheduled: NodeJS.Timeout | undefined;
  private probeTimer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private probing: Promise<void> | undefined;
  private closed = false;

  constructor(input: {
    connection: ConnectionLike;
    namespace: string;
    taskQueue: string;
    logger: Logger;
    minIntervalMs?: number;
    maxIntervalMs?: number;
    maxWorkflows?: number;
    /** How to probe an action (`ecsProbes`); absent: recovery is seen only in real calls. */
    probe?: CloudProbe;
    /** Probe a failing, silent action this often (default 20 s). */
    probeIntervalMs?: number;
    /** What a wake does (default: signal the running `Error` nodes of the task queue); tests count wakes. */
    wakeNodes?: () => Promise<void>;
    /** How the default wake lists and signals the `Error` nodes (default: the Temporal client's). */
    errorNodes?: ErrorNodes;
  }) {
    this.client = new Client({ connection: input.connection, namespace: input.namespace });
    this.taskQueue = input.taskQueue;
    this.logger = input.logger.child({ component: 'cloud-recovery' });
    this.minIntervalMs = input.minIntervalMs ?? 10_000;
    this.maxIntervalMs = input.maxIntervalMs ?? 5 * 60_000;
    this.maxWorkflows = input.maxWorkflows ?? 100;
    this.probe = input.probe;
    this.probeIntervalMs = input.probeIntervalMs ?? 20_000;
    this.wakeNodes = input.wakeNodes ?? (() => this.notify());
    this.errorNodes = input.errorNodes ?? this.temporalErrorNodes();
  }

  failed(activityType: string, failure: EcsFailure): void {
    // Only failures that end on their own (the cloud recovers) have an end worth telling other nodes.
    if (!WATCHED_CALL_FAILURE_TYPES.includes(failure.type)) return;
    const now = Date.now();
    if (now - this.lastFailureMs >= this.maxIntervalMs) this.flaps = 0;
    else if (now - this.lastNotifyMs < this.minIntervalMs * 6 && !this.flapCounted) {
      this.flaps += 1;
      this.flapCounted = true;
    }
    this.lastFailureMs = now;
    const known = this.failing.get(activityType);
    if (known !== undefined) {
      known.lastCallMs = now;
      return;
    }
    const probeWokeMs = this.probeWokeMs.get(activityType);
    // The probe's wake (sent up to one wake interval after its answer) was followed by a failure: blind.
    const probeBlind =
      probeWokeMs !== undefined && now - Math.max(probeWokeMs, this.lastNotifyMs) < this.minIntervalMs * 6;
    this.failing.set(activityType, {
      sinceMs: now,
      lastCallMs: now,
      probeSawFailure: false,
      probeBlind,
      probeRefused: false,
    });
    this.armProbe();
  }

  succeeded(activityType: string): void {
    this.probeWokeMs.delete(activityType);
    this.recovered(activityType, 'call');
  }

  /** Settles once any notification or probe in flight has ended; cancels scheduled ones. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.scheduled !== undefined) clearTimeout(this.scheduled);
    if (this.probeTimer !== undefined) clearTimeout(this.probeTimer);
    this.scheduled = undefined;
    this.probeTimer = undefined;
    await Promise.all([this.running, this.probing]);
  }

  private recovered(activityType: string, by: 'call' | 'probe'): void {
    const failing = this.failing.get(activityType);
    if (failing === undefined) return;
    this.failing.delete(activityType);
    this.logger.info({ activityType, by, failingForMs: Date.now() - failing.sinceMs }, 'Cloud calls succeed again');
    this.schedule();
  }

  /** Failing types a probe can still tell about. */
  private probeable(): [string, Failing][] {
    const probe = this.probe;
    if (probe === undefined) return [];
    return [...this.failing.entries()].filter(
      ([activityType, failing]) => !failing.probeBlind && !failing.probeRefused && probe.probes(activityType),
    );
  }

  private armProbe(): void {
    if (this.probeTimer !== undefined || this.closed || this.probeable().length === 0) return;
    this.probeTimer = setTimeout(() => {
      this.probeTimer = undefined;
      this.probing = this.probeSilentTypes()
        .catch((error: unknown) => {
          this.logger.warn({ err: error }, 'Cloud probe failed');
        })
        .finally(() => {
          this.armProbe();
        });
    }, this.probeIntervalMs);
    this.probeTimer.unref();
  }

  /** One probe per failing activity type that no real call tried lately, one after another. */
  private async probeSilentTypes(): Promise<void> {
    const probe = this.probe;
    if (probe === undefined) return;
    const now = Date.now();
    const due = this.probeable()
      .filter(([, failing]) => now - failing.lastCallMs >= this.probeIntervalMs)
      .map(([activityType]) => activityType)
      .sort();
    for (const activityType of due) {
      const result = await probe.probe(activityType);
      const failing = this.failing.get(activityType);
      if (failing === undefined) continue;
      if (result === 'failing') failing.probeSawFailure = true;
      else if (result === 'refused') this.probeRefused(activityType, failing);
      else if (failing.probeSawFailure || !failing.probeBlind) {
        this.probeWokeMs.set(activityType, Date.now());
        this.recovered(activityType, 'probe');
      }
    }
  }

  private probeRefused(activityType: string, failing: Failing): void {
    failing.probeRefused = true;
    if (this.refusalLogged.has(activityType)) return;
    this.refusalLogged.add(activityType);
    this.logger.warn(
      { activityType },
      'RAM refuses the cloud probe of this action (see deploy/ram-policy.json): its recovery is seen in real calls only',
    );
  }

  private schedule(): void {
    if (this.scheduled !== undefined || this.closed) return;
    const intervalMs = Math.min(this.maxIntervalMs, this.minIntervalMs * 2 ** Math.min(this.flaps, 20));
    const delay = Math.max(0, this.lastNotifyMs + intervalMs - Date.now());
    this.scheduled = setTimeout(() => {
      this.scheduled = undefined;
      this.lastNotifyMs = Date.now();
      this.flapCounted = false;
      this.running = this.wakeNodes().catch((error: unknown) => {
        this.logger.warn({ err: error }, 'Could not wake nodes after the cloud recovered');
      });
    }, delay);
    this.scheduled.unref();
  }

  /** Signals every `Error` node, a page of `maxWorkflows` at a time. */
  private async notify(): Promise<void> {
    let woken = 0;
    let page: string[] = [];
    for await (const workflowId of this.errorNodes.list(this.maxWorkflows)) {
      page.push(workflowId);
      if (page.length < this.maxWorkflows) continue;
      await this.errorNodes.signal(page);
      woken += page.length;
      page = [];
    }
    if (page.length > 0) await this.errorNodes.signal(page);
    woken += page.length;
    if (woken > 0) this.logger.info({ nodes: woken }, 'Woke nodes backing off after cloud failures');
  }

  private temporalErrorNodes(): ErrorNodes {
    const client = this.client;
    const taskQueue = this.taskQueue;
    return {
      list: async function* (pageSize) {
        const extra = [`${IPAM_STATE_SEARCH_ATTRIBUTE.name} = "Error"`];
        for await (const execution of runningNodes({ client, taskQueue, extra, pageSize })) yield execution.workflowId;
      },
      signal: (workflowIds) =>
        signalReconcile({ client, workflowIds, reason: { reason: 'cloud-recovered' }, logger: this.logger }),
    };
  }
}
