/**
 * The worker: configuration, the Temporal runtime, the ECS client and the workers of src/worker/create-worker.ts. The
 * process entry is src/worker/main.ts (`node dist/worker/main.js`), which loads this module after the hook of
 * src/kube/slim-client-node.ts is in place.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { NativeConnection, Runtime } from '@temporalio/worker';
import type { WorkerOptions } from '@temporalio/worker';

import { AlibabaEcsApi } from '../activities/ecs/alibaba-ecs-api.js';
import { EcsRateLimiter } from '../activities/ecs/rate-limiter.js';
import { LOCAL_ECS_ACTIVITIES } from '../shared/ecs-budget.js';
import type { EcsApiName } from '../shared/ecs-budget.js';
import { NodeReadCache } from '../activities/node-read-cache.js';
import { loadWorkerConfig, warnDeprecatedVariables } from '../config.js';
import type { WorkerConfig } from '../config.js';
import { createLogger } from '../logger.js';
import type { Logger } from '../logger.js';
import { createEniflowWorker } from './create-worker.js';
import { temporalRuntimeLogging } from './sdk-logging.js';
import { startTracing } from './tracing.js';
import type { WorkerTracing } from './tracing.js';
import { startWorkerHealthServer } from './health-server.js';
import type { WorkerReadiness } from './health-server.js';
import { ecsCallMetrics, workerMetrics } from './metrics.js';
import type { WorkerGroup } from './worker-group.js';
import { withPooledConnections } from '../kube/pooled-connections.js';

/**
 * Routes the Temporal SDK's own logs, workflow `log` calls and the native core's logs into the same pino JSON
 * stream (see sdk-logging.ts).
 */
export function installTemporalRuntime(input: { logger: Logger; metricsAddress?: string }): void {
  const logging = temporalRuntimeLogging(input.logger);
  Runtime.install({
    logger: logging.logger,
    telemetryOptions: {
      ...logging.telemetryOptions,
      ...(input.metricsAddress === undefined ? {} : { metrics: { prometheus: { bindAddress: input.metricsAddress } } }),
    },
  });
}

/** A started worker: `done` settles when it has stopped; `stop` asks it to drain and stop. */
export interface RunningWorker {
  done: Promise<void>;
  stop(): Promise<void>;
  /** False once the worker has failed (the process is about to exit). */
  live(): boolean;
  /** Ready while the worker runs, both pollers poll, and Temporal's frontend answers a health check. */
  readiness(): Promise<WorkerReadiness>;
}

/** A frontend health check is reused this long, so probes of many replicas do not each cost a call. */
const CONNECTION_CHECK_TTL_MS = 5_000;

/**
 * The per-process token bucket, only for the actions no task queue budgets: the local vSwitch read (see
 * LOCAL_ECS_ACTIVITIES). Every other action is paced by the Temporal server across all workers, so it has no bucket.
 */
export function localCallsLimiter(callsPerMinute: Readonly<Record<EcsApiName, number>>): EcsRateLimiter {
  const local: readonly EcsApiName[] = Object.values(LOCAL_ECS_ACTIVITIES);
  return new EcsRateLimiter({ callsPerMinute: Object.fromEntries(local.map((api) => [api, callsPerMinute[api]])) });
}

/** Whether the worker takes tasks: its run state and pollers, then the connection (see {@link RunningWorker}). */
function workerReadiness(worker: WorkerGroup, connection: NativeConnection): () => Promise<WorkerReadiness> {
  let checked: { atMs: number; result: Promise<WorkerReadiness> } | undefined;
  const checkConnection = async (): Promise<WorkerReadiness> => {
    try {
      const response = await connection.withDeadline(Date.now() + 2_000, () =>
        connection.healthService.check({ service: 'temporal.api.workflowservice.v1.WorkflowService' }),
      );
      // grpc.health.v1 ServingStatus SERVING (the enum lives in @temporalio/proto, not a direct dependency).
      const serving = (response.status as number) === 1;
      return serving
        ? { ready: true, reason: 'ok' }
        : { ready: false, reason: `Temporal frontend not serving (status ${String(response.status)})` };
    } catch (error) {
      return {
        ready: false,
        reason: `Temporal unreachable: ${error instanceof Error ? error.message : String(error)}`,
      };
    }
  };
  return async () => {
    const [main, ...ecsQueues] = worker.getStatuses();
    if (main === undefined) return { ready: false, reason: 'no worker' };
    if (main.runState !== 'RUNNING') return { ready: false, reason: `worker is ${main.runState}` };
    if (main.workflowPollerState !== 'POLLING' || main.activityPollerState !== 'POLLING') {
      return {
        ready: false,
        reason: `pollers: workflow ${main.workflowPollerState}, activity ${main.activityPollerState}`,
      };
    }
    const notPolling = ecsQueues.findIndex((status) => status.activityPollerState !== 'POLLING');
    if (notPolling >= 0) {
      return {
        ready: false,
        reason: `pollers: ECS queue worker ${notPolling + 1} ${ecsQueues[notPolling]?.activityPollerState}`,
      };
    }
    const now = Date.now();
    if (checked === undefined || now - checked.atMs > CONNECTION_CHECK_TTL_MS) {
      checked = { atMs: now, result: checkConnection() };
    }
    return checked.result;
  };
}

