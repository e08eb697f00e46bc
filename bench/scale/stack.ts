/**
 * The scale benchmark's stack: the test servers, the ECS emulator in this process, the Temporal and Kubernetes
 * clients, the worker and the watcher as separate processes configured as deployed, and a snapshot of every counter
 * the report subtracts. Every start registers its stop with the cleanup.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';

import { reserveFreePorts } from '../../scripts/lib/free-ports.js';
import type { ManagedProcess } from '../../scripts/lib/managed-process.js';
import { TEST_ENV_VARS } from '../../scripts/lib/test-env-vars.js';
import { describeError, startTestServers, testServerDefinitions } from '../../scripts/lib/test-servers.js';
import type { TestServers } from '../../scripts/lib/test-servers.js';
import { startEcsEmulator } from '../../src/ecs-emulator/index.js';
import type { EcsEmulator } from '../../src/ecs-emulator/index.js';
import { BenchKube, ServedTracker, scaleFixture } from './cluster.js';
import { scaledPeriods } from './options.js';
import type { Options } from './options.js';
import { WorkerSet } from './workers.js';
import { databaseAccess, readDatabaseCounters } from './temporal-server.js';
import type { DatabaseAccess, DatabaseCounters } from './temporal-server.js';
import { deployedNodeOptions, roleArgs, startRole } from './roles.js';
import type { BenchRole } from './roles.js';
import { scrapeSdkTaskHistograms } from './task-latency.js';
import type { SdkTaskHistograms } from './task-latency.js';
import {
  EcsCallCounter,
  apiserverRequestsByVerb,
  historyTotals,
  prometheusCounter,
  prometheusHistogram,
  sampleProcess,
  sampleSelf,
  sumHistograms,
} from './probes.js';
import type { ApiserverAccess, Counts, HistoryTotals, ProcessSample, ScrapedHistogram } from './probes.js';

export const TASK_QUEUE = 'eniflow-bench';
export const ECS_LATENCY_MS = { min: 30, max: 50 } as const;

export const log = (line: string): void => {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
};

/** Cleanup steps, run last-in first-out exactly once (normal end, failure or signal). */
export class Cleanup {
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

/** Everything measured at one instant, to subtract phases from each other. */
export interface Snapshot {
  atMs: number;
  processes: Record<string, ProcessSample | undefined>;
  apiserver: Counts;
  ownRequests: Counts;
  ecs: Counts;
  history: HistoryTotals;
  signals: number;
  /** The running replicas' pod → IP histograms, summed. */
  podIpReady?: ScrapedHistogram;
  /** Each running worker process's workflow task histograms (its SDK exporter), by its name. */
  sdkTasks: Record<string, SdkTaskHistograms>;
  /** The Temporal server's database counters (`--temporal postgres`). */
  database?: DatabaseCounters;
}

/** CPU seconds of each process under test at one instant, with its pid (a replaced process is another one). */
export type CpuSample = Record<string, { pid: number; cpuSeconds: number } | undefined>;

/** The running stack; the rolling update and the restart replace worker processes. */
export interface Stack {
  readonly options: Options;
  readonly servers: TestServers;
  /** The Temporal server's PostgreSQL (`--temporal postgres`). */
  readonly database: DatabaseAccess | undefined;
  readonly emulator: EcsEmulator;
  readonly ecsCalls: EcsCallCounter;
  readonly kube: BenchKube;
  readonly client: Client;
  readonly tracker: ServedTracker;
  /** The watcher process; undefined with --one-process, where the worker processes run it too. */
  readonly watcher: ManagedProcess | undefined;
  readonly workers: WorkerSet;
  /**
   * Starts `--role all` (`src/main.ts` with tsx as `npm start` runs it, or `dist/main.js` with --dist), with the
   * watcher's and the worker's settings and one Lease identity for every process started so, as a container
   * restarted in place keeps its pod's name. No health or metrics server.
   */
  startAllInOne(name: string): ManagedProcess;
  snapshot(): Promise<Snapshot>;
  /** CPU seconds of every process under test, now (cheap: /proc only). */
  sampleCpu(): CpuSample;
  /** Each running worker process's workflow task histograms, now, by its name. */
  sdkTasks(): Promise<Record<string, SdkTaskHistograms>>;
  /** Whether the test servers keep the run directory when stopped (true until the run succeeds). */
  keepLogs: boolean;
}

export async function startStack(options: Options, cleanup: Cleanup): Promise<Stack> {
  const servers: TestServers = await startTestServers({ log, definitions: testServerDefinitions(options.temporal) });
  const database = databaseAccess(servers);
  // Assigned below; the cleanup step only runs after startStack returned or failed.
  const state = { keepLogs: true };
  cleanup.add('test servers', () => servers.stop({ keepLogs: state.keepLogs }));
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

  const [watcherHealthPort] = await reserveFreePorts(1);
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
    ...options.roleEnv,
  };
  // --node-options for every role, else each role's Deployment's with --deployed-node-options.
  const nodeOptionsOf = (role: BenchRole): NodeJS.ProcessEnv => {
    const value = options.nodeOptions ?? (options.deployedNodeOptions ? deployedNodeOptions(role) : undefined);
    return value === undefined ? {} : { NODE_OPTIONS: value };
  };
  const watcherHealthUrl = `http://127.0.0.1:${watcherHealthPort ?? 0}`;
  const periods = scaledPeriods(options.periodScale, options.nodeSettings);
  const watcherEnv = {
    ...roleEnv,
    LEASE_NAMESPACE: 'default',
    ENIFLOW_CLUSTER_ID: 'eniflow-bench',
    POD_IDENTITY: 'bench-watcher',
    HEALTH_ADDRESS: `127.0.0.1:${watcherHealthPort ?? 0}`,
    ...(periods.nodeSettings === undefined ? {} : { NODE_WORKFLOW_SETTINGS: periods.nodeSettings }),
    ...(periods.janitorIntervalSeconds === undefined
      ? {}
      : { JANITOR_INTERVAL_SECONDS: String(periods.janitorIntervalSeconds) }),
  };

