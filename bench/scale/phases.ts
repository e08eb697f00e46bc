/**
 * The scale benchmark's phases, in the order it runs them: warm-up (nodes created until every pool is warm), the
 * burst of pods, the idle window, and the worker restart. Each returns what the report needs of it.
 */
import { setTimeout as sleep } from 'node:timers/promises';

import { pollUntil } from '../../scripts/lib/poll-until.js';
import { auditCluster, auditProblems, formatAudit } from '../../test/support/audit.js';
import { BENCH_NAMESPACE, benchNodeName, forEachLimited } from './cluster.js';
import type { NodeShape, ServedTracker } from './cluster.js';
import { sumCounts } from './probes.js';
import type { EcsCallCounter } from './probes.js';
import { log } from './stack.js';
import type { CpuSample, Snapshot, Stack } from './stack.js';
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

export const timeoutMs = (stack: Stack): number => stack.options.timeoutSeconds * 1000;

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
  /**
   * CPU of every process under test at the first pod's creation and when the last pod was served: the allocation
   * window (the snapshots around the burst hold their own scrapes and the settling).
   */
  cpuAtStart: CpuSample;
  cpuAtAllServed: CpuSample;
  /** Every node's ENIs, IPs and pods once the burst settled, from the CRs. */
  nodesAfter: NodeShape[];
  /** With `--restart-during-burst`: replica 1 killed once the pods were created, and what its replacement took. */
  restart?: { workerStartMs: number; allServedMs: number };
}

/**
 * P pods per node, interleaved across nodes, 32 create requests at a time; waits for every IP, then settles. With
 * `--restart-during-burst` worker replica 1 is SIGKILLed as soon as the last pod is created and a new one spawned.
 */
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
  const cpuAtStart = stack.sampleCpu();
  const startMs = performance.now();
  await forEachLimited(pods, CREATE_CONCURRENCY, async ({ node, pod, id }) => {
    tracker.expect(id, performance.now());
    await kube.createPod(node, pod);
  });
  const createMs = performance.now() - startMs;
  log(`burst created in ${(createMs / 1000).toFixed(1)} s; waiting for every pod's IP`);
  const killed = options.restartDuringBurst ? await killAndRespawnReplicaOne(stack, 'during-burst') : undefined;
  const ids = pods.map((entry) => entry.id);
  await tracker.until(
    () => ids.every((id) => tracker.servedMs(id) !== undefined),
    timeoutMs(stack),
    `every burst pod's IP in its node's CR`,
  );
  const cpuAtAllServed = stack.sampleCpu();
  const allServedMs = Math.max(...ids.map((id) => tracker.servedMs(id) ?? Number.NaN)) - startMs;
  log(`all served ${(allServedMs / 1000).toFixed(1)} s after the first pod was created; settling`);
  const settledMs = (await settle(stack.ecsCalls, tracker)) - startMs;
  const after = await stack.snapshot();
  const nodesAfter = tracker.nodeShapes();
  const restarted =
    killed === undefined
      ? undefined
      : { workerStartMs: await killed.started, allServedMs: allServedMs + startMs - killed.restartMs };
  if (restarted !== undefined)
    log(`restart during the burst: every pod served ${(restarted.allServedMs / 1000).toFixed(1)} s after the respawn`);
  return {
    pods,
    startMs,
    createMs,
    allServedMs,
    settledMs,
    before,
    after,
    cpuAtStart,
    cpuAtAllServed,
    nodesAfter,
    ...(restarted ? { restart: restarted } : {}),
  };
}

/** SIGKILLs replica 1's worker and spawns its replacement; `started` resolves with the spawn → "Worker started" ms. */
async function killAndRespawnReplicaOne(
  stack: Stack,
  name: string,
): Promise<{ restartMs: number; started: Promise<number>; identity: string }> {
  const { workers } = stack;
  const killed = workers.replicas[0];
  if (killed === undefined) throw new Error('no worker replica to restart');
  log(`restart (${name}): SIGKILL worker replica 1, start a new one`);
  workers.sample();
  process.kill(killed.process.pid, 'SIGKILL');
  await killed.process.exited;
  const restartMs = performance.now();
  const next = await workers.start(killed.slot, `worker-${killed.slot}-${name}`);
  const started = next.process.waitForStdoutLine(workerStarted, 180_000).then(() => performance.now() - restartMs);
  return { restartMs, started, identity: next.identity };
}

