/**
 * Go duration strings (`time.ParseDuration`, the text of a Kubernetes `metav1.Duration`): what Terway's daemon writes
 * into `spec.pool.poolSyncPeriod` and `spec.pool.reclaim.after|interval`, e.g. `"300s"`, `"1h30m"`, `"1.5m"`.
 */

const UNIT_MS: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  μs: 1e-3,
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
};

const TERM = /^([0-9]*(?:\.[0-9]*)?)(ns|us|µs|μs|ms|s|m|h)/;

/**
 * Milliseconds of a Go duration string (sub-millisecond parts rounded to the nearest ms), or undefined when Go would
 * refuse it. As in Go: an optional sign, then one or more `<decimal><unit>` terms; a lone `"0"` is zero; a number
 * without a unit, an empty string or an unknown unit is an error.
 */
export function parseGoDuration(text: string): number | undefined {
  let rest = text;
  let sign = 1;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    sign = rest.startsWith('-') ? -1 : 1;
    rest = rest.slice(1);
  }
  if (rest === '0') return 0;
  if (rest === '') return undefined;
  let totalMs = 0;
  while (rest !== '') {
    const match = TERM.exec(rest);
    const digits = match?.[1];
    const unit = match?.[2];
    if (match === null || digits === undefined || unit === undefined) return undefined;
    if (digits === '' || digits === '.') return undefined;
    totalMs += Number(digits) * (UNIT_MS[unit] ?? Number.NaN);
    rest = rest.slice(match[0].length);
  }
  if (!Number.isFinite(totalMs)) return undefined;
  return sign * Math.round(totalMs);
}