  // Fresh ports for every process: a replacement starts while the process it replaces still drains. With
  // --one-process each "worker" runs the watcher too (one Lease identity: a replacement is the same pod restarted),
  // and its HEALTH_ADDRESS serves both roles' metrics.
  const processRole: BenchRole = options.oneProcess ? 'all' : 'worker';
  const workers = new WorkerSet(async (name) => {
    const [metricsPort, healthPort] = await reserveFreePorts(2);
    const env = {
      ...(options.oneProcess ? { ...watcherEnv, POD_IDENTITY: 'bench-one-process' } : roleEnv),
      ...nodeOptionsOf(processRole),
      METRICS_ADDRESS: `127.0.0.1:${metricsPort ?? 0}`,
      HEALTH_ADDRESS: `127.0.0.1:${healthPort ?? 0}`,
    };
    return {
      process: startRole({ name, args: roleArgs(processRole, options.dist), env, logDir: servers.runDir }),
      metricsUrl: `http://127.0.0.1:${healthPort ?? 0}/metrics`,
      sdkMetricsUrl: `http://127.0.0.1:${metricsPort ?? 0}/metrics`,
    };
  });
  cleanup.add('workers', () => workers.stopAll(10_000));
  for (let slot = 1; slot <= options.workers; slot += 1) await workers.start(slot, `worker-${slot}`);
  const watcher = options.oneProcess
    ? undefined
    : startRole({
        name: 'watcher',
        args: roleArgs('watcher', options.dist),
        env: { ...watcherEnv, ...nodeOptionsOf('watcher') },
        logDir: servers.runDir,
      });
  if (watcher !== undefined) cleanup.add('watcher', () => watcher.stop(10_000));
  for (const worker of workers.replicas) {
    await worker.process.waitForStdoutLine((line) => line.includes('"Worker started"'), 180_000);
  }
  for (const leader of watcher === undefined ? workers.replicas.map((worker) => worker.process) : [watcher]) {
    await leader.waitForStdoutLine((line) => line.includes('"Became leader"'), 60_000);
  }
  log(
    options.oneProcess
      ? `one process (--role all, pid ${workers.replicas.map((worker) => worker.process.pid).join(', ')}) up`
      : `workers (pids ${workers.replicas.map((worker) => worker.process.pid).join(', ')}) and watcher (pid ${watcher?.pid ?? '?'}) up`,
  );

  const pids = (): Record<string, number | undefined> => ({
    ...Object.fromEntries(
      workers.replicas.map((worker) => [
        `worker-${worker.slot}`,
        worker.process.hasExited ? undefined : worker.process.pid,
      ]),
    ),
    ...(watcher === undefined ? {} : { watcher: watcher.pid }),
    'temporal server': temporalPid,
    'kube-apiserver': apiserverPid,
  });
  const tracker = new ServedTracker(kube);
  const scrapeSdkTasks = async (): Promise<Record<string, SdkTaskHistograms>> => {
    const live = workers.replicas.filter((worker) => !worker.process.hasExited);
    return Object.fromEntries(
      await Promise.all(
        live.map(async (worker) => [worker.name, await scrapeSdkTaskHistograms(worker.sdkMetricsUrl)] as const),
      ),
    );
  };
  const snapshot = async (): Promise<Snapshot> => {
    workers.sample();
    const live = workers.replicas.filter((worker) => !worker.process.hasExited);
    const histograms = await Promise.all(
      live.map((worker) => prometheusHistogram(worker.metricsUrl, 'eniflow_pod_ip_ready_seconds')),
    );
    const sdkTasks = await scrapeSdkTasks();
    // The watcher's counters: its own server, or the one process's (replica 1, the only one).
    const signalsUrl = watcher === undefined ? live[0]?.metricsUrl : `${watcherHealthUrl}/metrics`;
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
      signals:
        signalsUrl === undefined
          ? Number.NaN
          : await prometheusCounter(signalsUrl, 'eniflow_watcher_signals_sent_total'),
      ...(live.length === 0 ? {} : { podIpReady: sumHistograms(histograms) }),
      sdkTasks,
      ...(database === undefined ? {} : { database: await readDatabaseCounters(database) }),
    };
  };
  const sampleCpu = (): CpuSample => {
    const sample: CpuSample = {};
    for (const [name, pid] of Object.entries(pids())) {
      const cpuSeconds = pid === undefined ? undefined : sampleProcess(pid)?.cpuSeconds;
      sample[name] = pid === undefined || cpuSeconds === undefined ? undefined : { pid, cpuSeconds };
    }
    return sample;
  };

  await tracker.start();
  cleanup.add('CR watch', () => {
    tracker.stop();
  });
  const startAllInOne = (name: string): ManagedProcess => {
    const env: NodeJS.ProcessEnv = { ...watcherEnv, ...nodeOptionsOf('all'), POD_IDENTITY: 'bench-all-in-one' };
    delete env['HEALTH_ADDRESS'];
    return startRole({ name, args: roleArgs('all', options.dist), env, logDir: servers.runDir });
  };
  return {
    options,
    servers,
    database,
    emulator,
    ecsCalls,
    kube,
    client,
    tracker,
    watcher,
    workers,
    startAllInOne,
    snapshot,
    sampleCpu,
    sdkTasks: scrapeSdkTasks,
    get keepLogs() {
      return state.keepLogs;
    },
    set keepLogs(keep: boolean) {
      state.keepLogs = keep;
    },
  };
}
