/**
 * What the Temporal server itself costs, the figures a platform team sizes its cluster by (issue 31): its CPU per pod
 * served and per idle node-day, and with `--temporal postgres` its database's rows inserted, updated and deleted and
 * its WAL bytes (every byte the database writes goes through the WAL first) per pod served and per idle node-day, from
 * `pg_stat_database`, `pg_stat_wal` and `pg_stat_user_tables`; and the signals per second the server accepts, from a
 * short burst of signals to workflows no worker runs.
 *
 * PostgreSQL's backends publish their counters when a transaction ends, at most once a second, and an idle one within
 * ten seconds: a window's deltas may miss its last seconds and include the previous window's, small against windows of
 * minutes.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

import type { Client } from '@temporalio/client';

import { POSTGRES_ROLE, findPostgresBinDir } from '../../scripts/lib/postgres.js';
import { TEMPORAL_SQL_DATABASES } from '../../scripts/lib/temporal-settings.js';
import type { TestServers } from '../../scripts/lib/test-servers.js';
import { addCounts, diffCounts } from './probes.js';
import type { Counts } from './probes.js';
import { table } from './markdown-table.js';

const execFileAsync = promisify(execFile);
const CLOCK_TICKS_PER_SECOND = 100;
const MIB = 1024 * 1024;

/** The database's counters at one instant. */
export interface DatabaseCounters {
  inserted: number;
  updated: number;
  deleted: number;
  walBytes: number;
  /** Both databases' size on disk (`pg_database_size`): tables, indexes and dead rows not yet vacuumed. */
  databaseBytes: number;
  /** Rows inserted + updated + deleted by table (`visibility.` before the visibility database's tables). */
  rowsByTable: Counts;
  /** CPU seconds of PostgreSQL's processes: the live ones and the backends that have exited. */
  cpuSeconds: number;
}

/** How to reach the benchmark's PostgreSQL, when its Temporal server has one. */
export interface DatabaseAccess {
  port: number;
  postmasterPid: number;
  psql: string;
}

export function databaseAccess(servers: TestServers): DatabaseAccess | undefined {
  const details = servers.servers.find((server) => server.name === 'temporal')?.details;
  if (details?.['postgresPort'] === undefined) return undefined;
  const binDir = findPostgresBinDir();
  const bundled = binDir === undefined ? undefined : join(binDir, 'psql');
  return {
    port: Number(details['postgresPort']),
    postmasterPid: Number(details['postgresPid']),
    psql: bundled !== undefined && existsSync(bundled) ? bundled : 'psql',
  };
}

async function query(access: DatabaseAccess, database: string, sql: string): Promise<string[][]> {
  const { stdout } = await execFileAsync(
    access.psql,
    ['-h', '127.0.0.1', '-p', String(access.port), '-U', POSTGRES_ROLE.user, '-d', database, '-AtF', '\t', '-c', sql],
    { env: { ...process.env, PGPASSWORD: POSTGRES_ROLE.password } },
  );
  return stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => line.split('\t'));
}

export async function readDatabaseCounters(access: DatabaseAccess): Promise<DatabaseCounters> {
  const names = TEMPORAL_SQL_DATABASES.map(({ database }) => `'${database}'`).join(', ');
  const [totals] = await query(
    access,
    TEMPORAL_SQL_DATABASES[0].database,
    `SELECT sum(tup_inserted), sum(tup_updated), sum(tup_deleted), (SELECT wal_bytes FROM pg_stat_wal),
            sum(pg_database_size(datname))
       FROM pg_stat_database WHERE datname IN (${names})`,
  );
  const rowsByTable: Counts = {};
  for (const { database, schema } of TEMPORAL_SQL_DATABASES) {
    const prefix = database === TEMPORAL_SQL_DATABASES[0].database ? '' : `${schema}.`;
    for (const [table, rows] of await query(
      access,
      database,
      'SELECT relname, n_tup_ins + n_tup_upd + n_tup_del FROM pg_stat_user_tables',
    )) {
      addCounts(rowsByTable, `${prefix}${table ?? '?'}`, Number(rows));
    }
  }
  const [inserted, updated, deleted, walBytes, databaseBytes] = (totals ?? []).map(Number);
  return {
    inserted: inserted ?? Number.NaN,
    updated: updated ?? Number.NaN,
    deleted: deleted ?? Number.NaN,
    walBytes: walBytes ?? Number.NaN,
    databaseBytes: databaseBytes ?? Number.NaN,
    rowsByTable,
    cpuSeconds: postgresCpuSeconds(access.postmasterPid),
  };
}

