import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';

import { startProbeServer } from '../http-endpoint.js';
import type { ListeningEndpoint, ProbeSource } from '../http-endpoint.js';
import { DEGRADATION_LEVELS } from '../ipam/index.js';
import type { Logger } from '../logger.js';
import type { IpamGauges, NodeWaiting } from './ipam-gauges.js';
import type { WatcherMetrics } from './watcher-metrics.js';

/** What the health server reads from a running watcher. */
export interface HealthSource {
  /** True once every informer has listed once. */
  isSynced(): boolean;
  metrics(): WatcherMetrics;
  /** The leader's view of waiting pods and pool addresses; undefined on a standby (its gauges read 0). */
  ipamGauges?(): IpamGauges | undefined;
  /** The leader's last count of node workflows by IPAM state; undefined on a standby or before the first count. */
  nodeStates?(): Record<string, number> | undefined;
}

const INFORMER_COUNTERS = [
  ['lists', 'Lists made (first list and relists).'],
  ['expired', 'Watches answered 410 Gone.'],
  ['errors', 'Errors that stopped an informer.'],
  ['restarts', 'Informer restarts after errors.'],
] as const;

/**
 * The user-impact gauges: computed from the informer caches when scraped, on the leader only (a standby reports 0
 * and no per-node series, so a sum over replicas counts each pod once).
 */
function ipamMetrics(registry: Registry, source: HealthSource): void {
  const registers = [registry];
  // One computation (a walk over every cached pod) serves all the gauges of a scrape.
  let cached: { atMs: number; gauges: IpamGauges | undefined } | undefined;
  const current = (): IpamGauges | undefined => {
    const now = Date.now();
    if (cached === undefined || now - cached.atMs > 1_000) cached = { atMs: now, gauges: source.ipamGauges?.() };
    return cached.gauges;
  };
  const gauge = (input: { name: string; help: string; read: (gauges: IpamGauges) => number }): void => {
    new Gauge({
      name: input.name,
      help: input.help,
      registers,
      collect() {
        const gauges = current();
        this.set(gauges === undefined ? 0 : input.read(gauges));
      },
    });
  };
  gauge({
    name: 'eniflow_pods_waiting_for_ip',
    help: "Pods bound to an eniflow node, not host-network, not finished, with no IP yet and none in the node's CR.",
    read: (gauges) => gauges.waitingPods,
  });
  gauge({
    name: 'eniflow_pod_ip_wait_oldest_seconds',
    help: 'How long the longest-waiting of those pods has waited since it was scheduled.',
    read: (gauges) => gauges.oldestWaitSeconds,
  });
  gauge({
    name: 'eniflow_nodes_with_waiting_pods',
    help: 'Nodes with at least one pod waiting for an IP.',
    read: (gauges) => gauges.nodesWithWaitingPods,
  });
  gauge({
    name: 'eniflow_managed_nodes',
    help: 'Node CRs eniflow manages (not being deleted, not in exclusive ENI mode).',
    read: (gauges) => gauges.nodeCrs,
  });
  const perNode = (input: { name: string; help: string; read: (node: NodeWaiting) => number }): void => {
    new Gauge({
      name: input.name,
      help: input.help,
      labelNames: ['node'],
      registers,
      collect() {
        this.reset();
        for (const node of current()?.topNodes ?? []) this.set({ node: node.node }, input.read(node));
      },
    });
  };
  perNode({
    name: 'eniflow_node_pods_waiting_for_ip',
    help: 'Pods waiting for an IP on each of the nodes with the most of them (METRICS_TOP_NODES, default 20).',
    read: (node) => node.waitingPods,
  });
  perNode({
    name: 'eniflow_node_pod_ip_wait_oldest_seconds',
    help: 'Longest wait for an IP on each of those nodes.',
    read: (node) => node.oldestWaitSeconds,
  });
  new Gauge({
    name: 'eniflow_pool_ips',
    help: "Addresses in the Node CRs' pools by family and state (used: bound to a pod; idle: valid and free).",
    labelNames: ['family', 'state'],
    registers,
    collect() {
      this.reset();
      for (const entry of current()?.poolIps ?? []) {
        this.set({ family: entry.family, state: entry.state }, entry.count);
      }
    },
  });
  new Gauge({
    name: 'eniflow_node_workflows',
    help: 'Running node workflows by their IpamState search attribute, counted in Temporal by the leader.',
    labelNames: ['ipam_state'],
    registers,
    collect() {
      this.reset();
      const states = source.nodeStates?.() ?? {};
      for (const state of Object.keys(states).sort()) this.set({ ipam_state: state }, states[state] ?? 0);
    },
  });
}

