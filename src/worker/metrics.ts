import type { InjectedSinks } from '@temporalio/worker';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

import type { EcsCallObserver } from '../activities/ecs/alibaba-ecs-api.js';
import type { EcsFailureType } from '../activities/ecs/ecs-errors.js';
import { ALREADY_DONE_CODES } from '../activities/ecs/ecs-operations.js';
import type { EcsOperation } from '../activities/ecs/ecs-operations.js';
import type { PodIpReadyObserver } from '../activities/kube/kube-context.js';
import type { EniflowMetricsSinks } from '../workflows/metrics-sinks.js';

/**
 * What one ECS call meant: `success`; `noop`, an error code saying the goal already holds (the saga's clean-ups,
 * see `ALREADY_DONE_CODES`); `throttled`, the cloud's API quota; `failure`, anything else.
 */
export type EcsCallOutcome = 'success' | 'noop' | 'throttled' | 'failure';

export function ecsCallOutcome(call: {
  operation: EcsOperation;
  code: string;
  failureType?: EcsFailureType;
}): EcsCallOutcome {
  if (call.code === 'OK') return 'success';
  if (ALREADY_DONE_CODES[call.operation]?.includes(call.code) === true) return 'noop';
  return call.failureType === 'EcsThrottled' ? 'throttled' : 'failure';
}

/**
 * A node not heard of for this long loses its series: its workflow ended, or runs on another worker. The safety-net
 * pass of an idle node comes every 6–7.5 h (`idleWakeMs`), so a live node is never dropped.
 */
const NODE_SERIES_TTL_MS = 24 * 3_600_000;

/** Pod creation to IP in the CR: from 0.1 s (a warm pool) to 5 minutes (a new ENI behind throttling). */
export const POD_IP_READY_BUCKETS = [0.1, 0.25, 0.5, 1, 2, 3, 5, 7.5, 10, 15, 20, 30, 45, 60, 90, 120, 180, 300];

/** Attach to InUse, 1–180 s as Terway's (its ECS attach times out at 2 min, ours waits up to 4). */
export const ENI_ATTACH_BUCKETS = [1, 2, 3, 5, 7.5, 10, 15, 20, 30, 45, 60, 90, 120, 180];

/** Anything that knows which vSwitches it has blocked (the worker's `VSwitchCache`). */
export interface BlockedVSwitchSource {
  blocked(): readonly { vSwitchId: string }[];
}

/** The worker's Prometheus registry and what feeds it: the ECS client, the workflows' sinks and the vSwitch cache. */
export interface WorkerMetrics {
  readonly registry: Registry;
  readonly ecsCallObserver: EcsCallObserver;
  readonly sinks: InjectedSinks<EniflowMetricsSinks>;
  /** Told by the status write of each pod it made ready, with the seconds since the pod's creation. */
  readonly podIpReady: PodIpReadyObserver;
  /** Exports the blocked vSwitches of this cache too (a process may run several workers, as tests do). */
  watchVSwitches(source: BlockedVSwitchSource): void;
  /** Exports the cluster's ECS budget per action (`eniflow_ecs_budget_calls_per_minute`). */
  setEcsBudget(callsPerMinute: Readonly<Record<EcsOperation, number>>): void;
}

type Registers = Registry[];

/** ECS calls by operation and outcome, their latency, throttles, the budget and waits on the worker's own bucket. */
function ecsCallPart(registers: Registers): Pick<WorkerMetrics, 'ecsCallObserver' | 'setEcsBudget'> {
  const ecsCalls = new Counter({
    name: 'eniflow_ecs_calls_total',
    help: 'ECS/VPC OpenAPI calls by operation, outcome (success, noop, throttled, failure) and cloud code.',
    labelNames: ['operation', 'outcome', 'code'],
    registers,
  });
  const ecsDuration = new Histogram({
    name: 'eniflow_ecs_call_duration_seconds',
    help: 'ECS/VPC OpenAPI call latency (Terway: aliyun_openapi_latency), after any rate-limit wait.',
    labelNames: ['operation', 'outcome'],
    buckets: [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20],
    registers,
  });
  const budget = new Gauge({
    name: 'eniflow_ecs_budget_calls_per_minute',
    help:
      "The cluster's ECS budget per OpenAPI action (calls per minute), enforced by the Temporal server on the action's " +
      'activity task queue across all workers; compare with rate(eniflow_ecs_calls_total[1m]) * 60 summed over workers.',
    labelNames: ['operation'],
    registers,
  });
  const throttles = new Counter({
    name: 'eniflow_ecs_throttles_total',
    help: 'ECS calls the cloud refused with Throttling*, by operation: the account budget ran out despite ours.',
    labelNames: ['operation'],
    registers,
  });
  const rateLimitWait = new Counter({
    name: 'eniflow_ecs_rate_limit_wait_seconds_total',
    help: "Time ECS calls not budgeted by a task queue (the local vSwitch read) waited for the worker's own bucket.",
    labelNames: ['operation'],
    registers,
  });
  const rateLimited = new Counter({
    name: 'eniflow_ecs_rate_limited_calls_total',
    help: "ECS calls not budgeted by a task queue (the local vSwitch read) that had to wait for the worker's bucket.",
    labelNames: ['operation'],
    registers,
  });
  return {
    ecsCallObserver: (call) => {
      const outcome = ecsCallOutcome(call);
      ecsCalls.inc({ operation: call.operation, outcome, code: call.code });
      if (outcome === 'throttled') throttles.inc({ operation: call.operation });
      ecsDuration.observe({ operation: call.operation, outcome }, call.durationMs / 1000);
      if (call.rateLimitWaitMs >= 1) {
        rateLimited.inc({ operation: call.operation });
        rateLimitWait.inc({ operation: call.operation }, call.rateLimitWaitMs / 1000);
      }
    },
    setEcsBudget: (callsPerMinute) => {
      for (const [operation, perMinute] of Object.entries(callsPerMinute)) budget.set({ operation }, perMinute);
    },
  };
}

