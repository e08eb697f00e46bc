/**
 * The scale benchmark: the whole stack on this machine — Temporal dev server, kube-apiserver, the
 * ECS emulator with cloud-like latency, and the worker and the watcher as separate processes configured as
 * deployed — then N nodes and a burst of P pods per node created through the watcher. Prints pod → IP
 * latency, ECS calls per pod, apiserver requests by verb, history per node, CPU and memory per process, and
 * restart-to-served time. Everything started is stopped at the end, on failure and on Ctrl-C.
 *
 * Usage: npm run bench:scale -- [--nodes 10] [--pods 25] [--idle-seconds 600] [--eni-poll-ms 3000]
 *        [--attach-ms 2000] [--pool 2-5] [--node-settings JSON]
 *        [--timeout-seconds 900] [--preset smoke] [--json | --json-file report.json] [--keep-logs] [--timeline]
 */
import { writeFile } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';

import { KubeConfig } from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';

import { reserveFreePorts } from '../scripts/lib/free-ports.js';
import { ManagedProcess } from '../scripts/lib/managed-process.js';
import { pollUntil } from '../scripts/lib/poll-until.js';
import { TEST_ENV_VARS } from '../scripts/lib/test-env-vars.js';
import { describeError, startTestServers } from '../scripts/lib/test-servers.js';
import type { TestServers } from '../scripts/lib/test-servers.js';
import { startEcsEmulator } from '../src/ecs-emulator/index.js';
import type { EcsEmulator } from '../src/ecs-emulator/index.js';
import {
  BENCH_NAMESPACE,
  BenchKube,
  ServedTracker,
  benchNodeName,
  forEachLimited,
  scaleFixture,
} from './scale/cluster.js';
import type { PoolSize } from './scale/cluster.js';
import {
  EcsCallCounter,
  apiserverRequestsByVerb,
  diffCounts,
  histogramQuantile,
  histogramSince,
  historyTotals,
  prometheusCounter,
  prometheusHistogram,
  sampleProcess,
  sampleSelf,
  sumCounts,
} from './scale/probes.js';
import type { ApiserverAccess, Counts, HistoryTotals, ProcessSample, ScrapedHistogram } from './scale/probes.js';
import { formatReport, summarizeLatencies } from './scale/report.js';
import { fetchNodeTimeline } from './scale/timeline.js';
import type { ProcessFigures, ScaleReport } from './scale/report.js';

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
const TASK_QUEUE = 'eniflow-bench';
const ECS_LATENCY_MS = { min: 30, max: 50 } as const;
const CREATE_CONCURRENCY = 32;
/** Settled: no ECS call and no CR change for this long after the last pod was served. */
const SETTLE_QUIET_MS = 5_000;

interface Options {
  nodes: number;
  pods: number;
  idleSeconds: number;
  eniPollIntervalMs: number;
  timeoutSeconds: number;
  json: boolean;
  /** Keep the run directory (server, worker and watcher logs) after a successful run too. */
  keepLogs: boolean;
  /** Also write the JSON report to this file (the table still goes to stdout). */
  jsonFile?: string;
  /** The watcher's `NODE_WORKFLOW_SETTINGS` (JSON), to measure a setting such as `maxBatchWindowMs`. */
  nodeSettings?: string;
  /** The emulator's attach (and detach, delete) transition time. */
  attachMs: number;
  /** Every node CR's warm pool. */
  pool: PoolSize;
  /** Print the first node's burst timeline in the Markdown report (the JSON report always has it). */
  timeline: boolean;
}