/**
 * Connects to Temporal, builds the worker from the configuration and starts it. `workflowBundle` (tests) replaces the
 * usual source of the workflow code (see workflowSource).
 */
export async function startWorker(input: {
  config: WorkerConfig;
  logger: Logger;
  workflowBundle?: WorkerOptions['workflowBundle'];
  tracing?: WorkerTracing;
}): Promise<RunningWorker> {
  const { config, logger, tracing } = input;
  warnDeprecatedVariables(config.temporal, (fields, message) => {
    logger.warn(fields, message);
  });
  const kubeConfig = withPooledConnections(new KubeConfig());
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
    limiter: localCallsLimiter(config.ecs.callsPerMinute),
    observe: ecsCallMetrics(),
    ...(tracing === undefined ? {} : { tracer: tracing.callTracer }),
  });
  // Started first, so the informers list while the worker connects and loads its workflow code.
  const readCache = new NodeReadCache({ kubeConfig, logger });
  readCache.start();
  let connection: NativeConnection;
  let worker: WorkerGroup;
  workerMetrics.setEcsBudget(config.ecs.callsPerMinute);
  if (config.ecs.ignoredRateLimitKeys !== undefined) {
    logger.warn(
      { actions: config.ecs.ignoredRateLimitKeys },
      'ENIFLOW_ECS_RATE_LIMIT names actions eniflow never calls: ignored',
    );
  }
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
      vSwitchWake: { pollMs: config.ecs.vSwitchWakePollMs },
      maxConcurrentActivities: config.maxConcurrentActivities,
      maxConcurrentWorkflowTasks: config.maxConcurrentWorkflowTasks,
      callsPerMinute: config.ecs.callsPerMinute,
      ecsBurst: config.ecs.burst,
      ...(config.temporalUiUrl === undefined ? {} : { temporalUiUrl: config.temporalUiUrl }),
      ...(input.workflowBundle === undefined ? {} : { workflowBundle: input.workflowBundle }),
      ...(tracing === undefined ? {} : { tracing }),
    });
  } catch (error) {
    await readCache.stop();
    throw error;
  }
  logger.info({ address: config.temporal.address, taskQueue: config.temporal.taskQueue }, 'Worker started');
  // Reads before the cache has synced are live anyway; waiting (boundedly) spares the apiserver that burst.
  await Promise.race([readCache.synced, new Promise((resolve) => setTimeout(resolve, CACHE_SYNC_WAIT_MS).unref())]);
  const done = worker.run().finally(async () => {
    await readCache.stop();
    await connection.close();
    // The spans of the last activities would otherwise be lost with the process.
    await tracing?.shutdown();
    logger.info('Worker stopped');
  });
  // Once the polls are out (see AlibabaEcsApi.preload).
  setImmediate(() => {
    void ecs.preload();
  });
  return {
    done,
    stop: async () => {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await done;
    },
    live: () => worker.getState() !== 'FAILED',
    readiness: workerReadiness(worker, connection),
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
  const tracing = await startTracing({ env, logger });
  let running: RunningWorker | undefined;
  // Up before the worker starts (bundling and connecting take seconds): alive at once, ready once it polls.
  const health =
    config.healthAddress === undefined
      ? undefined
      : await startWorkerHealthServer({
          address: config.healthAddress,
          registry: workerMetrics.registry,
          worker: () => running,
          logger,
        });
  try {
    running = await startWorker({ config, logger, ...options, ...(tracing === undefined ? {} : { tracing }) });
  } catch (error) {
    await health?.close();
    throw error;
  }
  const started = running;
  const stop = (signal: string): void => {
    logger.info({ signal }, 'Shutting down worker');
    void started.stop();
  };
  process.once('SIGINT', () => {
    stop('SIGINT');
  });
  process.once('SIGTERM', () => {
    stop('SIGTERM');
  });
  try {
    await started.done;
  } finally {
    await health?.close();
  }
}
