/**
 * The watcher against the real kube-apiserver and Temporal dev server. No worker polls the test's task queue, so
 * every signal the watcher sends stays in the node workflow's history, where the tests count and read them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import {
  ApiextensionsV1Api,
  CoordinationV1Api,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import type { V1CustomResourceDefinition } from '@kubernetes/client-node';

import { pollUntil } from '../../../scripts/lib/poll-until.js';
import { TEST_ENV_VARS, requireTestEnvVar } from '../../../scripts/lib/test-env-vars.js';
import { runWatcher } from '../../../src/watcher/run-watcher.js';
import type { WatcherConfig, WatcherHandle } from '../../../src/watcher/run-watcher.js';
import { DEFAULT_NODE_SETTINGS } from '../../../src/workflows/messages.js';
import { NODE_WORKFLOW_TYPE, nodeWorkflowId } from '../../../src/shared/workflow-ids.js';
import {
  NODE_CR_RESOURCE,
  createCoreNode,
  createNodeCr,
  createPodOnNode,
  createTestNamespace,
  deleteNodeCr,
  deletePodNow,
  kubeTestClients,
  TEST_CLUSTER_ID,
  uniqueName,
} from '../../support/kube-env.js';
import type { KubeTestClients } from '../../support/kube-env.js';
import { SEARCH_ATTRIBUTE_KEYS, connectTemporalTestEnv, uniqueTaskQueue } from '../../support/temporal-env.js';
import type { TemporalTestEnv } from '../../support/temporal-env.js';
import { testLogger } from '../../support/test-logs.js';
import {
  podChangeTotals,
  reasonWords,
  reconcileSignalsOf,
  terminateWorkflowsOn,
  testWatcherConfig,
  waitForSignals,
} from './watcher-harness.js';
import { startTcpProxy } from './tcp-proxy.js';
import type { TcpProxy } from './tcp-proxy.js';

let temporal: TemporalTestEnv;
let kube: KubeTestClients;
let namespace: string;
const taskQueues: string[] = [];
const watchers: WatcherHandle[] = [];
const coreNodes: string[] = [];
const nodeCrs: string[] = [];

before(async () => {
  temporal = await connectTemporalTestEnv();
  kube = kubeTestClients();
  namespace = await createTestNamespace(kube, 'watcher');
});

after(async () => {
  await Promise.allSettled(watchers.map((watcher) => watcher.stop()));
  await Promise.allSettled(nodeCrs.map((name) => deleteNodeCr(kube, name)));
  await Promise.allSettled(coreNodes.map((name) => kube.core.deleteNode({ name })));
  for (const taskQueue of taskQueues) await terminateWorkflowsOn(temporal.client, taskQueue);
  await temporal.close();
});

async function startWatcher(input: {
  taskQueue: string;
  leaseName: string;
  identity: string;
  kubeConfig?: KubeConfig;
  lease?: Partial<WatcherConfig['lease']>;
  watch?: Partial<WatcherConfig['watch']>;
  startSweepNodesPerSecond?: number;
}): Promise<WatcherHandle> {
  const config = testWatcherConfig({
    ...input,
    temporalAddress: temporal.address,
    temporalNamespace: temporal.namespace,
    leaseNamespace: namespace,
  });
  config.lease = { ...config.lease, ...input.lease };
  config.watch = { ...config.watch, ...input.watch };
  if (input.startSweepNodesPerSecond !== undefined) config.startSweepNodesPerSecond = input.startSweepNodesPerSecond;
  const watcher = await runWatcher(config, {
    kubeConfig: input.kubeConfig ?? kube.kubeConfig,
    temporalClient: temporal.client,
    logger: testLogger('watcher', config.logLevel),
  });
  watchers.push(watcher);
  return watcher;
}

function newTaskQueue(name: string): string {
  const taskQueue = uniqueTaskQueue(name);
  taskQueues.push(taskQueue);
  return taskQueue;
}

async function newCoreNode(prefix: string): Promise<string> {
  const name = uniqueName(prefix);
  coreNodes.push(name);
  await createCoreNode(kube, {
    name,
    labels: { 'eniflow.test/owner': 'watcher' },
    conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'test' }],
  });
  return name;
}

/** The ECS instance the watcher tests' Node CRs name. */
const WATCHER_INSTANCE = 'i-watchertest0001';

