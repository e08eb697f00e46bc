/**
 * The scale benchmark's stack: the test servers, the ECS emulator in this process, the Temporal and Kubernetes
 * clients, the worker and the watcher as separate processes configured as deployed, and a snapshot of every counter
 * the report subtracts. Every start registers its stop with the cleanup.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { KubeConfig } from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';

import { reserveFreePorts } from '../../scripts/lib/free-ports.js';
import { ManagedProcess } from '../../scripts/lib/managed-process.js';
import { TEST_ENV_VARS } from '../../scripts/lib/test-env-vars.js';
import { describeError, startTestServers } from '../../scripts/lib/test-servers.js';
import type { TestServers } from '../../scripts/lib/test-servers.js';
import { startEcsEmulator } from '../../src/ecs-emulator/index.js';
import type { EcsEmulator } from '../../src/ecs-emulator/index.js';
import { BenchKube, ServedTracker, scaleFixture } from './cluster.js';
import { scaledPeriods } from './options.js';
import type { Options } from './options.js';
import { WorkerSet } from './workers.js';
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

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
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
}

/** The running stack; the rolling update and the restart replace worker processes. */
export interface Stack {
  readonly options: Options;
  readonly servers: TestServers;
  readonly emulator: EcsEmulator;
  readonly ecsCalls: EcsCallCounter;
  readonly kube: BenchKube;
  readonly client: Client;
  readonly tracker: ServedTracker;
  readonly watcher: ManagedProcess;
  readonly workers: WorkerSet;
  /**
   * Starts `npm start -- --role all` as a user would (`src/main.ts` with tsx: the image has no all-in-one entry), with
   * the watcher's and the worker's settings and one Lease identity for every process started so, as a container
   * restarted in place keeps its pod's name. No health or metrics server: the two roles would share the address.
   */
  startAllInOne(name: string): ManagedProcess;
  snapshot(): Promise<Snapshot>;
  /** Whether the test servers keep the run directory when stopped (true until the run succeeds). */
  keepLogs: boolean;
}

/**
 * A role's entry point (`worker`, `watcher`): from `src/` with tsx, or the compiled one in `dist/` as the image runs
 * it (tsx's loader alone adds about 220 MiB to a worker's peak RSS: memory figures come from `--dist`).
 */
function roleArgs(role: 'worker' | 'watcher', dist: boolean): string[] {
  if (dist) {
    const entry = `dist/${role}/main.js`;
    if (!existsSync(join(REPO_ROOT, entry))) throw new Error(`--dist: ${entry} is missing; run npm run build first`);
    return [entry];
  }
  // tsx's ESM hooks only: src/ is all ESM, and without the CommonJS hooks the thousands of require() calls inside
  // node_modules skip tsx's resolver (about 0.7 s less CPU per worker start).
  return ['--import', 'tsx/esm', `src/${role}/main.ts`];
}

function startRole(input: { name: string; args: string[]; env: NodeJS.ProcessEnv; logDir: string }): ManagedProcess {
  return new ManagedProcess({
    name: input.name,
    command: process.execPath,
    args: input.args,
    cwd: REPO_ROOT,
    env: input.env,
    logPath: join(input.logDir, `${input.name}.log`),
  });
}

export async function startStack(options: Options, cleanup: Cleanup): Promise<Stack> {
  const servers: TestServers = await startTestServers({ log });
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
    ...(options.nodeOptions === undefined ? {} : { NODE_OPTIONS: options.nodeOptions }),
    ...options.roleEnv,
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

  // Fresh ports for every process: a replacement starts while the process it replaces still drains.
  const workers = new WorkerSet(async (name) => {
    const [metricsPort, healthPort] = await reserveFreePorts(2);
    const env = {
      ...roleEnv,
      METRICS_ADDRESS: `127.0.0.1:${metricsPort ?? 0}`,
      HEALTH_ADDRESS: `127.0.0.1:${healthPort ?? 0}`,
    };
    return {
      process: startRole({ name, args: roleArgs('worker', options.dist), env, logDir: servers.runDir }),
      metricsUrl: `http://127.0.0.1:${healthPort ?? 0}/metrics`,
    };
  });
  cleanup.add('workers', () => workers.stopAll(10_000));
  for (let slot = 1; slot <= options.workers; slot += 1) await workers.start(slot, `worker-${slot}`);
  const watcher = startRole({
    name: 'watcher',
    args: roleArgs('watcher', options.dist),
    env: watcherEnv,
    logDir: servers.runDir,
  });
  cleanup.add('watcher', () => watcher.stop(10_000));
  for (const worker of workers.replicas) {
    await worker.process.waitForStdoutLine((line) => line.includes('"Worker started"'), 180_000);
  }
  await watcher.waitForStdoutLine((line) => line.includes('"Became leader"'), 60_000);
  log(
    `workers (pids ${workers.replicas.map((worker) => worker.process.pid).join(', ')}) and watcher (pid ${watcher.pid}) up`,
  );

  const pids = (): Record<string, number | undefined> => ({
    ...Object.fromEntries(
      workers.replicas.map((worker) => [
        `worker-${worker.slot}`,
        worker.process.hasExited ? undefined : worker.process.pid,
      ]),
    ),
    watcher: watcher.pid,
    'temporal server': temporalPid,
    'kube-apiserver': apiserverPid,
  });
  const tracker = new ServedTracker(kube);
  const snapshot = async (): Promise<Snapshot> => {
    workers.sample();
    const live = workers.replicas.filter((worker) => !worker.process.hasExited);
    const histograms = await Promise.all(
      live.map((worker) => prometheusHistogram(worker.metricsUrl, 'eniflow_pod_ip_ready_seconds')),
    );
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
      ...(live.length === 0 ? {} : { podIpReady: sumHistograms(histograms) }),
    };
  };

  await tracker.start();
  cleanup.add('CR watch', () => {
    tracker.stop();
  });
  const startAllInOne = (name: string): ManagedProcess => {
    const env: NodeJS.ProcessEnv = { ...watcherEnv, POD_IDENTITY: 'bench-all-in-one' };
    delete env['HEALTH_ADDRESS'];
    return startRole({ name, args: ['--import', 'tsx', 'src/main.ts', '--role', 'all'], env, logDir: servers.runDir });
  };
  return {
    options,
    servers,
    emulator,
    ecsCalls,
    kube,
    client,
    tracker,
    watcher,
    workers,
    startAllInOne,
    snapshot,
    get keepLogs() {
      return state.keepLogs;
    },
    set keepLogs(keep: boolean) {
      state.keepLogs = keep;
    },
  };
}
