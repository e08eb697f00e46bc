/**
 * The Temporal test server as temporal/docker-compose.yml runs it, without Docker: a throw-away PostgreSQL cluster,
 * both schemas set up with temporal-sql-tool and the schema files of the server's release, `temporal-server start`
 * with the compose service's environment (the server's embedded config template reads it, as in the image) and a
 * dynamic config file from temporal-settings.ts, then the compose file's own namespace and search-attribute jobs run
 * with the Temporal CLI. Selected by `ENIFLOW_TEST_TEMPORAL=postgres` or `npm run testenv -- --temporal postgres`.
 */
import { execFile } from 'node:child_process';
import { appendFile, writeFile } from 'node:fs/promises';
import { delimiter, dirname, join } from 'node:path';
import { promisify } from 'node:util';

import { DEFAULT_ECS_BURST } from '../../src/shared/ecs-budget.js';

import { isToolCached } from './build-tools.js';
import { composeEnvironment, composeJobArgv, composeService, readComposeServices } from './compose-file.js';
import { reserveFreePorts, reserveFreePortsBelow } from './free-ports.js';
import { ManagedProcess, describeExit } from './managed-process.js';
import { POSTGRES_INSTALL_HINT, findPostgresBinDir, startThrowawayPostgres } from './postgres.js';
import type { ThrowawayPostgres } from './postgres.js';
import { isPortTaken, waitUntilNamespaceReady } from './temporal-dev-server.js';
import { TEMPORAL_NAMESPACE, TEMPORAL_SQL_DATABASES, postgresTestServerDynamicConfig } from './temporal-settings.js';
import { renderDynamicConfigYaml } from './temporal-settings.js';
import { TEST_ENV_VARS } from './test-env-vars.js';
import type { RunningTestServer, TestServerDefinition, TestServerStartContext } from './test-server.js';
import { TEMPORAL_CLI, TEMPORAL_SERVER } from './tools-config.js';

const execFileAsync = promisify(execFile);

/** The compose jobs that prepare a started server, in their order (`depends_on`). */
const SERVER_JOBS = ['temporal-namespace', 'temporal-search-attributes'] as const;

/** The namespace job waits up to 120 s for the frontend; readiness after it is quick. */
const READY_TIMEOUT_MS = 60_000;

const PORT_RACE_ATTEMPTS = 3;

/** Environment variables of the embedded config template, one per port the server listens on. */
const SERVER_PORT_VARS = [
  'FRONTEND_GRPC_PORT',
  'FRONTEND_MEMBERSHIP_PORT',
  'FRONTEND_HTTP_PORT',
  'HISTORY_GRPC_PORT',
  'HISTORY_MEMBERSHIP_PORT',
  'MATCHING_GRPC_PORT',
  'MATCHING_MEMBERSHIP_PORT',
  'WORKER_GRPC_PORT',
  'WORKER_MEMBERSHIP_PORT',
] as const;

export interface TemporalPostgresServerOptions {
  /** As the dev server's: `matching.minTaskThrottlingBurstSize` for this burst (default {@link DEFAULT_ECS_BURST}). */
  readonly ecsBurst?: number;
}

/** Throws with what to run when a tool or PostgreSQL is missing. */
async function assertPrerequisites(): Promise<string> {
  for (const tool of [TEMPORAL_SERVER, TEMPORAL_CLI]) {
    if (!(await isToolCached(tool))) {
      throw new Error(
        `${tool.name} ${tool.version} is not built (${tool.binaryPath}). Run \`npm run tools -- --temporal postgres\`.`,
      );
    }
  }
  const binDir = findPostgresBinDir();
  if (binDir === undefined) throw new Error(`PostgreSQL is not installed: ${POSTGRES_INSTALL_HINT}`);
  return binDir;
}

/** Starts PostgreSQL and the server on fresh ports, again on new ones if a port was taken before it was bound. */
export async function startTemporalPostgresServer(
  context: TestServerStartContext,
  options: TemporalPostgresServerOptions = {},
): Promise<TemporalPostgresServer> {
  const binDir = await assertPrerequisites();
  for (let attempt = 1; ; attempt++) {
    const [postgresPort, metricsPort] = await reserveFreePorts(2);
    // The server records its services' ports in a smallint column: they must be below 32768.
    const serverPorts = await reserveFreePortsBelow(SERVER_PORT_VARS.length);
    if (postgresPort === undefined || metricsPort === undefined) throw new Error('could not reserve ports');
    try {
      return await launch(context, { ...options, binDir, postgresPort, metricsPort, serverPorts });
    } catch (error) {
      if (attempt >= PORT_RACE_ATTEMPTS || !isPortTaken(error)) throw error;
      context.log('temporal: a reserved port was taken before it was bound; starting again on new ports');
    }
  }
}

