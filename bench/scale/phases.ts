/**
 * The scale benchmark's phases, in the order it runs them: warm-up (nodes created until every pool is warm), the
 * burst of pods, the idle window, and the worker restart. Each returns what the report needs of it.
 */
import { setTimeout as sleep } from 'node:timers/promises';

import { pollUntil } from '../../scripts/lib/poll-until.js';
import { BENCH_NAMESPACE, benchNodeName, forEachLimited } from './cluster.js';
import type { ServedTracker } from './cluster.js';
import { sampleProcess, sumCounts } from './probes.js';
import type { EcsCallCounter, ProcessSample } from './probes.js';
import { log } from './stack.js';
import type { Snapshot, Stack } from './stack.js';
import { fetchNodeTimeline } from './timeline.js';
import type { NodeTimeline } from './timeline.js';

const CREATE_CONCURRENCY = 32;
/** Settled: no ECS call and no CR change for this long after the last pod was served. */
const SETTLE_QUIET_MS = 5_000;

/**
 * Waits until no ECS call and no CR change happened for SETTLE_QUIET_MS (at most two minutes); returns when
 * the last of them was seen (performance.now()).
 */
async function settle(ecsCalls: EcsCallCounter, tracker: ServedTracker): Promise<number> {
  let lastTotal = -1;
  let quietSinceMs = performance.now();
  return await pollUntil(
    async () => {
      const total = sumCounts(await ecsCalls.drain());
      const now = performance.now();
      if (total !== lastTotal) {
        lastTotal = total;
        quietSinceMs = now;
      }
      const lastActivityMs = Math.max(quietSinceMs, tracker.lastEventMs);
      return now - lastActivityMs >= SETTLE_QUIET_MS ? lastActivityMs : undefined;
    },
    { description: 'ECS calls and CR changes to stop', timeoutMs: 120_000, intervalMs: 250 },
  );
}

const timeoutMs = (stack: Stack): number => stack.options.timeoutSeconds * 1000;

/** Creates the nodes (8 at a time) and waits until every pool is warm and everything settled. */
export async function warmUp(stack: Stack): Promise<{ nodesWarmMs: number }> {
  const { options, kube, tracker, emulator } = stack;
  await kube.createNamespace(BENCH_NAMESPACE);
  log(`creating ${options.nodes} nodes`);
  const nodesStartMs = performance.now();
  const nodeIndexes = Array.from({ length: options.nodes }, (_, index) => index);
  await forEachLimited(nodeIndexes, 8, (index) => kube.createNode(index, emulator.regionId, options.pool));
  await tracker.until(
    () => tracker.warmNodes(options.pool.min) === options.nodes,
    timeoutMs(stack),
    'every node pool warm',
  );
  const nodesWarmMs = performance.now() - nodesStartMs;
  log(`every node's pool warm after ${(nodesWarmMs / 1000).toFixed(1)} s`);
  await settle(stack.ecsCalls, tracker);
  return { nodesWarmMs };
}

export interface BurstPod {
  node: string;
  pod: string;
  /** `namespace/name`, as the CR's `podID`. */
  id: string;
}

export interface BurstResult {
  pods: BurstPod[];
  /** performance.now() of the first pod's creation request. */
  startMs: number;
  createMs: number;
  allServedMs: number;
  settledMs: number;
  before: Snapshot;
  after: Snapshot;
}