/** The degradation switch: which level holds (1 for it, 0 for the others) and what its broadcasts did. */
function degradationMetrics(registry: Registry, source: HealthSource): void {
  new Gauge({
    name: 'eniflow_degradation_level',
    help: 'The cluster degradation switch as this replica reads it: 1 for the level in force (off, l1, l0).',
    labelNames: ['level'],
    registers: [registry],
    collect() {
      const current = source.metrics().degradation?.level ?? 'off';
      for (const level of DEGRADATION_LEVELS) this.set({ level }, level === current ? 1 : 0);
    },
  });
  new Counter({
    name: 'eniflow_degradation_signals_total',
    help: 'Degradation signals delivered to workflows (result ok) and failed after retries (result failed).',
    labelNames: ['result'],
    registers: [registry],
    collect() {
      this.reset();
      const counters = source.metrics().degradation;
      this.inc({ result: 'ok' }, counters?.signalsSent ?? 0);
      this.inc({ result: 'failed' }, counters?.signalFailures ?? 0);
    },
  });
}

/**
 * A registry with Node's default process metrics, the watcher's counters and the leader's IPAM gauges. The watcher
 * keeps its own counts, so each metric reads them when scraped and reports them as they are (a reset followed by one
 * increment).
 */
export function watcherRegistry(source: HealthSource, options: { processMetrics?: boolean } = {}): Registry {
  const registry = new Registry();
  // Off when the worker's registry, which has them, is served beside this one (`--role all`).
  if (options.processMetrics !== false) collectDefaultMetrics({ register: registry });
  const counter = (input: { name: string; help: string; read: (metrics: WatcherMetrics) => number }): void => {
    new Counter({
      name: input.name,
      help: input.help,
      registers: [registry],
      collect() {
        this.reset();
        this.inc(input.read(source.metrics()));
      },
    });
  };
  counter({
    name: 'eniflow_watcher_signals_sent_total',
    help: 'Signals Temporal accepted.',
    read: (metrics) => metrics.signalsSent,
  });
  counter({
    name: 'eniflow_watcher_signal_failures_total',
    help: 'Signal attempts that failed (retried).',
    read: (metrics) => metrics.signalFailures,
  });
  new Gauge({
    name: 'eniflow_watcher_is_leader',
    help: '1 while this replica holds the lease.',
    registers: [registry],
    collect() {
      this.set(source.metrics().isLeader ? 1 : 0);
    },
  });
  counter({
    name: 'eniflow_watcher_leadership_acquired_total',
    help: 'Times this replica became leader.',
    read: (metrics) => metrics.leader.acquired,
  });
  for (const [field, help] of INFORMER_COUNTERS) {
    new Counter({
      name: `eniflow_watcher_informer_${field}_total`,
      help,
      labelNames: ['informer'],
      registers: [registry],
      collect() {
        this.reset();
        const informers = Object.entries(source.metrics().informers).sort(([a], [b]) => (a < b ? -1 : 1));
        for (const [informer, counters] of informers) this.inc({ informer }, counters[field]);
      },
    });
  }
  degradationMetrics(registry, source);
  ipamMetrics(registry, source);
  return registry;
}

/** The watcher's probes: always live, ready once every informer has listed once; `registry` its metrics. */
export function watcherProbes(source: HealthSource, registry: Registry = watcherRegistry(source)): ProbeSource {
  return {
    registry,
    live: () => ({ ok: true, reason: 'ok' }),
    ready: () =>
      Promise.resolve(source.isSynced() ? { ok: true, reason: 'ok' } : { ok: false, reason: 'informers not synced' }),
  };
}

/**
 * Serves the watcher's probes and metrics: `/healthz` (the process answers), `/readyz` (every informer has listed
 * once) and `/metrics` (Prometheus text of the watcher's counters and Node's process metrics).
 */
export async function startHealthServer(input: {
  address: string;
  source: HealthSource;
  logger: Logger;
}): Promise<ListeningEndpoint> {
  return startProbeServer({ address: input.address, source: watcherProbes(input.source), logger: input.logger });
}
