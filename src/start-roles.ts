/**
 * `npm start`: eniflow's main job. `--role all` (the default) runs the watcher and the worker in one process;
 * `--role worker` or `--role watcher` runs one of them. With Temporal, Kubernetes and Alibaba Cloud configured in
 * the environment (see the README) it uses those; with none of it configured it runs on the embedded default:
 * a local Temporal dev server, the test kube-apiserver and the ECS emulator with a demo cluster.
 */
import { ConfigError, loadWorkerConfig } from './config.js';
import type { WorkerConfig } from './config.js';
import { wantsEmbeddedDefault } from './process-entry.js';
import { createLogger } from './logger.js';
import type { Logger } from './logger.js';
import { Registry } from 'prom-client';

import { combineProbes, startProbeServer } from './http-endpoint.js';
import type { ProbeSource } from './http-endpoint.js';
import { watcherProbes, watcherRegistry } from './watcher/health-server.js';
import { healthSourceOf, loadWatcherConfig, runWatcher } from './watcher/run-watcher.js';
import { workerProbes } from './worker/health-server.js';
import { installTemporalRuntime, startWorker } from './worker/run-worker.js';
import { workerMetrics } from './worker/metrics.js';

export const ROLES = ['all', 'worker', 'watcher'] as const;
export type Role = (typeof ROLES)[number];

/** Parses `--role <role>` (or `--role=<role>`); anything else is an error with the usage. */
export function parseRole(argv: readonly string[]): Role {
  let role: string | undefined;
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i] ?? '';
    if (arg === '--role') role = argv[++i];
    else if (arg.startsWith('--role=')) role = arg.slice('--role='.length);
    else throw new ConfigError([`unknown argument "${arg}"; usage: npm start -- [--role all|worker|watcher]`]);
  }
  if (role === undefined) return 'all';
  if (!(ROLES as readonly string[]).includes(role)) {
    throw new ConfigError([`--role must be one of ${ROLES.join(', ')}, got "${role}"`]);
  }
  return role as Role;
}

export { wantsEmbeddedDefault } from './process-entry.js';

export interface Running {
  name: string;
  done?: Promise<void>;
  /** The health endpoint's bound port (`HEALTH_ADDRESS` may ask for port 0). */
  port?: number;
  stop(): Promise<void>;
}

/**
 * Starts the roles `role` names, and on `HEALTH_ADDRESS` one endpoint for all of them: `/healthz` and `/readyz`
 * pass when every role's do, `/metrics` serves every role's registry (the worker's ECS calls, passes, pod → IP
 * latency, blocked vSwitches and janitor; the watcher's signals, leadership and waiting pods). Returned in start
 * order; stop them in reverse.
 */
export async function startRoles(input: {
  role: Role;
  env: NodeJS.ProcessEnv;
  logger: Logger;
  workerConfig?: WorkerConfig;
}): Promise<Running[]> {
  const running: Running[] = [];
  const probes: ProbeSource[] = [];
  let healthAddress: string | undefined;
  try {
    if (input.role !== 'watcher') {
      const config = input.workerConfig ?? loadWorkerConfig(input.env);
      healthAddress = config.healthAddress;
      const worker = await startWorker({ config, logger: input.logger.child({ role: 'worker' }) });
      probes.push(workerProbes({ registry: workerMetrics.registry, worker: () => worker }));
      running.push({ name: 'worker', done: worker.done, stop: () => worker.stop() });
    }
    if (input.role !== 'worker') {
      const config = loadWatcherConfig(input.env);
      healthAddress ??= config.healthAddress;
      const logger = input.logger.child({ role: 'watcher' });
      const watcher = await runWatcher(config, { logger, workerInProcess: input.role === 'all' });
      const source = healthSourceOf(watcher);
      // Node's process metrics once: the worker's registry has them when both roles run here.
      probes.push(watcherProbes(source, watcherRegistry(source, { processMetrics: input.role === 'watcher' })));
      running.push({ name: 'watcher', stop: () => watcher.stop() });
    }
    if (healthAddress !== undefined) {
      const registry = Registry.merge(probes.map((probe) => probe.registry));
      const health = await startProbeServer({
        address: healthAddress,
        source: combineProbes({ probes, registry }),
        logger: input.logger,
      });
      running.push({ name: 'health', port: health.port, stop: () => health.close() });
    }
  } catch (error) {
    for (const started of [...running].reverse()) await started.stop();
    throw error;
  }
  return running;
}

function stopSignal(): Promise<string> {
  // The listeners stay: Ctrl-C can arrive twice (terminal and npm), and a second one must not kill the process
  // before everything has stopped.
  return new Promise((resolve) => {
    for (const signal of ['SIGINT', 'SIGTERM'] as const)
      process.on(signal, () => {
        resolve(signal);
      });
  });
}

