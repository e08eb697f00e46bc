/**
 * `node --import tsx scripts/run-test-files.ts [--file-limit=10m] [--concurrency=N] [--test-…] <file|glob>...`:
 * runs each test file with `node --import tsx --test` (spec reporter) under a limit for the whole file, N files at
 * a time (default as node --test: the cores but one; one file's output is printed whole when it ends if N > 1).
 *
 * `--test-timeout` stops a test that runs too long, but a file whose tests have ended while its process stays alive
 * (a Temporal worker or a timer left running) holds `node --test` until CI gives up. Here a file that outlives its
 * limit has its process tree killed and is named (`TEST FILE HUNG: <path> after <limit>`); the other files still
 * run and the exit code is non-zero. `ENIFLOW_TEST_FILE_LIMIT` (e.g. `30m`) replaces the suite's limit, for a slow
 * machine. `--test-…` options are passed to every file's `node --test`. A pattern that matches no file is an error,
 * so a moved folder cannot silently drop its tests.
 */
import { globSync } from 'node:fs';
import { availableParallelism, constants } from 'node:os';

import { formatDuration, parseDuration, runTestFile, runningFiles, signalTree } from './lib/test-file-run.js';
import type { FileRunResult } from './lib/test-file-run.js';

const LIMIT_VAR = 'ENIFLOW_TEST_FILE_LIMIT';

function fail(message: string): never {
  console.error(`run-test-files: ${message}`);
  process.exit(2);
}

function parseArgs(argv: readonly string[]): {
  limitMs: number;
  concurrency: number;
  testArgs: string[];
  patterns: string[];
} {
  let limitText = '10m';
  // node --test's own default: all cores but one.
  let concurrency = Math.max(1, availableParallelism() - 1);
  const testArgs: string[] = [];
  const patterns: string[] = [];
  for (const arg of argv) {
    if (arg.startsWith('--file-limit=')) limitText = arg.slice('--file-limit='.length);
    else if (arg.startsWith('--concurrency=')) concurrency = Number(arg.slice('--concurrency='.length));
    else if (arg.startsWith('--test-')) testArgs.push(arg);
    else if (arg.startsWith('--')) fail(`unknown option ${arg}`);
    else patterns.push(arg);
  }
  const fromEnv = process.env[LIMIT_VAR];
  if (fromEnv !== undefined && fromEnv !== '') limitText = fromEnv;
  const limitMs = parseDuration(limitText) ?? fail(`not a duration: ${limitText} (e.g. 600000, 90s, 10m)`);
  if (!Number.isInteger(concurrency) || concurrency < 1) fail('--concurrency must be a positive integer');
  if (patterns.length === 0) fail('no test files or patterns given');
  return { limitMs, concurrency, testArgs, patterns };
}

function expand(patterns: readonly string[]): string[] {
  const files = new Set<string>();
  for (const pattern of patterns) {
    const matched = globSync(pattern);
    if (matched.length === 0) fail(`no file matches ${pattern}`);
    for (const file of matched) files.add(file);
  }
  return [...files].sort();
}

const { limitMs, concurrency, testArgs, patterns } = parseArgs(process.argv.slice(2));
const files = expand(patterns);
const limit = formatDuration(limitMs);
const nodeArgs = ['--import', 'tsx', '--test', '--test-reporter=spec', ...testArgs];
// The reporter colours only a terminal; the children write to a pipe, so they are told when ours is one. A runner
// started from inside a test file (its own test) must not pass on node's marker of a test child, or each file's
// `node --test` would refuse to run files.
const env: NodeJS.ProcessEnv = { ...process.env };
delete env['NODE_TEST_CONTEXT'];
if (process.stdout.isTTY && env['NO_COLOR'] === undefined && env['FORCE_COLOR'] === undefined) env['FORCE_COLOR'] = '1';

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    for (const pid of runningFiles) signalTree(pid, 'SIGKILL');
    process.exit(128 + constants.signals[signal]);
  });
}

const print = (text: string): void => {
  process.stdout.write(text);
};

async function runOne(file: string): Promise<FileRunResult> {
  // One file at a time streams as it comes; several at once would interleave, so each is printed when it ends.
  let buffered = '';
  const write = concurrency === 1 ? print : (text: string): void => void (buffered += text);
  if (concurrency === 1) print(`\n▶ ${file}\n`);
  const result = await runTestFile({ file, nodeArgs, limitMs, write, env });
  if (concurrency > 1) print(`\n▶ ${file}\n${buffered}`);
  if (result.outcome === 'hung') print(`TEST FILE HUNG: ${file} after ${limit}\n`);
  return result;
}

const results: FileRunResult[] = [];
const queue = [...files];
await Promise.all(
  Array.from({ length: Math.min(concurrency, files.length) }, async () => {
    for (let file = queue.shift(); file !== undefined; file = queue.shift()) results.push(await runOne(file));
  }),
);

const totals = new Map<string, number>();
for (const { totals: fileTotals } of results) {
  for (const [name, count] of fileTotals) totals.set(name, (totals.get(name) ?? 0) + count);
}
const byOutcome = (outcome: FileRunResult['outcome']): string[] =>
  results.filter((result) => result.outcome === outcome).map(({ file }) => file);
const failed = byOutcome('failed');
const hung = byOutcome('hung');
print(
  `\nrun-test-files: ${files.length} files (limit ${limit} each): ${byOutcome('passed').length} passed, ` +
    `${failed.length} failed, ${hung.length} hung; ` +
    [...totals].map(([name, count]) => `${name} ${count}`).join(', ') +
    '\n',
);
for (const file of failed) print(`TEST FILE FAILED: ${file}\n`);
for (const file of hung) print(`TEST FILE HUNG: ${file} after ${limit}\n`);
process.exitCode = failed.length + hung.length > 0 ? 1 : 0;
