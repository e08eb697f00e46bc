/**
 * The watcher: informers on Node CRs, bound Pods and core Nodes turn relevant changes into coalesced `reconcile`
 * signals (`signalWithStart`) of each node's workflow. Only the replica holding the Lease signals.
 *
 * The process entry is src/watcher/main.ts (`node dist/watcher/main.js`; environment in {@link WATCHER_ENV}), which
 * loads this module after the hook of src/kube/slim-client-node.ts is in place.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';

import { ConfigError, warnDeprecatedVariables } from '../config.js';
import { withPooledConnections } from '../kube/pooled-connections.js';
import { createLogger } from '../logger.js';
import type { Logger } from '../logger.js';
import { DegradationBroadcast } from './degradation-broadcast.js';
import { DegradationWatch } from './degradation-watch.js';
import { startHealthServer } from './health-server.js';
import type { HealthSource } from './health-server.js';
import { ipamGauges, nodesWithWaitingPods } from './ipam-gauges.js';
import type { IpamGauges } from './ipam-gauges.js';
import { LeaderElector } from './leader-elector.js';
import { NodeStatePoll } from './node-state-poll.js';
import { instanceIdOf } from './relevant-changes.js';
import { SignalDispatcher } from './signal-dispatcher.js';
import { CONTROL_CONFIGMAP_NAME, loadWatcherConfig, WATCHER_METRICS_DEFAULTS } from './watcher-config.js';
import type { WatcherConfig } from './watcher-config.js';
import { createWatcherInformers } from './watcher-informers.js';
import type { WatcherInformers } from './watcher-informers.js';
import type { WatcherMetrics } from './watcher-metrics.js';
import { TemporalWorkflowGateway } from './workflow-gateway.js';
import type { WorkflowGateway } from './workflow-gateway.js';

export { loadWatcherConfig, WATCHER_ENV } from './watcher-config.js';
export type { WatcherConfig } from './watcher-config.js';
export type { WatcherMetrics } from './watcher-metrics.js';
export { BOUND_PODS_FIELD_SELECTOR } from './watcher-informers.js';

/** A running watcher. */
export interface WatcherHandle {
  readonly identity: string;
  /** Resolves once every informer has listed once. */
  readonly synced: Promise<void>;
  isLeader(): boolean;
  metrics(): WatcherMetrics;
  /** Signals this replica sent for a node. */
  signalsFor(nodeName: string): number;
  /** Pods waiting for an IP and pool addresses, from the informer caches; only while leader and synced. */
  ipamGauges(): IpamGauges | undefined;
  /** Node workflows by IPAM state as last counted in Temporal; only while leader. */
  nodeStates(): Record<string, number> | undefined;
  /**
   * Stops informers, signalling and campaigning. `releaseLease` (default true, a graceful shutdown) gives up a
   * held lease so another replica takes over at once; false leaves it to expire, as a crash would.
   */
  stop(options?: { releaseLease?: boolean }): Promise<void>;
}

/** What tests (or `npm start`, in-process) may supply instead of building it from the config. */
export interface WatcherDependencies {
  kubeConfig?: KubeConfig;
  temporalClient?: Client;
  gateway?: WorkflowGateway;
  logger?: Logger;
  /** The worker runs in this process too (`--role all`): see TemporalWorkflowGateway's `workerInProcess`. */
  workerInProcess?: boolean;
}

