/**
 * The processes a crash test kills and restarts: a Temporal server that survives its own SIGKILL, and worker
 * processes supervised as Kubernetes would supervise a Deployment's replicas.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';

import { reserveFreePorts } from '../../scripts/lib/free-ports.js';
import { ManagedProcess } from '../../scripts/lib/managed-process.js';
import { startTemporalDevServer } from '../../scripts/lib/temporal-dev-server.js';
import type { TemporalPostgresServer } from '../../scripts/lib/temporal-postgres-server.js';
import type { TemporalDevServerPorts } from '../../scripts/lib/temporal-dev-server.js';
import { startTemporalPostgresServer } from '../../scripts/lib/temporal-postgres-server.js';
import { TEST_ENV_VARS } from '../../scripts/lib/test-env-vars.js';
import type { RunningTestServer } from '../../scripts/lib/test-server.js';
import { parseTemporalServerKind } from '../../scripts/lib/test-servers.js';
import type { TemporalServerKind } from '../../scripts/lib/test-servers.js';

const WORKER_MAIN = fileURLToPath(new URL('./bundled-worker-main.ts', import.meta.url));

/**
 * A Temporal server that survives its own SIGKILL: the dev server on the same ports and database file, or, with
 * `ENIFLOW_TEST_TEMPORAL=postgres`, the compose file's server on the same ports and PostgreSQL database (which keeps
 * running through the kill).
 */
export class RestartableTemporal {
  readonly address: string;
  /** `dev` or `postgres`, as ENIFLOW_TEST_TEMPORAL chose. */
  readonly kind: TemporalServerKind;
  private readonly backend: RestartableBackend;

  private constructor(backend: RestartableBackend, kind: TemporalServerKind) {
    this.backend = backend;
    this.kind = kind;
    this.address = backend.address;
  }

  /** `ecsBurst`: the ECS queues' burst, as its workers' `ENIFLOW_ECS_BURST` says (default: the server's). */
  static async start(runDir: string, options: { ecsBurst?: number } = {}): Promise<RestartableTemporal> {
    const kind = parseTemporalServerKind(process.env[TEST_ENV_VARS.temporalKind]);
    const backend = kind === 'postgres' ? await postgresBackend(runDir, options) : await devBackend(runDir, options);
    return new RestartableTemporal(backend, kind);
  }

  /** `kill -9` of the server's process group; resolves once it is gone. */
  kill(): Promise<void> {
    return this.backend.kill();
  }

  /** Starts it again on the same ports and database; resolves once it is ready. */
  restart(): Promise<void> {
    return this.backend.restart();
  }

  stop(): Promise<void> {
    return this.backend.stop();
  }

  /** Where the server keeps its state: the dev server's SQLite file, or PostgreSQL's cluster directory. */
  get databaseFile(): string {
    return this.backend.database;
  }
}

interface RestartableBackend {
  readonly address: string;
  readonly database: string;
  kill(): Promise<void>;
  restart(): Promise<void>;
  stop(): Promise<void>;
}

async function devBackend(runDir: string, options: { ecsBurst?: number }): Promise<RestartableBackend> {
  const [grpc = 0, ui = 0, http = 0, metrics = 0] = await reserveFreePorts(4);
  const ports: TemporalDevServerPorts = { grpc, ui, http, metrics };
  const database = join(runDir, 'temporal.db');
  const launch = (): Promise<RunningTestServer> =>
    startTemporalDevServer(
      { runDir, log: () => undefined },
      {
        dbFilename: database,
        ports,
        logName: 'temporal.log',
        ...(options.ecsBurst === undefined ? {} : { ecsBurst: options.ecsBurst }),
      },
    );
  let server: RunningTestServer | undefined = await launch();
  return {
    address: `127.0.0.1:${ports.grpc}`,
    database,
    async kill() {
      const current = server;
      if (current === undefined) return;
      server = undefined;
      process.kill(-current.details.pid, 'SIGKILL');
      await current.exited;
    },
    async restart() {
      if (server !== undefined) throw new Error('the Temporal server is running');
      server = await launch();
    },
    async stop() {
      await server?.stop();
      server = undefined;
    },
  };
}

async function postgresBackend(runDir: string, options: { ecsBurst?: number }): Promise<RestartableBackend> {
  const server = await startTemporalPostgresServer(
    { runDir, log: () => undefined },
    options.ecsBurst === undefined ? {} : { ecsBurst: options.ecsBurst },
  );
  return {
    address: String(server.details['address']),
    database: String(server.details['postgresDir']),
    kill: () => server.killServer(),
    restart: () => server.restartServer(),
    stop: () => server.stop(),
  };
}