async function newNodeCr(name: string): Promise<void> {
  nodeCrs.push(name);
  await createNodeCr(kube, { name, spec: { nodeMetadata: { zoneID: 'cn-hangzhou-a', instanceID: WATCHER_INSTANCE } } });
}

function kubeServer(): string {
  return requireTestEnvVar(TEST_ENV_VARS.kubeServer);
}

/** A KubeConfig for the test apiserver that goes through the proxy (the serving certificate covers 127.0.0.1). */
function kubeConfigThrough(proxy: TcpProxy): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [
      {
        name: 'through-proxy',
        server: `https://127.0.0.1:${proxy.port}`,
        caFile: requireTestEnvVar(TEST_ENV_VARS.kubeCaFile),
        skipTLSVerify: false,
      },
    ],
    users: [{ name: 'admin', token: requireTestEnvVar(TEST_ENV_VARS.kubeToken) }],
    contexts: [{ name: 'through-proxy', cluster: 'through-proxy', user: 'admin' }],
    currentContext: 'through-proxy',
  });
  return kubeConfig;
}

async function waitForLeader(watcher: WatcherHandle): Promise<void> {
  await pollUntil(() => Promise.resolve(watcher.isLeader() ? true : undefined), {
    description: `${watcher.identity} to lead`,
    timeoutMs: 20_000,
  });
}

