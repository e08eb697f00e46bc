/**
 * The Temporal test server: `temporal server start-dev` from the cached CLI (real Temporal server 1.29.1,
 * in-memory SQLite unless a database file is given, Web UI), on loopback ports chosen here or given.
 */
import { join } from 'node:path';

import { Connection } from '@temporalio/client';

import { DEFAULT_ECS_BURST } from '../../src/shared/ecs-budget.js';

import { isToolCached } from './build-tools.js';
import { reserveFreePorts } from './free-ports.js';
import { ManagedProcess, describeExit } from './managed-process.js';
import { pollUntil } from './poll-until.js';
import { TEST_ENV_VARS } from './test-env-vars.js';
import type { RunningTestServer, TestServerDefinition, TestServerStartContext } from './test-server.js';
import { TEMPORAL_NAMESPACE, TEMPORAL_SEARCH_ATTRIBUTES, devServerDynamicConfigValues } from './temporal-settings.js';
import { TEMPORAL_CLI } from './tools-config.js';

export const TEMPORAL_TEST_NAMESPACE = TEMPORAL_NAMESPACE;

/** Registered at start; the list is shared with the compose job and the PostgreSQL-backed server. */
export { TEMPORAL_SEARCH_ATTRIBUTES };

const READY_TIMEOUT_MS = 60_000;

/** Ports of a dev server: frontend gRPC, Web UI, HTTP API, metrics. */
export interface TemporalDevServerPorts {
  readonly grpc: number;
  readonly ui: number;
  readonly http: number;
  readonly metrics: number;
}

/** Options of {@link startTemporalDevServer}; the defaults are what the shared test server uses. */
export interface TemporalDevServerOptions {
  /**
   * A SQLite file (`--db-filename`) that keeps the server's state across restarts; absent → in memory, gone with
   * the process.
   */
  readonly dbFilename?: string;
  /** Fixed ports, e.g. to restart a server where its clients expect it; absent → free ports chosen now. */
  readonly ports?: TemporalDevServerPorts;
  /**
   * Calls of one ECS action the server lets through at once (`ENIFLOW_ECS_BURST` of its workers; default
   * {@link DEFAULT_ECS_BURST}): `matching.minTaskThrottlingBurstSize` per partition. The dev server takes no
   * constraints, so it applies to every rate-limited queue, and only the ECS queues are.
   */
  readonly ecsBurst?: number;
  /** Name of its log file in the run directory (default `temporal.log`); a restart appends to the same one. */
  readonly logName?: string;
  /** Reserves the four ports of a fresh-port start (default {@link reserveFreePorts}); a test can hand taken ones. */
  readonly reservePorts?: (count: number) => Promise<number[]>;
}

/**
 * Starts a dev server and resolves once it is ready. The shared test server calls it with no options; a test that
 * kills and restarts its own server passes a database file and the ports of the first start.
 */
export async function startTemporalDevServer(
  { runDir, log }: TestServerStartContext,
  options: TemporalDevServerOptions = {},
): Promise<RunningTestServer> {
  if (!(await isToolCached(TEMPORAL_CLI))) {
    throw new Error(`The Temporal CLI is not built (${TEMPORAL_CLI.binaryPath}). Run \`npm run tools\` first.`);
  }
  if (options.ports !== undefined) return launchTemporalDevServer({ runDir, log }, options, options.ports);
  // Ports free a moment ago may be taken before the server binds them (another server of the run starting beside
  // it): such a start is tried again on new ports, a few times.
  for (let attempt = 1; ; attempt++) {
    const [grpc, ui, http, metrics] = await (options.reservePorts ?? reserveFreePorts)(4);
    if (grpc === undefined || ui === undefined || http === undefined || metrics === undefined) {
      throw new Error('could not reserve ports for the Temporal dev server');
    }
    try {
      return await launchTemporalDevServer({ runDir, log }, options, { grpc, ui, http, metrics });
    } catch (error) {
      if (attempt >= PORT_RACE_ATTEMPTS || !isPortTaken(error)) throw error;
      log(`temporal: a reserved port was taken before the server bound it; starting again on new ports`);
    }
  }
}

const PORT_RACE_ATTEMPTS = 3;

/** Whether a start failed because one of its ports was bound by someone else first. */
export function isPortTaken(error: unknown): boolean {
  return error instanceof Error && /address already in use/i.test(error.message);
}

