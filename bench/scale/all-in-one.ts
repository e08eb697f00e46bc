/**
 * `--all-in-one-restart` (issue 20, item 5): the restart of `npm start -- --role all`, the watcher and the worker in
 * one process, as a new user runs eniflow. Its new leader owes every node a signal (changes made while nobody led were
 * seen by nobody), so a kill -9 of the one process replays every node's workflow at once while a new pod waits.
 * Runs last, once the measured phases are done: it replaces the stack's watcher and workers.
 */
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';

import type { ManagedProcess } from '../../scripts/lib/managed-process.js';
import { DEFAULT_START_SWEEP_NODES_PER_SECOND } from '../../src/watcher/watcher-config.js';
import { createOnePod, timeoutMs, workerStarted } from './phases.js';
import { sampleProcess } from './probes.js';
import { log } from './stack.js';
import type { Stack } from './stack.js';

/** The sweep's pace the roles run with (`--role-env` may set it). */
function sweepNodesPerSecond(roleEnv: Record<string, string> | undefined): number {
  const given = Number(roleEnv?.['START_SWEEP_NODES_PER_SECOND']);
  return Number.isFinite(given) && given > 0 ? given : DEFAULT_START_SWEEP_NODES_PER_SECOND;
}
/** After the sweep's last signal, time for its passes to end. */
const SWEEP_SETTLE_MS = 5_000;

const becameLeader = (line: string): boolean => line.includes('"Became leader"');

export interface AllInOneResult {
  nodes: number;
  /** The process killed: spawn → "Worker started" (its first start may bundle the workflow code). */
  firstWorkerStartMs: number;
  /** Its replacement, spawned at once after the kill -9: spawn → "Worker started", → "Became leader". */
  workerStartMs: number;
  leaderMs: number;
  /** Replacement spawned → a pod created at that moment has its IP in the CR. */
  servedMs: number;
  /** The window for the workflow task times (performance.now()): the spawn, and the sweep's passes done. */
  startMs: number;
  endMs: number;
  /** The replacement: its Temporal identity, CPU seconds and peak RSS at the end of the window. */
  identity: string;
  cpuSeconds: number;
  peakRssMiB: number;
}

/** When a pino line was written (its `time`), epoch ms. */
function loggedAtMs(line: string): number {
  const time = (JSON.parse(line) as { time?: unknown }).time;
  return typeof time === 'number' ? time : Number.NaN;
}

async function startedAndLeading(
  process: ManagedProcess,
  spawnedEpochMs: number,
): Promise<{ workerStartMs: number; leaderMs: number }> {
  const started = await process.waitForStdoutLine(workerStarted, 300_000);
  const leading = await process.waitForStdoutLine(becameLeader, 120_000);
  return { workerStartMs: loggedAtMs(started) - spawnedEpochMs, leaderMs: loggedAtMs(leading) - spawnedEpochMs };
}

export async function restartAllInOne(stack: Stack): Promise<AllInOneResult> {
  const { options, tracker, workers } = stack;
  const sweepMs = (options.nodes / sweepNodesPerSecond(options.roleEnv)) * 1000 + SWEEP_SETTLE_MS;
  log(
    `all-in-one: stop the watcher and the workers, start ${options.dist ? 'dist/main.js' : '`npm start`'} --role all`,
  );
  workers.sample();
  await Promise.all([stack.watcher?.stop(10_000), ...workers.replicas.map((worker) => worker.process.stop(10_000))]);
  const running: ManagedProcess[] = [];
  try {
    const firstSpawnedMs = Date.now();
    const first = stack.startAllInOne('all-in-one');
    running.push(first);
    const firstStart = await startedAndLeading(first, firstSpawnedMs);
    log(`all-in-one: leading; waiting ${(sweepMs / 1000).toFixed(0)} s for its start sweep of ${options.nodes} nodes`);
    await sleep(sweepMs);

    log('all-in-one: SIGKILL it, start a new one, create one pod');
    process.kill(first.pid, 'SIGKILL');
    await first.exited;
    const startMs = performance.now();
    const spawnedMs = Date.now();
    const next = stack.startAllInOne('all-in-one-restarted');
    running.push(next);
    const podId = await createOnePod(stack, { suffix: 'after-all-in-one-restart', createdMs: startMs });
    const { workerStartMs, leaderMs } = await startedAndLeading(next, spawnedMs);
    await tracker.until(
      () => tracker.servedMs(podId) !== undefined,
      timeoutMs(stack),
      'the pod created at the all-in-one restart to be served',
    );
    const servedMs = (tracker.servedMs(podId) ?? Number.NaN) - startMs;
    log(`all-in-one: served ${(servedMs / 1000).toFixed(1)} s after the new process was spawned`);
    // The replay of every node's workflow comes with the sweep: the window holds it all.
    await sleep(Math.max(0, leaderMs + sweepMs - (performance.now() - startMs)));
    const endMs = performance.now();
    const sample = sampleProcess(next.pid);
    return {
      nodes: options.nodes,
      firstWorkerStartMs: firstStart.workerStartMs,
      workerStartMs,
      leaderMs,
      servedMs,
      startMs,
      endMs,
      identity: `${next.pid}@${hostname()}`,
      cpuSeconds: sample?.cpuSeconds ?? Number.NaN,
      peakRssMiB: (sample?.peakRssBytes ?? Number.NaN) / 1024 / 1024,
    };
  } finally {
    await Promise.all(running.map((process) => process.stop(10_000)));
  }
}
