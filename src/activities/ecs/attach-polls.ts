/**
 * When `waitEniStatus` describes an ENI it waits on to be `InUse` (an attach under way). An attach takes a few
 * seconds and a describe before it is done is a wasted call, so the first describe comes when attaches have lately
 * been done, as this worker process learned it, and the next ones soon after, growing.
 *
 * The learning: a first describe that finds the attach done moves the next first describe 2 % earlier (the attach
 * might have been done sooner); one that does not moves it to when the attach was seen done. The first describe so
 * hovers just above the cloud's attach time: about one describe per attach, the answer within a few hundred
 * milliseconds of the attach being done. Terway's first look is fixed at 3 s, then 3 s × 1.5.
 */

/** How much earlier the next first describe comes after one that found the attach done. */
const EARLIER_AFTER_HIT = 0.02;

export class AttachPollSchedule {
  private readonly pollMs: number;
  private readonly minMs: number;
  private readonly maxMs: number;
  private estimateMs: number;

  /** `pollMs`: the configured poll interval (`ENI_POLL_INTERVAL_MS`); the first guess is two thirds of it. */
  constructor(pollMs: number) {
    this.pollMs = pollMs;
    this.minMs = Math.round(pollMs / 3);
    this.maxMs = pollMs * 3;
    this.estimateMs = Math.round((pollMs * 2) / 3);
  }

  /** How long after the attach call the first describe comes. */
  firstPollMs(): number {
    return Math.round(this.estimateMs);
  }

  /**
   * The wait after describe `describes` (1, 2, …) found the ENI not yet `InUse`: a sixth of the poll interval, then
   * half as long again each time, up to the interval (0.5, 0.75, 1.1, 1.7, 2.5, 3 s with the default 3 s).
   */
  nextPollMs(describes: number): number {
    return Math.min(this.pollMs, Math.round((this.pollMs / 6) * 1.5 ** Math.max(0, describes - 1)));
  }

  /** An attach seen done by describe number `describes`, `elapsedMs` after its first describe was scheduled to wait. */
  observe(input: { describes: number; elapsedMs: number }): void {
    const next = input.describes <= 1 ? this.estimateMs * (1 - EARLIER_AFTER_HIT) : input.elapsedMs;
    this.estimateMs = Math.min(this.maxMs, Math.max(this.minMs, next));
  }
}
