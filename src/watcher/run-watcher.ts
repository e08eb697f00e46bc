/**
 * The watcher: informers on Node CRs, bound Pods and core Nodes turn relevant changes into coalesced `reconcile`
 * signals (`signalWithStart`) of each node's workflow. Only the replica holding the Lease signals.
 *
 * The process entry is src/watcher/main.ts (`node dist/watcher/main.js`; environment in {@link WATCHER_ENV}), which
 * loads this module after the hook of src/kube/slim-client-node.ts is in place.
 */
import { CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import type { KubernetesListObject, KubernetesObject, V1Node, V1Pod } from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';

import { ConfigError, warnDeprecatedVariables } from '../config.js';
import { NODE_CR_GROUP, NODE_CR_PLURAL, NODE_CR_VERSION } from '../ipam/index.js';
import { ResourceInformer } from '../kube/resource-informer.js';
import type { ChangeOrigin } from '../kube/resource-informer.js';
import { abortOptions } from '../kube-request.js';
import { createLogger } from '../logger.js';
import type { Logger } from '../logger.js';
import type { NodeChange } from './coalescer.js';
import { DegradationWatch } from './degradation-watch.js';
import { startHealthServer } from './health-server.js';
import type { HealthSource } from './health-server.js';
import { LeaderElector } from './leader-elector.js';
import {
  coreNodeChange,
  coreNodeView,
  instanceIdOf,
  nodeCrChange,
  nodeCrView,
  podChange,
  podView,
} from './relevant-changes.js';
import type { NodeCrObject } from './relevant-changes.js';
import { SignalDispatcher } from './signal-dispatcher.js';
import { ipamGauges, nodesWithWaitingPods } from './ipam-gauges.js';
import type { IpamGauges } from './ipam-gauges.js';
import { CONTROL_CONFIGMAP_NAME, loadWatcherConfig, WATCHER_METRICS_DEFAULTS } from './watcher-config.js';
import type { WatcherConfig } from './watcher-config.js';
import type { WatcherMetrics } from './watcher-metrics.js';
import { TemporalWorkflowGateway } from './workflow-gateway.js';
import type { WorkflowGateway } from './workflow-gateway.js';
import { withPooledConnections } from '../kube/pooled-connections.js';

export { loadWatcherConfig, WATCHER_ENV } from './watcher-config.js';
export type { WatcherConfig } from './watcher-config.js';
export type { WatcherMetrics } from './watcher-metrics.js';

/** Only pods bound to a node matter; the apiserver filters the rest out of both list and watch. */
export const BOUND_PODS_FIELD_SELECTOR = 'spec.nodeName!=';

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
  // The operator's degradation switch: every start and signal carries it, a change is broadcast to every workflow.
  const degradation = new DegradationWatch({
    kubeConfig,
    logger,
    watch: config.watch,
    configMap: config.degradation?.configMap ?? { namespace: config.lease.namespace, name: CONTROL_CONFIGMAP_NAME },
    defaultLevel: config.degradation?.level ?? 'off',
    onChange: (setting, previous) => {
      logger.warn({ level: setting.level, previous, revision: setting.revision }, 'Degradation level changed');
      void broadcastDegradation();
    },
  });
  warnDeprecatedVariables(config.temporal, (fields, message) => {
    logger.warn(fields, message);
  });
  let connection: Connection | undefined;
  let gateway = dependencies.gateway;
  if (gateway === undefined) {
    let client = dependencies.temporalClient;
    if (client === undefined) {
      connection = await Connection.connect({
        address: config.temporal.address,
        ...(config.temporal.tls === undefined ? {} : { tls: config.temporal.tls }),
        ...(config.temporal.apiKey === undefined ? {} : { apiKey: config.temporal.apiKey }),
        ...(config.temporal.metadata === undefined ? {} : { metadata: config.temporal.metadata }),
      });
      client = new Client({ connection, namespace: config.temporal.namespace });
    }
    gateway = new TemporalWorkflowGateway({
      client,
      taskQueue: config.temporal.taskQueue,
      nodeSettings: config.nodeSettings,
      janitorSettings: config.janitorSettings,
      // Read when a workflow is started, by then the informer below exists.
      instanceOf: (nodeName) => instanceIdOf(nodeCrs.view(nodeName)),
      degradation: () => degradation.current(),
      ...(dependencies.workerInProcess === true ? { workerInProcess: true } : {}),
    });
  }

  const dispatcher = new SignalDispatcher({
    gateway,
    logger,
    windowMs: config.coalesceWindowMs,
    maxDelayMs: config.coalesceMaxDelayMs,
    pacing: { baseMs: config.nodeSettings.minReconcileIntervalMs, maxMs: config.nodeSettings.maxBatchWindowMs },
    sweepNodesPerSecond: config.startSweepNodesPerSecond,
  });
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const customObjects = kubeConfig.makeApiClient(CustomObjectsApi);
  // The change carries the resourceVersion the watcher saw, so the worker's read can wait for its own cache.
  const onChange = (change: NodeChange, origin: ChangeOrigin): void => {
    dispatcher.enqueue(
      origin.resourceVersion === undefined
        ? change
        : { ...change, seen: { [origin.informer]: origin.resourceVersion } },
    );
  };
  const common = { kubeConfig, logger, watch: config.watch, onChange };

  const pods = new ResourceInformer<V1Pod, ReturnType<typeof podView>, NodeChange>({
    ...common,
    name: 'pods',
    path: '/api/v1/pods',
    fieldSelector: BOUND_PODS_FIELD_SELECTOR,
    list: (signal) => core.listPodForAllNamespaces({ fieldSelector: BOUND_PODS_FIELD_SELECTOR }, abortOptions(signal)),
    view: podView,
    change: podChange,
  });
  const nodeCrs = new ResourceInformer<NodeCrObject & KubernetesObject, ReturnType<typeof nodeCrView>, NodeChange>({
    ...common,
    name: 'node-crs',
    path: `/apis/${NODE_CR_GROUP}/${NODE_CR_VERSION}/${NODE_CR_PLURAL}`,
    list: async (signal) =>
      (await customObjects.listClusterCustomObject(
        { group: NODE_CR_GROUP, version: NODE_CR_VERSION, plural: NODE_CR_PLURAL },
        abortOptions(signal),
      )) as KubernetesListObject<NodeCrObject & KubernetesObject>,
    view: nodeCrView,
    change: nodeCrChange,
  });
  const coreNodes = new ResourceInformer<V1Node, ReturnType<typeof coreNodeView>, NodeChange>({
    ...common,
    name: 'core-nodes',
    path: '/api/v1/nodes',
    list: (signal) => core.listNode({}, abortOptions(signal)),
    view: coreNodeView,
    change: coreNodeChange,
  });
  const informers = [pods, nodeCrs, coreNodes];
  const synced = Promise.all(informers.map((informer) => informer.synced)).then(() => undefined);

  let broadcasting: Promise<void> = Promise.resolve();
  /** Hands the current setting to every running workflow (leader only), one broadcast after another. */
  const broadcastDegradation = (): Promise<void> => {
    broadcasting = broadcasting.then(async () => {
      const broadcast = gateway.broadcastDegradation?.bind(gateway);
      if (broadcast === undefined) return;
      const startedMs = Date.now();
      for (let attempt = 1; elector.isLeader(); attempt += 1) {
        const setting = degradation.current();
        const names = [...new Set([...nodeCrs.nodeNames(), ...coreNodes.nodeNames()])];
        try {
          const result = await broadcast(setting, names);
          degradation.counters.signalsSent += result.signalled;
          degradation.counters.lastBroadcastMs = Date.now() - startedMs;
          logger.info(
            { level: setting.level, ...result, failed: result.failed.length, ms: Date.now() - startedMs },
            'Degradation level sent to the workflows',
          );
          if (result.failed.length === 0) return;
          degradation.counters.signalFailures += result.failed.length;
        } catch (error) {
          degradation.counters.signalFailures += 1;
          logger.warn({ err: error, attempt }, 'Could not send the degradation level; retrying');
        }
        // The workflows that missed it also get it with their next reconcile signal.
        if (attempt >= 5) return;
        await new Promise((resolve) => setTimeout(resolve, 500 * 2 ** attempt));
      }
    });
    return broadcasting;
  };
  // Workflows started before the ConfigMap was read got the configured level: tell them if it differs.
  void degradation.synced.then(() => {
    if (degradation.current().level !== (config.degradation?.level ?? 'off')) void broadcastDegradation();
  });

  const signalEveryNode = async (): Promise<void> => {
    await synced;
    if (!elector.isLeader()) return;
    const names = new Set([...nodeCrs.nodeNames(), ...coreNodes.nodeNames()]);
    logger.info(
      { nodes: names.size, nodesPerSecond: config.startSweepNodesPerSecond },
      'Signalling every node once, spread over time',
    );
    dispatcher.sweep(names, 'watcher-start');
    // A pod that waits for an IP is no reason to wait for its node's turn: its node is signalled at once.
    for (const nodeName of nodesWithWaitingPods({ pods: pods.entries(), nodeCrs: nodeCrs.entries() })) {
      dispatcher.enqueue({ nodeName, reason: 'pods-waiting' });
    }
  };
  let isSynced = false;
  void synced.then(() => {
    isSynced = true;
  });
  const topNodes = config.metrics?.topNodes ?? WATCHER_METRICS_DEFAULTS.topNodes;
  const nodeStatePollMs = config.metrics?.nodeStatePollMs ?? WATCHER_METRICS_DEFAULTS.nodeStatePollMs;
  let nodeStates: Record<string, number> | undefined;
  let nodeStateTimer: NodeJS.Timeout | undefined;
  const pollNodeStates = async (): Promise<void> => {
    if (gateway.countNodesByState === undefined) return;
    try {
      const counts = await gateway.countNodesByState();
      if (elector.isLeader()) nodeStates = counts;
    } catch (error) {
      logger.warn({ err: error }, 'Could not count node workflows by IPAM state; the next poll tries again');
    }
  };
  const startNodeStatePolls = (): void => {
    clearInterval(nodeStateTimer);
    void pollNodeStates();
    nodeStateTimer = setInterval(() => void pollNodeStates(), nodeStatePollMs);
  };
  const stopNodeStatePolls = (): void => {
    clearInterval(nodeStateTimer);
    nodeStateTimer = undefined;
    nodeStates = undefined;
  };

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
      startNodeStatePolls();
      void signalEveryNode();
      void gateway.ensureJanitor?.().catch((error: unknown) => {
        logger.warn({ err: error }, 'Could not start the orphan-ENI janitor; the next leader term tries again');
      });
    },
    onStoppedLeading: () => {
      dispatcher.setActive(false);
      stopNodeStatePolls();
    },
  });

  for (const informer of informers) informer.start();
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

  let stopping: Promise<void> | undefined;
  return {
    identity: config.lease.identity,
    synced,
    isLeader: () => elector.isLeader(),
    signalsFor: (nodeName) => dispatcher.signalsFor(nodeName),
    // Only the leader exports cluster facts, so summing over replicas never counts a pod twice.
    ipamGauges: () =>
      elector.isLeader() && isSynced
        ? ipamGauges({ pods: pods.entries(), nodeCrs: nodeCrs.entries(), nowMs: Date.now(), topNodes })
        : undefined,
    nodeStates: () => (elector.isLeader() ? nodeStates : undefined),
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
        stopNodeStatePolls();
        await Promise.all([...informers.map((informer) => informer.stop()), degradation.stop()]);
        await broadcasting;
        // No signal may leave after the lease is released: the next leader starts by signalling every node.
        await dispatcher.stop();
        await elector.stop({ release: options.releaseLease ?? true });
        await connection?.close();
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
