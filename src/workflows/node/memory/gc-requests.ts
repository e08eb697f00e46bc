import type { GcResult } from '../../messages.js';

const EMPTY_GC: GcResult = { releasedIps: [], removedEnis: [], failed: [] };

/**
 * Operators' GC requests (the `gc` signal and update): a request is served by the next pass to start after it, and
 * an update is answered with that pass's result once the pass has written the status.
 */
export class GcRequests {
  pending = false;
  private requested = 0;
  private done = 0;
  private inPass = 0;
  lastResult: GcResult = EMPTY_GC;

  /** A new request; returns its number, to wait for with {@link isDone}. */
  request(): number {
    this.pending = true;
    this.requested += 1;
    return this.requested;
  }

  isDone(seq: number): boolean {
    return this.done >= seq;
  }

  /** A pass starts: it serves the requests made so far. */
  passStarting(): void {
    this.inPass = this.requested;
    if (this.pending) this.lastResult = EMPTY_GC;
  }

  /** What the pass's GC did, for the update waiting on it. */
  served(result: GcResult): void {
    if (this.pending) this.lastResult = result;
  }

  /** The pass ended (written, or skipped): its requests are answered; returns whether newer ones wait. */
  passEnded(): boolean {
    this.done = Math.max(this.done, this.inPass);
    this.pending = this.requested > this.inPass;
    return this.pending;
  }
}
