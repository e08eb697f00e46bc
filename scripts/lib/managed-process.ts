/**
 * A server process the test environment owns: started in its own process group, its output kept in a log
 * file, and stopped together with anything it spawned.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { accessSync, constants, createWriteStream, openSync, closeSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';

/** How a managed process ended. */
export interface ProcessExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export interface ManagedProcessOptions {
  /** Short name for messages, e.g. `temporal`. */
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
  /** stdout and stderr are appended here. */
  readonly logPath: string;
  readonly cwd?: string;
  /** The child's environment; default: this process's. */
  readonly env?: NodeJS.ProcessEnv;
  /**
   * Keep a pipe to the child's stdin open for its whole life. A child that exits on stdin EOF then cannot
   * outlive this process, even when this process is killed with SIGKILL.
   */
  readonly holdStdinOpen?: boolean;
  /** Run as this account instead of this process's (e.g. PostgreSQL, which refuses root); Linux, needs setpriv. */
  readonly runAs?: UnixAccount;
}

/** A user and group to run a process as. */
export interface UnixAccount {
  readonly name: string;
  readonly uid: number;
  readonly gid: number;
}

/** Grace period between SIGTERM and SIGKILL when stopping. */
const DEFAULT_STOP_GRACE_MS = 15_000;

/**
 * On Linux, `setpriv --pdeathsig TERM` makes the kernel send SIGTERM to the server when its parent dies, so a
 * crashed or SIGKILLed test run does not leave servers behind. Used when util-linux's setpriv is installed.
 */
const SETPRIV_PATH = '/usr/bin/setpriv';

function parentDeathWrapper(runAs?: UnixAccount): readonly string[] {
  if (runAs !== undefined) return [...runAsWrapper(runAs), '--pdeathsig', 'TERM', '--'];
  if (process.platform !== 'linux') return [];
  try {
    accessSync(SETPRIV_PATH, constants.X_OK);
    return [SETPRIV_PATH, '--pdeathsig', 'TERM', '--'];
  } catch {
    return [];
  }
}

/**
 * `setpriv` switching to `account` (its own group only), without the final `--`: the kernel clears the parent-death
 * signal on a change of user, so the caller sets it in the same setpriv call, after the switch.
 */
export function runAsWrapper(account: UnixAccount): readonly string[] {
  try {
    accessSync(SETPRIV_PATH, constants.X_OK);
  } catch {
    throw new Error(`running a process as ${account.name} needs setpriv (${SETPRIV_PATH}, Debian's util-linux)`);
  }
  return [SETPRIV_PATH, `--reuid=${account.uid}`, `--regid=${account.gid}`, '--clear-groups'];
}

/** A started server process. */
export class ManagedProcess {
  readonly name: string;
  readonly pid: number;
  readonly logPath: string;
  /** Settles when the process has exited, whoever stopped it. */
  readonly exited: Promise<ProcessExit>;
  #exit: ProcessExit | undefined;
  readonly #child: ChildProcess;
  readonly #stdoutLines: string[] = [];
  readonly #lineWaiters = new Set<(line: string) => void>();