/** Starts the watcher: informers at once, signalling when (and while) this replica holds the lease. */
export async function runWatcher(
  config: WatcherConfig,
  dependencies: WatcherDependencies = {},
): Promise<WatcherHandle> {
  const logger = dependencies.logger ?? createLogger({ name: 'eniflow-watcher', level: config.logLevel });
  const kubeConfig = dependencies.kubeConfig ?? loadKubeConfig(config);
  const configuredLevel = config.degradation?.level ?? 'off';
  // The operator's degradation switch: every start and signal carries it, a change is broadcast to every workflow.
  const degradation = new DegradationWatch({
    kubeConfig,
    logger,
    watch: config.watch,
    configMap: config.degradation?.configMap ?? { namespace: config.lease.namespace, name: CONTROL_CONFIGMAP_NAME },
    defaultLevel: configuredLevel,
    onChange: (setting, previous) => {
      logger.warn({ level: setting.level, previous, revision: setting.revision }, 'Degradation level changed');
      void broadcaster.broadcast();
    },
  });
  warnDeprecatedVariables(config.temporal, (fields, message) => {
    logger.warn(fields, message);
  });
  const { gateway, connection } = await gatewayOf(config, dependencies, {
    // Read when a workflow is started, by then the informers below exist.
    instanceOf: (nodeName) => instanceIdOf(informers.nodeCrs.view(nodeName)),
    degradation: () => degradation.current(),
  });
  const dispatcher = new SignalDispatcher({
    gateway,
    logger,
    windowMs: config.coalesceWindowMs,
    maxDelayMs: config.coalesceMaxDelayMs,
    pacing: { baseMs: config.nodeSettings.minReconcileIntervalMs, maxMs: config.nodeSettings.maxBatchWindowMs },
    sweepNodesPerSecond: config.startSweepNodesPerSecond,
  });
  const informers = createWatcherInformers({
    kubeConfig,
    logger,
    watch: config.watch,
    enqueue: (change) => {
      dispatcher.enqueue(change);
    },
  });
  const isLeader = (): boolean => elector.isLeader();
  const broadcaster = new DegradationBroadcast({
    gateway,
    degradation,
    isLeader,
    nodeNames: () => informers.nodeNames(),
    logger,
  });
  // Workflows started before the ConfigMap was read got the configured level: tell them if it differs.
  void degradation.synced.then(() => {
    if (degradation.current().level !== configuredLevel) void broadcaster.broadcast();
  });
  const nodeStates = new NodeStatePoll({
    gateway,
    isLeader,
    logger,
    intervalMs: config.metrics?.nodeStatePollMs ?? WATCHER_METRICS_DEFAULTS.nodeStatePollMs,
  });
  const elector = new LeaderElector({
    kubeConfig,
    namespace: config.lease.namespace,
    name: config.lease.name,
    identity: config.lease.identity,
    leaseDurationMs: config.lease.durationMs,
    renewDeadlineMs: config.lease.renewDeadlineMs,
    retryPeriodMs: config.lease.retryPeriodMs,
    logger,
    onStartedLeading: () => {
      dispatcher.setActive(true);
      nodeStates.start();
      void signalEveryNode({ informers, dispatcher, isLeader, logger, config });
      void gateway.ensureJanitor?.().catch((error: unknown) => {
        logger.warn({ err: error }, 'Could not start the orphan-ENI janitor; the next leader term tries again');
      });
    },
    onStoppedLeading: () => {
      dispatcher.setActive(false);
      void nodeStates.stop();
    },
  });

  informers.start();
  degradation.start();
  elector.start();
  logger.info(
    {
      identity: config.lease.identity,
      lease: `${config.lease.namespace}/${config.lease.name}`,
      taskQueue: config.temporal.taskQueue,
      coalesceWindowMs: config.coalesceWindowMs,
    },
    'Watcher started',
  );
  const parts = { informers, dispatcher, elector, degradation, broadcaster, nodeStates, connection };
  return watcherHandle(config, logger, parts);
}

/** The given gateway, or one over the given client, or over a connection made here (closed when the watcher stops). */
async function gatewayOf(
  config: WatcherConfig,
  dependencies: WatcherDependencies,
  reads: Pick<ConstructorParameters<typeof TemporalWorkflowGateway>[0], 'instanceOf' | 'degradation'>,
): Promise<{ gateway: WorkflowGateway; connection?: Connection }> {
  if (dependencies.gateway !== undefined) return { gateway: dependencies.gateway };
  let client = dependencies.temporalClient;
  let connection: Connection | undefined;
  if (client === undefined) {
    connection = await Connection.connect({
      address: config.temporal.address,
      ...(config.temporal.tls === undefined ? {} : { tls: config.temporal.tls }),
      ...(config.temporal.apiKey === undefined ? {} : { apiKey: config.temporal.apiKey }),
      ...(config.temporal.metadata === undefined ? {} : { metadata: config.temporal.metadata }),
    });
    client = new Client({ connection, namespace: config.temporal.namespace });
  }
  const gateway = new TemporalWorkflowGateway({
    client,
    taskQueue: config.temporal.taskQueue,
    nodeSettings: config.nodeSettings,
    janitorSettings: config.janitorSettings,
    ...reads,
    ...(dependencies.workerInProcess === true ? { workerInProcess: true } : {}),
  });
  return connection === undefined ? { gateway } : { gateway, connection };
}

