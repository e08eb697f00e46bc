/**
 * RFC 3339 timestamps as Kubernetes writes them (`metav1.Time`), converted to and from epoch milliseconds.
 *
 * The calendar arithmetic is the built-in `Date`'s, used only on explicit epoch values: the core may not read the
 * clock (ESLint bans `Date.now()`, `new Date()` and `Date()`), and in the workflow sandbox a `Date` built from a
 * number is as deterministic as any other arithmetic. Only the grammar is checked here, because `Date.parse`
 * accepts more than RFC 3339 (and differently per engine). Years are limited to 0000–9999, the four-digit range
 * RFC 3339 can express.
 */

/** Epoch ms of 0000-01-01T00:00:00Z and of 10000-01-01T00:00:00Z: the range a 4-digit year can express. */
const MIN_EPOCH_MS = -62_167_219_200_000;
const MAX_EPOCH_MS_EXCLUSIVE = 253_402_300_800_000;

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/**
 * Formats epoch milliseconds as `YYYY-MM-DDTHH:MM:SSZ` in UTC, truncated to whole seconds like `metav1.Time`;
 * throws a RangeError for a non-finite time or one outside years 0000–9999 (a caller bug, not data).
 */
export function formatRfc3339(epochMs: number): string {
  if (!Number.isFinite(epochMs) || epochMs < MIN_EPOCH_MS || epochMs >= MAX_EPOCH_MS_EXCLUSIVE) {
    throw new RangeError(`formatRfc3339: ${String(epochMs)} ms is outside years 0000-9999`);
  }
  // Within years 0000–9999 toISOString gives `YYYY-MM-DDTHH:MM:SS.000Z` for a whole second.
  return new Date(Math.floor(epochMs / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/**
 * Parses an RFC 3339 `date-time` (`Z` or `±HH:MM` offset, optional fraction truncated to milliseconds) into epoch
 * milliseconds; `undefined` for anything else, including out-of-range fields and leap seconds (`:60`), which Go's
 * `time.Parse` and so Kubernetes refuse too.
 */
export function parseRfc3339(text: string): number | undefined {
  const match = RFC3339.exec(text);
  if (match === null) return undefined;
  const [, yearText, monthText, dayText, hourText, minuteText, secondText, fraction, zulu, sign, offHText, offMText] =
    match;
  const year = Number(yearText);
  const month = Number(monthText);
  const day = Number(dayText);
  const hour = Number(hourText);
  const minute = Number(minuteText);
  const second = Number(secondText);
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  let offsetMinutes = 0;
  if (zulu === undefined) {
    const offsetHour = Number(offHText);
    const offsetMinute = Number(offMText);
    if (offsetHour > 23 || offsetMinute > 59) return undefined;
    offsetMinutes = (sign === '-' ? -1 : 1) * (offsetHour * 60 + offsetMinute);
  }
  const milliseconds = fraction === undefined ? 0 : Number(fraction.slice(0, 3).padEnd(3, '0'));
  // setUTCFullYear, unlike Date.UTC, takes years 0–99 literally instead of as 1900–1999.
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  // Date rolls 04-31 over to 05-01 and month 13 into the next year: a changed field means it did not exist.
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) {
    return undefined;
  }
  date.setUTCHours(hour, minute - offsetMinutes, second, milliseconds);
  return date.getTime();
}