describe('signals', () => {
  let watcher: WatcherHandle;
  let taskQueue: string;
  let busyNode: string;
  let quietNode: string;

  before(async () => {
    taskQueue = newTaskQueue('watcher-signals');
    busyNode = await newCoreNode('busy');
    await newNodeCr(busyNode);
    quietNode = await newCoreNode('quiet');
    watcher = await startWatcher({ taskQueue, leaseName: uniqueName('lease'), identity: 'signals-0' });
    await watcher.synced;
    await waitForLeader(watcher);
    for (const node of [busyNode, quietNode]) {
      await waitForSignals({
        client: temporal.client,
        nodeName: node,
        description: `the start signal of ${node}`,
        accept: (signals) => signals.length >= 1,
      });
    }
  });

  it('signals every existing node once at start, with signalWithStart of the node workflow', async () => {
    const [busyStart] = await waitForSignals({
      client: temporal.client,
      nodeName: busyNode,
      description: 'the start signal of the busy node',
      accept: (signals) => signals.length >= 1,
    });
    // Every signal carries the cluster's degradation setting (none here).
    const { degradation, ...start } = busyStart ?? { reason: '' };
    assert.deepEqual(start, { reason: 'watcher-start' });
    assert.equal(degradation?.level, 'off');
    const quiet = await waitForSignals({
      client: temporal.client,
      nodeName: quietNode,
      description: 'the start signal of the quiet node',
      accept: (signals) => signals.length >= 1,
    });
    assert.deepEqual(
      quiet.map((signal) => signal.reason),
      ['watcher-start'],
    );

    const handle = temporal.client.workflow.getHandle(nodeWorkflowId(busyNode));
    const description = await handle.describe();
    assert.equal(description.type, NODE_WORKFLOW_TYPE);
    assert.equal(description.taskQueue, taskQueue);
    assert.deepEqual(description.typedSearchAttributes.get(SEARCH_ATTRIBUTE_KEYS.nodeName), busyNode);
    // No worker serves this task queue: what the Web UI shows before the first pass.
    assert.equal(description.typedSearchAttributes.get(SEARCH_ATTRIBUTE_KEYS.ipamState), 'Starting');
    assert.equal(await description.staticSummary(), `eniflow IPAM of node ${busyNode} (instance ${WATCHER_INSTANCE})`);
    const quietDescription = await temporal.client.workflow.getHandle(nodeWorkflowId(quietNode)).describe();
    assert.equal(
      await quietDescription.staticSummary(),
      `eniflow IPAM of node ${quietNode}`,
      'no Node CR, no instance',
    );
    const history = await handle.fetchHistory();
    const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
    const input = started?.input?.payloads?.[0]?.data;
    assert.ok(input != null);
    // The settings are recorded input (docs/decisions.md): the full defaults, never left to the workflow's constants.
    // So is the cluster's degradation setting (none here; its revision depends on when the ConfigMap was read).
    const { degradation: startDegradation, ...startInput } = JSON.parse(Buffer.from(input).toString('utf8')) as {
      degradation?: { level: string };
    };
    assert.equal(startDegradation?.level, 'off');
    assert.deepEqual(startInput, {
      nodeName: busyNode,
      settings: { ...DEFAULT_NODE_SETTINGS, clusterId: TEST_CLUSTER_ID },
    });
  });

  it('turns a burst of 100 pods on one node into at most 10 signals that count every pod', async (t) => {
    const before = (await reconcileSignalsOf(temporal.client, busyNode)).length;
    const names = Array.from({ length: 100 }, (_unused, index) => `burst-${index}`);
    for (let index = 0; index < names.length; index += 20) {
      await Promise.all(
        names.slice(index, index + 20).map((name) => createPodOnNode(kube, { namespace, name, nodeName: busyNode })),
      );
    }
    const signals = await waitForSignals({
      client: temporal.client,
      nodeName: busyNode,
      description: 'signals summarising 100 added pods',
      accept: (all) => podChangeTotals(all.slice(before)).added >= 100,
      timeoutMs: 60_000,
    });
    const burst = signals.slice(before);
    t.diagnostic(`${burst.length} signal(s) for 100 pods`);
    assert.ok(burst.length <= 10, `${burst.length} signals for 100 pods`);
    assert.deepEqual(podChangeTotals(burst), { added: 100, updated: 0, deleted: 0 });
    assert.deepEqual(reasonWords(burst), new Set(['pod-added']));
    assert.ok(watcher.metrics().signalsSent >= 2 + burst.length);
    // The quiet node saw none of it.
    assert.equal((await reconcileSignalsOf(temporal.client, quietNode)).length, 1);
  });

  it('signals pod phase and IP changes and deletions, never label changes', async () => {
    const start = (await reconcileSignalsOf(temporal.client, busyNode)).length;
    // A label change, then a phase change of the same pod: events of one pod arrive in order, so had the label
    // change been signalled it would show up before or merged with the phase change.
    await kube.core.patchNamespacedPod(
      { namespace, name: 'burst-0', body: { metadata: { labels: { tier: 'changed' } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await kube.core.patchNamespacedPodStatus(
      {
        namespace,
        name: 'burst-0',
        body: { status: { phase: 'Running', podIP: '10.1.0.5', podIPs: [{ ip: '10.1.0.5' }] } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const updated = await waitForSignals({
      client: temporal.client,
      nodeName: busyNode,
      description: 'a pod-updated signal',
      accept: (all) => podChangeTotals(all.slice(start)).updated >= 1,
    });
    assert.deepEqual(podChangeTotals(updated.slice(start)), { added: 0, updated: 1, deleted: 0 });

    const afterUpdate = updated.length;
    await kube.core.patchNamespacedPod(
      { namespace, name: 'burst-1', body: { metadata: { labels: { tier: 'changed' } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await deletePodNow(kube, { namespace, name: 'burst-1' });
    const deleted = await waitForSignals({
      client: temporal.client,
      nodeName: busyNode,
      description: 'a pod-deleted signal',
      accept: (all) => podChangeTotals(all.slice(afterUpdate)).deleted >= 1,
    });
    assert.deepEqual(podChangeTotals(deleted.slice(afterUpdate)), { added: 0, updated: 0, deleted: 1 });
    assert.deepEqual(reasonWords(deleted.slice(afterUpdate)), new Set(['pod-deleted']));
  });

  it('signals Node CR spec changes and deletion, never status writes', async () => {
    const start = (await reconcileSignalsOf(temporal.client, busyNode)).length;
    await kube.customObjects.patchClusterCustomObjectStatus(
      { ...NODE_CR_RESOURCE, name: busyNode, body: { status: { nextSyncOpenAPITime: '2026-12-02T00:00:00Z' } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await kube.customObjects.patchClusterCustomObject(
      { ...NODE_CR_RESOURCE, name: busyNode, body: { spec: { nodeMetadata: { zoneID: 'cn-hangzhou-b' } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const changed = await waitForSignals({
      client: temporal.client,
      nodeName: busyNode,
      description: 'a node-cr-changed signal',
      accept: (all) => reasonWords(all.slice(start)).has('node-cr-changed'),
    });
    const afterChange = changed.length;
    // A status write, then deletion: a signalled status write would add node-cr-changed.
    await kube.customObjects.patchClusterCustomObjectStatus(
      { ...NODE_CR_RESOURCE, name: busyNode, body: { status: { nextSyncOpenAPITime: '2026-12-03T00:00:00Z' } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await deleteNodeCr(kube, busyNode);
    const deleted = await waitForSignals({
      client: temporal.client,
      nodeName: busyNode,
      description: 'a node-cr-deleted signal',
      accept: (all) => reasonWords(all.slice(afterChange)).has('node-cr-deleted'),
    });
    assert.deepEqual(reasonWords(deleted.slice(afterChange)), new Set(['node-cr-deleted']));
  });

  it('signals core Node Ready and label changes and deletion, not other conditions', async () => {
    const start = (await reconcileSignalsOf(temporal.client, quietNode)).length;
    await kube.core.patchNodeStatus(
      { name: quietNode, body: { status: { conditions: [{ type: 'Ready', status: 'False', reason: 'Test' }] } } },
      setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
    );
    const notReady = await waitForSignals({
      client: temporal.client,
      nodeName: quietNode,
      description: 'a core-node-changed signal for Ready=False',
      accept: (all) => all.length > start,
    });
    assert.deepEqual(reasonWords(notReady.slice(start)), new Set(['core-node-changed']));
    await kube.core.patchNode(
      { name: quietNode, body: { metadata: { labels: { 'eniflow.test/pool': 'b' } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const relabelled = await waitForSignals({
      client: temporal.client,
      nodeName: quietNode,
      description: 'a core-node-changed signal for a label',
      accept: (all) => all.length > notReady.length,
    });
    assert.deepEqual(reasonWords(relabelled.slice(notReady.length)), new Set(['core-node-changed']));
    await kube.core.patchNodeStatus(
      {
        name: quietNode,
        body: { status: { conditions: [{ type: 'MemoryPressure', status: 'True', reason: 'Test' }] } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
    );
    await kube.core.deleteNode({ name: quietNode });
    const deleted = await waitForSignals({
      client: temporal.client,
      nodeName: quietNode,
      description: 'a core-node-deleted signal',
      accept: (all) => reasonWords(all.slice(relabelled.length)).has('core-node-deleted'),
    });
    assert.deepEqual(reasonWords(deleted.slice(relabelled.length)), new Set(['core-node-deleted']));
  });
});

describe('inactivity timeout', () => {
  it('ends a watch that stays silent and resumes it without losing changes', async () => {
    const taskQueue = newTaskQueue('watcher-watchdog');
    const node = await newCoreNode('watchdog');
    // Bookmarks come about once a minute, so a 1 s inactivity timeout ends every quiet watch.
    const watcher = await startWatcher({
      taskQueue,
      leaseName: uniqueName('lease'),
      identity: 'watchdog-0',
      watch: { idleTimeoutMs: 1_000 },
    });
    await waitForLeader(watcher);
    await waitForSignals({
      client: temporal.client,
      nodeName: node,
      description: 'the start signal',
      accept: (signals) => signals.length >= 1,
    });
    await pollUntil(() => Promise.resolve(watcher.metrics().informers.pods.idleTimeouts >= 2 ? true : undefined), {
      description: 'the pod watch to be ended twice by the inactivity timeout',
      timeoutMs: 20_000,
    });
    const pods = watcher.metrics().informers.pods;
    assert.equal(pods.lists, 1, 'a timed-out watch resumes from the resourceVersion, it does not relist');
    assert.equal(pods.errors, 0);
    await createPodOnNode(kube, { namespace, name: uniqueName('pod'), nodeName: node });
    await waitForSignals({
      client: temporal.client,
      nodeName: node,
      description: 'the pod-added signal after the timed-out watches',
      accept: (signals) => reasonWords(signals).has('pod-added'),
    });
  });
});

describe('hung list', () => {
  let proxy: TcpProxy | undefined;

  after(async () => {
    await proxy?.close();
  });

  it('abandons a list that gets no answer at its deadline, and the informer recovers', async () => {
    const taskQueue = newTaskQueue('watcher-hung-list');
    const node = await newCoreNode('hung-list');
    proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(kubeServer()).port) });
    // The apiserver accepts connections and never answers (a failover): every first list hangs.
    proxy.hang();
    const watcher = await startWatcher({
      taskQueue,
      leaseName: uniqueName('lease'),
      identity: 'hung-list-0',
      kubeConfig: kubeConfigThrough(proxy),
      watch: { listTimeoutMs: 1_000 },
    });
    await pollUntil(() => Promise.resolve(watcher.metrics().informers.coreNodes.listTimeouts >= 1 ? true : undefined), {
      description: 'the core Node list to be abandoned at its deadline',
      timeoutMs: 10_000,
    });
    assert.equal(watcher.metrics().informers.coreNodes.lists, 0);
    proxy.restore();
    await watcher.synced;
    const coreNodes = watcher.metrics().informers.coreNodes;
    assert.ok(coreNodes.restarts >= 1, 'the informer was restarted after the abandoned list');
    assert.equal(coreNodes.lists, 1);
    await waitForLeader(watcher);
    await waitForSignals({
      client: temporal.client,
      nodeName: node,
      description: 'the start signal once the apiserver answers again',
      accept: (signals) => signals.length >= 1,
    });
    await createPodOnNode(kube, { namespace, name: uniqueName('pod'), nodeName: node });
    await waitForSignals({
      client: temporal.client,
      nodeName: node,
      description: 'a pod-added signal: the informers watch again',
      accept: (signals) => reasonWords(signals).has('pod-added'),
    });
  });
});

describe('start sweep', () => {
  it('a new leader does not signal every node at once; a node with a change gets its signal at once', async () => {
    // Watchers of earlier tests would signal the new nodes too (core-node-added).
    await Promise.all(watchers.map((other) => other.stop()));
    const taskQueue = newTaskQueue('watcher-sweep');
    const ours = [await newCoreNode('sweep'), await newCoreNode('sweep')];
    // One node at once, the next after 1000 s: within this test the sweep hands on exactly one node.
    const watcher = await startWatcher({
      taskQueue,
      leaseName: uniqueName('lease'),
      identity: 'sweep-0',
      startSweepNodesPerSecond: 0.001,
    });
    await watcher.synced;
    await waitForLeader(watcher);
    await pollUntil(() => Promise.resolve(watcher.metrics().signalsSent >= 1 ? true : undefined), {
      description: 'the first start signal',
      timeoutMs: 20_000,
    });
    const pendingBefore = watcher.metrics().sweepPending;
    assert.ok(pendingBefore >= 1, 'the sweep still owes the other nodes their signal');
    const unsignalled: string[] = [];
    for (const node of ours) if ((await reconcileSignalsOf(temporal.client, node)).length === 0) unsignalled.push(node);
    const [target] = unsignalled;
    assert.ok(target !== undefined, 'at most one node was handed on');

    await createPodOnNode(kube, { namespace, name: uniqueName('pod'), nodeName: target });
    const signals = await waitForSignals({
      client: temporal.client,
      nodeName: target,
      description: 'the signal of the node with a new pod',
      accept: (all) => all.length >= 1,
    });
    // `seen` (the pods informer's resourceVersion) lets the worker's read wait for its cache; its value is the apiserver's.
    assert.deepEqual(
      signals.map(({ seen, degradation, ...rest }) => {
        assert.match(seen?.['pods'] ?? '', /^\d+$/);
        assert.equal(degradation?.level, 'off');
        return rest;
      }),
      [{ reason: 'watcher-start,pod-added', podChanges: { added: 1, updated: 0, deleted: 0 } }],
    );
    assert.ok(watcher.metrics().sweepPending <= pendingBefore - 1, 'its own signal took it out of the sweep');
  });
});

describe('leader election', () => {
  it('only the leader signals; after a crash another replica takes the lease and keeps signalling', async () => {
    const taskQueue = newTaskQueue('watcher-failover');
    const leaseName = uniqueName('lease');
    const node = await newCoreNode('failover');
    const coordination = kube.kubeConfig.makeApiClient(CoordinationV1Api);

    const first = await startWatcher({ taskQueue, leaseName, identity: 'replica-a' });
    await waitForLeader(first);
    await waitForSignals({
      client: temporal.client,
      nodeName: node,
      description: 'the first leader’s start signal',
      accept: (signals) => signals.length >= 1,
    });
    const second = await startWatcher({ taskQueue, leaseName, identity: 'replica-b' });
    await second.synced;
    const pod = uniqueName('pod');
    await createPodOnNode(kube, { namespace, name: pod, nodeName: node });
    await waitForSignals({
      client: temporal.client,
      nodeName: node,
      description: 'the leader’s pod-added signal',
      accept: (signals) => reasonWords(signals).has('pod-added'),
    });
    assert.equal(second.isLeader(), false);
    assert.equal(second.metrics().signalsSent, 0, 'a standby replica never signals');

    // A crash: no lease release, so the standby waits out the lease duration.
    await first.stop({ releaseLease: false });
    assert.equal(
      (await coordination.readNamespacedLease({ name: leaseName, namespace })).spec?.holderIdentity,
      'replica-a',
    );
    await waitForLeader(second);
    const lease = await coordination.readNamespacedLease({ name: leaseName, namespace });
    assert.equal(lease.spec?.holderIdentity, 'replica-b');
    assert.equal(lease.spec?.leaseTransitions, 1);

    const countBefore = (await reconcileSignalsOf(temporal.client, node)).length;
    await deletePodNow(kube, { namespace, name: pod });
    const signals = await waitForSignals({
      client: temporal.client,
      nodeName: node,
      description: 'the new leader’s signals',
      accept: (all) => podChangeTotals(all.slice(countBefore)).deleted >= 1,
    });
    assert.ok(reasonWords(signals.slice(countBefore)).has('pod-deleted'));
    assert.ok(second.signalsFor(node) >= 1);

    // A graceful stop releases the lease, so the next replica needs no lease duration to take over.
    await second.stop();
    assert.equal((await coordination.readNamespacedLease({ name: leaseName, namespace })).spec?.holderIdentity, '');
    const third = await startWatcher({ taskQueue, leaseName, identity: 'replica-c' });
    await waitForLeader(third);
    assert.equal(third.metrics().leader.acquired, 1);
  });
});

describe('410 Gone', () => {
  const crdName = `${NODE_CR_RESOURCE.plural}.${NODE_CR_RESOURCE.group}`;
  let original: V1CustomResourceDefinition | undefined;
  let proxy: TcpProxy | undefined;

  after(async () => {
    await proxy?.close();
    if (original === undefined) return;
    // Put the printer columns back as they were (a spec change again: harmless for later tests).
    const api = kube.kubeConfig.makeApiClient(ApiextensionsV1Api);
    const current = await api.readCustomResourceDefinition({ name: crdName });
    for (const [index, version] of current.spec.versions.entries()) {
      const before = original.spec.versions[index];
      if (before?.additionalPrinterColumns === undefined) delete version.additionalPrinterColumns;
      else version.additionalPrinterColumns = before.additionalPrinterColumns;
    }
    await api.replaceCustomResourceDefinition({ name: crdName, body: current });
  });

  it('relists after the apiserver answers 410 and reports what changed while the watch was down', async () => {
    const taskQueue = newTaskQueue('watcher-410');
    const kept = uniqueName('kept');
    const removed = uniqueName('removed');
    await newNodeCr(kept);
    await newNodeCr(removed);
    proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(kubeServer()).port) });
    const watcher = await startWatcher({
      taskQueue,
      leaseName: uniqueName('lease'),
      identity: 'gone-0',
      kubeConfig: kubeConfigThrough(proxy),
      // The network cut must not cost the lease: this test is about the informers.
      lease: { durationMs: 60_000, renewDeadlineMs: 45_000, retryPeriodMs: 500 },
    });
    await waitForLeader(watcher);
    for (const node of [kept, removed]) {
      await waitForSignals({
        client: temporal.client,
        nodeName: node,
        description: `the start signal of ${node}`,
        accept: (signals) => signals.length >= 1,
      });
    }
    assert.equal(watcher.metrics().informers.nodeCrs.expired, 0);
    assert.equal(watcher.metrics().informers.nodeCrs.lists, 1);

    // While the watcher is cut off: a CRD spec change makes the apiserver replace the CR storage and its watch
    // cache, so a watch resumed from the watcher's (now older) resourceVersion is answered "410 Gone: too old
    // resource version"; and two changes happen that the watcher can only learn from the relist.
    proxy.cut();
    const api = kube.kubeConfig.makeApiClient(ApiextensionsV1Api);
    const crd = await api.readCustomResourceDefinition({ name: crdName });
    original = structuredClone(crd);
    for (const version of crd.spec.versions) {
      version.additionalPrinterColumns = [
        ...(version.additionalPrinterColumns ?? []).filter((column) => column.name !== 'WatcherTestZone'),
        { name: 'WatcherTestZone', type: 'string', jsonPath: '.spec.nodeMetadata.zoneID' },
      ];
    }
    await api.replaceCustomResourceDefinition({ name: crdName, body: crd });
    await deleteNodeCr(kube, removed);
    await kube.customObjects.patchClusterCustomObject(
      { ...NODE_CR_RESOURCE, name: kept, body: { spec: { nodeMetadata: { zoneID: 'cn-hangzhou-k' } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    proxy.restore();

    const counters = await pollUntil(
      () => {
        const nodeCrs = watcher.metrics().informers.nodeCrs;
        return Promise.resolve(nodeCrs.expired >= 1 && nodeCrs.lists >= 2 ? nodeCrs : undefined);
      },
      { description: 'the Node CR informer to see a 410 and relist', timeoutMs: 45_000 },
    );
    assert.ok(counters.restarts >= 1, 'the cut connection stopped the informer, and it was restarted');
    assert.equal(watcher.metrics().leader.lost, 0);
    await waitForSignals({
      client: temporal.client,
      nodeName: removed,
      description: 'the deletion signal',
      accept: (signals) => reasonWords(signals).has('node-cr-deleted'),
    });
    await waitForSignals({
      client: temporal.client,
      nodeName: kept,
      description: 'the spec change signal',
      accept: (signals) => reasonWords(signals).has('node-cr-changed'),
    });

    // The informer still follows changes after the relist.
    const before = (await reconcileSignalsOf(temporal.client, kept)).length;
    await kube.customObjects.patchClusterCustomObject(
      { ...NODE_CR_RESOURCE, name: kept, body: { spec: { nodeMetadata: { zoneID: 'cn-hangzhou-z' } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const later = await waitForSignals({
      client: temporal.client,
      nodeName: kept,
      description: 'a signal after the relist',
      accept: (signals) => signals.length > before,
    });
    assert.deepEqual(reasonWords(later.slice(before)), new Set(['node-cr-changed']));
  });
});
