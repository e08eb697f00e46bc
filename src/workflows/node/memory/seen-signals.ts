import { seenVersionsCover } from '../../../ipam/index.js';
import type { ReconcileReason } from '../../messages.js';

/**
 * `reconcile` signals for changes a pass's read had already seen (the watcher sent them after the read began, see
 * `seenVersionsCover`): such a signal asks for a pass only if the pass that read the changes fails or leaves pods
 * waiting, decided when that pass ends, or at once when none runs. Any other signal asks for a pass, as always.
 */
export class SeenSignals {
  private passRunning = false;
  private heldDuringPass = false;

  /** Whether the signal asks for a pass now; `readSeen`: the versions the last read had seen. */
  asksForPass(input: {
    reason: ReconcileReason | undefined;
    readSeen: Record<string, string> | undefined;
    /** Whether the last pass failed or left pods waiting. */
    leftWork: boolean;
  }): boolean {
    const { reason } = input;
    const seen = (reason?.vSwitchesGained?.length ?? 0) === 0 && seenVersionsCover(input.readSeen, reason?.seen);
    if (!seen) return true;
    if (!this.passRunning) return input.leftWork;
    this.heldDuringPass = true;
    return false;
  }

  passStarting(): void {
    this.passRunning = true;
  }

  /** Whether a signal held during the pass now asks for one (the pass failed or left pods waiting). */
  passEnded(leftWork: boolean): boolean {
    const held = this.heldDuringPass;
    this.passRunning = false;
    this.heldDuringPass = false;
    return held && leftWork;
  }
}
