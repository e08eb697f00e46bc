import { CancellationScope, isCancellation, sleep } from '@temporalio/workflow';

/**
 * The node's one wake timer. Starting a fresh timer for every wait cost two history events a pass (the old one
 * cancelled, a new one started); this one is kept while it fires no later than the next pass is due, and replaced
 * only when a pass is due sooner (a backoff, GC work). A kept timer that fires early wakes the loop, which finds
 * nothing due and arms it again: one workflow task per safety-net period, against two events per pass.
 */
export class WakeTimer {
  private current: { atMs: number; fired: boolean; scope: CancellationScope } | undefined;

  /** Makes sure the timer fires at `atMs` at the latest; `summary` names a timer that is started now. */
  armBy(atMs: number, summary?: string): void {
    const current = this.current;
    if (current !== undefined && !current.fired && current.atMs <= atMs) return;
    current?.scope.cancel();
    const scope = new CancellationScope();
    const timer = { atMs, fired: false, scope };
    this.current = timer;
    const delayMs = Math.max(1, atMs - Date.now());
    scope
      .run(() => (summary === undefined ? sleep(delayMs) : sleep(delayMs, { summary })))
      .then(
        () => {
          timer.fired = true;
        },
        (error: unknown) => {
          // A replaced timer is cancelled on purpose; anything else is a real failure of the task.
          if (!isCancellation(error)) throw error;
        },
      );
  }

  /** Whether the armed timer has fired (the loop then checks what is due). */
  get fired(): boolean {
    return this.current?.fired === true;
  }
}
