/**
 * The processes a crash test kills and restarts: a Temporal dev server that survives its own SIGKILL, and worker
 * processes supervised as Kubernetes would supervise a Deployment's replicas.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';

import { reserveFreePorts } from '../../scripts/lib/free-ports.js';
import { ManagedProcess } from '../../scripts/lib/managed-process.js';
import { startTemporalDevServer } from '../../scripts/lib/temporal-dev-server.js';
import { startTemporalPostgresServer } from '../../scripts/lib/temporal-postgres-server.js';
import type { TemporalPostgresServer } from '../../scripts/lib/temporal-postgres-server.js';
import type { TemporalDevServerPorts } from '../../scripts/lib/temporal-dev-server.js';
import type { RunningTestServer } from '../../scripts/lib/test-server.js';

const WORKER_MAIN = fileURLToPath(new URL('./bundled-worker-main.ts', import.meta.url));

/** A Temporal dev server that survives its own SIGKILL: same ports and database file on restart. */
export class RestartableTemporal {
  readonly address: string;
  private server: RunningTestServer | undefined;
  private readonly runDir: string;
  private readonly ports: TemporalDevServerPorts;
  private readonly dbFilename: string;
  private readonly ecsBurst: number | undefined;

  private constructor(input: {
    runDir: string;
    ports: TemporalDevServerPorts;
    server: RunningTestServer;
    ecsBurst: number | undefined;
  }) {
    this.runDir = input.runDir;
    this.ecsBurst = input.ecsBurst;
    this.ports = input.ports;
    this.server = input.server;
    this.dbFilename = join(input.runDir, 'temporal.db');
    this.address = `127.0.0.1:${input.ports.grpc}`;
  }

  /** `ecsBurst`: the ECS queues' burst, as its workers' `ENIFLOW_ECS_BURST` says (default: the dev server's). */
  static async start(runDir: string, options: { ecsBurst?: number } = {}): Promise<RestartableTemporal> {
    const [grpc = 0, ui = 0, http = 0, metrics = 0] = await reserveFreePorts(4);
    const ports = { grpc, ui, http, metrics };
    const server = await RestartableTemporal.launch(runDir, ports, options.ecsBurst);
    return new RestartableTemporal({ runDir, ports, server, ecsBurst: options.ecsBurst });
  }

  private static launch(
    runDir: string,
    ports: TemporalDevServerPorts,
    ecsBurst: number | undefined,
  ): Promise<RunningTestServer> {
    return startTemporalDevServer(
      { runDir, log: () => undefined },
      {
        dbFilename: join(runDir, 'temporal.db'),
        ports,
        logName: 'temporal.log',
        ...(ecsBurst === undefined ? {} : { ecsBurst }),
      },
    );
  }

  /** `kill -9` of the server's process group; resolves once it is gone. */
  async kill(): Promise<void> {
    const server = this.server;
    if (server === undefined) return;
    this.server = undefined;
    process.kill(-server.details.pid, 'SIGKILL');
    await server.exited;
  }

  /** Starts it again on the same ports and database file; resolves once it is ready. */
  async restart(): Promise<void> {
    if (this.server !== undefined) throw new Error('the Temporal server is running');
    this.server = await RestartableTemporal.launch(this.runDir, this.ports, this.ecsBurst);
  }

  async stop(): Promise<void> {
    await this.server?.stop();
    this.server = undefined;
  }

  get databaseFile(): string {
    return this.dbFilename;
  }
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
    return this.server.startServer();
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