/** The first node's burst timeline, from the first pod's creation to the snapshot after settling. */
export async function burstTimeline(stack: Stack, result: BurstResult): Promise<NodeTimeline> {
  const node = benchNodeName(0);
  const epochMs = (performanceMs: number): number => performance.timeOrigin + performanceMs;
  return await fetchNodeTimeline({
    client: stack.client,
    node,
    // With one replica every task is its; naming it on every line would only add noise.
    ...(stack.workers.replicas.length > 1 ? { replicaOf: (identity: string) => stack.workers.nameOf(identity) } : {}),
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

/** Nothing happens for `--idle-seconds`; the workers' peak memory is read before any of them is replaced. */
export async function idle(stack: Stack): Promise<{ after: Snapshot }> {
  log(`idle window: ${stack.options.idleSeconds} s`);
  await sleep(stack.options.idleSeconds * 1000);
  const after = await stack.snapshot();
  return { after };
}

/** Creates one pod on a random node (or `node`) and returns its id, its creation noted at `createdMs`. */
export async function createOnePod(
  stack: Stack,
  input: { suffix: string; createdMs: number; node?: string },
): Promise<string> {
  const node = input.node ?? randomNode(stack);
  const pod = `${node}-${input.suffix}`;
  const id = `${BENCH_NAMESPACE}/${pod}`;
  stack.tracker.expect(id, input.createdMs);
  await stack.kube.createPod(node, pod);
  return id;
}

const randomNode = (stack: Stack): string => benchNodeName(Math.floor(Math.random() * stack.options.nodes));

export const workerStarted = (line: string): boolean => line.includes('"Worker started"');

export interface RollResult {
  replicas: number;
  /** Roll started → the last replacement logged "Worker started" and the last old process exited. */
  rollMs: number;
  /** Roll started → the pod created at that moment served. */
  servedMs: number;
}

/**
 * A rolling update of the worker replicas, one at a time as a Deployment rolls: SIGTERM the old process (it drains and
 * exits), start its replacement at once, and go on to the next replica once the replacement has started and the old
 * one is gone. One pod is created as the roll starts. Needs 2 replicas or more: with one there is nobody left to serve.
 */
export async function rollingUpdate(stack: Stack): Promise<RollResult | undefined> {
  const { workers, tracker } = stack;
  if (workers.replicas.length < 2) return undefined;
  log(`rolling update of ${workers.replicas.length} worker replicas, one pod created as it starts`);
  const startMs = performance.now();
  const podId = await createOnePod(stack, { suffix: 'during-roll', createdMs: startMs });
  for (const old of [...workers.replicas]) {
    workers.sample();
    const stopped = old.process.stop(60_000);
    const next = await workers.start(old.slot, `worker-${old.slot}-rolled`);
    await next.process.waitForStdoutLine(workerStarted, 180_000);
    await stopped;
  }
  const rollMs = performance.now() - startMs;
  await tracker.until(() => tracker.servedMs(podId) !== undefined, timeoutMs(stack), 'the pod created at the roll');
  const servedMs = (tracker.servedMs(podId) ?? Number.NaN) - startMs;
  log(`rolling update done in ${(rollMs / 1000).toFixed(1)} s; its pod served after ${(servedMs / 1000).toFixed(1)} s`);
  return { replicas: workers.replicas.length, rollMs, servedMs };
}

export interface RestartResult {
  /** The new process's Temporal identity (`pid@host`), to tell its tasks in the histories. */
  identity: string;
  /** The node the pod was created on. */
  node: string;
  /** New worker spawned → "Worker started". */
  workerStartMs: number;
  /** New worker spawned → the pod created at that moment served. */
  servedMs: number;
  /** The restart's window (performance.now()): the spawn, and the pod served. */
  startMs: number;
  endMs: number;
}

/** SIGKILLs replica 1's worker, spawns a new one and at once creates one pod on a random node. */
export async function restart(stack: Stack): Promise<RestartResult> {
  const { tracker } = stack;
  const { restartMs, started, identity } = await killAndRespawnReplicaOne(stack, 'restarted');
  const node = randomNode(stack);
  const podId = await createOnePod(stack, { suffix: 'after-restart', createdMs: restartMs, node });
  const workerStartMs = await started;
  await tracker.until(
    () => tracker.servedMs(podId) !== undefined,
    timeoutMs(stack),
    'the pod created at the worker restart to be served',
  );
  const servedMs = (tracker.servedMs(podId) ?? Number.NaN) - restartMs;
  log(`restart: served ${(servedMs / 1000).toFixed(1)} s after the new worker was spawned`);
  return { identity, node, workerStartMs, servedMs, startMs: restartMs, endMs: restartMs + servedMs };
}

/** The zero-leak audit's result as the report carries it. */
export interface AuditResult {
  clean: boolean;
  /** formatAudit's lines: the counters, then every problem. */
  lines: string[];
  problems: string[];
  eniflowEnisInCloud: number;
  enisInCrs: number;
}

/**
 * Once nothing moves any more, the audit of the chaos tests: every eniflow-tagged ENI in the cloud is in some Node CR
 * and every CR ENI is in the cloud, every address agrees, every live pod has one address.
 */
export async function finalAudit(stack: Stack): Promise<AuditResult> {
  await settle(stack.ecsCalls, stack.tracker);
  const report = await auditCluster({
    kube: { kubeConfig: stack.kube.kubeConfig, core: stack.kube.core, customObjects: stack.kube.custom },
    admin: stack.emulator.admin,
    nodeNames: Array.from({ length: stack.options.nodes }, (_, index) => benchNodeName(index)),
  });
  const problems = auditProblems(report);
  log(problems.length === 0 ? 'audit: clean' : `audit: ${problems.length} problems`);
  return {
    clean: problems.length === 0,
    lines: formatAudit(report).split('\n'),
    problems,
    eniflowEnisInCloud: report.eniflowEnisInCloud,
    enisInCrs: report.enisInCrs,
  };
}
