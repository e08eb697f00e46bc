/**
 * RFC 3339 timestamps as Kubernetes writes them (`metav1.Time`), converted to and from epoch milliseconds with
 * integer calendar arithmetic, because the pure core may not use the `Date` global.
 *
 * The calendar is the proleptic Gregorian one in UTC. Years are limited to 0000–9999, the four-digit range
 * RFC 3339 can express.
 */

const MS_PER_SECOND = 1000;
const MS_PER_MINUTE = 60 * MS_PER_SECOND;
const MS_PER_HOUR = 60 * MS_PER_MINUTE;
const MS_PER_DAY = 24 * MS_PER_HOUR;
/** Days in a 400-year Gregorian cycle: the calendar repeats exactly after it. */
const DAYS_PER_ERA = 146_097;
/** Days from 0000-03-01 to 1970-01-01, in the March-based counting used below. */
const EPOCH_SHIFT_DAYS = 719_468;
/** Epoch ms of 0000-01-01T00:00:00Z and of 10000-01-01T00:00:00Z: the range a 4-digit year can express. */
const MIN_EPOCH_MS = -62_167_219_200_000;
const MAX_EPOCH_MS_EXCLUSIVE = 253_402_300_800_000;

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

function isLeapYear(year: number): boolean {
  return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return isLeapYear(year) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/**
 * Days since 1970-01-01 of a calendar date. Counting years from March puts the leap day last, so the day of the
 * year is a linear formula of the month and each 400-year era has the same length.
 */
function daysFromCivil(year: number, month: number, day: number): number {
  const marchYear = month <= 2 ? year - 1 : year;
  const era = Math.floor(marchYear / 400);
  const yearOfEra = marchYear - era * 400;
  const monthFromMarch = (month + 9) % 12;
  const dayOfYear = Math.floor((153 * monthFromMarch + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * DAYS_PER_ERA + dayOfEra - EPOCH_SHIFT_DAYS;
}

/** Inverse of {@link daysFromCivil}. */
function civilFromDays(days: number): { year: number; month: number; day: number } {
  const shifted = days + EPOCH_SHIFT_DAYS;
  const era = Math.floor(shifted / DAYS_PER_ERA);
  const dayOfEra = shifted - era * DAYS_PER_ERA;
  const yearOfEra = Math.floor(
    (dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365,
  );
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const monthFromMarch = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * monthFromMarch + 2) / 5) + 1;
  const month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  return { year, month, day };
}

function pad(value: number, width: number): string {
  return String(value).padStart(width, '0');
}

/**
 * Formats epoch milliseconds as `YYYY-MM-DDTHH:MM:SSZ` in UTC, truncated to whole seconds like `metav1.Time`;
 * throws a RangeError for a non-finite time or one outside years 0000–9999 (a caller bug, not data).
 */
export function formatRfc3339(epochMs: number): string {
  if (!Number.isFinite(epochMs) || epochMs < MIN_EPOCH_MS || epochMs >= MAX_EPOCH_MS_EXCLUSIVE) {
    throw new RangeError(`formatRfc3339: ${String(epochMs)} ms is outside years 0000-9999`);
  }
  const wholeMs = Math.floor(epochMs / MS_PER_SECOND) * MS_PER_SECOND;
  const days = Math.floor(wholeMs / MS_PER_DAY);
  const msOfDay = wholeMs - days * MS_PER_DAY;
  const { year, month, day } = civilFromDays(days);
  const hour = Math.floor(msOfDay / MS_PER_HOUR);
  const minute = Math.floor((msOfDay % MS_PER_HOUR) / MS_PER_MINUTE);
  const second = Math.floor((msOfDay % MS_PER_MINUTE) / MS_PER_SECOND);
  return `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}T${pad(hour, 2)}:${pad(minute, 2)}:${pad(second, 2)}Z`;
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
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  let offsetMs = 0;
  if (zulu === undefined) {
    const offsetHours = Number(offHText);
    const offsetMinutes = Number(offMText);
    if (offsetHours > 23 || offsetMinutes > 59) return undefined;
    offsetMs = (sign === '-' ? -1 : 1) * (offsetHours * MS_PER_HOUR + offsetMinutes * MS_PER_MINUTE);
  }
  const milliseconds = fraction === undefined ? 0 : Number(fraction.slice(0, 3).padEnd(3, '0'));
  return (
    daysFromCivil(year, month, day) * MS_PER_DAY +
    hour * MS_PER_HOUR +
    minute * MS_PER_MINUTE +
    second * MS_PER_SECOND +
    milliseconds -
    offsetMs
  );
}
