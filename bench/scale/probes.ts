/**
 * What the scale benchmark measures from outside the processes under test: CPU time and memory from /proc,
 * request counters from the kube-apiserver's /metrics, ECS calls from the emulator's call log, and history
 * size from the Temporal server.
 */
import { readFileSync } from 'node:fs';
import { request } from 'node:https';

import type { Client } from '@temporalio/client';

import type { EmulatorAdmin } from '../../src/ecs-emulator/index.js';
import { NODE_WORKFLOW_TYPE } from '../../src/shared/workflow-ids.js';

/** CPU time and memory of one process, read from /proc (Linux only). */
export interface ProcessSample {
  cpuSeconds: number;
  rssBytes: number;
  /** VmHWM: the peak resident set size since the process started. */
  peakRssBytes: number;
}

/** Clock ticks per second of /proc/<pid>/stat times; 100 on every Linux this runs on (getconf CLK_TCK). */
const CLOCK_TICKS_PER_SECOND = 100;

/** Reads a process's CPU time (user + system, all threads) and memory; undefined once it is gone. */
export function sampleProcess(pid: number): ProcessSample | undefined {
  try {
    // The command name (field 2) may contain spaces, so fields are counted after its closing parenthesis.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kib = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
    return {
      cpuSeconds: ticks / CLOCK_TICKS_PER_SECOND,
      rssBytes: kib('VmRSS') * 1024,
      peakRssBytes: kib('VmHWM') * 1024,
    };
  } catch {
    return undefined;
  }
}

/** This process (the benchmark driver and the in-process emulator), from Node's own counters. */
export function sampleSelf(): ProcessSample {
  const usage = process.cpuUsage();
  const memory = process.resourceUsage();
  return {
    cpuSeconds: (usage.user + usage.system) / 1e6,
    rssBytes: process.memoryUsage.rss(),
    peakRssBytes: memory.maxRSS * 1024,
  };
}

/** Counts keyed by a label (verb, action…). */
export type Counts = Record<string, number>;

export function addCounts(into: Counts, key: string, count = 1): void {
  into[key] = (into[key] ?? 0) + count;
}

/** `after − before`, key by key, keeping only keys with a non-zero difference. */
export function diffCounts(after: Counts, before: Counts): Counts {
  const out: Counts = {};
  for (const [key, value] of Object.entries(after)) {
    const delta = value - (before[key] ?? 0);
    if (delta !== 0) out[key] = delta;
  }
  return out;
}

export function sumCounts(counts: Counts): number {
  return Object.values(counts).reduce((sum, value) => sum + value, 0);
}

/** How to reach the kube-apiserver's /metrics as the admin user of the test server. */
export interface ApiserverAccess {
  url: string;
  caFile: string;
  token: string;
}

/**
 * `apiserver_request_total` summed by verb, for the resources eniflow and the benchmark touch (the
 * apiserver's own bookkeeping on other resources is left out). Keys are `VERB resource`.
 */
export async function apiserverRequestsByVerb(access: ApiserverAccess): Promise<Counts> {
  const text = await httpsGet(`${access.url}/metrics`, access);
  const counts: Counts = {};
  for (const line of text.split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    const labels = Object.fromEntries(
      [...line.matchAll(/(\w+)="([^"]*)"/g)].map((match) => [match[1] ?? '', match[2] ?? '']),
    );
    const resource = labels['resource'] ?? '';
    const group = labels['group'] ?? '';
    const relevant = ['pods', 'nodes', 'events', 'leases'].includes(resource) || group === 'network.alibabacloud.com';
    if (!relevant) continue;
    const name = group === 'network.alibabacloud.com' ? 'nodecrs' : resource;
    const subresource =
      labels['subresource'] === undefined || labels['subresource'] === '' ? '' : `/${labels['subresource']}`;
    addCounts(counts, `${labels['verb'] ?? '?'} ${name}${subresource}`, Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return counts;
}

function httpsGet(url: string, access: ApiserverAccess): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { ca: readFileSync(access.caFile), headers: { authorization: `Bearer ${access.token}` }, timeout: 30_000 },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          if (response.statusCode === 200) resolve(body);
          else reject(new Error(`GET ${url}: HTTP ${response.statusCode ?? '?'}: ${body.slice(0, 200)}`));
        });
        response.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`GET ${url}: timed out`)));
    req.on('error', reject);
    req.end();
  });
}

/** A plain HTTP GET of a Prometheus text page, summing the samples of one metric. */
export async function prometheusCounter(url: string, metric: string): Promise<number> {
  const response = await fetch(url);
  const text = await response.text();
  let total = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith(`${metric} `) || line.startsWith(`${metric}{`)) {
      total += Number(line.slice(line.lastIndexOf(' ') + 1));
    }
  }
  return total;
}

/** A Prometheus histogram as scraped: cumulative counts per upper bound (ascending, `+Inf` last), summed over series. */
export interface ScrapedHistogram {
  buckets: { le: number; count: number }[];
  count: number;
  /** The observations' sum (`_sum`), when the page has it. */
  sum?: number;
}

/** One histogram of a Prometheus text page, its series summed over every label but `le`. */
export function parseHistogram(text: string, metric: string): ScrapedHistogram {
  const byBound = new Map<number, number>();
  let count = 0;
  let sum: number | undefined;
  for (const line of text.split('\n')) {
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (line.startsWith(`${metric}_count `) || line.startsWith(`${metric}_count{`)) count += value;
    if (line.startsWith(`${metric}_sum `) || line.startsWith(`${metric}_sum{`)) sum = (sum ?? 0) + value;
    if (!line.startsWith(`${metric}_bucket{`)) continue;
    const le = /le="([^"]+)"/.exec(line)?.[1];
    if (le === undefined) continue;
    const bound = le === '+Inf' ? Number.POSITIVE_INFINITY : Number(le);
    byBound.set(bound, (byBound.get(bound) ?? 0) + value);
  }
  const buckets = [...byBound].sort((a, b) => a[0] - b[0]).map(([le, bucketCount]) => ({ le, count: bucketCount }));
  return { buckets, count, ...(sum === undefined ? {} : { sum }) };
}