/**
 * What `main` uses of scripts/lib/embedded-default.ts, declared here because the build (tsconfig.build.json) leaves
 * scripts/ out of dist/; test/integration/main/embedded-default-shape.test.ts checks the real module against it.
 */
export interface EmbeddedDefaultModule {
  runEmbeddedDefault: (options: {
    log: (line: string) => void;
    interactive: boolean;
    stopRequested: Promise<string>;
    startRoles: (environment: {
      temporalAddress: string;
      temporalNamespace: string;
      kubeconfigPath: string;
      emulator: { regionId: string; endpoint: string; accessKeyId: string; accessKeySecret: string };
    }) => Promise<Running[]>;
  }) => Promise<void>;
}

/**
 * Dev tooling (server builds, demo cluster) is loaded only for the embedded default, never in a deployment. The
 * specifier is not a literal, so tsc leaves scripts/ out of dist/: from dist/main.js (the image) the embedded
 * default is unavailable, and running without connection settings is a configuration error.
 */
async function loadEmbeddedDefault(): Promise<EmbeddedDefaultModule> {
  const specifier = '../scripts/lib/embedded-default.js';
  try {
    return (await import(specifier)) as EmbeddedDefaultModule;
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'ERR_MODULE_NOT_FOUND') throw error;
    throw new ConfigError([
      'no TEMPORAL_ADDRESS, ECS_REGION_ID, KUBECONFIG or KUBERNETES_SERVICE_HOST: the embedded default runs only ' +
        'from the source tree (npm start); set the connection environment (see docs/deploy.md)',
    ]);
  }
}

export async function main(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<void> {
  const role = parseRole(argv);
  const logger = createLogger({ name: 'eniflow', level: env['LOG_LEVEL'] ?? 'info' });
  const stopRequested = stopSignal();
  if (wantsEmbeddedDefault(env)) {
    const { runEmbeddedDefault } = await loadEmbeddedDefault();
    installTemporalRuntime({ logger: createLogger({ name: 'eniflow', level: 'warn' }) });
    await runEmbeddedDefault({
      log: (line) => process.stdout.write(`eniflow: ${line}\n`),
      interactive: process.stdout.isTTY && env['CI'] === undefined,
      stopRequested,
      startRoles: async (environment) => {
        const roleEnv: NodeJS.ProcessEnv = {
          ...env,
          TEMPORAL_ADDRESS: environment.temporalAddress,
          TEMPORAL_NAMESPACE: environment.temporalNamespace,
          KUBECONFIG: environment.kubeconfigPath,
          ECS_REGION_ID: environment.emulator.regionId,
          ECS_ENDPOINT: environment.emulator.endpoint,
          ECS_PROTOCOL: 'http',
          ALIBABA_CLOUD_ACCESS_KEY_ID: environment.emulator.accessKeyId,
          ALIBABA_CLOUD_ACCESS_KEY_SECRET: environment.emulator.accessKeySecret,
          ENI_POLL_INTERVAL_MS: '200',
          LEASE_NAMESPACE: 'default',
          // The demo cluster's identity: every ENI it creates is tagged with it, the janitor deletes only those.
          ENIFLOW_CLUSTER_ID: env['ENIFLOW_CLUSTER_ID'] ?? 'eniflow-demo',
          ENIFLOW_VPC_ID: env['ENIFLOW_VPC_ID'] ?? 'vpc-bp1emu0000000000000',
          LOG_LEVEL: env['LOG_LEVEL'] ?? 'warn',
        };
        const quiet = createLogger({ name: 'eniflow', level: roleEnv['LOG_LEVEL'] ?? 'warn' });
        return startRoles({ role, env: roleEnv, logger: quiet });
      },
    });
    return;
  }
  const workerConfig = role === 'watcher' ? undefined : loadWorkerConfig(env);
  installTemporalRuntime({
    logger,
    ...(workerConfig?.metricsAddress === undefined ? {} : { metricsAddress: workerConfig.metricsAddress }),
  });
  const running = await startRoles({ role, env, logger, ...(workerConfig === undefined ? {} : { workerConfig }) });
  logger.info({ role, roles: running.map((r) => r.name) }, 'eniflow started');
  const workerDone = running.find((r) => r.done !== undefined)?.done;
  const reason = await Promise.race([
    stopRequested,
    ...(workerDone === undefined ? [] : [workerDone.then(() => 'worker stopped')]),
  ]);
  logger.info({ reason }, 'eniflow stopping');
  for (const role of [...running].reverse()) await role.stop();
}