  constructor(options: ManagedProcessOptions) {
    this.name = options.name;
    this.logPath = options.logPath;
    const [wrapper, ...wrapperArgs] = parentDeathWrapper(options.runAs);
    const command = wrapper ?? options.command;
    const args = wrapper === undefined ? options.args : [...wrapperArgs, options.command, ...options.args];

    const stderrFd = openSync(options.logPath, 'a');
    try {
      // detached: the child leads a new process group, so stop() can signal the server and its children.
      this.#child = spawn(command, args, {
        cwd: options.cwd,
        env: options.env ?? process.env,
        detached: true,
        stdio: [options.holdStdinOpen === true ? 'pipe' : 'ignore', 'pipe', stderrFd],
      });
    } finally {
      closeSync(stderrFd);
    }
    if (this.#child.pid === undefined) {
      // The spawn error event still follows; without a listener it would crash the process.
      this.#child.once('error', () => undefined);
      throw new Error(`${this.name}: could not start ${command}`);
    }
    this.pid = this.#child.pid;

    const logStream = createWriteStream(options.logPath, { flags: 'a' });
    const stdout = this.#child.stdout;
    if (stdout !== null) {
      createInterface({ input: stdout }).on('line', (line) => {
        logStream.write(`${line}\n`);
        this.#stdoutLines.push(line);
        for (const waiter of this.#lineWaiters) waiter(line);
      });
    }
    this.exited = new Promise((resolve) => {
      this.#child.on('exit', (code, signal) => {
        this.#exit = { code, signal };
        logStream.end();
        resolve(this.#exit);
      });
    });
    // Spawn failures (e.g. ENOENT) surface as an immediate exit; the log tail explains them.
    this.#child.on('error', (error) => {
      logStream.write(`${this.name}: ${error.message}\n`);
    });
  }

  /** Whether the process has exited. */
  get hasExited(): boolean {
    return this.#exit !== undefined;
  }

  /**
   * Resolves with the first stdout line (already printed or yet to come) that `matches` accepts; rejects when
   * the process exits first or `timeoutMs` passes, with the end of its log in the message.
   */
  async waitForStdoutLine(matches: (line: string) => boolean, timeoutMs: number): Promise<string> {
    const earlier = this.#stdoutLines.find(matches);
    if (earlier !== undefined) return earlier;
    let onLine: ((line: string) => void) | undefined;
    let timer: NodeJS.Timeout | undefined;
    try {
      // One promise with three settlers: whichever comes later is a no-op, so nothing rejects unobserved.
      return await new Promise<string>((resolve, reject) => {
        onLine = (line) => {
          if (matches(line)) resolve(line);
        };
        this.#lineWaiters.add(onLine);
        void this.exited.then(async (exit) => {
          reject(
            new Error(`${this.name} exited (${describeExit(exit)}) before it was ready.\n${await this.logTail()}`),
          );
        });
        timer = setTimeout(() => {
          void this.logTail().then((tail) => {
            reject(new Error(`${this.name} was not ready within ${timeoutMs / 1000}s.\n${tail}`));
          });
        }, timeoutMs);
      });
    } finally {
      if (onLine !== undefined) this.#lineWaiters.delete(onLine);
      clearTimeout(timer);
    }
  }

  /** Runs `task` but fails early, with the end of the log, if the process exits before `task` settles. */
  async unlessExited<T>(task: Promise<T>): Promise<T> {
    return await new Promise<T>((resolve, reject) => {
      task.then(resolve, reject);
      void this.exited.then(async (exit) => {
        reject(new Error(`${this.name} exited (${describeExit(exit)}) before it was ready.\n${await this.logTail()}`));
      });
    });
  }

  /**
   * Stops the whole process group: SIGTERM, then SIGKILL after `graceMs`. A final SIGKILL to the group also
   * reaches any child the server left behind after its own exit.
   */
  async stop(graceMs = DEFAULT_STOP_GRACE_MS): Promise<ProcessExit> {
    if (!this.hasExited) {
      signalGroup(this.pid, 'SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      const timedOut = await Promise.race([
        this.exited.then(() => false),
        new Promise<boolean>((resolve) => (timer = setTimeout(resolve, graceMs, true))),
      ]);
      clearTimeout(timer);
      if (timedOut) signalGroup(this.pid, 'SIGKILL');
    }
    const exit = await this.exited;
    signalGroup(this.pid, 'SIGKILL');
    return exit;
  }

  /** The last lines of the log, for error messages. */
  async logTail(lineCount = 30): Promise<string> {
    try {
      const lines = (await readFile(this.logPath, 'utf8')).trimEnd().split('\n');
      return `--- last ${Math.min(lineCount, lines.length)} lines of ${this.logPath} ---\n${lines.slice(-lineCount).join('\n')}`;
    } catch {
      return `(no log at ${this.logPath})`;
    }
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch (error) {
    // ESRCH: the group is already gone, which is the goal.
    if (!(error instanceof Error && 'code' in error && error.code === 'ESRCH')) throw error;
  }
}

/** `exit code 1` or `signal SIGTERM`. */
export function describeExit(exit: ProcessExit): string {
  return exit.signal === null ? `exit code ${exit.code ?? 'unknown'}` : `signal ${exit.signal}`;
}
