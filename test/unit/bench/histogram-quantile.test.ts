/** The scale benchmark reads the worker's pod → IP histogram as Prometheus would: quantiles interpolated in buckets. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { histogramQuantile, histogramSince } from '../../../bench/scale/probes.js';
import type { ScrapedHistogram } from '../../../bench/scale/probes.js';

/** Cumulative counts for the bounds 1, 2, 5, +Inf. */
function histogram(counts: [number, number, number, number]): ScrapedHistogram {
  const bounds = [1, 2, 5, Number.POSITIVE_INFINITY];
  return { buckets: bounds.map((le, index) => ({ le, count: counts[index] ?? 0 })), count: counts[3] };
}

describe('histogramQuantile', () => {
  const cases: { name: string; q: number; counts: [number, number, number, number]; expected: number }[] = [
    { name: 'inside the first bucket, from 0', q: 0.5, counts: [4, 4, 4, 4], expected: 0.5 },
    { name: 'interpolated in a middle bucket', q: 0.5, counts: [0, 0, 10, 10], expected: 3.5 },
    { name: 'at a bucket edge', q: 0.5, counts: [5, 10, 10, 10], expected: 1 },
    { name: 'in +Inf: the last finite bound', q: 0.99, counts: [0, 0, 1, 10], expected: 5 },
    { name: 'no observations: NaN', q: 0.5, counts: [0, 0, 0, 0], expected: Number.NaN },
  ];
  for (const row of cases) {
    it(row.name, () => {
      assert.deepEqual(histogramQuantile(row.q, histogram(row.counts)), row.expected);
    });
  }

  it('subtracts an earlier scrape bucket by bucket', () => {
    const since = histogramSince(histogram([3, 5, 9, 10]), histogram([1, 1, 2, 2]));
    assert.deepEqual(since, histogram([2, 4, 7, 8]));
  });
});
