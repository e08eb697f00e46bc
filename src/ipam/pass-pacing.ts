/**
 * Batching under load. A node whose changes keep coming soon after its last pass (or signal) is under a backlog:
 * each further pass (or signal) waits twice as long as the one before, up to a cap, so it takes a batch. A node whose
 * change comes after a quiet spell is served at once. The node workflow paces its passes with it and the watcher
 * its signals, each from its own clock: signals faster than passes would only cost history.
 */

/** How the gaps grow: from `baseMs` doubling while busy, never above `maxMs`. */
export interface BatchPacing {
  /** The gap of the first busy step (the workflow's minimum interval between passes). */
  baseMs: number;
  /** The longest gap: a change waits at most about this long for its batch. */
  maxMs: number;
}

/** The gap a busy streak asks for, counted from the start of the previous pass (or the previous signal). */
export function batchGapMs(pacing: BatchPacing, streak: number): number {
  if (streak <= 0) return 0;
  const base = Math.max(0, pacing.baseMs);
  // 2^streak overflows nothing here: the exponent is capped well before the cap is passed.
  return Math.min(Math.max(pacing.maxMs, base), base * 2 ** Math.min(streak, 30));
}

/**
 * The busy streak when a change arrives at `changeMs`: one more than before if it came within `pacing.maxMs` of the
 * end of the last step (the backlog goes on), 0 after a quiet spell or before any step.
 */
export function nextBusyStreak(input: {
  pacing: BatchPacing;
  streak: number;
  lastEndMs: number | undefined;
  changeMs: number;
}): number {
  const { lastEndMs } = input;
  if (lastEndMs === undefined) return 0;
  return input.changeMs - lastEndMs < input.pacing.maxMs ? input.streak + 1 : 0;
}

/**
 * How long to wait before the next pass: at most one pass per `minIntervalMs`, and, while busy, the streak's gap,
 * both counted from the start of the last pass. A long pass (one that waited for an attach) has gathered its batch
 * already: the changes that came meanwhile are served at once when it ends, as Terway's work queue does, not a
 * minimum interval later.
 */
export function passDelayMs(input: {
  nowMs: number;
  minIntervalMs: number;
  pacing: BatchPacing;
  streak: number;
  lastPass: { startMs: number; endMs: number } | undefined;
}): number {
  const { lastPass } = input;
  if (lastPass === undefined) return 0;
  const notBeforeMs = lastPass.startMs + Math.max(input.minIntervalMs, batchGapMs(input.pacing, input.streak));
  return Math.max(0, notBeforeMs - input.nowMs);
}