async function launchTemporalDevServer(
  { runDir, log }: Pick<TestServerStartContext, 'runDir' | 'log'>,
  options: TemporalDevServerOptions,
  ports: TemporalDevServerPorts,
): Promise<RunningTestServer> {
  const { grpc: grpcPort, ui: uiPort, http: httpPort, metrics: metricsPort } = ports;
  const address = `127.0.0.1:${grpcPort}`;
  const uiUrl = `http://127.0.0.1:${uiPort}`;
  const args = [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(grpcPort),
    '--ui-port',
    String(uiPort),
    '--http-port',
    String(httpPort),
    '--metrics-port',
    String(metricsPort),
    '--namespace',
    TEMPORAL_TEST_NAMESPACE,
    '--log-level',
    'error',
    ...Object.entries(TEMPORAL_SEARCH_ATTRIBUTES).flatMap(([name, type]) => ['--search-attribute', `${name}=${type}`]),
    ...devServerDynamicConfigValues(options.ecsBurst ?? DEFAULT_ECS_BURST).flatMap((setting) => [
      '--dynamic-config-value',
      setting,
    ]),
    ...(options.dbFilename === undefined ? [] : ['--db-filename', options.dbFilename]),
  ];
  const server = new ManagedProcess({
    name: 'temporal',
    command: TEMPORAL_CLI.binaryPath,
    args,
    logPath: join(runDir, options.logName ?? 'temporal.log'),
  });
  // A server that exited is not waited for: its probes stop with it.
  const exited = new AbortController();
  void server.exited.then(() => {
    exited.abort(new Error('the Temporal dev server exited'));
  });
  try {
    await server.unlessExited(waitUntilTemporalReady({ address, uiUrl, signal: exited.signal }));
  } catch (error) {
    await server.stop();
    throw error;
  }
  log(`temporal: ${address} (Web UI ${uiUrl}), pid ${server.pid}`);

  return {
    name: 'temporal',
    env: {
      [TEST_ENV_VARS.temporalAddress]: address,
      [TEST_ENV_VARS.temporalNamespace]: TEMPORAL_TEST_NAMESPACE,
      [TEST_ENV_VARS.temporalUiUrl]: uiUrl,
    },
    details: {
      address,
      namespace: TEMPORAL_TEST_NAMESPACE,
      uiUrl,
      httpApiUrl: `http://127.0.0.1:${httpPort}`,
      metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
      pid: server.pid,
      ports: [grpcPort, uiPort, httpPort, metricsPort],
      logPath: server.logPath,
    },
    stop: async () => {
      await server.stop();
    },
    exited: server.exited.then(describeExit),
  };
}

/** Ready means: the frontend answers for the test namespace with its search attributes, and the Web UI serves. */
async function waitUntilTemporalReady({
  address,
  uiUrl,
  signal,
}: {
  address: string;
  uiUrl: string;
  signal: AbortSignal;
}): Promise<void> {
  await waitUntilNamespaceReady({ address, signal });
  await pollUntil(async () => ((await fetch(uiUrl)).ok ? true : undefined), {
    description: `the Temporal Web UI at ${uiUrl}`,
    timeoutMs: READY_TIMEOUT_MS,
    signal,
  });
}

/** Waits until the frontend at `address` answers for the test namespace and eniflow's search attributes are registered. */
export async function waitUntilNamespaceReady({
  address,
  signal,
  timeoutMs = READY_TIMEOUT_MS,
}: {
  address: string;
  signal: AbortSignal;
  timeoutMs?: number;
}): Promise<void> {
  const connection = await pollUntil(() => Connection.connect({ address, connectTimeout: 1000 }), {
    description: `the Temporal frontend at ${address}`,
    timeoutMs,
    intervalMs: 200,
    signal,
  });
  try {
    await pollUntil(
      async () => {
        await connection.workflowService.describeNamespace({ namespace: TEMPORAL_TEST_NAMESPACE });
        const { customAttributes } = await connection.operatorService.listSearchAttributes({
          namespace: TEMPORAL_TEST_NAMESPACE,
        });
        const registered = Object.keys(customAttributes ?? {});
        return Object.keys(TEMPORAL_SEARCH_ATTRIBUTES).every((name) => registered.includes(name)) ? true : undefined;
      },
      {
        description: `namespace ${TEMPORAL_TEST_NAMESPACE} with its search attributes`,
        timeoutMs,
        signal,
      },
    );
  } finally {
    await connection.close();
  }
}

export const temporalDevServer: TestServerDefinition = {
  name: 'temporal',
  envVarNames: [TEST_ENV_VARS.temporalAddress, TEST_ENV_VARS.temporalNamespace],
  start: (context) => startTemporalDevServer(context),
};
