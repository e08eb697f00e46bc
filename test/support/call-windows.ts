/**
 * Call-log arithmetic shared by the ECS budget test and the throttle bench: how many calls fell in the busiest
 * window of a given length.
 */

/** The most entries in any window of `windowMs` (sliding over the sorted arrival times, not aligned to a start). */
export function maxInWindow(timesMs: readonly number[], windowMs: number): number {
  const sorted = [...timesMs].sort((a, b) => a - b);
  let best = 0;
  let start = 0;
  for (let end = 0; end < sorted.length; end += 1) {
    while ((sorted[end] ?? 0) - (sorted[start] ?? 0) >= windowMs) start += 1;
    best = Math.max(best, end - start + 1);
  }
  return best;
}