const PRESETS: Readonly<Record<string, Partial<Options>>> = {
  /** What CI can afford as a smoke run: every figure present, no timing asserted. */
  smoke: { nodes: 3, pods: 5, idleSeconds: 10 },
  /**
   * The cold path as Terway was measured against it (issue 20): no warm pool, so every pod waits for a new ENI,
   * with a 2.5 s attach. Use --nodes 40 for the larger run.
   */
  cold: { nodes: 5, pods: 20, idleSeconds: 10, attachMs: 2_500, pool: { min: 0, max: 5 } },
};

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      preset: { type: 'string' },
      nodes: { type: 'string' },
      pods: { type: 'string' },
      'idle-seconds': { type: 'string' },
      'eni-poll-ms': { type: 'string' },
      'timeout-seconds': { type: 'string' },
      json: { type: 'boolean', default: false },
      'json-file': { type: 'string' },
      'keep-logs': { type: 'boolean', default: false },
      'node-settings': { type: 'string' },
      'attach-ms': { type: 'string' },
      pool: { type: 'string' },
      timeline: { type: 'boolean', default: false },
    },
    strict: true,
  });
  const preset = values.preset === undefined ? {} : PRESETS[values.preset];
  if (preset === undefined)
    throw new Error(`unknown preset "${values.preset ?? ''}" (known: ${Object.keys(PRESETS).join(', ')})`);
  const int = (text: string | undefined, fallback: number, name: string): number => {
    if (text === undefined) return fallback;
    const value = Number(text);
    if (!Number.isInteger(value) || value <= 0) throw new Error(`--${name} must be a positive integer, got "${text}"`);
    return value;
  };
  return {
    nodes: int(values.nodes, preset.nodes ?? 10, 'nodes'),
    pods: int(values.pods, preset.pods ?? 25, 'pods'),
    idleSeconds: int(values['idle-seconds'], preset.idleSeconds ?? 600, 'idle-seconds'),
    eniPollIntervalMs: int(values['eni-poll-ms'], 3_000, 'eni-poll-ms'),
    timeoutSeconds: int(values['timeout-seconds'], 900, 'timeout-seconds'),
    json: values.json,
    keepLogs: values['keep-logs'],
    ...(values['json-file'] === undefined ? {} : { jsonFile: values['json-file'] }),
    ...(values['node-settings'] === undefined ? {} : { nodeSettings: values['node-settings'] }),
    attachMs: int(values['attach-ms'], preset.attachMs ?? 2_000, 'attach-ms'),
    pool: values.pool === undefined ? (preset.pool ?? { min: 2, max: 5 }) : parsePool(values.pool),
    timeline: values.timeline,
  };
}

/** `--pool MIN-MAX`, e.g. `0-5`. */
function parsePool(text: string): PoolSize {
  const match = /^(\d+)-(\d+)$/.exec(text);
  const min = Number(match?.[1]);
  const max = Number(match?.[2]);
  if (match === null || min > max || max === 0)
    throw new Error(`--pool must be MIN-MAX with MIN <= MAX and MAX > 0, got "${text}"`);
  return { min, max };
}

const log = (line: string): void => {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
};

/** Everything measured at one instant, to subtract phases from each other. */
interface Snapshot {
  atMs: number;
  processes: Record<string, ProcessSample | undefined>;
  apiserver: Counts;
  ownRequests: Counts;
  ecs: Counts;
  history: HistoryTotals;
  signals: number;
  /** The first worker's pod → IP histogram (absent once it was killed). */
  podIpReady?: ScrapedHistogram;
}

/** Cleanup steps, run last-in first-out exactly once (normal end, failure or signal). */
class Cleanup {
  private readonly steps: { name: string; run: () => unknown }[] = [];
  private running: Promise<void> | undefined;

  add(name: string, run: () => unknown): void {
    this.steps.push({ name, run });
  }

  run(): Promise<void> {
    this.running ??= (async () => {
      for (const step of this.steps.reverse()) {
        await Promise.resolve()
          .then(step.run)
          .catch((error: unknown) => {
            log(`stopping ${step.name} failed: ${describeError(error)}`);
          });
      }
    })();
    return this.running;
  }
}

function startRole(input: { name: string; script: string; env: NodeJS.ProcessEnv; logDir: string }): ManagedProcess {
  return new ManagedProcess({
    name: input.name,
    command: process.execPath,
    // tsx's ESM hooks only: src/ is all ESM, and without the CommonJS hooks the thousands of require() calls inside
    // node_modules skip tsx's resolver (about 0.7 s less CPU per worker start).
    args: ['--import', 'tsx/esm', input.script],
    cwd: REPO_ROOT,
    env: input.env,
    logPath: join(input.logDir, `${input.name}.log`),
  });
}

