import { CAPACITY_FAILURE_TYPES } from '../../../ipam/index.js';
import type { PendingOperation } from '../../messages.js';
import { failureOf } from '../memory/step-failure.js';

/** The cloud operations a node has in flight, for the `state` query (never in history). */
export class OperationTracker {
  private pending: PendingOperation[] = [];
  private failureListener: (() => void) | undefined;

  /**
   * Told when a tracked operation fails, the moment the workflow learns it (before the pass folds and writes). A
   * capacity refusal (vSwitch exhausted, quota) is not a failing call: the pass ends InsufficientIP or Ready, and an
   * early Error would cost upserts and draw a cloud-recovered wake.
   */
  onFailure(listener: () => void): void {
    this.failureListener = listener;
  }

  async track<T>(operation: Omit<PendingOperation, 'startedAtMs'>, run: () => Promise<T>): Promise<T> {
    const entry: PendingOperation = { ...operation, startedAtMs: Date.now() };
    this.pending = [...this.pending, entry];
    try {
      return await run();
    } catch (error) {
      if (!CAPACITY_FAILURE_TYPES.includes(failureOf(error).type)) this.failureListener?.();
      throw error;
    } finally {
      this.pending = this.pending.filter((item) => item !== entry);
    }
  }

  list(): PendingOperation[] {
    return this.pending.map((operation) => ({ ...operation }));
  }
}
