/**
 * `npm run testenv`: runs the test servers (Temporal dev server with its Web UI, kube-apiserver with the
 * eniflow CRDs) in the foreground, prints their addresses as one JSON line and as `export` lines, and stops
 * both on Ctrl-C or SIGTERM.
 *
 * `npm run testenv -- --temporal postgres` runs the compose file's Temporal server on a throw-away PostgreSQL cluster
 * instead of the dev server (no Web UI; `npm run tools -- --temporal postgres` builds it first).
 *
 * `npm run -s testenv -- --exports` (in another shell) prints the `export` lines of the testenv running on this
 * machine, for `eval "$(npm run -s testenv -- --exports)"`.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import {
  describeError,
  exportLines,
  parseTemporalServerKind,
  startTestServers,
  testServerDefinitions,
} from './lib/test-servers.js';
import type { TestServers } from './lib/test-servers.js';

/** Where a running testenv publishes its variables for `--exports`. */
const CURRENT_TESTENV_FILE = join(tmpdir(), 'eniflow-testenv-current.json');

interface CurrentTestenv {
  readonly pid: number;
  readonly env: Readonly<Record<string, string>>;
}

const log = (line: string): void => {
  console.error(`testenv: ${line}`);
};

async function printExportsOfRunningTestenv(): Promise<void> {
  let current: CurrentTestenv;
  try {
    current = JSON.parse(await readFile(CURRENT_TESTENV_FILE, 'utf8')) as CurrentTestenv;
    process.kill(current.pid, 0);
  } catch {
    log('no testenv is running on this machine; start one with `npm run testenv`');
    process.exitCode = 1;
    return;
  }
  console.log(exportLines(current.env).join('\n'));
}

async function runInForeground(): Promise<void> {
  // Listeners stay installed: Ctrl-C reaches this process twice (from the terminal and forwarded by npm), and
  // a second signal without a listener would kill it before the servers are stopped.
  const stopSignal = new Promise<NodeJS.Signals>((resolve) => {
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, resolve);
  });

  let servers: TestServers;
  try {
    const flag = process.argv.indexOf('--temporal');
    const kind = parseTemporalServerKind(flag === -1 ? undefined : (process.argv[flag + 1] ?? '(none)'));
    servers = await startTestServers({ log, definitions: testServerDefinitions(kind) });
  } catch (error) {
    log(describeError(error));
    process.exitCode = 1;
    return;
  }

  const summary = Object.fromEntries(servers.servers.map((server) => [server.name, server.details]));
  console.log(JSON.stringify({ ...summary, env: servers.env, runDir: servers.runDir, pid: process.pid }));
  console.log(exportLines(servers.env).join('\n'));
  const current: CurrentTestenv = { pid: process.pid, env: servers.env };
  await writeFile(CURRENT_TESTENV_FILE, JSON.stringify(current), { mode: 0o600 });
  log('running; Ctrl-C or SIGTERM stops every server');

  const reason = await Promise.race([
    stopSignal.then((signal) => ({ signal, crash: undefined })),
    servers.firstExit.then((crash) => ({ signal: undefined, crash })),
  ]);
  if (reason.crash !== undefined) {
    log(`${reason.crash} unexpectedly; stopping the others (logs kept in ${servers.runDir})`);
    process.exitCode = 1;
  } else {
    log(`${reason.signal ?? 'signal'} received, stopping`);
  }
  await forgetCurrentTestenv();
  await servers.stop({ keepLogs: reason.crash !== undefined });
  log('stopped');
}

/** Removes the published variables, unless a newer testenv has replaced them. */
async function forgetCurrentTestenv(): Promise<void> {
  try {
    const current = JSON.parse(await readFile(CURRENT_TESTENV_FILE, 'utf8')) as CurrentTestenv;
    if (current.pid === process.pid) await rm(CURRENT_TESTENV_FILE, { force: true });
  } catch {
    // Already gone.
  }
}

if (process.argv.includes('--exports')) {
  await printExportsOfRunningTestenv();
} else {
  await runInForeground();
}
