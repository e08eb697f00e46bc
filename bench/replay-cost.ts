/**
 * What a workflow task costs the worker, on eniflow's own recorded histories without any server: replays every
 * history in test/replay/histories with `Worker.runReplayHistories` in the production thread model (the workflow
 * thread, `reuseV8Context`; not the replay default `debugMode`, which runs workflows in-process) and prints the CPU
 * (process.cpuUsage covers every thread: main, workflow thread, and the per-call watchdog threads of an unpatched SDK),
 * the workflow thread's own CPU, and the wall time. Bundling is done before and not counted.
 *
 * It says whether the install's SDK patch (scripts/patch-temporal-worker.mjs: no vm timeout per sandbox call, no
 * promise hook) is applied; compare runs back to back on the same machine (docs/decisions.md, issue 29 point 1).
 *
 * Usage: npm run bench:replay [-- --rounds 3]
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Worker as ThreadWorker } from 'node:worker_threads';

import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
import { Worker } from '@temporalio/worker';
import type { ReplayWorkerOptions } from '@temporalio/worker';

import { installedPackageDir, PATCHED_FILES, sha256 } from '../scripts/patch-temporal-worker.mjs';
import { createWorkerMetrics } from '../src/worker/metrics.js';
import { installQuietRuntime } from '../test/support/temporal-env.js';
import { bundleNodeWorkflow } from '../test/support/workflow-bundle.js';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '1' } } });
const rounds = Number(values.rounds);

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const HISTORIES = join(ROOT, 'test/replay/histories');

async function patchState(): Promise<string> {
  const dir = installedPackageDir(ROOT);
  const states = await Promise.all(
    PATCHED_FILES.map(async (file) => {
      const hash = sha256(await readFile(join(dir, file.path), 'utf8'));
      return hash === file.patched ? 'patched' : hash === file.original ? 'original' : 'unknown';
    }),
  );
  const distinct = [...new Set(states)];
  return distinct.length === 1 ? distinct[0]! : `mixed (${states.join(', ')})`;
}

/** The workflow thread's CPU, read just before the SDK terminates it (the thread is the SDK's, not reachable). */
const threadCpuMicros: number[] = [];
const originalTerminate = Object.getOwnPropertyDescriptor(ThreadWorker.prototype, 'terminate')!.value as (
  this: ThreadWorker,
) => Promise<number>;
ThreadWorker.prototype.terminate = async function (this: ThreadWorker): Promise<number> {
  const usage = await this.cpuUsage().catch(() => undefined);
  if (usage !== undefined) threadCpuMicros.push(usage.user + usage.system);
  return originalTerminate.call(this);
};

const files = (await readdir(HISTORIES)).filter((file) => file.endsWith('.json')).sort();
const histories = await Promise.all(
  files.map(async (file) => ({
    workflowId: `replay-${file}`,
    history: historyFromJSON(JSON.parse(await readFile(join(HISTORIES, file), 'utf8')) as unknown),
  })),
);
const events = histories.reduce((sum, { history }) => sum + (history.events?.length ?? 0), 0);

installQuietRuntime();
const bundle = await bundleNodeWorkflow();
const sdkPatch = await patchState();
console.log(`SDK patch: ${sdkPatch}; ${histories.length} histories, ${events} events; ${rounds} round(s)`);

let failures = 0;
for (let round = 1; round <= rounds; round++) {
  threadCpuMicros.length = 0;
  const cpuBefore = process.cpuUsage();
  const wallBefore = performance.now();
  // debugMode is left out of ReplayWorkerOptions' type, but the replay worker honours it (its default is true).
  const options: ReplayWorkerOptions & { debugMode: boolean } = {
    workflowBundle: bundle,
    sinks: createWorkerMetrics().sinks,
    debugMode: false,
  };
  const replays = Worker.runReplayHistories(options, histories);
  for await (const result of replays) {
    if (result.error !== undefined) {
      failures++;
      console.error(`${result.workflowId}: ${String(result.error)}`);
    }
  }
  const wallMs = performance.now() - wallBefore;
  const cpu = process.cpuUsage(cpuBefore);
  const threadMs = threadCpuMicros.reduce((sum, micros) => sum + micros, 0) / 1000;
  console.log(
    JSON.stringify({
      round,
      sdkPatch,
      cpuMs: Math.round((cpu.user + cpu.system) / 1000),
      userMs: Math.round(cpu.user / 1000),
      systemMs: Math.round(cpu.system / 1000),
      workflowThreadCpuMs: threadCpuMicros.length === 0 ? null : Math.round(threadMs),
      wallMs: Math.round(wallMs),
    }),
  );
}
if (failures > 0) {
  console.error(`${failures} replay(s) failed`);
  process.exitCode = 1;
}
