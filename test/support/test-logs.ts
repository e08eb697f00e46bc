/**
 * Where the logs of what a test runs in-process (watchers, workers, the Temporal SDK) go: into files, so the test
 * output holds the test results only. With `TEST_LOG_LEVEL` set (e.g. `TEST_LOG_LEVEL=info`) they go to the
 * terminal at that level instead.
 *
 * The directory is `ENIFLOW_TEST_LOG_DIR` when set (scripts/with-testenv.ts sets it inside its run directory, which
 * it keeps and names when the tests fail), else a temporary directory of this test file's process, removed when
 * the file passes and named on stderr when it fails.
 */
import { createWriteStream, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import type { WriteStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { Info } from '@temporalio/activity';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import type { LogEntry, LogLevel } from '@temporalio/worker';

import { TEST_LOG_DIR_VAR } from '../../scripts/lib/test-env-vars.js';
import { createLogger } from '../../src/logger.js';
import type { Logger } from '../../src/logger.js';

/** The level asked for on the terminal, if any. */
function terminalLevel(): string | undefined {
  const level = process.env['TEST_LOG_LEVEL'];
  return level === undefined || level === '' ? undefined : level;
}

let logDir: string | undefined;

/** This run's log directory, created on first use. */
export function testLogDir(): string {
  if (logDir !== undefined) return logDir;
  const fromEnv = process.env[TEST_LOG_DIR_VAR];
  if (fromEnv !== undefined && fromEnv !== '') {
    mkdirSync(fromEnv, { recursive: true });
    logDir = fromEnv;
    return logDir;
  }
  const created = mkdtempSync(join(tmpdir(), 'eniflow-test-logs-'));
  logDir = created;
  process.once('exit', (code) => {
    if (code === 0) {
      rmSync(created, { recursive: true, force: true });
    } else {
      process.stderr.write(`test logs kept in ${created}\n`);
    }
  });
  return logDir;
}

const streams = new Map<string, WriteStream>();

/** An append stream to `<log dir>/<name>.log`, one per name and process. */
export function testLogStream(name: string): WriteStream {
  let stream = streams.get(name);
  if (stream === undefined) {
    stream = createWriteStream(join(testLogDir(), `${name}.log`), { flags: 'a' });
    streams.set(name, stream);
  }
  return stream;
}

/**
 * The JSON logger to hand a watcher or worker run in-process: at `level` into `<log dir>/<name>.log`, or, with
 * `TEST_LOG_LEVEL` set, to stdout at that level.
 */
export function testLogger(name: string, level = 'info'): Logger {
  const onTerminal = terminalLevel();
  if (onTerminal !== undefined) return createLogger({ name, level: onTerminal });
  return createLogger({ name, level, destination: testLogStream(name) });
}

const SDK_LEVELS: Record<string, LogLevel> = {
  trace: 'TRACE',
  debug: 'DEBUG',
  info: 'INFO',
  warn: 'WARN',
  error: 'ERROR',
  fatal: 'ERROR',
};

/**
 * The Temporal SDK's logger for tests: warnings and errors (per-task INFO lines would bury anything) into
 * `<log dir>/temporal-sdk.log`, or everything from `TEST_LOG_LEVEL` up to stderr.
 */
export function testTemporalLogger(): DefaultLogger {
  const onTerminal = terminalLevel();
  if (onTerminal === 'silent') return new DefaultLogger('ERROR', () => undefined);
  if (onTerminal !== undefined) return new DefaultLogger(SDK_LEVELS[onTerminal] ?? 'INFO');
  return new DefaultLogger('WARN', (entry: LogEntry) => {
    const line = {
      time: new Date(Number(entry.timestampNanos / 1_000_000n)).toISOString(),
      level: entry.level,
      msg: entry.message,
      ...entry.meta,
    };
    testLogStream('temporal-sdk').write(`${safeJson(line)}\n`);
  });
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value, (_key, item: unknown) => (typeof item === 'bigint' ? item.toString() : item));
  } catch {
    return JSON.stringify({ unserializable: String(value) });
  }
}

/**
 * The activity test environment with the test logger: an activity's own failure lines go to the test log, not the
 * test report.
 */
export function quietActivityEnvironment(info: Partial<Info> = {}): MockActivityEnvironment {
  return new MockActivityEnvironment(info, { logger: testTemporalLogger() });
}
