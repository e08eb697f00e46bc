/**
 * The worker's own workflow task latency, from the Temporal SDK's Prometheus exporter (`METRICS_ADDRESS`):
 * `temporal_workflow_task_execution_latency` (a task's activation → its completion sent, replays excluded),
 * `temporal_workflow_task_replay_latency` and `temporal_workflow_task_schedule_to_start_latency`. sdk-core records
 * durations in milliseconds unless `useSecondsForDurations` is set (then the names end in `_seconds`); its default
 * buckets for the two task latencies are 1, 10, 20, 50, 100, 200, 500 and 1000 ms, so a task over a second is seen,
 * counted, and its length known only as "> 1000 ms".
 */
import { histogramSince, parseHistogram, sumHistograms } from './probes.js';
import type { ScrapedHistogram } from './probes.js';

export const SDK_TASK_HISTOGRAMS = {
  execution: 'temporal_workflow_task_execution_latency',
  replay: 'temporal_workflow_task_replay_latency',
  scheduleToStart: 'temporal_workflow_task_schedule_to_start_latency',
} as const;

export type SdkTaskHistograms = Record<keyof typeof SDK_TASK_HISTOGRAMS, ScrapedHistogram>;

const EMPTY: ScrapedHistogram = { buckets: [], count: 0 };
export const NO_SDK_TASK_HISTOGRAMS: SdkTaskHistograms = { execution: EMPTY, replay: EMPTY, scheduleToStart: EMPTY };

/**
 * One histogram of the page in milliseconds, whatever unit suffix the exporter gave its name (`_milliseconds`,
 * `_seconds` or none: milliseconds).
 */
export function latencyHistogramMs(text: string, base: string): ScrapedHistogram {
  const name = new RegExp(`^(${base}(?:_[a-z]+)?)_bucket\\{`, 'm').exec(text)?.[1];
  if (name === undefined) return EMPTY;
  const histogram = parseHistogram(text, name);
  if (!name.endsWith('_seconds')) return histogram;
  return { ...histogram, buckets: histogram.buckets.map((bucket) => ({ ...bucket, le: bucket.le * 1000 })) };
}

/** Scrapes the three task histograms of one worker; empty ones when its exporter does not answer (it has died). */
export async function scrapeSdkTaskHistograms(url: string): Promise<SdkTaskHistograms> {
  let text: string;
  try {
    text = await (await fetch(url, { signal: AbortSignal.timeout(10_000) })).text();
  } catch {
    return NO_SDK_TASK_HISTOGRAMS;
  }
  return {
    execution: latencyHistogramMs(text, SDK_TASK_HISTOGRAMS.execution),
    replay: latencyHistogramMs(text, SDK_TASK_HISTOGRAMS.replay),
    scheduleToStart: latencyHistogramMs(text, SDK_TASK_HISTOGRAMS.scheduleToStart),
  };
}

/** What the report says of one task histogram. */
export interface TaskLatencySummary {
  /** The Prometheus metric (base name). */
  metric: string;
  /** Observations: workflow tasks. */
  count: number;
  /** Sum of the observations / count, ms (NaN without observations or sums). */
  meanMs: number;
  /**
   * The upper bound of the highest bucket an observation fell in, ms: the maximum is at most this. Infinity when one
   * fell above the last finite bucket (the report shows "> <last bound> ms"); NaN without observations.
   */
  maxAtMostMs: number;
  /** The last finite bucket bound, ms: above it the histogram cannot tell lengths apart. */
  lastBoundMs: number;
  /** Observations over 1000 ms (NaN when 1000 is no bucket bound). */
  overOneSecond: number;
}

export function summarizeTaskLatency(metric: string, histogram: ScrapedHistogram): TaskLatencySummary {
  const buckets = histogram.buckets;
  const total = buckets.at(-1)?.count ?? histogram.count;
  const lastFinite = buckets.filter((bucket) => Number.isFinite(bucket.le)).at(-1);
  const top = total === 0 ? undefined : buckets.find((bucket) => bucket.count >= total);
  const atOneSecond = buckets.find((bucket) => bucket.le === 1000);
  return {
    metric,
    count: total,
    meanMs: total === 0 || histogram.sum === undefined ? Number.NaN : histogram.sum / total,
    maxAtMostMs: top?.le ?? Number.NaN,
    lastBoundMs: lastFinite?.le ?? Number.NaN,
    overOneSecond: atOneSecond === undefined ? (total === 0 ? 0 : Number.NaN) : total - atOneSecond.count,
  };
}

/**
 * The observations made between two snapshots, summed over the worker processes alive at both (a process started
 * in between counts from its start; one that died in between is lost: its counters died with it).
 */
export function taskHistogramsBetween(
  before: Readonly<Record<string, SdkTaskHistograms>>,
  after: Readonly<Record<string, SdkTaskHistograms>>,
): SdkTaskHistograms {
  const pick = (key: keyof SdkTaskHistograms): ScrapedHistogram =>
    sumHistograms(
      Object.entries(after)
        // An empty page: the process died before the second scrape, and its counters with it.
        .filter(([, histograms]) => histograms[key].buckets.length > 0)
        .map(([name, histograms]) =>
          histogramSince(histograms[key], before[name]?.[key] ?? NO_SDK_TASK_HISTOGRAMS[key]),
        ),
    );
  return { execution: pick('execution'), replay: pick('replay'), scheduleToStart: pick('scheduleToStart') };
}

export function summarizeTaskHistograms(
  histograms: SdkTaskHistograms,
): Record<keyof SdkTaskHistograms, TaskLatencySummary> {
  return {
    execution: summarizeTaskLatency(SDK_TASK_HISTOGRAMS.execution, histograms.execution),
    replay: summarizeTaskLatency(SDK_TASK_HISTOGRAMS.replay, histograms.replay),
    scheduleToStart: summarizeTaskLatency(SDK_TASK_HISTOGRAMS.scheduleToStart, histograms.scheduleToStart),
  };
}
