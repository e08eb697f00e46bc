import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { createInterface } from 'node:readline';
import { describe, it } from 'node:test';

import { pollUntil } from '../../../scripts/lib/poll-until.js';
import { TEST_SERVER_DEFINITIONS } from '../../../scripts/lib/test-servers.js';
import type { TestServerDetails } from '../../../scripts/lib/test-server.js';
import { REPO_ROOT } from '../../../scripts/lib/tools-config.js';
import { isAlive } from '../../support/processes.js';

/** The JSON line `npm run testenv` prints: one entry per server, plus its own pid and run directory. */
type TestenvSummary = Record<string, TestServerDetails | undefined> & { pid: number; runDir: string };

function acceptsConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => {
      resolve(false);
    });
  });
}

/**
 * SIGTERM goes to npm alone, as from a supervisor; npm hands it to testenv. Ctrl-C sends SIGINT to the whole
 * foreground process group, so testenv gets it twice (from the terminal and from npm).
 */
const STOP_CASES = [
  { name: 'SIGTERM sent to npm', signal: 'SIGTERM', toProcessGroup: false },
  { name: 'Ctrl-C (SIGINT to the process group)', signal: 'SIGINT', toProcessGroup: true },
] as const;

describe('npm run testenv', () => {
  for (const stopCase of STOP_CASES) {
    it(`stops every server and frees every port on ${stopCase.name}`, async () => {
      // Own process group, so the cleanup below can reach npm and everything under it if the test fails.
      const testenv = spawn('npm', ['run', '-s', 'testenv'], {
        cwd: REPO_ROOT,
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      assert.ok(testenv.pid !== undefined);
      // Its progress lines go to stderr: kept for the failure message, not echoed into the test output.
      let stderr = '';
      testenv.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      // Process groups to kill if the test fails half-way: npm's, then each server's once known.
      const groupsToKill = [testenv.pid];
      try {
        const firstLine = await new Promise<string>((resolve, reject) => {
          createInterface({ input: testenv.stdout }).on('line', (line) => {
            if (line.startsWith('{')) resolve(line);
          });
          testenv.once('exit', (code) => {
            reject(new Error(`npm run testenv exited with ${code} before printing its JSON line`));
          });
        });
        const summary = JSON.parse(firstLine) as TestenvSummary;

        const servers = TEST_SERVER_DEFINITIONS.map(({ name }) => {
          const details = summary[name];
          assert.ok(details !== undefined, `the JSON line describes ${name}`);
          return { name, ...details };
        });
        groupsToKill.push(...servers.map((server) => server.pid));
        const pids = [summary.pid, ...servers.map((server) => server.pid)];
        const ports = servers.flatMap((server) => server.ports);
        assert.ok(pids.every(isAlive), 'testenv and its servers run');
        for (const port of ports) assert.ok(await acceptsConnections(port), `port ${port} is open while running`);

        process.kill(stopCase.toProcessGroup ? -testenv.pid : testenv.pid, stopCase.signal);

        await pollUntil(() => Promise.resolve(pids.every((pid) => !isAlive(pid)) ? true : undefined), {
          description: `processes ${pids.join(', ')} to exit`,
          timeoutMs: 60_000,
        });
        for (const port of ports) assert.equal(await acceptsConnections(port), false, `port ${port} is closed`);
        assert.equal(existsSync(summary.runDir), false, 'the run directory is removed');
      } catch (error) {
        throw new Error(
          `${error instanceof Error ? error.message : String(error)}\n--- npm run testenv stderr ---\n${stderr}`,
          {
            cause: error,
          },
        );
      } finally {
        for (const group of groupsToKill) {
          try {
            process.kill(-group, 'SIGKILL');
          } catch {
            // Already gone.
          }
        }
      }
    });
  }
});