async function run(options: Options, cleanup: Cleanup): Promise<ScaleReport> {
  const loadAverageAtStart = loadavg();
  const servers: TestServers = await startTestServers({ log });
  let keepLogs = true;
  cleanup.add('test servers', () => servers.stop({ keepLogs }));
  const temporalPid = servers.servers.find((server) => server.name === 'temporal')?.details?.pid;
  const apiserverPid = servers.servers.find((server) => server.name === 'kube-apiserver')?.details?.pid;

  const emulator: EcsEmulator = await startEcsEmulator({
    fixture: await scaleFixture(options.nodes),
    settings: {
      latency: { '*': { minMs: ECS_LATENCY_MS.min, maxMs: ECS_LATENCY_MS.max } },
      transitionDelays: { attachMs: options.attachMs, detachMs: options.attachMs, deleteMs: options.attachMs },
      callLogCapacity: 100_000,
    },
  });
  cleanup.add('ECS emulator', () => emulator.close());
  log(`ECS emulator on ${emulator.endpoint} with ${options.nodes} instances`);
  const ecsCalls = new EcsCallCounter(emulator.admin);
  ecsCalls.start();
  cleanup.add('ECS call counter', () => {
    ecsCalls.stop();
  });

  const kubeconfigPath = servers.env[TEST_ENV_VARS.kubeconfig] ?? '';
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(kubeconfigPath);
  const kube = new BenchKube(kubeConfig);
  const access: ApiserverAccess = {
    url: servers.env[TEST_ENV_VARS.kubeServer] ?? '',
    caFile: servers.env[TEST_ENV_VARS.kubeCaFile] ?? '',
    token: servers.env[TEST_ENV_VARS.kubeToken] ?? '',
  };
  const temporalAddress = servers.env[TEST_ENV_VARS.temporalAddress] ?? '';
  const connection = await Connection.connect({ address: temporalAddress });
  cleanup.add('Temporal client', () => connection.close());
  const client = new Client({ connection, namespace: 'default' });

  const [workerMetricsPort, watcherHealthPort, workerHealthPort] = await reserveFreePorts(3);
  const roleEnv: NodeJS.ProcessEnv = {
    PATH: process.env['PATH'],
    HOME: process.env['HOME'],
    TEMPORAL_ADDRESS: temporalAddress,
    TEMPORAL_NAMESPACE: 'default',
    TEMPORAL_TASK_QUEUE: TASK_QUEUE,
    KUBECONFIG: kubeconfigPath,
    ECS_REGION_ID: emulator.regionId,
    ECS_ENDPOINT: emulator.endpoint,
    ECS_PROTOCOL: 'http',
    ALIBABA_CLOUD_ACCESS_KEY_ID: emulator.accessKeyId,
    ALIBABA_CLOUD_ACCESS_KEY_SECRET: emulator.accessKeySecret,
    ENI_POLL_INTERVAL_MS: String(options.eniPollIntervalMs),
    LOG_LEVEL: 'info',
  };
  const workerEnv = {
    ...roleEnv,
    METRICS_ADDRESS: `127.0.0.1:${workerMetricsPort ?? 0}`,
    HEALTH_ADDRESS: `127.0.0.1:${workerHealthPort ?? 0}`,
  };
  const workerMetricsUrl = `http://127.0.0.1:${workerHealthPort ?? 0}/metrics`;
  const watcherHealthUrl = `http://127.0.0.1:${watcherHealthPort ?? 0}`;
  const watcherEnv = {
    ...roleEnv,
    LEASE_NAMESPACE: 'default',
    ENIFLOW_CLUSTER_ID: 'eniflow-bench',
    POD_IDENTITY: 'bench-watcher',
    HEALTH_ADDRESS: `127.0.0.1:${watcherHealthPort ?? 0}`,
    ...(options.nodeSettings === undefined ? {} : { NODE_WORKFLOW_SETTINGS: options.nodeSettings }),
  };

  let worker = startRole({ name: 'worker-1', script: 'src/worker/main.ts', env: workerEnv, logDir: servers.runDir });
  cleanup.add('worker', () => worker.stop(10_000));
  const watcher = startRole({
    name: 'watcher',
    script: 'src/watcher/main.ts',
    env: watcherEnv,
    logDir: servers.runDir,
  });
  cleanup.add('watcher', () => watcher.stop(10_000));
  await worker.waitForStdoutLine((line) => line.includes('"Worker started"'), 180_000);
  await watcher.waitForStdoutLine((line) => line.includes('"Became leader"'), 60_000);
  log(`worker (pid ${worker.pid}) and watcher (pid ${watcher.pid}) up`);

  const pids = (): Record<string, number | undefined> => ({
    worker: worker.hasExited ? undefined : worker.pid,
    watcher: watcher.pid,
    'temporal server': temporalPid,
    'kube-apiserver': apiserverPid,
  });
  const snapshot = async (): Promise<Snapshot> => {
    const processes: Record<string, ProcessSample | undefined> = {};
    for (const [name, pid] of Object.entries(pids()))
      processes[name] = pid === undefined ? undefined : sampleProcess(pid);
    processes['bench + emulator'] = sampleSelf();
    return {
      atMs: performance.now(),
      processes,
      apiserver: await apiserverRequestsByVerb(access),
      ownRequests: { ...kube.ownRequests },
      ecs: await ecsCalls.drain(),
      history: await historyTotals(client, TASK_QUEUE),
      signals: await prometheusCounter(`${watcherHealthUrl}/metrics`, 'eniflow_watcher_signals_sent_total'),
      ...(worker.hasExited
        ? {}
        : { podIpReady: await prometheusHistogram(workerMetricsUrl, 'eniflow_pod_ip_ready_seconds') }),
    };
  };

  const tracker = new ServedTracker(kube);
  await tracker.start();
  cleanup.add('CR watch', () => {
    tracker.stop();
  });
  await kube.createNamespace(BENCH_NAMESPACE);
  const timeoutMs = options.timeoutSeconds * 1000;

  log(`creating ${options.nodes} nodes`);
  const nodesStartMs = performance.now();
  const nodeIndexes = Array.from({ length: options.nodes }, (_, index) => index);
  await forEachLimited(nodeIndexes, 8, (index) => kube.createNode(index, emulator.regionId, options.pool));
  await tracker.until(() => tracker.warmNodes(options.pool.min) === options.nodes, timeoutMs, 'every node pool warm');
  const nodesWarmMs = performance.now() - nodesStartMs;
  log(`every node's pool warm after ${(nodesWarmMs / 1000).toFixed(1)} s`);
  await settle(ecsCalls, tracker);

  const beforeBurst = await snapshot();
  log(`burst: ${options.nodes * options.pods} pods`);
  const burstPods: { node: string; pod: string; id: string }[] = [];
  for (let podIndex = 0; podIndex < options.pods; podIndex += 1) {
    for (const index of nodeIndexes) {
      const node = benchNodeName(index);
      const pod = `${node}-p${String(podIndex).padStart(3, '0')}`;
      burstPods.push({ node, pod, id: `${BENCH_NAMESPACE}/${pod}` });
    }
  }
  const burstStartMs = performance.now();
  await forEachLimited(burstPods, CREATE_CONCURRENCY, async ({ node, pod, id }) => {
    tracker.expect(id, performance.now());
    await kube.createPod(node, pod);
  });
  const createMs = performance.now() - burstStartMs;
  log(`burst created in ${(createMs / 1000).toFixed(1)} s; waiting for every pod's IP`);
  const ids = burstPods.map((entry) => entry.id);
  await tracker.until(
    () => ids.every((id) => tracker.servedMs(id) !== undefined),
    timeoutMs,
    `every burst pod's IP in its node's CR`,
  );
  const allServedMs = Math.max(...ids.map((id) => tracker.servedMs(id) ?? Number.NaN)) - burstStartMs;
  log(`all served ${(allServedMs / 1000).toFixed(1)} s after the first pod was created; settling`);
  const settledMs = (await settle(ecsCalls, tracker)) - burstStartMs;
  const afterBurst = await snapshot();
  const timelineNode = benchNodeName(0);
  const epochMs = (performanceMs: number): number => performance.timeOrigin + performanceMs;
  const timeline = await fetchNodeTimeline({
    client,
    node: timelineNode,
    originMs: epochMs(burstStartMs),
    endMs: epochMs(afterBurst.atMs),
    pods: burstPods
      .filter((entry) => entry.node === timelineNode)
      .flatMap(({ pod, id }) => {
        const times = tracker.podTimes(id);
        if (times === undefined) return [];
        return [
          {
            name: pod,
            createdMs: epochMs(times.createdMs),
            ...(times.servedMs === undefined ? {} : { servedMs: epochMs(times.servedMs) }),
          },
        ];
      }),
  });

  log(`idle window: ${options.idleSeconds} s`);
  await sleep(options.idleSeconds * 1000);
  const afterIdle = await snapshot();
  const workerPeak = sampleProcess(worker.pid);

  log('restart: SIGKILL the worker, start a new one, create one pod');
  process.kill(worker.pid, 'SIGKILL');
  await worker.exited;
  const restartMs = performance.now();
  worker = startRole({ name: 'worker-2', script: 'src/worker/main.ts', env: workerEnv, logDir: servers.runDir });
  const restartNode = benchNodeName(Math.floor(Math.random() * options.nodes));
  const restartPod = `${restartNode}-after-restart`;
  tracker.expect(`${BENCH_NAMESPACE}/${restartPod}`, restartMs);
  await kube.createPod(restartNode, restartPod);
  await worker.waitForStdoutLine((line) => line.includes('"Worker started"'), 180_000);
  const workerStartMs = performance.now() - restartMs;
  await tracker.until(
    () => tracker.servedMs(`${BENCH_NAMESPACE}/${restartPod}`) !== undefined,
    timeoutMs,
    'the pod created at the worker restart to be served',
  );
  const restartServedMs = (tracker.servedMs(`${BENCH_NAMESPACE}/${restartPod}`) ?? Number.NaN) - restartMs;
  log(`restart: served ${(restartServedMs / 1000).toFixed(1)} s after the new worker was spawned`);
  const final = await snapshot();

  const idleMs = afterIdle.atMs - afterBurst.atMs;
  const perHour = 3_600_000 / idleMs;
  const scale = (counts: Counts, factor: number): Counts =>
    Object.fromEntries(Object.entries(counts).map(([key, value]) => [key, value * factor]));
  const eniflowRequests = (from: Snapshot, to: Snapshot): Counts =>
    diffCounts(diffCounts(to.apiserver, from.apiserver), diffCounts(to.ownRequests, from.ownRequests));
  const byVerb = (detail: Counts): Counts => {
    const out: Counts = {};
    for (const [key, value] of Object.entries(detail)) {
      const verb = key.split(' ')[0] ?? key;
      out[verb] = (out[verb] ?? 0) + value;
    }
    return out;
  };
  const burstDetail = eniflowRequests(beforeBurst, afterBurst);
  const idleDetail = scale(eniflowRequests(afterBurst, afterIdle), perHour);
  const podCount = burstPods.length;
  const burstEcs = diffCounts(afterBurst.ecs, beforeBurst.ecs);
  const cpu = (name: string, from: Snapshot, to: Snapshot): number =>
    (to.processes[name]?.cpuSeconds ?? Number.NaN) - (from.processes[name]?.cpuSeconds ?? Number.NaN);
  const processNames = ['worker', 'watcher', 'temporal server', 'kube-apiserver', 'bench + emulator'];
  const processes: ProcessFigures[] = processNames.map((name) => {
    const peak = name === 'worker' ? workerPeak : (final.processes[name] ?? afterIdle.processes[name]);
    const idle = cpu(name, afterBurst, afterIdle);
    return {
      name: name === 'worker' ? 'worker (first process)' : name,
      cpuSecondsBurst: cpu(name, beforeBurst, afterBurst),
      cpuSecondsIdle: idle,
      cpuSecondsPerIdleHour: idle * perHour,
      peakRssMiB: (peak?.peakRssBytes ?? Number.NaN) / 1024 / 1024,
    };
  });
  const perNode = (from: HistoryTotals, to: HistoryTotals, factor = 1): { events: number; bytes: number } => ({
    events: ((to.events - from.events) / options.nodes) * factor,
    bytes: ((to.bytes - from.bytes) / options.nodes) * factor,
  });
  const noHistogram: ScrapedHistogram = { buckets: [], count: 0 };
  const burstHistogram = histogramSince(afterBurst.podIpReady ?? noHistogram, beforeBurst.podIpReady ?? noHistogram);
  const noHistory: HistoryTotals = { workflows: 0, runs: 0, events: 0, bytes: 0 };
  keepLogs = options.keepLogs;
  if (keepLogs) log(`logs kept in ${servers.runDir}`);
  return {
    date: new Date().toISOString(),
    command: `npm run bench:scale -- ${process.argv.slice(2).join(' ')}`.trim(),
    machine: { cpus: cpus().length, node: process.version, loadAverageAtStart, loadAverageAtEnd: loadavg() },
    config: {
      nodes: options.nodes,
      podsPerNode: options.pods,
      idleSeconds: options.idleSeconds,
      ecsLatencyMs: ECS_LATENCY_MS,
      attachMs: options.attachMs,
      eniPollIntervalMs: options.eniPollIntervalMs,
      pool: options.pool,
    },
    nodesWarmSeconds: nodesWarmMs / 1000,
    burst: {
      pods: podCount,
      served: tracker.latencies(ids).length,
      createSeconds: createMs / 1000,
      latencyMs: summarizeLatencies(tracker.latencies(ids)),
      workerHistogram: {
        count: burstHistogram.count,
        p50Seconds: histogramQuantile(0.5, burstHistogram),
        p99Seconds: histogramQuantile(0.99, burstHistogram),
      },
      allServedSeconds: allServedMs / 1000,
      settledSeconds: settledMs / 1000,
    },
    ecs: {
      callsPerPod: scale(burstEcs, 1 / podCount),
      callsPerPodTotal: sumCounts(burstEcs) / podCount,
      idleCallsPerHour: scale(diffCounts(afterIdle.ecs, afterBurst.ecs), perHour),
      lost: ecsCalls.lost,
    },
    apiserver: {
      burstByVerb: byVerb(burstDetail),
      idlePerHourByVerb: byVerb(idleDetail),
      burstDetail,
      idlePerHourDetail: idleDetail,
    },
    watcherSignals: {
      burst: afterBurst.signals - beforeBurst.signals,
      idlePerHour: (afterIdle.signals - afterBurst.signals) * perHour,
    },
    history: {
      workflows: afterIdle.history.workflows,
      runs: afterIdle.history.runs,
      perNodeBurst: perNode(beforeBurst.history, afterBurst.history),
      perNodeIdleHour: perNode(afterBurst.history, afterIdle.history, perHour),
      perNodeTotal: perNode(noHistory, afterIdle.history),
    },
    processes,
    restart: { workerStartSeconds: workerStartMs / 1000, servedSeconds: restartServedMs / 1000 },
    timeline,
    notes: [
      `Per-hour figures are the ${options.idleSeconds} s idle window scaled to an hour. The workflow's own timers ` +
        '(a safety-net pass every 6–7.5 h, the OpenAPI resync every 12–24 h; GC passes only while there is work) ' +
        'are hours apart, so a short window shows none of them: add one pass per node per 6 h for the safety net.',
      'apiserver requests are the server counters for pods, nodes, Node CRs, events and leases minus the ' +
        "benchmark's own requests (node, CR and pod creation, its CR watch); the apiserver's own lease renewals " +
        'remain in the lease counts.',
      '"bench + emulator" is this process: the ECS emulator runs in it, with the benchmark driver.',
      ...(ecsCalls.lost > 0 ? [`The emulator's call log dropped ${ecsCalls.lost} calls: ECS counts are low.`] : []),
    ],
  };
}

