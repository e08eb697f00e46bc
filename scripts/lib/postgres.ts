/**
 * PostgreSQL for the Temporal server of temporal/docker-compose.yml, without Docker: the machine's binaries (on PATH
 * or Debian's /usr/lib/postgresql/<major>/bin), installed from Debian's packages by `npm run tools -- --temporal
 * postgres` when missing, and a throw-away cluster in a temporary directory on a free loopback port.
 *
 * initdb and postgres refuse to run as root: as root, the cluster belongs to the `postgres` account (Debian's
 * package creates it) or, without one, to `nobody`, and its processes run as that account through setpriv.
 */
import { execFile } from 'node:child_process';
import { accessSync, constants, readdirSync, readFileSync } from 'node:fs';
import { chown, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';

import { ManagedProcess, describeExit, runAsWrapper } from './managed-process.js';
import type { UnixAccount } from './managed-process.js';
import { pollUntil } from './poll-until.js';

const execFileAsync = promisify(execFile);

/** Where Debian's packages put each major version's server binaries. */
const DEBIAN_POSTGRES_ROOT = '/usr/lib/postgresql';

/** The Debian package that brings the distribution's PostgreSQL (15 on bookworm). */
const DEBIAN_PACKAGE = 'postgresql';

/** The role and password the compose file gives the server (POSTGRES_USER, POSTGRES_PWD). */
export const POSTGRES_ROLE = { user: 'temporal', password: 'temporal' } as const;

const READY_TIMEOUT_MS = 60_000;

/** The directory holding `initdb` and `postgres`: the first on PATH, else Debian's newest; undefined if none. */
export function findPostgresBinDir(input: { path?: string; debianRoot?: string } = {}): string | undefined {
  const onPath = (input.path ?? process.env['PATH'] ?? '').split(delimiter).filter((dir) => dir !== '');
  const debianRoot = input.debianRoot ?? DEBIAN_POSTGRES_ROOT;
  let debian: string[] = [];
  try {
    debian = readdirSync(debianRoot)
      .filter((major) => /^\d+$/.test(major))
      .sort((a, b) => Number(b) - Number(a))
      .map((major) => join(debianRoot, major, 'bin'));
  } catch {
    // No Debian packages.
  }
  return [...onPath, ...debian].find((dir) => isExecutable(join(dir, 'initdb')) && isExecutable(join(dir, 'postgres')));
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** How to get PostgreSQL when it is missing, for messages. */
export const POSTGRES_INSTALL_HINT =
  `install PostgreSQL (as root: \`apt-get install ${DEBIAN_PACKAGE}\`, or \`npm run tools -- --temporal postgres\`, ` +
  'which does that) or put the directory of its initdb and postgres on PATH';

/**
 * Returns the PostgreSQL bin directory, installing Debian's package first when none is found and this process is
 * root on a Debian-like system. The package's own `main` cluster is not created (Debian's createcluster.conf), so
 * the install starts no server on port 5432.
 */
export async function ensurePostgres(log: (line: string) => void): Promise<string> {
  const found = findPostgresBinDir();
  if (found !== undefined) return found;
  if (process.getuid?.() !== 0 || !isExecutable('/usr/bin/apt-get')) {
    throw new Error(`PostgreSQL is not installed: ${POSTGRES_INSTALL_HINT}`);
  }
  log(`PostgreSQL not found: installing Debian's ${DEBIAN_PACKAGE} package (apt-get, without its main cluster)`);
  await writeCreateClusterConfig();
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  await execFileAsync('apt-get', ['update'], { env, maxBuffer: 64 * 1024 * 1024 });
  await execFileAsync('apt-get', ['install', '-y', '--no-install-recommends', DEBIAN_PACKAGE], {
    env,
    maxBuffer: 64 * 1024 * 1024,
  });
  const installed = findPostgresBinDir();
  if (installed === undefined) throw new Error(`apt-get installed ${DEBIAN_PACKAGE}, but no initdb was found`);
  return installed;
}

/** postgresql-common reads this before creating a cluster on install; an existing file is left as it is. */
async function writeCreateClusterConfig(): Promise<void> {
  const path = '/etc/postgresql-common/createcluster.conf';
  try {
    await readFile(path);
  } catch {
    await execFileAsync('mkdir', ['-p', '/etc/postgresql-common']);
    await writeFile(
      path,
      '# eniflow test tools: no cluster on install, the tests make their own.\ncreate_main_cluster = false\n',
    );
  }
}

/** The account the cluster runs as: this process's, or, as root, `postgres` or `nobody`. */
export function postgresAccount(passwd = '/etc/passwd'): UnixAccount | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const entries = readFileSync(passwd, 'utf8')
    .split('\n')
    .map((line) => line.split(':'))
    .filter((fields) => fields.length >= 4);
  for (const name of ['postgres', 'nobody']) {
    const entry = entries.find((fields) => fields[0] === name);
    if (entry !== undefined) return { name, uid: Number(entry[2]), gid: Number(entry[3]) };
  }
  throw new Error('running as root, and neither a postgres nor a nobody account exists to run PostgreSQL as');
}

/** A running throw-away cluster. */
export interface ThrowawayPostgres {
  readonly port: number;
  /** The postmaster's pid (another one after {@link start}). */
  readonly pid: number;
  readonly logPath: string;
  /** The temporary directory of the cluster (data directory, password file), removed by stop(). */
  readonly clusterDir: string;
  /** Settles when the postmaster running now exits. */
  readonly exited: Promise<string>;
  /**
   * `pg_ctl stop -m immediate`: the postmaster and its backends quit at once, without a checkpoint, as in a crash;
   * the next start recovers from the WAL. Resolves once every process of the cluster is gone.
   */
  crash(): Promise<void>;
  /** Starts the server again on the same data directory and port; resolves once it accepts connections. */
  start(): Promise<void>;
  /** Stops the server and removes the cluster. */
  stop(): Promise<void>;
}

/**
 * initdb into a fresh temporary directory (role `temporal`, password authentication as in the compose file), then
 * postgres on `port`, on loopback only and without a Unix socket. fsync is off: a crash of the server process keeps
 * what it wrote (the page cache holds it), only a crash of the machine would not, and these clusters do not outlive
 * a test run.
 */
export async function startThrowawayPostgres(input: {
  binDir: string;
  port: number;
  logPath: string;
}): Promise<ThrowawayPostgres> {
  const account = postgresAccount();
  const clusterRoot = await mkdtemp(join(tmpdir(), 'eniflow-postgres-'));
  try {
    const dataDir = join(clusterRoot, 'data');
    const passwordFile = join(clusterRoot, 'password');
    await writeFile(passwordFile, `${POSTGRES_ROLE.password}\n`, { mode: 0o600 });
    if (account !== undefined) {
      await chown(clusterRoot, account.uid, account.gid);
      await chown(passwordFile, account.uid, account.gid);
    }
    const initdb = [
      join(input.binDir, 'initdb'),
      ...['-D', dataDir, '-U', POSTGRES_ROLE.user, `--pwfile=${passwordFile}`, '--auth=scram-sha-256'],
      ...['-E', 'UTF8', '--locale=C', '--no-sync'],
    ];
    await runAsAccount(account, initdb, clusterRoot);
    return await launch({ ...input, account, clusterRoot, dataDir });
  } catch (error) {
    await rm(clusterRoot, { recursive: true, force: true });
    throw error;
  }
}

interface ClusterFiles {
  binDir: string;
  port: number;
  logPath: string;
  account: UnixAccount | undefined;
  clusterRoot: string;
  dataDir: string;
}

async function launch(input: ClusterFiles): Promise<ThrowawayPostgres> {
  let server = await startPostmaster(input);
  return {
    port: input.port,
    get pid() {
      return server.pid;
    },
    logPath: input.logPath,
    clusterDir: input.clusterRoot,
    get exited() {
      return server.exited.then((exit) => `postgres ${describeExit(exit)}`);
    },
    crash: async () => {
      if (server.hasExited) return;
      await runAsAccount(
        input.account,
        [join(input.binDir, 'pg_ctl'), ...['stop', '-D', input.dataDir, '-m', 'immediate', '-w']],
        input.clusterRoot,
      );
      // stop() after the exit only sweeps the process group: a backend the postmaster left would hold the port.
      await server.stop();
    },
    start: async () => {
      if (!server.hasExited) throw new Error('PostgreSQL is running');
      server = await startPostmaster(input);
    },
    stop: async () => {
      await server.stop();
      await rm(input.clusterRoot, { recursive: true, force: true });
    },
  };
}

/** Runs a PostgreSQL tool as the cluster's account (root may not run them). */
async function runAsAccount(account: UnixAccount | undefined, argv: readonly string[], cwd: string): Promise<void> {
  const [command, ...args] = [...(account === undefined ? [] : [...runAsWrapper(account), '--']), ...argv];
  await execFileAsync(command ?? '', args, { cwd });
}

/** postgres on the cluster's data directory and port; resolves once this start of it accepts connections. */
async function startPostmaster(input: ClusterFiles): Promise<ManagedProcess> {
  // The log is appended to across restarts: only what this start writes counts.
  const logOffset = await stat(input.logPath).then(
    (stats) => stats.size,
    () => 0,
  );
  const server = new ManagedProcess({
    name: 'postgres',
    command: join(input.binDir, 'postgres'),
    args: [
      ...['-D', input.dataDir, '-p', String(input.port)],
      ...['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'fsync=off'],
      // Temporal's default pools (20 + 10 connections per service, four services in one process) fit well.
      ...['-c', 'max_connections=200'],
    ],
    cwd: input.clusterRoot,
    logPath: input.logPath,
    ...(input.account === undefined ? {} : { runAs: input.account }),
  });
  const exited = new AbortController();
  void server.exited.then(() => {
    exited.abort(new Error('postgres exited'));
  });
  try {
    await server.unlessExited(
      pollUntil(
        async () =>
          (await readFile(input.logPath)).subarray(logOffset).includes('database system is ready to accept connections')
            ? true
            : undefined,
        { description: `PostgreSQL on port ${input.port}`, timeoutMs: READY_TIMEOUT_MS, signal: exited.signal },
      ),
    );
  } catch (error) {
    await server.stop();
    throw error;
  }
  return server;
}