/** A new leader's first act: every node once, spread over time; a node whose pods wait for an IP at once. */
async function signalEveryNode(parts: {
  informers: WatcherInformers;
  dispatcher: SignalDispatcher;
  isLeader: () => boolean;
  logger: Logger;
  config: WatcherConfig;
}): Promise<void> {
  const { informers, dispatcher, logger } = parts;
  await informers.synced;
  if (!parts.isLeader()) return;
  const names = informers.nodeNames();
  logger.info(
    { nodes: names.size, nodesPerSecond: parts.config.startSweepNodesPerSecond },
    'Signalling every node once, spread over time',
  );
  dispatcher.sweep(names, 'watcher-start');
  // A pod that waits for an IP is no reason to wait for its node's turn: its node is signalled at once.
  for (const nodeName of nodesWithWaitingPods({
    pods: informers.pods.entries(),
    nodeCrs: informers.nodeCrs.entries(),
  })) {
    dispatcher.enqueue({ nodeName, reason: 'pods-waiting' });
  }
}

/** The running watcher's face: its counters and gauges, and a stop that lets no signal out after the lease. */
function watcherHandle(
  config: WatcherConfig,
  logger: Logger,
  parts: {
    informers: WatcherInformers;
    dispatcher: SignalDispatcher;
    elector: LeaderElector;
    degradation: DegradationWatch;
    broadcaster: DegradationBroadcast;
    nodeStates: NodeStatePoll;
    connection?: Connection | undefined;
  },
): WatcherHandle {
  const { informers, dispatcher, elector, degradation, nodeStates } = parts;
  const { pods, nodeCrs, coreNodes } = informers;
  const topNodes = config.metrics?.topNodes ?? WATCHER_METRICS_DEFAULTS.topNodes;
  let stopping: Promise<void> | undefined;
  return {
    identity: config.lease.identity,
    synced: informers.synced,
    isLeader: () => elector.isLeader(),
    signalsFor: (nodeName) => dispatcher.signalsFor(nodeName),
    // Only the leader exports cluster facts, so summing over replicas never counts a pod twice.
    ipamGauges: () =>
      elector.isLeader() && informers.isSynced()
        ? ipamGauges({ pods: pods.entries(), nodeCrs: nodeCrs.entries(), nowMs: Date.now(), topNodes })
        : undefined,
    nodeStates: () => nodeStates.current(),
    metrics: () => ({
      ...dispatcher.counters,
      sweepPending: dispatcher.sweepPending(),
      isLeader: elector.isLeader(),
      leader: { ...elector.counters },
      informers: { pods: pods.counters(), nodeCrs: nodeCrs.counters(), coreNodes: coreNodes.counters() },
      degradation: { ...degradation.counters },
    }),
    stop: (options = {}) => {
      stopping ??= (async () => {
        // The count under way ends before the connection closes (the test's or the process's client).
        await Promise.all([nodeStates.stop(), informers.stop(), degradation.stop()]);
        await parts.broadcaster.settled();
        // No signal may leave after the lease is released: the next leader starts by signalling every node.
        await dispatcher.stop();
        await elector.stop({ release: options.releaseLease ?? true });
        await parts.connection?.close();
        logger.info({ identity: config.lease.identity }, 'Watcher stopped');
      })();
      return stopping;
    },
  };
}

function loadKubeConfig(config: WatcherConfig): KubeConfig {
  const kubeConfig = withPooledConnections(new KubeConfig());
  if (config.kubeconfigPath === undefined) kubeConfig.loadFromDefault();
  else kubeConfig.loadFromFile(config.kubeconfigPath);
  return kubeConfig;
}

/** The watcher process: configuration from the environment, runs until SIGINT/SIGTERM. */
export async function watcherMain(): Promise<void> {
  let config: WatcherConfig;
  try {
    config = loadWatcherConfig();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`eniflow watcher: ${error.message}\n`);
    process.exit(2);
  }
  const logger = createLogger({ name: 'eniflow-watcher', level: config.logLevel });
  const watcher = await runWatcher(config, { logger });
  const health =
    config.healthAddress === undefined
      ? undefined
      : await startHealthServer({ address: config.healthAddress, source: healthSourceOf(watcher), logger });
  const shutdown = (signal: NodeJS.Signals): void => {
    logger.info({ signal }, 'Shutting down');
    Promise.all([watcher.stop({ releaseLease: true }), health?.close()]).then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'Shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}

/** The health server's view of a running watcher. */
export function healthSourceOf(watcher: WatcherHandle): HealthSource {
  let synced = false;
  void watcher.synced.then(() => {
    synced = true;
  });
  return {
    isSynced: () => synced,
    metrics: () => watcher.metrics(),
    ipamGauges: () => watcher.ipamGauges(),
    nodeStates: () => watcher.nodeStates(),
  };
}