/** Scrapes one histogram from a Prometheus text page, summing its series over every label but `le`. */
export async function prometheusHistogram(url: string, metric: string): Promise<ScrapedHistogram> {
  return parseHistogram(await (await fetch(url)).text(), metric);
}

/** Several processes' histograms as one: counts added bucket by bucket (bounds missing from one count as 0 there). */
export function sumHistograms(histograms: readonly ScrapedHistogram[]): ScrapedHistogram {
  const byBound = new Map<number, number>();
  for (const histogram of histograms) {
    for (const bucket of histogram.buckets) byBound.set(bucket.le, (byBound.get(bucket.le) ?? 0) + bucket.count);
  }
  const sums = histograms.flatMap((histogram) => (histogram.sum === undefined ? [] : [histogram.sum]));
  return {
    buckets: [...byBound].sort((a, b) => a[0] - b[0]).map(([le, count]) => ({ le, count })),
    count: histograms.reduce((sum, histogram) => sum + histogram.count, 0),
    ...(sums.length === 0 ? {} : { sum: sums.reduce((total, value) => total + value, 0) }),
  };
}

/** `later − earlier`, bucket by bucket: the observations made between two scrapes of one process. */
export function histogramSince(later: ScrapedHistogram, earlier: ScrapedHistogram): ScrapedHistogram {
  const before = new Map(earlier.buckets.map((bucket) => [bucket.le, bucket.count]));
  return {
    buckets: later.buckets.map((bucket) => ({ le: bucket.le, count: bucket.count - (before.get(bucket.le) ?? 0) })),
    count: later.count - earlier.count,
    ...(later.sum === undefined ? {} : { sum: later.sum - (earlier.sum ?? 0) }),
  };
}

/**
 * The q-quantile as Prometheus's `histogram_quantile` estimates it: linear within the bucket it falls in, the upper
 * bound of the last finite bucket when it falls in `+Inf`, NaN without observations.
 */
export function histogramQuantile(q: number, histogram: ScrapedHistogram): number {
  const total = histogram.buckets.at(-1)?.count ?? 0;
  if (total === 0) return Number.NaN;
  const rank = q * total;
  let lowerBound = 0;
  let lowerCount = 0;
  for (const bucket of histogram.buckets) {
    if (bucket.count >= rank) {
      if (bucket.le === Number.POSITIVE_INFINITY) return lowerBound;
      const inBucket = bucket.count - lowerCount;
      return inBucket === 0 ? bucket.le : lowerBound + ((bucket.le - lowerBound) * (rank - lowerCount)) / inBucket;
    }
    lowerBound = bucket.le;
    lowerCount = bucket.count;
  }
  return lowerBound;
}

/**
 * Follows the emulator's call log and counts calls by action. The log is a ring buffer, so it is drained
 * often (every `intervalMs`) and a gap in sequence numbers is reported as lost calls.
 */
export class EcsCallCounter {
  readonly counts: Counts = {};
  lost = 0;
  private lastSeq = 0;
  private timer: NodeJS.Timeout | undefined;
  private draining: Promise<void> = Promise.resolve();

  private readonly admin: EmulatorAdmin;

  constructor(admin: EmulatorAdmin) {
    this.admin = admin;
  }

  start(intervalMs = 1_000): void {
    this.timer = setInterval(() => void this.drain(), intervalMs);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Reads every call logged since the last drain; returns the counts so far (a copy). */
  async drain(): Promise<Counts> {
    this.draining = this.draining.then(async () => {
      const entries = await this.admin.calls({ sinceSeq: this.lastSeq });
      for (const entry of entries) {
        if (entry.seq > this.lastSeq + 1) this.lost += entry.seq - this.lastSeq - 1;
        this.lastSeq = entry.seq;
        addCounts(this.counts, entry.action);
      }
    });
    await this.draining;
    return { ...this.counts };
  }
}

/** History of every node workflow (all runs, continued-as-new ones included) on the task queue. */
export interface HistoryTotals {
  workflows: number;
  runs: number;
  events: number;
  bytes: number;
}

/**
 * Sums history length and size over all runs of node workflows on the task queue (the cluster's janitor is left
 * out: it is one per cluster, not per node): closed runs from visibility, running ones from
 * DescribeWorkflowExecution (visibility lags for those).
 */
export async function historyTotals(client: Client, taskQueue: string): Promise<HistoryTotals> {
  const totals: HistoryTotals = { workflows: 0, runs: 0, events: 0, bytes: 0 };
  const ids = new Set<string>();
  const running: string[] = [];
  for await (const execution of client.workflow.list({
    query: `TaskQueue = "${taskQueue}" AND WorkflowType = "${NODE_WORKFLOW_TYPE}"`,
  })) {
    ids.add(execution.workflowId);
    totals.runs += 1;
    if (execution.status.name === 'RUNNING') {
      running.push(execution.workflowId);
      continue;
    }
    totals.events += execution.historyLength;
    totals.bytes += execution.historySize ?? 0;
  }
  for (let start = 0; start < running.length; start += 20) {
    const descriptions = await Promise.all(
      running.slice(start, start + 20).map((workflowId) => client.workflow.getHandle(workflowId).describe()),
    );
    for (const description of descriptions) {
      totals.events += description.historyLength;
      totals.bytes += description.historySize ?? 0;
    }
  }
  totals.workflows = ids.size;
  return totals;
}
