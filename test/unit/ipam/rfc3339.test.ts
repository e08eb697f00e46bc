import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { formatRfc3339, parseRfc3339 } from '../../../src/ipam/rfc3339.js';

/** Epoch ms of 0000-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z: the range four-digit years can express. */
const MIN_MS = -62_167_219_200_000;
const MAX_MS = 253_402_300_799_999;

/** The oracle: `Date` itself, truncated to whole seconds. */
function dateFormat(epochMs: number): string {
  return new Date(Math.floor(epochMs / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

void describe('formatRfc3339', () => {
  const rows: { name: string; epochMs: number; expected: string }[] = [
    { name: 'the epoch', epochMs: 0, expected: '1970-01-01T00:00:00Z' },
    { name: 'milliseconds are truncated', epochMs: 999, expected: '1970-01-01T00:00:00Z' },
    { name: 'before the epoch rounds down', epochMs: -1, expected: '1969-12-31T23:59:59Z' },
    { name: 'a Terway sync time', epochMs: 1_729_567_025_000, expected: '2024-10-22T03:17:05Z' },
    { name: 'a leap day', epochMs: 1_709_164_800_000, expected: '2024-02-29T00:00:00Z' },
    { name: 'the 2000 leap day (divisible by 400)', epochMs: 951_782_400_000, expected: '2000-02-29T00:00:00Z' },
    { name: 'the day after 2100-02-28 (no leap day)', epochMs: 4_107_542_400_000, expected: '2100-03-01T00:00:00Z' },
    { name: 'the last second of a year', epochMs: 1_735_689_599_000, expected: '2024-12-31T23:59:59Z' },
    { name: 'the first instant of year 0000', epochMs: MIN_MS, expected: '0000-01-01T00:00:00Z' },
    { name: 'the last instant of year 9999', epochMs: MAX_MS, expected: '9999-12-31T23:59:59Z' },
  ];
  for (const row of rows) {
    void it(`formats ${row.name}`, () => {
      assert.equal(formatRfc3339(row.epochMs), row.expected);
    });
  }

  for (const epochMs of [Number.NaN, Number.POSITIVE_INFINITY, MIN_MS - 1, MAX_MS + 1]) {
    void it(`throws a RangeError for ${epochMs}`, () => {
      assert.throws(() => formatRfc3339(epochMs), RangeError);
    });
  }

  void it('matches Date.prototype.toISOString truncated to seconds', () => {
    fc.assert(
      fc.property(fc.integer({ min: MIN_MS, max: MAX_MS }), (epochMs) => {
        assert.equal(formatRfc3339(epochMs), dateFormat(epochMs));
      }),
      { numRuns: 5000 },
    );
  });
});

void describe('parseRfc3339', () => {
  const valid: { text: string; expected: number }[] = [
    { text: '1970-01-01T00:00:00Z', expected: 0 },
    { text: '2024-10-22T03:17:05Z', expected: 1_729_567_025_000 },
    { text: '2024-10-22t03:17:05z', expected: 1_729_567_025_000 },
    { text: '2024-10-22T11:17:05+08:00', expected: 1_729_567_025_000 },
    { text: '2024-10-21T23:47:05-03:30', expected: 1_729_567_025_000 },
    { text: '2024-10-22T03:17:05+00:00', expected: 1_729_567_025_000 },
    { text: '2024-10-22T03:17:05-00:00', expected: 1_729_567_025_000 },
    { text: '2024-10-22T03:17:05.5Z', expected: 1_729_567_025_500 },
    { text: '2024-10-22T03:17:05.123Z', expected: 1_729_567_025_123 },
    { text: '2024-10-22T03:17:05.123999999Z', expected: 1_729_567_025_123 },
    { text: '2024-02-29T00:00:00Z', expected: 1_709_164_800_000 },
    { text: '2000-02-29T00:00:00Z', expected: 951_782_400_000 },
    { text: '1969-12-31T23:59:59Z', expected: -1000 },
    { text: '0000-01-01T00:00:00Z', expected: MIN_MS },
    { text: '9999-12-31T23:59:59.999Z', expected: MAX_MS },
    { text: '0000-01-01T00:00:00+23:59', expected: MIN_MS - (23 * 60 + 59) * 60_000 },
  ];
  for (const row of valid) {
    void it(`parses ${row.text}`, () => {
      assert.equal(parseRfc3339(row.text), row.expected);
    });
  }

  const invalid: { name: string; text: string }[] = [
    { name: 'empty text', text: '' },
    { name: 'a date only', text: '2024-10-22' },
    { name: 'no offset', text: '2024-10-22T03:17:05' },
    { name: 'a space instead of T', text: '2024-10-22 03:17:05Z' },
    { name: 'month 13', text: '2024-13-01T00:00:00Z' },
    { name: 'month 0', text: '2024-00-01T00:00:00Z' },
    { name: 'day 0', text: '2024-01-00T00:00:00Z' },
    { name: 'April 31', text: '2024-04-31T00:00:00Z' },
    { name: 'February 29 of a common year', text: '2023-02-29T00:00:00Z' },
    { name: 'February 29 of 1900', text: '1900-02-29T00:00:00Z' },
    { name: 'hour 24', text: '2024-10-22T24:00:00Z' },
    { name: 'minute 60', text: '2024-10-22T03:60:00Z' },
    { name: 'a leap second', text: '2016-12-31T23:59:60Z' },
    { name: 'offset hour 24', text: '2024-10-22T03:17:05+24:00' },
    { name: 'offset minute 60', text: '2024-10-22T03:17:05+01:60' },
    { name: 'offset without a colon', text: '2024-10-22T03:17:05+0800' },
    { name: 'an empty fraction', text: '2024-10-22T03:17:05.Z' },
    { name: 'a five-digit year', text: '12024-10-22T03:17:05Z' },
    { name: 'a two-digit year', text: '24-10-22T03:17:05Z' },
    { name: 'single-digit fields', text: '2024-1-2T3:4:5Z' },
    { name: 'trailing text', text: '2024-10-22T03:17:05Zjunk' },
    { name: 'leading space', text: ' 2024-10-22T03:17:05Z' },
    { name: 'non-ASCII digits', text: '２０２４-10-22T03:17:05Z' },
    { name: 'a Go zero time written as text', text: 'null' },
  ];
  for (const row of invalid) {
    void it(`refuses ${row.name}: ${JSON.stringify(row.text)}`, () => {
      assert.equal(parseRfc3339(row.text), undefined);
    });
  }

  void it('round-trips every formatted time to the same whole second', () => {
    fc.assert(
      fc.property(fc.integer({ min: MIN_MS, max: MAX_MS }), (epochMs) => {
        const text = formatRfc3339(epochMs);
        assert.equal(parseRfc3339(text), Math.floor(epochMs / 1000) * 1000);
        assert.equal(formatRfc3339(parseRfc3339(text) ?? Number.NaN), text);
      }),
      { numRuns: 5000 },
    );
  });

  void it('agrees with Date.parse on times with offsets and fractions', () => {
    const offset = fc.oneof(
      fc.constant('Z'),
      fc
        .tuple(fc.constantFrom('+', '-'), fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }))
        .map(([sign, hours, minutes]) => `${sign}${pad(hours)}:${pad(minutes)}`),
    );
    // Stay a day inside the 4-digit range so the offset cannot push the instant out of it.
    const instant = fc.integer({ min: MIN_MS + 86_400_000, max: MAX_MS - 86_400_000 });
    const fraction = fc.oneof(fc.constant(''), fc.stringMatching(/^\.[0-9]{3}$/));
    fc.assert(
      fc.property(instant, fraction, offset, (epochMs, fractionText, offsetText) => {
        const text = dateFormat(epochMs).replace('Z', `${fractionText}${offsetText}`);
        assert.equal(parseRfc3339(text), Date.parse(text));
      }),
      { numRuns: 5000 },
    );
  });
});

function pad(value: number): string {
  return String(value).padStart(2, '0');
}