async function launch(
  { runDir, log }: TestServerStartContext,
  input: TemporalPostgresServerOptions & {
    binDir: string;
    postgresPort: number;
    metricsPort: number;
    serverPorts: readonly number[];
  },
): Promise<TemporalPostgresServer> {
  const startedAt = Date.now();
  const postgres = await startThrowawayPostgres({
    binDir: input.binDir,
    port: input.postgresPort,
    logPath: join(runDir, 'postgres.log'),
  });
  let server: ManagedProcess | undefined;
  try {
    const jobLog = join(runDir, 'temporal-setup.log');
    await setUpSchemas({ postgresPort: postgres.port, jobLog });
    const dynamicConfigPath = join(runDir, 'dynamicconfig.yaml');
    await writeFile(
      dynamicConfigPath,
      renderDynamicConfigYaml(
        postgresTestServerDynamicConfig(input.ecsBurst ?? DEFAULT_ECS_BURST),
        '# Dynamic config of the PostgreSQL-backed test server (scripts/lib/temporal-settings.ts).',
      ),
    );
    const address = `127.0.0.1:${String(input.serverPorts[0])}`;
    const serverInput = {
      runDir,
      address,
      env: serverEnvironment({
        postgresPort: postgres.port,
        dynamicConfigPath,
        metricsPort: input.metricsPort,
        ports: input.serverPorts,
      }),
    };
    server = startServerProcess(serverInput);
    const exited = new AbortController();
    void server.exited.then(() => {
      exited.abort(new Error('temporal-server exited'));
    });
    await server.unlessExited(runServerJobs({ address, jobLog, signal: exited.signal }));
    await server.unlessExited(waitUntilNamespaceReady({ address, signal: exited.signal, timeoutMs: READY_TIMEOUT_MS }));
    log(
      `temporal: ${address} (temporal-server ${TEMPORAL_SERVER.version} on PostgreSQL, port ${postgres.port}), ` +
        `pid ${server.pid}, ready in ${((Date.now() - startedAt) / 1000).toFixed(1)}s`,
    );
    return running({ server, serverInput, postgres, metricsPort: input.metricsPort, ports: input.serverPorts });
  } catch (error) {
    await server?.stop();
    await postgres.stop();
    throw error;
  }
}

/**
 * The server's environment: the compose service's (its embedded config template reads it, as in the image), but on
 * this machine's loopback, ports and dynamic config file. The first port is the frontend's gRPC port.
 */
export function serverEnvironment(input: {
  postgresPort: number;
  dynamicConfigPath: string;
  metricsPort: number;
  ports: readonly number[];
}): Record<string, string> {
  return {
    ...composeEnvironment(composeService(readComposeServices(), 'temporal')),
    POSTGRES_SEEDS: '127.0.0.1',
    DB_PORT: String(input.postgresPort),
    BIND_ON_IP: '127.0.0.1',
    DYNAMIC_CONFIG_FILE_PATH: input.dynamicConfigPath,
    PROMETHEUS_ENDPOINT: `127.0.0.1:${input.metricsPort}`,
    LOG_LEVEL: 'warn',
    ...Object.fromEntries(SERVER_PORT_VARS.map((name, index) => [name, String(input.ports[index])])),
  };
}

interface ServerProcessInput {
  runDir: string;
  address: string;
  env: Record<string, string>;
}

function startServerProcess(input: ServerProcessInput): ManagedProcess {
  return new ManagedProcess({
    name: 'temporal',
    command: TEMPORAL_SERVER.binaryPath,
    args: ['start'],
    cwd: input.runDir,
    logPath: join(input.runDir, 'temporal.log'),
    env: { ...process.env, ...input.env },
  });
}

/**
 * The test server with the hooks of a crash test: the server's process can be SIGKILLed and started again on the
 * same ports and database, and PostgreSQL crashed and started again on its data directory and port
 * (`postgres.crash()`, `postgres.start()`).
 */
export interface TemporalPostgresServer extends RunningTestServer {
  readonly address: string;
  readonly postgres: ThrowawayPostgres;
  /** Whether temporal-server runs now. */
  readonly serverRunning: boolean;
  /** `kill -9` of the server's process group; resolves once it is gone. */
  killServer(): Promise<void>;
  /** Starts the server again (same ports, config and database); resolves once its namespace answers. */
  startServer(): Promise<void>;
}

