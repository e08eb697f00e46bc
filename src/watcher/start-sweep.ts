/**
 * Paces the one signal per node that a new leader owes every node (changes made while no replica led were seen by
 * nobody). Sending them all at once would start a pass on every node together, and a pod created meanwhile would
 * queue behind all of them; nothing requires them at once, since every workflow also has its safety-net timer.
 * So the sweep releases nodes at a steady rate, in name order, and a node that gets a change of its own before its
 * turn is signalled with that change and leaves the sweep. Pure and deterministic: the caller passes the time in.
 */
export class StartSweep {
  private readonly nodesPerSecond: number;
  /** Nodes still owed their sweep signal, in release order. */
  private queue = new Set<string>();
  private startedMs = 0;
  private released = 0;

  constructor(options: { nodesPerSecond: number }) {
    if (!(options.nodesPerSecond > 0)) throw new RangeError('StartSweep needs nodesPerSecond > 0');
    this.nodesPerSecond = options.nodesPerSecond;
  }

  /** Starts a sweep of `nodeNames` at `nowMs`, replacing one still running (a new leader term owes everything). */
  begin(nodeNames: Iterable<string>, nowMs: number): void {
    this.queue = new Set([...new Set(nodeNames)].sort());
    this.startedMs = nowMs;
    this.released = 0;
  }

  /**
   * The nodes whose turn has come by `nowMs`: one at once, then `nodesPerSecond` on average. Nodes that left the
   * sweep do not use up the budget.
   */
  take(nowMs: number): string[] {
    const budget = 1 + Math.floor(((nowMs - this.startedMs) * this.nodesPerSecond) / 1000) - this.released;
    const due: string[] = [];
    for (const nodeName of this.queue) {
      if (due.length >= budget) break;
      due.push(nodeName);
    }
    for (const nodeName of due) this.queue.delete(nodeName);
    this.released += due.length;
    return due;
  }

  /** Takes a node out of the sweep (its own signal covers it); true if it was still owed one. */
  remove(nodeName: string): boolean {
    return this.queue.delete(nodeName);
  }

  /** When the next node's turn comes, or undefined when none is owed. */
  nextDueMs(): number | undefined {
    if (this.queue.size === 0) return undefined;
    return this.startedMs + Math.ceil((this.released * 1000) / this.nodesPerSecond);
  }

  pendingCount(): number {
    return this.queue.size;
  }

  clear(): void {
    this.queue.clear();
  }
}
