/**
 * `tsx scripts/with-testenv.ts [--only=<server>,...] <command...>`: runs a command (usually the integration tests)
 * against one set of test servers shared by every test file. `--only=temporal` starts just the named servers (names
 * from TEST_SERVER_DEFINITIONS: `temporal`, `kube-apiserver`), for suites that need no other.
 *
 * Node 20's test runner has no global setup hook and runs each file in its own process, so the servers are
 * started here, their addresses passed down in ENIFLOW_TEST_* variables, and stopped once the command exits.
 * A server whose variables are already set (e.g. from `npm run testenv`) is reused and left running.
 * Exits with the command's exit code; on failure the server logs are kept and their directory printed.
 *
 * `ENIFLOW_TEST_TEMPORAL=postgres` runs the tests on the compose file's Temporal server on PostgreSQL instead of the
 * dev server (scripts/lib/temporal-postgres-server.ts; `npm run tools -- --temporal postgres` builds it).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { constants } from 'node:os';
import { join } from 'node:path';

import { TEST_ENV_VARS, TEST_LOG_DIR_VAR } from './lib/test-env-vars.js';
import { describeError, parseTemporalServerKind, startTestServers, testServerDefinitions } from './lib/test-servers.js';
import type { TestServers } from './lib/test-servers.js';

const log = (line: string): void => {
  console.error(`with-testenv: ${line}`);
};

const argv = process.argv.slice(2);
const only = argv[0]?.startsWith('--only=') === true ? argv.shift()?.slice('--only='.length).split(',') : undefined;
const [command, ...args] = argv;
if (command === undefined) {
  log('usage: tsx scripts/with-testenv.ts [--only=<server>,...] <command> [args...]');
  process.exit(2);
}
let available;
try {
  available = testServerDefinitions(parseTemporalServerKind(process.env[TEST_ENV_VARS.temporalKind]));
} catch (error) {
  log(`${TEST_ENV_VARS.temporalKind}: ${describeError(error)}`);
  process.exit(2);
}
const definitions = only === undefined ? available : available.filter(({ name }) => only.includes(name));
const unknown = (only ?? []).filter((name) => !available.some((definition) => definition.name === name));
if (unknown.length > 0 || definitions.length === 0) {
  log(
    `unknown server(s) in --only: ${unknown.join(', ') || '(none given)'}; known: ${available.map(({ name }) => name).join(', ')}`,
  );
  process.exit(2);
}

// A signal during start-up is acted on once the servers are up: leaving now would orphan half-started servers.
let interrupted: NodeJS.Signals | undefined;
const onEarlySignal = (signal: NodeJS.Signals): void => {
  interrupted = signal;
};
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, onEarlySignal);

let servers: TestServers;
try {
  servers = await startTestServers({ log, reuseFrom: process.env, definitions });
} catch (error) {
  log(describeError(error));
  process.exit(1);
}
if (interrupted !== undefined) {
  await servers.stop();
  process.exit(128 + constants.signals[interrupted]);
}

// The logs of what the tests run in-process go to files here (test/support/test-logs.ts), kept with the servers'.
const testLogDir = join(servers.runDir, 'test-logs');
const child = spawn(command, args, {
  stdio: 'inherit',
  env: { ...process.env, ...servers.env, [TEST_LOG_DIR_VAR]: testLogDir },
});
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.removeListener(signal, onEarlySignal);
  // Ctrl-C already reaches the command through the terminal's process group; SIGTERM from a supervisor may not.
  process.on(signal, () => child.kill(signal));
}
const exitCode = await new Promise<number>((resolve) => {
  child.on('error', (error) => {
    log(`could not run ${command}: ${error.message}`);
    resolve(127);
  });
  child.on('exit', (code, signal) => {
    resolve(code ?? 128 + (signal === null ? 0 : constants.signals[signal]));
  });
});

const keepLogs = exitCode !== 0;
try {
  await servers.stop({ keepLogs });
} catch (error) {
  log(describeError(error));
}
if (keepLogs && existsSync(servers.runDir)) {
  log(`the command failed (exit code ${exitCode}); server and test logs kept in ${servers.runDir}`);
}
process.exit(exitCode);
