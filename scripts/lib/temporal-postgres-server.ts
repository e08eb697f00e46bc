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

/**
 * The running server (as the test environment's) that a crash test can also kill and start again: PostgreSQL keeps
 * running, and the server comes back on the same ports, dynamic config and database. `exited` and `details.pid` are
 * the first server process's.
 */
export interface TemporalPostgresServer extends RunningTestServer {
  readonly address: string;
  /** The database, which a crash test can also crash (`pg_ctl stop -m immediate`) and start again. */
  readonly postgres: ThrowawayPostgres;
  /** Whether temporal-server runs now (it may also exit on its own while its database is down). */
  readonly serverRunning: boolean;
  /** The server process running now; undefined between {@link killServer} and {@link restartServer}. */
  readonly serverPid: number | undefined;
  /** `kill -9` of the server's process group (not PostgreSQL's); resolves once it is gone. */
  killServer(): Promise<void>;
  /** Starts the server again after {@link killServer}; resolves once the namespace answers. */
  restartServer(): Promise<void>;
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
    const env = {
      ...process.env,
      ...serverEnvironment({
        postgresPort: postgres.port,
        dynamicConfigPath,
        metricsPort: input.metricsPort,
        ports: input.serverPorts,
      }),
    };
    // A restart is the same command on the same ports, config and database: the namespace and search attributes
    // are in the database already, so only readiness is awaited.
    const startServer = async (prepare: boolean): Promise<ManagedProcess> => {
      const started = new ManagedProcess({
        name: 'temporal',
        command: TEMPORAL_SERVER.binaryPath,
        args: ['start'],
        cwd: runDir,
        logPath: join(runDir, 'temporal.log'),
        env,
      });
      const exited = new AbortController();
      void started.exited.then(() => {
        exited.abort(new Error('temporal-server exited'));
      });
      try {
        if (prepare) await started.unlessExited(runServerJobs({ address, jobLog, signal: exited.signal }));
        await started.unlessExited(
          waitUntilNamespaceReady({ address, signal: exited.signal, timeoutMs: READY_TIMEOUT_MS }),
        );
      } catch (error) {
        await started.stop();
        throw error;
      }
      return started;
    };
    const first = await startServer(true);
    log(
      `temporal: ${address} (temporal-server ${TEMPORAL_SERVER.version} on PostgreSQL, port ${postgres.port}), ` +
        `pid ${first.pid}, ready in ${((Date.now() - startedAt) / 1000).toFixed(1)}s`,
    );
    return running({
      server: first,
      restart: () => startServer(false),
      postgres,
      address,
      metricsPort: input.metricsPort,
      ports: input.serverPorts,
    });
  } catch (error) {
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

function running(input: {
  server: ManagedProcess;
  restart: () => Promise<ManagedProcess>;
  postgres: ThrowawayPostgres;
  address: string;
  metricsPort: number;
  ports: readonly number[];
}): TemporalPostgresServer {
  const { postgres } = input;
  let server: ManagedProcess | undefined = input.server;
  return {
    name: 'temporal',
    address: input.address,
    postgres,
    env: {
      [TEST_ENV_VARS.temporalAddress]: input.address,
      [TEST_ENV_VARS.temporalNamespace]: TEMPORAL_NAMESPACE,
      [TEST_ENV_VARS.temporalKind]: 'postgres',
    },
    details: {
      address: input.address,
      namespace: TEMPORAL_NAMESPACE,
      serverVersion: TEMPORAL_SERVER.version,
      postgresPort: postgres.port,
      postgresPid: postgres.pid,
      postgresLogPath: postgres.logPath,
      postgresDir: postgres.clusterDir,
      metricsUrl: `http://127.0.0.1:${input.metricsPort}/metrics`,
      pid: input.server.pid,
      ports: [...input.ports, input.metricsPort, postgres.port],
      logPath: input.server.logPath,
    },
    // The server first, so it does not see its database go away.
    stop: async () => {
      await server?.stop();
      server = undefined;
      await postgres.stop();
    },
    exited: Promise.race([input.server.exited.then(describeExit), postgres.exited]),
    get serverPid() {
      return server?.pid;
    },
    get serverRunning() {
      return server !== undefined && !server.hasExited;
    },
    killServer: async () => {
      const current = server;
      if (current === undefined) return;
      server = undefined;
      process.kill(-current.pid, 'SIGKILL');
      await current.exited;
    },
    restartServer: async () => {
      if (server !== undefined) throw new Error('temporal-server is running');
      server = await input.restart();
    },
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
