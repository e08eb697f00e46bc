import { batchGapMs, mergeSeenVersions, nextBusyStreak } from '../ipam/index.js';
import type { BatchPacing } from '../ipam/index.js';
import type { ReconcileReason } from '../workflows/messages.js';

/** What kind of pod change a watch event was, for the `podChanges` summary of a signal. */
export type PodChangeKind = 'added' | 'updated' | 'deleted';

/** One relevant change the watcher saw for a node. */
export interface NodeChange {
  nodeName: string;
  /** e.g. `pod-added`, `node-cr-changed`, `core-node-changed`, `watcher-start`. */
  reason: string;
  /** Set for pod changes: counted in the signal's `podChanges`. */
  pod?: PodChangeKind;
  /** The resourceVersion of the event, by informer (see `ReconcileReason.seen`). */
  seen?: Record<string, string>;
}

/** The signal due for one node: every change seen since the last one, summarised. */
export interface NodeSignal {
  nodeName: string;
  reason: ReconcileReason;
}

export interface CoalescerOptions {
  /** A node's signal is due once no change for it arrived for this long. */
  windowMs: number;
  /** …or once its oldest pending change is this old, so steady churn still signals. */
  maxDelayMs: number;
  /**
   * Batching under load, as the node workflow paces its passes: a node whose changes keep coming within
   * `pacing.maxMs` of its last signal gets its next one no sooner than the busy streak's gap after it (doubling from
   * `pacing.baseMs`). Signals faster than the node's passes would only add history. Absent: no pacing.
   */
  pacing?: BatchPacing;
}

/** The last signal sent to a node, while it may still pace the next. */
interface RecentSignal {
  atMs: number;
  streak: number;
}

interface PendingNode {
  reasons: string[];
  podChanges: { added: number; updated: number; deleted: number };
  hasPodChanges: boolean;
  seen?: Record<string, string>;
  firstMs: number;
  lastMs: number;
  /** A failed signal is retried no earlier than this. */
  notBeforeMs: number;
}

/**
 * Per-node coalescing of watch events into signals: changes for one node are merged until the node has been quiet
 * for `windowMs` (or its oldest change is `maxDelayMs` old), and a node with a signal in flight gets no second one
 * until the first is settled. Pure and deterministic: the caller passes the time in.
 */
export class Coalescer {
  private readonly options: CoalescerOptions;
  private readonly pending = new Map<string, PendingNode>();
  private readonly inFlight = new Set<string>();
  private readonly recent = new Map<string, RecentSignal>();

  constructor(options: CoalescerOptions) {
    if (options.windowMs < 0 || options.maxDelayMs < options.windowMs) {
      throw new RangeError('Coalescer needs 0 <= windowMs <= maxDelayMs');
    }
    this.options = options;
  }

  /** Records a change seen at `nowMs`. */
  add(change: NodeChange, nowMs: number): void {
    let node = this.pending.get(change.nodeName);
    if (node === undefined) {
      node = {
        reasons: [],
        podChanges: { added: 0, updated: 0, deleted: 0 },
        hasPodChanges: false,
        firstMs: nowMs,
        lastMs: nowMs,
        notBeforeMs: nowMs,
      };
      this.pending.set(change.nodeName, node);
    }
    if (!node.reasons.includes(change.reason)) node.reasons.push(change.reason);
    if (change.pod !== undefined) {
      node.podChanges[change.pod] += 1;
      node.hasPodChanges = true;
    }
    if (change.seen !== undefined) node.seen = mergeSeenVersions(node.seen, change.seen);
    node.lastMs = Math.max(node.lastMs, nowMs);
  }