/** The vSwitches blocked by any watched cache, read at each scrape. */
function vSwitchPart(registers: Registers): Pick<WorkerMetrics, 'watchVSwitches'> {
  const vSwitchSources = new Set<BlockedVSwitchSource>();
  new Gauge({
    name: 'eniflow_vswitch_blocked',
    help: 'vSwitches this worker has blocked after the cloud said they ran out of addresses (1 per blocked vSwitch).',
    labelNames: ['vswitch'],
    registers,
    collect() {
      this.reset();
      const blocked = new Set(
        [...vSwitchSources].flatMap((source) => source.blocked().map((block) => block.vSwitchId)),
      );
      for (const vswitch of [...blocked].sort()) this.set({ vswitch }, 1);
    },
  });
  return {
    watchVSwitches: (source) => {
      vSwitchSources.add(source);
    },
  };
}

type Sinks = InjectedSinks<EniflowMetricsSinks>['eniflowMetrics'];

/** Each node's last (successful) pass as timestamps, and passes by outcome: the `nodePass` and `nodeGone` sinks. */
function nodePassPart(registers: Registers): Pick<Sinks, 'nodePass' | 'nodeGone'> {
  const nodes = new Map<string, { lastMs: number; lastOkMs?: number }>();
  const prunedNodes = (): [string, { lastMs: number; lastOkMs?: number }][] => {
    const oldest = Date.now() - NODE_SERIES_TTL_MS;
    for (const [name, node] of nodes) if (node.lastMs < oldest) nodes.delete(name);
    return [...nodes].sort(([a], [b]) => (a < b ? -1 : 1));
  };
  new Gauge({
    name: 'eniflow_node_last_pass_timestamp_seconds',
    help: "Unix time of the node workflow's last reconcile pass seen by this worker.",
    labelNames: ['node'],
    registers,
    collect() {
      this.reset();
      for (const [node, times] of prunedNodes()) this.set({ node }, times.lastMs / 1000);
    },
  });
  new Gauge({
    name: 'eniflow_node_last_successful_pass_timestamp_seconds',
    help: "Unix time of the node workflow's last reconcile pass that did not fail, seen by this worker.",
    labelNames: ['node'],
    registers,
    collect() {
      this.reset();
      for (const [node, times] of prunedNodes()) {
        if (times.lastOkMs !== undefined) this.set({ node }, times.lastOkMs / 1000);
      }
    },
  });
  const passes = new Counter({
    name: 'eniflow_node_passes_total',
    help: 'Reconcile passes of node workflows on this worker, by outcome (success, failure).',
    labelNames: ['outcome'],
    registers,
  });
  return {
    nodePass: {
      // Replayed too, so a worker that picks up a node's workflow knows its last passes at once; the times are
      // workflow times and only ever move forward, and the counter skips replays.
      callDuringReplay: true,
      fn: (info, pass) => {
        const node = nodes.get(pass.nodeName) ?? { lastMs: 0 };
        node.lastMs = Math.max(node.lastMs, pass.atMs);
        if (pass.ok) node.lastOkMs = Math.max(node.lastOkMs ?? 0, pass.atMs);
        nodes.set(pass.nodeName, node);
        if (!info.unsafe.isReplaying) passes.inc({ outcome: pass.ok ? 'success' : 'failure' });
      },
    },
    nodeGone: {
      callDuringReplay: true,
      fn: (_info, gone) => {
        nodes.delete(gone.nodeName);
      },
    },
  };
}

