import { KubeConfig } from '@kubernetes/client-node';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import type { LogLevel, WorkerOptions } from '@temporalio/worker';

import { AlibabaEcsApi } from '../activities/ecs/alibaba-ecs-api.js';
import { DEFAULT_CALLS_PER_MINUTE } from '../activities/ecs/ecs-operations.js';
import { EcsRateLimiter } from '../activities/ecs/rate-limiter.js';
import { NodeReadCache } from '../activities/node-read-cache.js';
import { ConfigError, loadWorkerConfig, warnDeprecatedVariables } from '../config.js';
import type { WorkerConfig } from '../config.js';
import { createLogger } from '../logger.js';
import type { Logger } from '../logger.js';
import { createEniflowWorker, workflowSource } from './create-worker.js';
import { ecsCallMetrics } from './metrics.js';

const PINO_LEVELS: Record<LogLevel, 'trace' | 'debug' | 'info' | 'warn' | 'error'> = {
  TRACE: 'trace',
  DEBUG: 'debug',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
};

/** Routes the Temporal SDK's own logs (and workflow `log` calls) into the same pino JSON stream. */
export function installTemporalRuntime(input: { logger: Logger; metricsAddress?: string }): void {
  const sdkLogger = input.logger.child({ component: 'temporal-sdk' });
  Runtime.install({
    logger: new DefaultLogger('INFO', (entry) => {
      sdkLogger[PINO_LEVELS[entry.level]](entry.meta ?? {}, entry.message);
    }),
    ...(input.metricsAddress === undefined
      ? {}
      : { telemetryOptions: { metrics: { prometheus: { bindAddress: input.metricsAddress } } } }),
  });
}

/** A started worker: `done` settles when it has stopped; `stop` asks it to drain and stop. */
export interface RunningWorker {
  done: Promise<void>;
  stop(): Promise<void>;
}

/**
 * Connects to Temporal, builds the worker from the configuration and starts it. `workflowBundle` (tests) replaces the
 * usual source of the workflow code (see workflowSource).
 */
export async function startWorker(input: {
  config: WorkerConfig;
  logger: Logger;
  workflowBundle?: WorkerOptions['workflowBundle'];
}): Promise<RunningWorker> {
  const { config, logger } = input;
  warnDeprecatedVariables(config.temporal, (fields, message) => {
    logger.warn(fields, message);
  });
  const kubeConfig = new KubeConfig();
  if (config.kubeconfigPath !== undefined) kubeConfig.loadFromFile(config.kubeconfigPath);
  else kubeConfig.loadFromDefault();
  const ecs = new AlibabaEcsApi({
    connection: {
      regionId: config.ecs.regionId,
      protocol: config.ecs.protocol,
      ...(config.ecs.ecsEndpoint === undefined ? {} : { ecsEndpoint: config.ecs.ecsEndpoint }),
      ...(config.ecs.vpcEndpoint === undefined ? {} : { vpcEndpoint: config.ecs.vpcEndpoint }),
      ...(config.ecs.accessKey === undefined ? {} : { accessKey: config.ecs.accessKey }),
    },
    limiter: new EcsRateLimiter({ callsPerMinute: DEFAULT_CALLS_PER_MINUTE }),
    observe: ecsCallMetrics(),
  });
  // Started first, so the informers list while the worker connects and loads its workflow code.
  const readCache = new NodeReadCache({ kubeConfig, logger });
  readCache.start();
  let connection: NativeConnection;
  let worker: Awaited<ReturnType<typeof createEniflowWorker>>;
  try {
    connection = await NativeConnection.connect({
      address: config.temporal.address,
      ...(config.temporal.tls === undefined ? {} : { tls: config.temporal.tls }),
      ...(config.temporal.apiKey === undefined ? {} : { apiKey: config.temporal.apiKey }),
      ...(config.temporal.metadata === undefined ? {} : { metadata: config.temporal.metadata }),
    });
    worker = await createEniflowWorker({
      connection,
      namespace: config.temporal.namespace,
      taskQueue: config.temporal.taskQueue,
      ecs,
      kubeConfig,
      logger,
      readCache,
      eniPollIntervalMs: config.ecs.eniPollIntervalMs,
      maxConcurrentActivities: config.maxConcurrentActivities,
      ...(input.workflowBundle === undefined ? {} : { workflowBundle: input.workflowBundle }),
    });
  } catch (error) {
    await readCache.stop();
    throw error;
  }
  const source = workflowSource(input.workflowBundle);
  logger.info(
    {
      address: config.temporal.address,
      taskQueue: config.temporal.taskQueue,
      workflowCode: 'workflowBundle' in source ? 'prebuilt bundle' : 'bundled from source at start',
    },
    'Worker started',
  );
  // Reads before the cache has synced are live anyway; waiting (boundedly) spares the apiserver that burst.
  await Promise.race([readCache.synced, new Promise((resolve) => setTimeout(resolve, CACHE_SYNC_WAIT_MS).unref())]);
  const done = worker.run().finally(async () => {
    await readCache.stop();
    await connection.close();
    logger.info('Worker stopped');
  });
  return {
    done,
    stop: async () => {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await done;
    },
  };
}

/** How long a starting worker waits for its read cache to sync before it polls (reads are live until then). */
const CACHE_SYNC_WAIT_MS = 15_000;

/**
 * Runs the worker until SIGINT/SIGTERM, then drains in-flight tasks and exits. Tests that restart the worker process
 * many times pass a prebuilt `workflowBundle`, so a start does not bundle again.
 */
export async function runWorker(
  env: NodeJS.ProcessEnv = process.env,
  options: { workflowBundle?: WorkerOptions['workflowBundle'] } = {},
): Promise<void> {
  const config = loadWorkerConfig(env);
  const logger = createLogger({ name: 'eniflow-worker', level: config.logLevel });
  installTemporalRuntime({
    logger,
    ...(config.metricsAddress === undefined ? {} : { metricsAddress: config.metricsAddress }),
  });
  const running = await startWorker({ config, logger, ...options });
  const stop = (signal: string): void => {
    logger.info({ signal }, 'Shutting down worker');
    void running.stop();
  };
  process.once('SIGINT', () => {
    stop('SIGINT');
  });
  process.once('SIGTERM', () => {
    stop('SIGTERM');
  });
  await running.done;
}

if (import.meta.url === `file://${process.argv[1] ?? ''}`) {
  runWorker().catch((error: unknown) => {
    if (error instanceof ConfigError) process.stderr.write(`${error.message}\n`);
    else process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  });
}
