/**
 * When `waitEniStatus` describes an ENI it waits on to be `InUse` (an attach under way). An attach takes a few
 * seconds, so a describe right after the call only ever sees `Attaching`: the first describe comes at two thirds of
 * the poll interval (2 s of the default 3 s), the next ones sooner than the interval, a third of it growing by half
 * each time up to it (1, 1.5, 2.25, 3, 3… s). Terway waits 3 s, then 3 s × 1.5: eniflow's first answer comes a second
 * earlier for a typical 2–2.5 s attach, with one or two describes.
 */
export function firstAttachPollMs(pollMs: number): number {
  return Math.round((pollMs * 2) / 3);
}

/** The wait after attempt `attempt` (1, 2, …) saw the ENI not yet `InUse`. */
export function nextAttachPollMs(pollMs: number, attempt: number): number {
  return Math.min(pollMs, Math.round((pollMs / 3) * 1.5 ** Math.max(0, attempt - 1)));
}