/** The janitor's passes: the `janitorPass` sink. */
function janitorPart(registers: Registers): Pick<Sinks, 'janitorPass'> {
  const janitorPasses = new Counter({
    name: 'eniflow_janitor_passes_total',
    help: 'Orphan-ENI janitor passes.',
    labelNames: ['dry_run'],
    registers,
  });
  const janitorOrphans = new Gauge({
    name: 'eniflow_janitor_orphans',
    help: 'Orphan ENIs the last janitor pass on this worker found.',
    labelNames: ['dry_run'],
    registers,
  });
  const janitorLastPass = new Gauge({
    name: 'eniflow_janitor_last_pass_timestamp_seconds',
    help: 'Unix time of the last janitor pass on this worker.',
    registers,
  });
  const janitorDeleted = new Counter({
    name: 'eniflow_janitor_deleted_enis_total',
    help: 'Orphan ENIs the janitor deleted.',
    registers,
  });
  const janitorFailures = new Counter({
    name: 'eniflow_janitor_delete_failures_total',
    help: 'Orphan ENI deletes that failed (retried next pass).',
    registers,
  });
  const janitorUnowned = new Gauge({
    name: 'eniflow_janitor_unowned_enis',
    help:
      'Detached ENIs (Available, attached nowhere) with creator=eniflow, no cluster tag and in no Node CR of this ' +
      'cluster: possibly its leaks, never deleted. Attached ones are in use and not counted.',
    registers,
  });
  return {
    janitorPass: {
      fn: (_info, pass) => {
        const mode = { dry_run: String(pass.dryRun) };
        janitorPasses.inc(mode);
        janitorOrphans.set(mode, pass.orphans);
        janitorLastPass.set(Date.now() / 1000);
        if (pass.deleted > 0) janitorDeleted.inc(pass.deleted);
        if (pass.failed > 0) janitorFailures.inc(pass.failed);
        janitorUnowned.set(pass.unowned);
      },
    },
  };
}

/** Pod creation to IP and attach to InUse: the status write's observer and the `eniAttach` sink. */
function latencyPart(registers: Registers): Pick<WorkerMetrics, 'podIpReady'> & Pick<Sinks, 'eniAttach'> {
  const podIpReady = new Histogram({
    name: 'eniflow_pod_ip_ready_seconds',
    help:
      "Pod creation (metadata.creationTimestamp, whole seconds) to its IPs in the Node CR status (Terway's " +
      'AllocIPSucceed as its e2e harness measures it), observed once per pod by the status write that bound it.',
    buckets: POD_IP_READY_BUCKETS,
    registers,
  });
  const eniAttach = new Histogram({
    name: 'eniflow_eni_attach_duration_seconds',
    help:
      'AttachNetworkInterface call to the ENI InUse (Terway: terway_eni_attach_duration_seconds), by result ' +
      '(success, failed, timeout) and eni_type (secondary, trunk, erdma); workflow time, not counted on replay.',
    labelNames: ['result', 'eni_type'],
    buckets: ENI_ATTACH_BUCKETS,
    registers,
  });
  return {
    podIpReady: (pod) => {
      podIpReady.observe(pod.seconds);
    },
    eniAttach: {
      // Not on replay: a worker that picks up the workflow must not count its past attaches again.
      callDuringReplay: false,
      fn: (_info, attach) => {
        eniAttach.observe({ result: attach.result, eni_type: attach.eniType }, attach.seconds);
      },
    },
  };
}

/**
 * Builds the worker's registry: ECS calls by operation and outcome, their latency, waits on the worker's own rate
 * limit, blocked vSwitches, each node's last (successful) pass, the janitor's passes, and Node's process metrics.
 * Per-node pass times are timestamps, so across workers `max by (node)` is the truth even when a node's workflow
 * moved and the old worker still remembers an earlier pass. The parts register in this order, which is the order
 * of the exposition.
 */
export function createWorkerMetrics(): WorkerMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  const ecs = ecsCallPart(registers);
  const vSwitches = vSwitchPart(registers);
  const nodePasses = nodePassPart(registers);
  const janitor = janitorPart(registers);
  const latencies = latencyPart(registers);
  return {
    registry,
    ecsCallObserver: ecs.ecsCallObserver,
    sinks: {
      eniflowMetrics: {
        nodePass: nodePasses.nodePass,
        nodeGone: nodePasses.nodeGone,
        eniAttach: latencies.eniAttach,
        janitorPass: janitor.janitorPass,
      },
    },
    podIpReady: latencies.podIpReady,
    watchVSwitches: vSwitches.watchVSwitches,
    setEcsBudget: ecs.setEcsBudget,
  };
}

/** The worker process's metrics, served on its health endpoint (`HEALTH_ADDRESS`, see health-server.ts). */
export const workerMetrics: WorkerMetrics = createWorkerMetrics();

/** The ECS call observer of {@link workerMetrics}, for `AlibabaEcsApi`'s `observe`. */
export function ecsCallMetrics(metrics: WorkerMetrics = workerMetrics): EcsCallObserver {
  return metrics.ecsCallObserver;
}