/** P pods per node, interleaved across nodes, 32 create requests at a time; waits for every IP, then settles. */
export async function burst(stack: Stack): Promise<BurstResult> {
  const { options, kube, tracker } = stack;
  const before = await stack.snapshot();
  log(`burst: ${options.nodes * options.pods} pods`);
  const pods: BurstPod[] = [];
  for (let podIndex = 0; podIndex < options.pods; podIndex += 1) {
    for (let index = 0; index < options.nodes; index += 1) {
      const node = benchNodeName(index);
      const pod = `${node}-p${String(podIndex).padStart(3, '0')}`;
      pods.push({ node, pod, id: `${BENCH_NAMESPACE}/${pod}` });
    }
  }
  const startMs = performance.now();
  await forEachLimited(pods, CREATE_CONCURRENCY, async ({ node, pod, id }) => {
    tracker.expect(id, performance.now());
    await kube.createPod(node, pod);
  });
  const createMs = performance.now() - startMs;
  log(`burst created in ${(createMs / 1000).toFixed(1)} s; waiting for every pod's IP`);
  const ids = pods.map((entry) => entry.id);
  await tracker.until(
    () => ids.every((id) => tracker.servedMs(id) !== undefined),
    timeoutMs(stack),
    `every burst pod's IP in its node's CR`,
  );
  const allServedMs = Math.max(...ids.map((id) => tracker.servedMs(id) ?? Number.NaN)) - startMs;
  log(`all served ${(allServedMs / 1000).toFixed(1)} s after the first pod was created; settling`);
  const settledMs = (await settle(stack.ecsCalls, tracker)) - startMs;
  const after = await stack.snapshot();
  return { pods, startMs, createMs, allServedMs, settledMs, before, after };
}

/** The first node's burst timeline, from the first pod's creation to the snapshot after settling. */
export async function burstTimeline(stack: Stack, result: BurstResult): Promise<NodeTimeline> {
  const node = benchNodeName(0);
  const epochMs = (performanceMs: number): number => performance.timeOrigin + performanceMs;
  return await fetchNodeTimeline({
    client: stack.client,
    node,
    originMs: epochMs(result.startMs),
    endMs: epochMs(result.after.atMs),
    pods: result.pods
      .filter((entry) => entry.node === node)
      .flatMap(({ pod, id }) => {
        const times = stack.tracker.podTimes(id);
        if (times === undefined) return [];
        return [
          {
            name: pod,
            createdMs: epochMs(times.createdMs),
            ...(times.servedMs === undefined ? {} : { servedMs: epochMs(times.servedMs) }),
          },
        ];
      }),
  });
}

/** Nothing happens for `--idle-seconds`; the worker's peak memory is read before the restart kills it. */
export async function idle(stack: Stack): Promise<{ after: Snapshot; workerPeak: ProcessSample | undefined }> {
  log(`idle window: ${stack.options.idleSeconds} s`);
  await sleep(stack.options.idleSeconds * 1000);
  const after = await stack.snapshot();
  return { after, workerPeak: sampleProcess(stack.worker.pid) };
}

export interface RestartResult {
  /** New worker spawned → "Worker started". */
  workerStartMs: number;
  /** New worker spawned → the pod created at that moment served. */
  servedMs: number;
}

/** SIGKILLs the worker, spawns a new one and at once creates one pod on a random node. */
export async function restart(stack: Stack): Promise<RestartResult> {
  const { options, kube, tracker } = stack;
  log('restart: SIGKILL the worker, start a new one, create one pod');
  process.kill(stack.worker.pid, 'SIGKILL');
  await stack.worker.exited;
  const restartMs = performance.now();
  stack.worker = stack.startWorker('worker-2');
  const restartNode = benchNodeName(Math.floor(Math.random() * options.nodes));
  const restartPod = `${restartNode}-after-restart`;
  tracker.expect(`${BENCH_NAMESPACE}/${restartPod}`, restartMs);
  await kube.createPod(restartNode, restartPod);
  await stack.worker.waitForStdoutLine((line) => line.includes('"Worker started"'), 180_000);
  const workerStartMs = performance.now() - restartMs;
  await tracker.until(
    () => tracker.servedMs(`${BENCH_NAMESPACE}/${restartPod}`) !== undefined,
    timeoutMs(stack),
    'the pod created at the worker restart to be served',
  );
  const servedMs = (tracker.servedMs(`${BENCH_NAMESPACE}/${restartPod}`) ?? Number.NaN) - restartMs;
  log(`restart: served ${(servedMs / 1000).toFixed(1)} s after the new worker was spawned`);
  return { workerStartMs, servedMs };
}
