import type { Logger } from '../logger.js';
import { LOG_FIELDS } from '../logger.js';
import { Coalescer } from './coalescer.js';
import type { NodeChange, NodeSignal } from './coalescer.js';
import { StartSweep } from './start-sweep.js';
import type { WorkflowGateway } from './workflow-gateway.js';
import type { BatchPacing } from '../ipam/index.js';

export interface SignalDispatcherOptions {
  gateway: WorkflowGateway;
  logger: Logger;
  windowMs: number;
  maxDelayMs: number;
  /** Batching under load (see `CoalescerOptions.pacing`): the node workflows' own pacing, so signals keep step. */
  pacing?: BatchPacing;
  /** First retry delay of a failed signal; doubles per consecutive failure of the node, up to `retryMaxMs`. */
  retryInitialMs?: number;
  retryMaxMs?: number;
  /** How many nodes per second a {@link SignalDispatcher.sweep} hands on (default 20). */
  sweepNodesPerSecond?: number;
  now?: () => number;
}

/** Counters of the signals the watcher sent. */
export interface SignalCounters {
  /** Signals Temporal accepted (signalWithStart calls that succeeded). */
  signalsSent: number;
  /** signalWithStart calls that failed (each is retried). */
  signalFailures: number;
}

/**
 * Turns node changes into signals: feeds the {@link Coalescer}, wakes up when the next signal is due, sends it
 * through the {@link WorkflowGateway} and retries failures with backoff. Changes are taken only while active
 * (i.e. while this replica leads).
 */
export class SignalDispatcher {
  readonly counters: SignalCounters = { signalsSent: 0, signalFailures: 0 };
  private readonly options: SignalDispatcherOptions;
  private readonly coalescer: Coalescer;
  private readonly startSweep: StartSweep;
  private sweepReason = '';
  private readonly now: () => number;
  private readonly failures = new Map<string, number>();
  private readonly inFlight = new Set<Promise<void>>();
  private readonly signalsByNode = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private timerAtMs: number | undefined;
  private active = false;
  private stopped = false;

  constructor(options: SignalDispatcherOptions) {
    this.options = options;
    this.coalescer = new Coalescer({
      windowMs: options.windowMs,
      maxDelayMs: options.maxDelayMs,
      ...(options.pacing === undefined ? {} : { pacing: options.pacing }),
    });
    this.startSweep = new StartSweep({ nodesPerSecond: options.sweepNodesPerSecond ?? 20 });
    this.now = options.now ?? Date.now;
  }

  /** Starts (leader) or stops (standby) taking changes; stopping drops what is pending. */
  setActive(active: boolean): void {
    this.active = active;
    if (!active) {
      this.coalescer.clear();
      this.startSweep.clear();
      this.clearTimer();
    }
  }

  isActive(): boolean {
    return this.active;
  }

  /** Queues a change for its node's next signal; ignored while inactive. */
  enqueue(change: NodeChange): void {
    if (!this.active || this.stopped) return;
    const nowMs = this.now();
    // The node's own signal is due sooner than its sweep turn and gives it the same full pass.
    if (this.startSweep.remove(change.nodeName)) {
      this.coalescer.add({ nodeName: change.nodeName, reason: this.sweepReason }, nowMs);
    }
    this.coalescer.add(change, nowMs);
    this.schedule();
  }

  /**
   * Owes each of `nodeNames` one signal with `reason`, handed on at `sweepNodesPerSecond` in name order (see
   * {@link StartSweep}); ignored while inactive.
   */
  sweep(nodeNames: Iterable<string>, reason: string): void {
    if (!this.active || this.stopped) return;
    this.sweepReason = reason;
    this.startSweep.begin(nodeNames, this.now());
    this.flush();
  }

  /** Nodes a sweep still owes a signal. */
  sweepPending(): number {
    return this.startSweep.pendingCount();
  }

  /** Signals sent per node so far. */
  signalsFor(nodeName: string): number {
    return this.signalsByNode.get(nodeName) ?? 0;
  }

  /** Stops timers and waits for signals already being sent. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.active = false;
    this.clearTimer();
    this.coalescer.clear();
    this.startSweep.clear();
    await Promise.allSettled([...this.inFlight]);
  }

  private schedule(): void {
    if (this.stopped || !this.active) return;
    const dueMs = earliest(this.coalescer.nextDueMs(), this.startSweep.nextDueMs());
    if (dueMs === undefined) return;
    if (this.timer !== undefined && this.timerAtMs !== undefined && this.timerAtMs <= dueMs) return;
    this.clearTimer();
    this.timerAtMs = dueMs;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.timerAtMs = undefined;
        this.flush();
      },
      Math.max(0, dueMs - this.now()),
    );
  }

  private clearTimer(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAtMs = undefined;
  }

  private flush(): void {
    if (!this.active || this.stopped) return;
    const nowMs = this.now();
    for (const nodeName of this.startSweep.take(nowMs))
      this.coalescer.add({ nodeName, reason: this.sweepReason }, nowMs);
    for (const signal of this.coalescer.takeDue(nowMs)) {
      const sending = this.send(signal).finally(() => {
        this.inFlight.delete(sending);
        this.schedule();
      });
      this.inFlight.add(sending);
    }
    this.schedule();
  }

  private async send(signal: NodeSignal): Promise<void> {
    const { nodeName } = signal;
    try {
      await this.options.gateway.signalNode(signal);
      this.counters.signalsSent += 1;
      this.signalsByNode.set(nodeName, (this.signalsByNode.get(nodeName) ?? 0) + 1);
      this.failures.delete(nodeName);
      this.coalescer.settle({ signal, delivered: true, nowMs: this.now() });
      this.options.logger.debug({ [LOG_FIELDS.nodeName]: nodeName, reason: signal.reason }, 'Signalled node workflow');
    } catch (error) {
      this.counters.signalFailures += 1;
      const failures = (this.failures.get(nodeName) ?? 0) + 1;
      this.failures.set(nodeName, failures);
      const initialMs = this.options.retryInitialMs ?? 500;
      const delayMs = Math.min(initialMs * 2 ** (failures - 1), this.options.retryMaxMs ?? 30_000);
      const nowMs = this.now();
      if (this.active && !this.stopped) {
        this.coalescer.settle({ signal, delivered: false, nowMs, retryAtMs: nowMs + delayMs });
      } else {
        this.coalescer.settle({ signal, delivered: true, nowMs });
      }
      this.options.logger.warn(
        { [LOG_FIELDS.nodeName]: nodeName, err: error, retryInMs: delayMs },
        'Signalling node workflow failed',
      );
    }
  }
}

function earliest(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.min(a, b);
}