function running(input: {
  server: ManagedProcess;
  serverInput: ServerProcessInput;
  postgres: ThrowawayPostgres;
  metricsPort: number;
  ports: readonly number[];
}): TemporalPostgresServer {
  const { postgres, serverInput } = input;
  const { address } = serverInput;
  let server = input.server;
  return {
    name: 'temporal',
    address,
    postgres,
    env: {
      [TEST_ENV_VARS.temporalAddress]: address,
      [TEST_ENV_VARS.temporalNamespace]: TEMPORAL_NAMESPACE,
      [TEST_ENV_VARS.temporalKind]: 'postgres',
    },
    details: {
      address,
      namespace: TEMPORAL_NAMESPACE,
      serverVersion: TEMPORAL_SERVER.version,
      postgresPort: postgres.port,
      postgresPid: postgres.pid,
      postgresLogPath: postgres.logPath,
      postgresDir: postgres.clusterDir,
      metricsUrl: `http://127.0.0.1:${input.metricsPort}/metrics`,
      pid: server.pid,
      ports: [...input.ports, input.metricsPort, postgres.port],
      logPath: server.logPath,
    },
    get serverRunning() {
      return !server.hasExited;
    },
    killServer: async () => {
      if (server.hasExited) return;
      process.kill(-server.pid, 'SIGKILL');
      await server.exited;
    },
    startServer: async () => {
      if (!server.hasExited) throw new Error('temporal-server is running');
      server = startServerProcess(serverInput);
      const exited = new AbortController();
      void server.exited.then(() => {
        exited.abort(new Error('temporal-server exited'));
      });
      await server.unlessExited(
        waitUntilNamespaceReady({ address, signal: exited.signal, timeoutMs: READY_TIMEOUT_MS }),
      );
    },
    // The server first, so it does not see its database go away.
    stop: async () => {
      await server.stop();
      await postgres.stop();
    },
    exited: Promise.race([server.exited.then(describeExit), postgres.exited]),
  };
}

/** What the compose `temporal-schema` job does, against this cluster and the cached schema files. */
async function setUpSchemas(input: { postgresPort: number; jobLog: string }): Promise<void> {
  const services = readComposeServices();
  const serverEnv = composeEnvironment(composeService(services, 'temporal'));
  const jobEnv = composeEnvironment(composeService(services, 'temporal-schema'));
  const base = [
    ...['--plugin', serverEnv['DB'] ?? 'postgres12', '--ep', '127.0.0.1', '-p', String(input.postgresPort)],
    ...['-u', serverEnv['POSTGRES_USER'] ?? 'temporal'],
  ];
  for (const { database, schema } of TEMPORAL_SQL_DATABASES) {
    for (const step of [
      ['create'],
      ['setup-schema', '-v', '0.0'],
      ['update-schema', '-d', join(TEMPORAL_SERVER.postgresSchemaDir, schema, 'versioned')],
    ]) {
      await runLogged({
        command: TEMPORAL_SERVER.sqlToolPath,
        args: [...base, '--db', database, ...step],
        env: { ...process.env, ...jobEnv },
        jobLog: input.jobLog,
      });
    }
  }
}

/** The compose file's namespace and search-attribute jobs, verbatim, with the cached Temporal CLI as `temporal`. */
async function runServerJobs(input: { address: string; jobLog: string; signal: AbortSignal }): Promise<void> {
  const services = readComposeServices();
  for (const job of SERVER_JOBS) {
    const service = composeService(services, job);
    const [command, ...args] = composeJobArgv(service);
    await runLogged({
      command: command ?? '/bin/sh',
      args,
      env: {
        ...process.env,
        ...composeEnvironment(service),
        TEMPORAL_ADDRESS: input.address,
        PATH: `${dirname(TEMPORAL_CLI.binaryPath)}${delimiter}${process.env['PATH'] ?? ''}`,
      },
      jobLog: input.jobLog,
      label: job,
      // The namespace job waits up to 120 s for the frontend: not for a server that has exited.
      signal: input.signal,
    });
  }
}

async function runLogged(input: {
  command: string;
  args: readonly string[];
  env: NodeJS.ProcessEnv;
  jobLog: string;
  label?: string;
  signal?: AbortSignal;
}): Promise<void> {
  const label = input.label ?? [input.command.split('/').at(-1), ...input.args.slice(-3)].join(' ');
  await appendFile(input.jobLog, `$ ${label}\n`);
  try {
    const { stdout, stderr } = await execFileAsync(input.command, [...input.args], {
      env: input.env,
      ...(input.signal === undefined ? {} : { signal: input.signal }),
    });
    await appendFile(input.jobLog, stdout + stderr);
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    const output = `${stdout}${stderr}`;
    await appendFile(input.jobLog, output);
    throw new Error(
      `temporal: ${label} failed (log ${input.jobLog}):\n${output.trim().split('\n').slice(-10).join('\n')}`,
      {
        cause: error,
      },
    );
  }
}

export const temporalPostgresServer: TestServerDefinition = {
  name: 'temporal',
  envVarNames: [TEST_ENV_VARS.temporalAddress, TEST_ENV_VARS.temporalNamespace],
  start: (context) => startTemporalPostgresServer(context),
};