/**
 * CPU seconds of PostgreSQL: the postmaster's and its live children's own, plus its reaped children's (exited
 * backends), from /proc. Each child leads a session of its own (setsid), so they are found by their parent.
 */
function postgresCpuSeconds(postmasterPid: number): number {
  let ticks = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // Fields after the command name: the parent pid is [1], utime [11], stime [12], cutime [13], cstime [14].
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(entry) === postmasterPid) {
        ticks += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
      } else if (Number(fields[1]) === postmasterPid) {
        ticks += Number(fields[11]) + Number(fields[12]);
      }
    } catch {
      // The process exited while /proc was read.
    }
  }
  return ticks / CLOCK_TICKS_PER_SECOND;
}

/** The signal burst's result. */
export interface SignalRate {
  workflows: number;
  concurrency: number;
  /** Signals the server accepted, and those that failed (after the client's own retries). */
  signals: number;
  failed: number;
  seconds: number;
  perSecond: number;
}

const SIGNAL_TASK_QUEUE = 'eniflow-bench-signal-sink';
const SIGNAL_WORKFLOWS = 20;
const SIGNAL_CONCURRENCY = 32;
const SIGNAL_WINDOW_MS = 10_000;

/**
 * Signals as fast as {@link SIGNAL_CONCURRENCY} callers can for {@link SIGNAL_WINDOW_MS}, spread over workflows on a
 * task queue no worker polls: what the server accepts (each signal is a history write), not what a worker handles.
 * The workflows are terminated after.
 */
export async function measureSignalRate(client: Client): Promise<SignalRate> {
  const handles = await Promise.all(
    Array.from({ length: SIGNAL_WORKFLOWS }, (_, index) =>
      client.workflow.start('eniflowBenchSignalSink', {
        taskQueue: SIGNAL_TASK_QUEUE,
        workflowId: `eniflow-bench-signal-sink-${Date.now()}-${index}`,
      }),
    ),
  );
  let sent = 0;
  let failed = 0;
  const startedAt = performance.now();
  const caller = async (): Promise<void> => {
    while (performance.now() - startedAt < SIGNAL_WINDOW_MS) {
      const handle = handles[sent % handles.length];
      sent += 1;
      await handle?.signal('ping', sent).catch(() => {
        failed += 1;
      });
    }
  };
  await Promise.all(Array.from({ length: SIGNAL_CONCURRENCY }, caller));
  const seconds = (performance.now() - startedAt) / 1000;
  await Promise.all(handles.map((handle) => handle.terminate('signal burst measured').catch(() => undefined)));
  return {
    workflows: SIGNAL_WORKFLOWS,
    concurrency: SIGNAL_CONCURRENCY,
    signals: sent - failed,
    failed,
    seconds,
    perSecond: (sent - failed) / seconds,
  };
}

/** Per pod served and per idle node-day. */
export interface PerPodAndNodeDay {
  perPod: number;
  perIdleNodeDay: number;
}

export interface TemporalServerFigures {
  kind: string;
  cpuSeconds: PerPodAndNodeDay;
  signals: SignalRate;
  database?: {
    cpuSeconds: PerPodAndNodeDay;
    rowsInserted: PerPodAndNodeDay;
    rowsUpdated: PerPodAndNodeDay;
    rowsDeleted: PerPodAndNodeDay;
    walBytes: PerPodAndNodeDay;
    /** Growth of the databases on disk: what a cluster's storage is sized by, with {@link sizeAtEndBytes}. */
    databaseBytes: PerPodAndNodeDay;
    /** Both databases' size at the idle window's end, schema included, and per node. */
    sizeAtEndBytes: { total: number; perNode: number };
    /** The tables most written to (rows inserted + updated + deleted), per pod served and per idle node-day. */
    rowsByTablePerPod: Counts;
    rowsByTablePerIdleNodeDay: Counts;
  };
}

interface Window<T> {
  before: T;
  after: T;
}

export function temporalServerFigures(input: {
  kind: string;
  podsServed: number;
  nodes: number;
  idleMs: number;
  /** `--period-scale`: the idle window holds this many times the timers of real time. */
  periodScale: number;
  serverCpu: { burst: Window<number>; idle: Window<number> };
  database: { burst: Window<DatabaseCounters | undefined>; idle: Window<DatabaseCounters | undefined> };
  signals: SignalRate;
}): TemporalServerFigures {
  const perIdleNodeDay = 86_400_000 / input.idleMs / input.nodes / input.periodScale;
  const figure = (burst: number, idle: number): PerPodAndNodeDay => ({
    perPod: burst / input.podsServed,
    perIdleNodeDay: idle * perIdleNodeDay,
  });
  const delta = (window: Window<number>): number => window.after - window.before;
  const { burst, idle } = input.database;
  const database =
    burst.before === undefined || burst.after === undefined || idle.before === undefined || idle.after === undefined
      ? undefined
      : databaseFigures(
          { burst: { before: burst.before, after: burst.after }, idle: { before: idle.before, after: idle.after } },
          figure,
          input.nodes,
        );
  return {
    kind: input.kind,
    cpuSeconds: figure(delta(input.serverCpu.burst), delta(input.serverCpu.idle)),
    signals: input.signals,
    ...(database === undefined ? {} : { database }),
  };
}

