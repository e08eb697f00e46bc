/**
 * scripts/run-test-files.ts: each file under its own limit. A file that never exits is killed with what it started
 * and named; the others still run; the exit code says whether every file passed.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import { formatDuration, parseDuration, specTotals } from '../../../scripts/lib/test-file-run.js';

const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const FIXTURES = 'test/unit/scripts/fixtures';
const HANGS = `${FIXTURES}/hangs.fixture.ts`;
const PASSES = `${FIXTURES}/passes.fixture.ts`;
const FAILS = `${FIXTURES}/fails.fixture.ts`;

const scratch = mkdtempSync(join(tmpdir(), 'run-test-files-'));
after(() => {
  rmSync(scratch, { recursive: true, force: true });
});

async function runner(
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; out: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/run-test-files.ts', ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, NO_COLOR: '1', ENIFLOW_TEST_FILE_LIMIT: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  return { code, out };
}

/** Whether `pid` is a live process (a zombie waiting to be reaped counts as ended). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true;
  }
}

describe('run-test-files', () => {
  it('kills a file that outlives its limit, with the process it started, names it and runs the rest', async () => {
    const pidsFile = join(scratch, 'pids.json');
    const { code, out } = await runner(['--file-limit=10s', HANGS, PASSES], { RUN_TEST_FILES_PIDS: pidsFile });
    assert.equal(code, 1, out);
    assert.match(out, new RegExp(`^TEST FILE HUNG: ${HANGS} after 10s$`, 'm'));
    assert.match(out, /2 files \(limit 10s each\): 1 passed, 0 failed, 1 hung/);
    // The hung file's own test passed before it hung (the file itself is reported as cancelled); both are counted.
    assert.match(out, /; tests \d+, suites 0, pass 2, fail 0/);
    const pids = JSON.parse(readFileSync(pidsFile, 'utf8')) as { file: number; child: number };
    assert.equal(alive(pids.file), false, 'the hung test file process was stopped');
    assert.equal(alive(pids.child), false, 'the process the hung file started was stopped');
  });

  it('passes when every file passes', async () => {
    const { code, out } = await runner(['--file-limit=2m', '--test-timeout=60000', PASSES]);
    assert.equal(code, 0, out);
    assert.match(out, /1 files \(limit 2m each\): 1 passed, 0 failed, 0 hung; tests 1, suites 0, pass 1/);
    assert.match(out, /✔ adds/);
  });

  it('fails and names a failing file, keeping the spec output', async () => {
    const { code, out } = await runner(['--file-limit=2m', `${FIXTURES}/{fails,passes}.fixture.ts`], {
      ENIFLOW_TEST_FILE_LIMIT: '3m',
      RUN_TEST_FILES_PIDS: '',
    });
    assert.equal(code, 1, out);
    assert.match(out, new RegExp(`^TEST FILE FAILED: ${FAILS}$`, 'm'));
    assert.match(out, /✖ is wrong/);
    // The environment's limit replaced the script's.
    assert.match(out, /2 files \(limit 3m each\): 1 passed, 1 failed, 0 hung/);
  });

  it('refuses a pattern that matches no file', async () => {
    const { code, out } = await runner(['test/no-such-folder/**/*.test.ts']);
    assert.equal(code, 2);
    assert.match(out, /no file matches test\/no-such-folder/);
  });
});

describe('durations and totals', () => {
  it('reads and writes limits', () => {
    assert.equal(parseDuration('600000'), 600_000);
    assert.equal(parseDuration('90s'), 90_000);
    assert.equal(parseDuration('10m'), 600_000);
    assert.equal(parseDuration('0'), undefined);
    assert.equal(parseDuration('ten'), undefined);
    assert.equal(formatDuration(600_000), '10m');
    assert.equal(formatDuration(2_500), '2.5s');
    assert.equal(formatDuration(20), '20ms');
  });

  it("sums the spec reporter's closing lines", () => {
    const output = 'ℹ tests 3\nℹ pass 2\n\x1b[31mℹ fail 1\x1b[39m\n✔ ℹ tests 9 inside a name\nℹ tests 4\n';
    assert.deepEqual(
      [...specTotals(output)],
      [
        ['tests', 7],
        ['pass', 2],
        ['fail', 1],
      ],
    );
  });
});
