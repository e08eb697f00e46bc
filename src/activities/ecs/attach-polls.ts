/**
 * When `waitEniStatus` describes an ENI it waits on to be `InUse` (an attach under way). An attach takes a few
 * seconds and a describe before it is done is a wasted call, so the first describe comes when an attach is expected
 * to be done, and the next ones soon after, growing.
 *
 * The expected time is counted from the attach call (`attachSent`, its answer in this process), not from the start of
 * the wait: the workflow task and activity dispatch between the two take 0.1–2 s under load, which the attach does
 * not wait for. It starts at the poll interval (`ENI_POLL_INTERVAL_MS`, 3 s by default: Terway's fixed first look,
 * after the cloud's usual 2–3 s attach), so a new process describes once per attach from its first one. Then this
 * worker process learns it: a first describe that finds the attach done moves the next first describe 2 % earlier
 * (the attach might have been done sooner), once per guess, however many attaches in flight found it with that
 * guess (a burst of 80 hits is one piece of evidence, not 80 steps down); one that does not moves it to when the
 * attach was seen done. The first describe so hovers just above the cloud's attach time: about one describe per
 * attach, the answer within a few hundred milliseconds of the attach being done.
 *
 * Not carried across processes: it would need a write outside the process (a ConfigMap, or workflow history) for a
 * value that one slow attach relearns, and a restarted worker starting at the interval pays at most one late look
 * (never an extra describe) for an attach faster than the interval.
 */

/** How much earlier the next first describe comes after one that found the attach done. */
const EARLIER_AFTER_HIT = 0.02;
/** Attach calls remembered at most (a wait made by another process never collects its entry). */
const MAX_REMEMBERED_ATTACHES = 10_000;

export class AttachPollSchedule {
  private readonly pollMs: number;
  private readonly minMs: number;
  private readonly maxMs: number;
  private estimateMs: number;
  /** When this process sent the attach call of an ENI (epoch ms), until a wait for it collects it. */
  private readonly attachSentMs = new Map<string, number>();

  /** `pollMs`: the configured poll interval (`ENI_POLL_INTERVAL_MS`), the first guess. */
  constructor(pollMs: number) {
    this.pollMs = pollMs;
    this.minMs = Math.round(pollMs / 3);
    this.maxMs = pollMs * 3;
    this.estimateMs = pollMs;
  }

  /** Told by the attach activity when ECS accepted the attach of `eniId` (`sentMs`: the time of its answer). */
  attachSent(eniId: string, sentMs: number): void {
    this.attachSentMs.delete(eniId);
    this.attachSentMs.set(eniId, sentMs);
    // Oldest first (insertion order): an entry no wait of this process collected.
    for (const oldest of this.attachSentMs.keys()) {
      if (this.attachSentMs.size <= MAX_REMEMBERED_ATTACHES) break;
      this.attachSentMs.delete(oldest);
    }
  }

  /**
   * When the wait for `eniId`'s attach counts from: the attach call when this process made it, else `nowMs` (the
   * attach was made by another process, or before a restart). Collected: a later wait counts from its own start.
   */
  waitStartMs(eniId: string, nowMs: number): number {
    const sentMs = this.attachSentMs.get(eniId);
    this.attachSentMs.delete(eniId);
    return sentMs === undefined || sentMs > nowMs ? nowMs : sentMs;
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

  /**
   * An attach seen done by describe number `describes` (1: the first found it), `elapsedMs` after its first
   * describe was scheduled to wait, the first describe having waited `firstPollMs` (what {@link firstPollMs} said).
   */
  observe(input: { describes: number; elapsedMs: number; firstPollMs: number }): void {
    if (input.describes <= 1) {
      // A hit with an older guess says nothing about the current one.
      if (input.firstPollMs !== this.firstPollMs()) return;
      this.estimateMs = Math.max(this.minMs, this.estimateMs * (1 - EARLIER_AFTER_HIT));
      return;
    }
    this.estimateMs = Math.min(this.maxMs, Math.max(this.minMs, input.elapsedMs));
  }
}