/**
 * The compose file's server on PostgreSQL (scripts/lib/temporal-postgres-server.ts) with the same kill and restart as
 * {@link RestartableTemporal} (same ports, same database), and its database's own crash and restart.
 */
export class RestartableTemporalPostgres {
  readonly address: string;
  private readonly server: TemporalPostgresServer;

  private constructor(server: TemporalPostgresServer) {
    this.server = server;
    this.address = server.address;
  }

  static async start(runDir: string, options: { ecsBurst?: number } = {}): Promise<RestartableTemporalPostgres> {
    return new RestartableTemporalPostgres(
      await startTemporalPostgresServer({ runDir, log: () => undefined }, options),
    );
  }

  /** `kill -9` of temporal-server's process group; resolves once it is gone. */
  kill(): Promise<void> {
    return this.server.killServer();
  }

  /** Starts temporal-server again on the same ports and database; resolves once its namespace answers. */
  restart(): Promise<void> {
    return this.server.restartServer();
  }

  /** `pg_ctl stop -m immediate` of the database; the server keeps running and sees its connections fail. */
  crashDatabase(): Promise<void> {
    return this.server.postgres.crash();
  }

  /** Starts PostgreSQL again on the same data directory and port; resolves once it accepts connections. */
  restartDatabase(): Promise<void> {
    return this.server.postgres.start();
  }

  /** Whether temporal-server runs (it may exit on its own while its database is down). */
  get serverRunning(): boolean {
    return this.server.serverRunning;
  }

  get serverLogPath(): string {
    return this.server.details.logPath;
  }

  async stop(): Promise<void> {
    await this.server.stop();
  }
}

/**
 * The worker process, supervised as Kubernetes would: SIGKILLed and restarted at will, and restarted after 1 s when it
 * exits on its own (e.g. started while the Temporal server is down: the connect at start fails and the process
 * exits). Each start's time to "Worker started" is kept.
 */
export class WorkerProcess {
  /** Milliseconds from spawn to the worker's "Worker started" log line (its pollers start right after). */
  readonly startTimesMs: number[] = [];
  kills = 0;
  /** Exits the worker made on its own, each followed by a restart. */
  selfExits = 0;
  private current: ManagedProcess | undefined;
  private readonly killed = new WeakSet<ManagedProcess>();
  private starts = 0;
  private stopping = false;
  private readonly env: NodeJS.ProcessEnv;
  private readonly logDir: string;
  /** Names the replica's log file (`<name>.log`) and its processes. */
  readonly name: string;

  constructor(input: { env: NodeJS.ProcessEnv; logDir: string; name?: string }) {
    this.env = input.env;
    this.logDir = input.logDir;
    this.name = input.name ?? 'worker';
  }

  get logPath(): string {
    return join(this.logDir, `${this.name}.log`);
  }

  /** Spawns the worker unless one runs; resolves at once, its start time is recorded when the line appears. */
  start(): void {
    if (this.stopping || (this.current !== undefined && !this.current.hasExited)) return;
    this.starts += 1;
    const spawnedAt = Date.now();
    const started = new ManagedProcess({
      name: `${this.name}-${this.starts}`,
      command: process.execPath,
      args: ['--import', 'tsx', WORKER_MAIN],
      logPath: this.logPath,
      env: this.env,
    });
    this.current = started;
    started
      .waitForStdoutLine((line) => line.includes('"Worker started"'), 120_000)
      .then(() => this.startTimesMs.push(Date.now() - spawnedAt))
      .catch(() => undefined);
    void started.exited.then(() => {
      if (this.killed.has(started) || this.stopping) return;
      this.selfExits += 1;
      setTimeout(() => {
        if (this.current === started) this.start();
      }, 1_000);
    });
  }

  /** Resolves once a worker has logged "Worker started", waiting through restarts after exits of its own. */
  async ready(timeoutMs = 180_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const current = this.current;
      if (current === undefined) throw new Error('the worker was never started');
      try {
        await current.waitForStdoutLine((line) => line.includes('"Worker started"'), deadline - Date.now());
        return;
      } catch (error) {
        if (this.stopping || Date.now() >= deadline) throw error;
        await sleep(500);
      }
    }
  }

  /** SIGKILL, as the kernel's OOM killer or a node failure would end it. */
  async kill(): Promise<void> {
    const current = this.current;
    if (current === undefined || current.hasExited) return;
    this.killed.add(current);
    process.kill(-current.pid, 'SIGKILL');
    await current.exited;
    this.kills += 1;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.current?.stop(10_000);
  }
}