  /** Signals due at `nowMs`; their nodes are in flight until {@link settle} is called for them. */
  takeDue(nowMs: number): NodeSignal[] {
    const due: NodeSignal[] = [];
    this.forgetQuietNodes(nowMs);
    for (const [nodeName, node] of this.pending) {
      if (this.inFlight.has(nodeName) || this.dueAtMs(nodeName, node) > nowMs) continue;
      this.pending.delete(nodeName);
      this.inFlight.add(nodeName);
      if (this.options.pacing !== undefined) {
        this.recent.set(nodeName, { atMs: nowMs, streak: this.busyStreakOf(nodeName, node) });
      }
      const reason: ReconcileReason = { reason: node.reasons.join(',') };
      if (node.hasPodChanges) reason.podChanges = { ...node.podChanges };
      if (node.seen !== undefined) reason.seen = node.seen;
      due.push({ nodeName, reason });
    }
    return due;
  }

  /**
   * Ends a node's in-flight signal. A failed signal is put back, merged with what arrived meanwhile, due again
   * no earlier than `retryAtMs`.
   */
  settle(input: { signal: NodeSignal; delivered: boolean; nowMs: number; retryAtMs?: number }): void {
    const { signal, delivered, nowMs } = input;
    this.inFlight.delete(signal.nodeName);
    if (delivered) return;
    const retryAtMs = input.retryAtMs ?? nowMs;
    const reasons = signal.reason.reason.split(',').filter((reason) => reason !== '');
    for (const reason of reasons) {
      this.add(
        {
          nodeName: signal.nodeName,
          reason,
          ...(signal.reason.seen === undefined ? {} : { seen: signal.reason.seen }),
        },
        nowMs,
      );
    }
    const node = this.pending.get(signal.nodeName);
    if (node === undefined) return;
    const counts = signal.reason.podChanges;
    if (counts !== undefined) {
      node.podChanges.added += counts.added;
      node.podChanges.updated += counts.updated;
      node.podChanges.deleted += counts.deleted;
      node.hasPodChanges = true;
    }
    node.notBeforeMs = Math.max(node.notBeforeMs, retryAtMs);
  }

  /** Drops everything pending (e.g. leadership lost); in-flight signals still settle. */
  clear(): void {
    this.pending.clear();
  }

  /** When the next signal becomes due, or undefined when nothing is pending outside in-flight nodes. */
  nextDueMs(): number | undefined {
    let next: number | undefined;
    for (const [nodeName, node] of this.pending) {
      if (this.inFlight.has(nodeName)) continue;
      const at = this.dueAtMs(nodeName, node);
      if (next === undefined || at < next) next = at;
    }
    return next;
  }

  /** Nodes with changes not yet signalled (in flight or not). */
  pendingNodeCount(): number {
    return this.pending.size;
  }

  private dueAtMs(nodeName: string, node: PendingNode): number {
    const coalescedMs = Math.min(node.lastMs + this.options.windowMs, node.firstMs + this.options.maxDelayMs);
    const { pacing } = this.options;
    const last = this.recent.get(nodeName);
    const pacedMs =
      pacing === undefined || last === undefined
        ? 0
        : last.atMs + batchGapMs(pacing, this.busyStreakOf(nodeName, node));
    return Math.max(coalescedMs, node.notBeforeMs, pacedMs);
  }

  /** The node's busy streak if it were signalled for `node`'s changes: see `nextBusyStreak`. */
  private busyStreakOf(nodeName: string, node: PendingNode): number {
    const { pacing } = this.options;
    const last = this.recent.get(nodeName);
    if (pacing === undefined || last === undefined) return 0;
    return nextBusyStreak({ pacing, streak: last.streak, lastEndMs: last.atMs, changeMs: node.firstMs });
  }

  /** Nodes signalled longer ago than a busy gap can reach pace nothing any more: their entries go. */
  private forgetQuietNodes(nowMs: number): void {
    const { pacing } = this.options;
    if (pacing === undefined) return;
    for (const [nodeName, last] of this.recent) {
      if (nowMs - last.atMs >= Math.max(pacing.maxMs, pacing.baseMs) && !this.pending.has(nodeName)) {
        this.recent.delete(nodeName);
      }
    }
  }
}
