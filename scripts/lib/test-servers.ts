/**
 * Starts the servers integration tests run against (one of each per test run) and stops them again. Used by
 * `npm run testenv` and `scripts/with-testenv.ts`.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { formatDuration } from './build-tools.js';
import { kubeApiserver } from './kube-test-server.js';
import { temporalDevServer } from './temporal-dev-server.js';
import { temporalPostgresServer } from './temporal-postgres-server.js';
import type { RunningTestServer, TestServerDefinition, TestServerDetails } from './test-server.js';

/**
 * The servers of the test environment. To add one (e.g. the ECS emulator), implement TestServerDefinition in
 * its own module under scripts/lib/ and append it here; testenv, with-testenv and the leak test pick it up.
 */
export const TEST_SERVER_DEFINITIONS: readonly TestServerDefinition[] = [temporalDevServer, kubeApiserver];

/** The Temporal servers the test environment can run (`ENIFLOW_TEST_TEMPORAL`, `testenv --temporal`). */
export const TEMPORAL_SERVER_KINDS = ['dev', 'postgres'] as const;

export type TemporalServerKind = (typeof TEMPORAL_SERVER_KINDS)[number];

/** The kind named by `value` (unset or empty: `dev`); throws on an unknown one. */
export function parseTemporalServerKind(value: string | undefined): TemporalServerKind {
  if (value === undefined || value === '') return 'dev';
  const kind = TEMPORAL_SERVER_KINDS.find((known) => known === value);
  if (kind === undefined) {
    throw new Error(`unknown Temporal server "${value}"; known: ${TEMPORAL_SERVER_KINDS.join(', ')}`);
  }
  return kind;
}

/** {@link TEST_SERVER_DEFINITIONS} with the Temporal server of the given kind. */
export function testServerDefinitions(temporal: TemporalServerKind): readonly TestServerDefinition[] {
  if (temporal === 'dev') return TEST_SERVER_DEFINITIONS;
  return TEST_SERVER_DEFINITIONS.map((definition) =>
    definition === temporalDevServer ? temporalPostgresServer : definition,
  );
}

export interface StartTestServersOptions {
  readonly log: (line: string) => void;
  /**
   * When given, a server whose variables (TestServerDefinition.envVarNames) are all set here is reused as is
   * instead of being started.
   */
  readonly reuseFrom?: NodeJS.ProcessEnv;
  readonly definitions?: readonly TestServerDefinition[];
}

/** One entry of {@link TestServers.servers}. */
export interface TestServerSummary {
  readonly name: string;
  /** False when the server came from the caller's environment and is not stopped by us. */
  readonly startedHere: boolean;
  /** Absent for reused servers: their process is not ours. */
  readonly details?: TestServerDetails;
}

export interface TestServers {
  /** Every variable the tests need: reused ones copied from the caller, new ones from the started servers. */
  readonly env: Readonly<Record<string, string>>;
  readonly servers: readonly TestServerSummary[];
  /** Holds the servers' state and logs. */
  readonly runDir: string;
  /**
   * Stops the servers started here, in parallel. The run directory is removed unless `keepLogs` is set (e.g.
   * after a failed test run, so the server logs can be read).
   */
  stop(options?: { keepLogs?: boolean }): Promise<void>;
  /**
   * Settles with a message when the first server started here exits, whether through stop() or by crashing;
   * never settles when every server was reused.
   */
  readonly firstExit: Promise<string>;
}

/** Starts every server not reused from the environment, in parallel; on failure stops those already up. */
export async function startTestServers(options: StartTestServersOptions): Promise<TestServers> {
  const startedAt = Date.now();
  const definitions = options.definitions ?? TEST_SERVER_DEFINITIONS;
  const runDir = await mkdtemp(join(tmpdir(), 'eniflow-testenv-'));
  const reusedEnv: Record<string, string> = {};
  const toStart: TestServerDefinition[] = [];
  for (const definition of definitions) {
    const values = definition.envVarNames.map((name) => options.reuseFrom?.[name]);
    if (options.reuseFrom !== undefined && values.every((value) => value !== undefined && value !== '')) {
      for (const [index, name] of definition.envVarNames.entries()) reusedEnv[name] = values[index] ?? '';
      options.log(`${definition.name}: reusing the server given by ${definition.envVarNames.join(', ')}`);
    } else {
      toStart.push(definition);
    }
  }

  const results = await Promise.allSettled(toStart.map((definition) => definition.start({ runDir, log: options.log })));
  const running = results.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  const failures = results.flatMap((result) => (result.status === 'rejected' ? [result.reason as unknown] : []));
  if (failures.length > 0) {
    await Promise.allSettled(running.map((server) => server.stop()));
    throw new AggregateError(failures, `could not start the test servers (logs kept in ${runDir})`);
  }
  if (running.length > 0) {
    options.log(`test servers up in ${formatDuration(Date.now() - startedAt)} (logs in ${runDir})`);
  }

  let stopping: Promise<void> | undefined;
  return {
    env: Object.assign({}, reusedEnv, ...running.map((server) => server.env)) as Record<string, string>,
    servers: definitions.map((definition) => summarize(definition, running)),
    runDir,
    stop: (stopOptions) => {
      stopping ??= stopAll(running, { runDir, keepLogs: stopOptions?.keepLogs === true });
      return stopping;
    },
    firstExit: Promise.race(running.map((server) => server.exited.then((how) => `${server.name} exited (${how})`))),
  };
}

function summarize(definition: TestServerDefinition, running: readonly RunningTestServer[]): TestServerSummary {
  const server = running.find((candidate) => candidate.name === definition.name);
  return server === undefined
    ? { name: definition.name, startedHere: false }
    : { name: definition.name, startedHere: true, details: server.details };
}

async function stopAll(
  running: readonly RunningTestServer[],
  { runDir, keepLogs }: { runDir: string; keepLogs: boolean },
): Promise<void> {
  const results = await Promise.allSettled(running.map((server) => server.stop()));
  const failures = results.flatMap((result) => (result.status === 'rejected' ? [result.reason as unknown] : []));
  if (failures.length > 0) {
    throw new AggregateError(failures, `could not stop every test server (logs kept in ${runDir})`);
  }
  // With every server reused and no test log written, the directory is empty: nothing to keep.
  if (!keepLogs || (await readdir(runDir)).length === 0) await rm(runDir, { recursive: true, force: true });
}

/** `export NAME='value'` lines for a POSIX shell. */
export function exportLines(env: Readonly<Record<string, string>>): string[] {
  return Object.entries(env).map(([name, value]) => `export ${name}='${value.replaceAll("'", `'\\''`)}'`);
}

/** An error's message; for a failed start, the message of every server that failed, one per line. */
export function describeError(error: unknown): string {
  if (error instanceof AggregateError) {
    return [error.message, ...error.errors.map((inner: unknown) => describeError(inner))].join('\n');
  }
  return error instanceof Error ? error.message : String(error);
}