/**
 * Waits until no ECS call and no CR change happened for SETTLE_QUIET_MS (at most two minutes); returns when
 * the last of them was seen (performance.now()).
 */
async function settle(ecsCalls: EcsCallCounter, tracker: ServedTracker): Promise<number> {
  let lastTotal = -1;
  let quietSinceMs = performance.now();
  return await pollUntil(
    async () => {
      const total = sumCounts(await ecsCalls.drain());
      const now = performance.now();
      if (total !== lastTotal) {
        lastTotal = total;
        quietSinceMs = now;
      }
      const lastActivityMs = Math.max(quietSinceMs, tracker.lastEventMs);
      return now - lastActivityMs >= SETTLE_QUIET_MS ? lastActivityMs : undefined;
    },
    { description: 'ECS calls and CR changes to stop', timeoutMs: 120_000, intervalMs: 250 },
  );
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const cleanup = new Cleanup();
  let interrupted = false;
  const onSignal = (signal: string): void => {
    if (interrupted) return;
    interrupted = true;
    log(`${signal}: stopping everything`);
    void cleanup.run().finally(() => process.exit(130));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const report = await run(options, cleanup);
    await cleanup.run();
    const json = `${JSON.stringify(report, null, 2)}\n`;
    if (options.jsonFile !== undefined) await writeFile(options.jsonFile, json);
    process.stdout.write(options.json ? json : formatReport(report, { timeline: options.timeline }));
  } catch (error) {
    log(`failed: ${describeError(error)} (server and role logs kept in /tmp/eniflow-testenv-*)`);
    await cleanup.run();
    process.exitCode = 1;
  }
}

await main();
