/**
 * Where the worker's fixed memory goes: builds a worker the way src/worker/create-worker.ts does, one step at a
 * time, and prints the process's memory after each step (docs/memory.md). Only the SDK is imported, so the probe
 * runs on Node's own type stripping, without tsx (`--import tsx/esm` in front measures the bench's loader too).
 *
 * Usage (Temporal from `npm run testenv`, the bundle from `npm run build`):
 *   ENIFLOW_TEST_TEMPORAL_ADDRESS=… npx node bench/memory-probe.ts [--activity-workers 9] [--queues-per-worker 1]
 *     [--bundle dist/workflow-bundle.js] [--no-workflows] [--max-cached 1000] [--settle-seconds 5]
 */
import { readFileSync } from 'node:fs';
import { getHeapStatistics } from 'node:v8';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';

import { NativeConnection, Runtime, Worker } from '@temporalio/worker';

const { values } = parseArgs({
  options: {
    'activity-workers': { type: 'string', default: '9' },
    bundle: { type: 'string', default: 'dist/workflow-bundle.js' },
    'no-workflows': { type: 'boolean', default: false },
    'max-cached': { type: 'string', default: '1000' },
    'settle-seconds': { type: 'string', default: '5' },
    'reuse-v8-context': { type: 'string', default: 'true' },
  },
});

const MIB = 1024 * 1024;

/** RSS and its parts from /proc (kB → MiB), the main isolate's heap, and the thread count. */
function sample(step: string): void {
  const status = readFileSync('/proc/self/status', 'utf8');
  const kib = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
  const usage = process.memoryUsage();
  const heap = getHeapStatistics();
  const row = {
    step,
    rssMiB: Math.round(kib('VmRSS') / 1024),
    anonMiB: Math.round(kib('RssAnon') / 1024),
    fileMiB: Math.round(kib('RssFile') / 1024),
    mainHeapUsedMiB: Math.round(usage.heapUsed / MIB),
    mainHeapTotalMiB: Math.round(usage.heapTotal / MIB),
    externalMiB: Math.round(usage.external / MIB),
    heapLimitMiB: Math.round(heap.heap_size_limit / MIB),
    threads: kib('Threads') || Number(/^Threads:\s+(\d+)/m.exec(status)?.[1] ?? 0),
  };
  process.stdout.write(`${JSON.stringify(row)}\n`);
}

const address = process.env['ENIFLOW_TEST_TEMPORAL_ADDRESS'] ?? process.env['TEMPORAL_ADDRESS'] ?? 'localhost:7233';
const settleMs = Number(values['settle-seconds']) * 1000;
sample('imports');
Runtime.install({});
const connection = await NativeConnection.connect({ address });
sample('runtime + connection');
const workers: Worker[] = [];
const common = { connection, namespace: 'default', maxConcurrentActivityTaskExecutions: 100 };
if (!values['no-workflows']) {
  workers.push(
    await Worker.create({
      ...common,
      taskQueue: 'memory-probe',
      workflowBundle: { codePath: values.bundle },
      maxCachedWorkflows: Number(values['max-cached']),
      reuseV8Context: values['reuse-v8-context'] === 'true',
      activities: { noop: () => Promise.resolve() },
    }),
  );
  sample('workflow worker created');
}
const activityWorkers = Number(values['activity-workers']);
for (let i = 0; i < activityWorkers; i += 1) {
  workers.push(
    await Worker.create({
      ...common,
      taskQueue: `memory-probe-ecs-${i}`,
      activities: { noop: () => Promise.resolve() },
      maxTaskQueueActivitiesPerSecond: 5,
      maxConcurrentActivityTaskPolls: 2,
    }),
  );
}
sample(`${activityWorkers} activity workers created`);
const running = Promise.all(workers.map((worker) => worker.run()));
await sleep(settleMs);
sample(`running ${values['settle-seconds']} s`);
if (typeof globalThis.gc === 'function') {
  globalThis.gc();
  sample('after gc');
}
for (const worker of workers) worker.shutdown();
await running;
await connection.close();
