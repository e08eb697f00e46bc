/**
 * One test file run by `node --test` in its own process group, with a limit for the whole file: a file whose tests
 * ended but whose process stays alive (a worker or timer left running) would otherwise hold `node --test` forever,
 * because `--test-timeout` limits each test, not the file.
 */
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { stripVTControlCharacters } from 'node:util';

/** How a file's run ended. */
export type FileOutcome = 'passed' | 'failed' | 'hung';

export interface FileRunResult {
  readonly file: string;
  readonly outcome: FileOutcome;
  /** The `ℹ tests 3`-style totals node's spec reporter printed at the end, by name. */
  readonly totals: ReadonlyMap<string, number>;
}

export interface FileRunOptions {
  readonly file: string;
  /** Arguments before the file, e.g. `['--import', 'tsx', '--test', '--test-timeout=300000']`. */
  readonly nodeArgs: readonly string[];
  readonly limitMs: number;
  /** Receives the child's output as it comes (stdout and stderr alike). */
  readonly write: (chunk: string) => void;
  readonly env?: NodeJS.ProcessEnv;
}

/** Between SIGTERM and SIGKILL for a hung file's processes, so they may clean up what they started. */
const KILL_GRACE_MS = 5_000;

/** `90000`, `90s`, `10m` → milliseconds; undefined when not a positive duration. */
export function parseDuration(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(text.trim());
  if (match === null) return undefined;
  const factor = match[2] === 'm' ? 60_000 : match[2] === 's' ? 1_000 : 1;
  const ms = Math.round(Number(match[1]) * factor);
  return ms > 0 ? ms : undefined;
}

/** 600000 → `10m`, 2500 → `2.5s`: the limit as a reader would write it. */
export function formatDuration(ms: number): string {
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms >= 1_000) return `${ms / 1_000}s`;
  return `${ms}ms`;
}

/** The processes below `root` (Linux /proc; empty elsewhere), found before killing so none escapes by re-parenting. */
function descendantsOf(root: number): number[] {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return [];
  }
  const childrenOf = new Map<number, number[]>();
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // Fields after the command (which may hold spaces and parentheses): state, ppid, pgrp, …
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      childrenOf.set(ppid, [...(childrenOf.get(ppid) ?? []), Number(name)]);
    } catch {
      // The process ended while we looked.
    }
  }
  const found: number[] = [];
  const queue = [root];
  for (let pid = queue.shift(); pid !== undefined; pid = queue.shift()) {
    for (const child of childrenOf.get(pid) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

/** Sends `signal` to the process group led by `pid`, to `pid` and to everything below it. */
export function signalTree(pid: number, signal: NodeJS.Signals): void {
  const pids = descendantsOf(pid);
  for (const target of [-pid, pid, ...pids]) {
    try {
      process.kill(target, signal);
    } catch {
      // Already gone.
    }
  }
}

/** Stops a file's process tree: SIGTERM to its group and every descendant, SIGKILL to what is left after a grace. */
export async function killTree(pid: number): Promise<void> {
  const tree = [pid, ...descendantsOf(pid)];
  signalTree(pid, 'SIGTERM');
  for (let waited = 0; waited < KILL_GRACE_MS && tree.some(isRunning); waited += 100) await sleep(100);
  signalTree(pid, 'SIGKILL');
  for (const target of tree) {
    try {
      process.kill(target, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
}

/** Whether `pid` still runs; a zombie (ended, not yet reaped by its parent) does not. */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat[stat.lastIndexOf(')') + 2] !== 'Z';
  } catch {
    return true;
  }
}

/** Sums the spec reporter's closing `ℹ <name> <n>` lines found in `output`. */
export function specTotals(output: string): Map<string, number> {
  const totals = new Map<string, number>();
  for (const line of stripVTControlCharacters(output).split('\n')) {
    const match = /^ℹ (tests|suites|pass|fail|cancelled|skipped|todo) (\d+)$/.exec(line.trim());
    if (match?.[1] !== undefined) totals.set(match[1], (totals.get(match[1]) ?? 0) + Number(match[2]));
  }
  return totals;
}

/** Processes started and not yet ended, so an interrupted runner can stop them. */
export const runningFiles = new Set<number>();

/** Runs one file; resolves when its process ended or its tree was killed at the limit. */
export async function runTestFile(options: FileRunOptions): Promise<FileRunResult> {
  const child = spawn(process.execPath, [...options.nodeArgs, options.file], {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: options.env ?? process.env,
  });
  let output = '';
  const onData = (chunk: Buffer): void => {
    const text = chunk.toString('utf8');
    output += text;
    options.write(text);
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => {
      resolve(code);
    });
    child.once('error', (error) => {
      options.write(`run-test-files: cannot start node for ${options.file}: ${error.message}\n`);
      resolve(null);
    });
  });
  const pid = child.pid;
  if (pid !== undefined) runningFiles.add(pid);
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<'expired'>((resolve) => {
    timer = setTimeout(() => {
      resolve('expired');
    }, options.limitMs);
  });
  const first = await Promise.race([exited, expired]);
  clearTimeout(timer);
  let outcome: FileOutcome;
  if (first === 'expired') {
    if (pid !== undefined) await killTree(pid);
    await exited;
    outcome = 'hung';
  } else {
    outcome = first === 0 ? 'passed' : 'failed';
  }
  if (pid !== undefined) runningFiles.delete(pid);
  // A grandchild that left the group may still hold the pipes: what it writes after this is not waited for.
  await Promise.race([
    Promise.all([once(child.stdout, 'close'), once(child.stderr, 'close')]),
    sleep(1_000).then(() => {
      child.stdout.destroy();
      child.stderr.destroy();
    }),
  ]);
  return { file: options.file, outcome, totals: specTotals(output) };
}

function once(stream: NodeJS.ReadableStream & { readonly closed?: boolean }, event: string): Promise<void> {
  if (stream.closed === true) return Promise.resolve();
  return new Promise((resolve) =>
    stream.once(event, () => {
      resolve();
    }),
  );
}