function databaseFigures(
  windows: { burst: Window<DatabaseCounters>; idle: Window<DatabaseCounters> },
  figure: (burst: number, idle: number) => PerPodAndNodeDay,
  nodes: number,
): NonNullable<TemporalServerFigures['database']> {
  const of = (read: (counters: DatabaseCounters) => number): PerPodAndNodeDay =>
    figure(
      read(windows.burst.after) - read(windows.burst.before),
      read(windows.idle.after) - read(windows.idle.before),
    );
  const top = (window: Window<DatabaseCounters>, factor: number): Counts =>
    Object.fromEntries(
      Object.entries(diffCounts(window.after.rowsByTable, window.before.rowsByTable))
        .filter(([, rows]) => rows > 0)
        .sort((a, b) => b[1] - a[1])
        .slice(0, 6)
        .map(([name, rows]) => [name, rows * factor]),
    );
  const unit = figure(1, 1);
  return {
    cpuSeconds: of((counters) => counters.cpuSeconds),
    rowsInserted: of((counters) => counters.inserted),
    rowsUpdated: of((counters) => counters.updated),
    rowsDeleted: of((counters) => counters.deleted),
    walBytes: of((counters) => counters.walBytes),
    databaseBytes: of((counters) => counters.databaseBytes),
    sizeAtEndBytes: {
      total: windows.idle.after.databaseBytes,
      perNode: windows.idle.after.databaseBytes / nodes,
    },
    rowsByTablePerPod: top(windows.burst, unit.perPod),
    rowsByTablePerIdleNodeDay: top(windows.idle, unit.perIdleNodeDay),
  };
}

const fixed = (value: number, digits = 2): string => (Number.isFinite(value) ? value.toFixed(digits) : '-');
const counts = (values: Counts, digits: number): string =>
  Object.entries(values)
    .map(([key, value]) => `${key} ${fixed(value, digits)}`)
    .join(', ') || '-';

export function temporalServerTable(figures: TemporalServerFigures): string[] {
  const row = (name: string, value: PerPodAndNodeDay, digits = 2): string[] => [
    name,
    fixed(value.perPod, digits),
    fixed(value.perIdleNodeDay, digits),
  ];
  const { database, signals } = figures;
  const rows = [
    row('Temporal server CPU s', figures.cpuSeconds, 3),
    ...(database === undefined
      ? []
      : [
          row('PostgreSQL CPU s', database.cpuSeconds, 3),
          row('rows inserted', database.rowsInserted, 1),
          row('rows updated', database.rowsUpdated, 1),
          row('rows deleted', database.rowsDeleted, 1),
          row(
            'WAL KiB written',
            { perPod: database.walBytes.perPod / 1024, perIdleNodeDay: database.walBytes.perIdleNodeDay / 1024 },
            1,
          ),
          row(
            'database KiB grown on disk',
            {
              perPod: database.databaseBytes.perPod / 1024,
              perIdleNodeDay: database.databaseBytes.perIdleNodeDay / 1024,
            },
            1,
          ),
        ]),
  ];
  return [
    ...table([`Temporal server (${figures.kind})`, 'per pod served', 'per idle node-day'], rows),
    ...(database === undefined
      ? []
      : [
          '',
          `- rows by table per pod served: ${counts(database.rowsByTablePerPod, 1)}`,
          `- rows by table per idle node-day: ${counts(database.rowsByTablePerIdleNodeDay, 0)}`,
          `- databases on disk at the end: ${fixed(database.sizeAtEndBytes.total / MIB, 1)} MiB, ` +
            `${fixed(database.sizeAtEndBytes.perNode / MIB, 2)} MiB per node (the empty schemas included)`,
        ]),
    `- signals accepted: ${fixed(signals.perSecond, 0)}/s (${signals.signals} signals in ${fixed(signals.seconds, 1)} s, ${signals.failed} failed, ` +
      `${signals.concurrency} callers, ${signals.workflows} workflows no worker runs)`,
  ];
}
