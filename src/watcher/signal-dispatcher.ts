import type { Logger } from '../logger.js';
import { LOG_FIELDS } from '../logger.js';
import { Coalescer } from './coalescer.js';
import type { NodeChange, NodeSignal } from './coalescer.js';
import type { WorkflowGateway } from './workflow-gateway.js';

export interface SignalDispatcherOptions {
  gateway: WorkflowGateway;
  logger: Logger;
  windowMs: number;
  maxDelayMs: number;
  /** First retry delay of a failed signal; doubles per consecutive failure of the node, up to `retryMaxMs`. */
  retryInitialMs?: number;
  retryMaxMs?: number;
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
    this.coalescer = new Coalescer({ windowMs: options.windowMs, maxDelayMs: options.maxDelayMs });
    this.now = options.now ?? Date.now;
  }

  /** Starts (leader) or stops (standby) taking changes; stopping drops what is pending. */
  setActive(active: boolean): void {
    this.active = active;
    if (!active) {
      this.coalescer.clear();
      this.clearTimer();
    }
  }

  isActive(): boolean {
    return this.active;
  }

  /** Queues a change for its node's next signal; ignored while inactive. */
  enqueue(change: NodeChange): void {
    if (!this.active || this.stopped) return;
    this.coalescer.add(change, this.now());
    this.schedule();
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
    await Promise.allSettled([...this.inFlight]);
  }

  private schedule(): void {
    if (this.stopped || !this.active) return;
    const dueMs = this.coalescer.nextDueMs();
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
    for (const signal of this.coalescer.takeDue(this.now())) {
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
