/**
 * `npm start` on the embedded default, driven as a user would: it builds nothing (the tools are cached by
 * `npm test`'s pretest), starts its own servers and the emulator, creates the demo cluster, gets every demo pod an
 * IP through the watcher and the worker, and on Ctrl-C (SIGINT) stops everything it started.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';

import { pollUntil } from '../../../scripts/lib/poll-until.js';
import { isAlive } from '../../support/processes.js';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));

describe('npm start', () => {
  it('reaches a state where the demo pods have IPs and stops cleanly on SIGINT, leaving no process', async () => {
    const env: NodeJS.ProcessEnv = { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', CI: '1' };
    if (process.env['XDG_CACHE_HOME'] !== undefined) env['XDG_CACHE_HOME'] = process.env['XDG_CACHE_HOME'];
    // `exec` in the npm script makes node npm's direct child; the test talks to node itself, as a terminal would.
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: REPO,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) =>
      child.once('exit', (code) => {
        resolve(code);
      }),
    );
    try {
      await pollUntil(() => Promise.resolve(output.includes('demo ready: all 12 pods have IPs') ? true : undefined), {
        description: 'the demo pods to have IPs',
        timeoutMs: 180_000,
        intervalMs: 250,
      });
    } catch (error) {
      child.kill('SIGKILL');
      throw new Error(`${error instanceof Error ? error.message : String(error)}\n--- output ---\n${output}`, {
        cause: error,
      });
    }
    const serverPids = [...output.matchAll(/pid (\d+)/g)].map((match) => Number(match[1]));
    assert.equal(serverPids.length, 2, 'Temporal and kube-apiserver were started');
    assert.match(output, /demo-node-1\s+4\s+4\s+0/);
    child.kill('SIGINT');
    assert.equal(await exited, 0, `npm start exits 0 on SIGINT\n${output}`);
    assert.match(output, /stopped everything it started/);
    await pollUntil(() => Promise.resolve(serverPids.every((pid) => !isAlive(pid)) ? true : undefined), {
      description: 'the servers to be gone',
      timeoutMs: 15_000,
    });
  });
});
