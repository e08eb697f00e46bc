/**
 * The worker's read cache against the real test kube-apiserver: `readNodeView` answers from the
 * informers with the same view a live read gives, waits for the cache to have seen what the workflow saw, and reads
 * live when it has not (a frozen cache stands for one that lags). Also the compact status write, and the pod→IP
 * latency it observes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { pino } from 'pino';

import { createKubeActivities } from '../../../src/activities/kube-activities.js';
import type { NodeView, NodeViewReply } from '../../../src/activities/kube-activities.js';
import { NodeReadCache } from '../../../src/activities/node-read-cache.js';
import type { NodeSpec } from '../../../src/ipam/index.js';
import {
  createCoreNode,
  createNodeCr,
  createPodOnNode,
  createTestNamespace,
  deleteNodeCr,
  deletePodNow,
  kubeTestClients,
  NODE_CR_RESOURCE,
  readNodeCr,
  readyCondition,
  uniqueName,
} from '../../support/kube-env.js';
import type { KubeTestClients } from '../../support/kube-env.js';
import { quietActivityEnvironment } from '../../support/test-logs.js';

const logger = pino({ level: process.env['TEST_LOG_LEVEL'] ?? 'silent' });
const run = <R>(fn: () => Promise<R>): Promise<R> => quietActivityEnvironment({ activityType: 'test' }).run(fn);

const SPEC: NodeSpec = {
  nodeMetadata: { regionID: 'cn-hangzhou', instanceID: 'i-1', instanceType: 'ecs.g7.large', zoneID: 'cn-hangzhou-h' },
  nodeCap: { adapters: 3, ipv4PerAdapter: 6, ipv6PerAdapter: 6 },
  eni: { enableIPv4: true, vSwitchOptions: ['vsw-1'], securityGroupIDs: ['sg-1'], vSwitchSelectPolicy: 'ordered' },
  pool: { minPoolSize: 0, maxPoolSize: 5 },
  flavor: [{ networkInterfaceType: 'Secondary', networkInterfaceTrafficMode: 'Standard', count: 2 }],
};

let kube: KubeTestClients;
let namespace: string;
let cache: NodeReadCache;

before(async () => {
  kube = kubeTestClients();
  namespace = await createTestNamespace(kube, 'read-cache');
  cache = new NodeReadCache({ kubeConfig: kube.kubeConfig, logger });
  cache.start();
  await cache.synced;
});
after(async () => {
  await cache.stop();
});

function full(reply: NodeViewReply): NodeView {
  assert.ok('full' in reply, 'a read without a base is in full');
  return reply.full;
}

function podKeys(view: NodeView): string[] {
  return Object.keys(view.pods);
}

describe('readNodeView with the read cache', () => {
  it('answers from the informers with the view a live read gives, once they have seen what was asked', async () => {
    const nodeName = uniqueName('cached');
    await createNodeCr(kube, { name: nodeName, spec: SPEC });
    await createCoreNode(kube, { name: nodeName, conditions: [readyCondition()] });
    const pod = await createPodOnNode(kube, { namespace, name: uniqueName('p'), nodeName });
    const version = pod.metadata?.resourceVersion ?? '';
    try {
      const live = createKubeActivities({ kubeConfig: kube.kubeConfig, logger });
      const cached = createKubeActivities({ kubeConfig: kube.kubeConfig, logger, readCache: cache });
      // `after`: the pod's creation, as the watcher's signal would carry it.
      const fromCache = await run(() => cached.readNodeView({ nodeName, after: { pods: version } }));
      const fromApiserver = await run(() => live.readNodeView({ nodeName }));
      assert.deepEqual(podKeys(full(fromCache)), [`${namespace}/${pod.metadata?.name ?? ''}`]);
      assert.equal(fromCache.digest, fromApiserver.digest, 'the same view, so the same digest');
    } finally {
      await deleteNodeCr(kube, nodeName);
    }
  });

  it('reads live when the cache has not seen what the workflow saw, and from the cache otherwise', async () => {
    const nodeName = uniqueName('lagging');
    await createNodeCr(kube, { name: nodeName, spec: SPEC });
    await createCoreNode(kube, { name: nodeName, conditions: [readyCondition()] });
    const first = await createPodOnNode(kube, { namespace, name: uniqueName('first'), nodeName });
    const frozen = new NodeReadCache({ kubeConfig: kube.kubeConfig, logger });
    frozen.start();
    try {
      await frozen.synced;
      const activities = createKubeActivities({
        kubeConfig: kube.kubeConfig,
        logger,
        readCache: frozen,
        cacheWaitMs: 300,
      });
      assert.equal((await run(() => activities.readNodeView({ nodeName }))).digest !== '', true);
      // Stopped, the cache sees nothing more: it lags behind every later change.
      await frozen.stop();
      const second = await createPodOnNode(kube, { namespace, name: uniqueName('second'), nodeName });
      const names = [first, second].map((pod) => `${namespace}/${pod.metadata?.name ?? ''}`).sort();

      const stale = full(await run(() => activities.readNodeView({ nodeName })));
      assert.deepEqual(podKeys(stale), [names.find((name) => name.includes('first'))], 'read from the cache');
      const fresh = full(
        await run(() => activities.readNodeView({ nodeName, after: { pods: second.metadata?.resourceVersion ?? '' } })),
      );
      assert.deepEqual(podKeys(fresh), names, 'read live: the cache had not seen the signalled change');
    } finally {
      await frozen.stop();
      await deleteNodeCr(kube, nodeName);
    }
  });

  it('confirms live a Node CR the cache does not hold yet, rather than report it gone', async () => {
    const nodeName = uniqueName('late-cr');
    await createCoreNode(kube, { name: nodeName, conditions: [readyCondition()] });
    const frozen = new NodeReadCache({ kubeConfig: kube.kubeConfig, logger });
    frozen.start();
    try {
      await frozen.synced;
      // Stopped, the cache never sees the CR created now (a cache seconds behind, as at 200 new nodes).
      await frozen.stop();
      await createNodeCr(kube, { name: nodeName, spec: SPEC });
      const activities = createKubeActivities({ kubeConfig: kube.kubeConfig, logger, readCache: frozen });
      const view = full(await run(() => activities.readNodeView({ nodeName })));
      assert.equal(view.cr?.validation.ok, true, 'the CR read live');
      assert.ok(view.coreNode !== undefined, 'the rest from the cache');
      // A CR that is really gone is still reported gone.
      await deleteNodeCr(kube, nodeName);
      const gone = full(await run(() => activities.readNodeView({ nodeName })));
      assert.equal(gone.cr, undefined);
    } finally {
      await frozen.stop();
      await deleteNodeCr(kube, nodeName);
    }
  });

  it('answers a read against the view the workflow holds with the changes only', async () => {
    const nodeName = uniqueName('delta');
    const cr = await createNodeCr(kube, { name: nodeName, spec: SPEC });
    const node = await createCoreNode(kube, { name: nodeName, conditions: [readyCondition()] });
    try {
      const activities = createKubeActivities({ kubeConfig: kube.kubeConfig, logger, readCache: cache });
      const seen = {
        'node-crs': cr.metadata.resourceVersion ?? '',
        'core-nodes': node.metadata?.resourceVersion ?? '',
      };
      const base = await run(() => activities.readNodeView({ nodeName, after: seen }));
      const unchanged = await run(() => activities.readNodeView({ nodeName, base: base.digest }));
      assert.deepEqual(unchanged, { digest: base.digest, base: base.digest, changes: [] });
      const pod = await createPodOnNode(kube, { namespace, name: uniqueName('new'), nodeName });
      const added = await run(() =>
        activities.readNodeView({ nodeName, base: base.digest, after: { pods: pod.metadata?.resourceVersion ?? '' } }),
      );
      assert.ok('changes' in added);
      assert.deepEqual(
        added.changes.map((change) => change.path),
        [['pods', `${namespace}/${pod.metadata?.name ?? ''}`]],
      );
    } finally {
      await deleteNodeCr(kube, nodeName);
    }
  });
});

describe('writeNodeStatusChanges', () => {
  it('applies the changed entries over the CR as it is now, and refuses changes to an ENI it no longer has', async () => {
    const nodeName = uniqueName('changes');
    await createNodeCr(kube, { name: nodeName, spec: SPEC });
    try {
      const activities = createKubeActivities({ kubeConfig: kube.kubeConfig, logger });
      const eni = {
        id: 'eni-1',
        status: 'InUse',
        ipv4: { '10.0.0.2': { ip: '10.0.0.2', primary: true, status: 'Valid' } },
      };
      await run(() => activities.writeNodeStatusChanges({ nodeName, eniChanges: [{ path: ['eni-1'], value: eni }] }));
      await run(() =>
        activities.writeNodeStatusChanges({
          nodeName,
          eniChanges: [
            {
              path: ['eni-1', 'ipv4', '10.0.0.3'],
              value: { ip: '10.0.0.3', primary: false, status: 'Valid', podID: 'ns/a', podUID: 'u-a' },
            },
          ],
          lastSyncOpenAPITime: '2026-12-03T10:00:00Z',
        }),
      );
      const cr = await readNodeCr(kube, nodeName);
      assert.deepEqual(Object.keys(cr.status?.networkInterfaces?.['eni-1']?.ipv4 ?? {}).sort(), [
        '10.0.0.2',
        '10.0.0.3',
      ]);
      assert.equal(cr.status?.lastSyncOpenAPITime, '2026-12-03T10:00:00Z');
      await assert.rejects(
        run(() =>
          activities.writeNodeStatusChanges({
            nodeName,
            eniChanges: [{ path: ['eni-gone', 'ipv4', '10.0.0.9'], value: { ip: '10.0.0.9', status: 'Valid' } }],
          }),
        ),
        (error: unknown) => error instanceof Error && 'type' in error && error.type === 'KubeStaleBase',
      );
    } finally {
      await deleteNodeCr(kube, nodeName);
    }
  });
});

describe('status writes on the CR the read cache holds', () => {
  it('write on the cached CR, and on the live one when the cached one is behind, losing no other write', async () => {
    const nodeName = uniqueName('cached-base');
    await createNodeCr(kube, { name: nodeName, spec: SPEC });
    const frozen = new NodeReadCache({ kubeConfig: kube.kubeConfig, logger });
    frozen.start();
    try {
      await frozen.synced;
      const writer = () => createKubeActivities({ kubeConfig: kube.kubeConfig, logger, readCache: frozen });
      const first = writer();
      const eni = {
        id: 'eni-1',
        status: 'InUse',
        ipv4: { '10.0.0.2': { ip: '10.0.0.2', primary: true, status: 'Valid' } },
      };
      const written = await run(() =>
        first.writeNodeStatusChanges({ nodeName, eniChanges: [{ path: ['eni-1'], value: eni }] }),
      );
      assert.deepEqual(
        { outcome: written.outcome, conflicts: written.conflicts },
        { outcome: 'written', conflicts: 0 },
      );
      // Stopped, the cache keeps the CR as it was before that write; another writer then adds an address.
      await frozen.stop();
      const raw = (await kube.customObjects.getClusterCustomObject({ ...NODE_CR_RESOURCE, name: nodeName })) as {
        status: { networkInterfaces: Record<string, { ipv4: Record<string, unknown> }> };
      };
      raw.status.networkInterfaces['eni-1']!.ipv4['10.0.0.5'] = { ip: '10.0.0.5', primary: false, status: 'Valid' };
      await kube.customObjects.replaceClusterCustomObjectStatus({ ...NODE_CR_RESOURCE, name: nodeName, body: raw });

      const address = (ip: string) => ({ ip, primary: false, status: 'Valid', podID: `ns/${ip}`, podUID: `u-${ip}` });
      const cases = [
        // The writer knows its own write is newer than the cache: it reads live.
        { who: first, change: { path: ['eni-1', 'ipv4', '10.0.0.3'], value: address('10.0.0.3') } },
        // A new writer trusts the cache, whose CR has no eni-1 for the change: it reads live instead of failing.
        { who: writer(), change: { path: ['eni-1', 'ipv4', '10.0.0.4'], value: address('10.0.0.4') } },
        // A change that fits the cached CR: the write's precondition fails (409) and it is made on the live one.
        { who: writer(), change: { path: ['eni-9'], value: { id: 'eni-9', status: 'InUse' } } },
      ];
      for (const { who, change } of cases) {
        const result = await run(() => who.writeNodeStatusChanges({ nodeName, eniChanges: [change] }));
        assert.deepEqual(
          { outcome: result.outcome, conflicts: result.conflicts },
          { outcome: 'written', conflicts: 0 },
        );
      }
      const cr = await readNodeCr(kube, nodeName);
      assert.deepEqual(Object.keys(cr.status?.networkInterfaces ?? {}).sort(), ['eni-1', 'eni-9']);
      assert.deepEqual(Object.keys(cr.status?.networkInterfaces?.['eni-1']?.ipv4 ?? {}).sort(), [
        '10.0.0.2',
        '10.0.0.3',
        '10.0.0.4',
        '10.0.0.5',
      ]);
    } finally {
      await frozen.stop();
      await deleteNodeCr(kube, nodeName);
    }
  });
});

describe('pod→IP latency observed by the status write', () => {
  it('takes creation times from the read cache, once per binding, and skips take-overs and pods it cannot date', async () => {
    const nodeName = uniqueName('ready');
    await createNodeCr(kube, { name: nodeName, spec: SPEC });
    const cachedPod = await createPodOnNode(kube, { namespace, name: uniqueName('cached'), nodeName });
    const cachedId = `${namespace}/${cachedPod.metadata?.name ?? ''}`;
    const createdMs = cachedPod.metadata?.creationTimestamp?.getTime() ?? Number.NaN;
    // A pod that already runs with an IP (what a take-over binds): bound, but never waiting for its IP.
    const running = await createPodOnNode(kube, { namespace, name: uniqueName('running'), nodeName });
    const runningId = `${namespace}/${running.metadata?.name ?? ''}`;
    const withIp = await kube.core.replaceNamespacedPodStatus({
      namespace,
      name: running.metadata?.name ?? '',
      body: {
        metadata: running.metadata ?? {},
        ...(running.spec === undefined ? {} : { spec: running.spec }),
        status: { podIP: '10.0.0.4', podIPs: [{ ip: '10.0.0.4' }] },
      },
    });
    const frozen = new NodeReadCache({ kubeConfig: kube.kubeConfig, logger });
    frozen.start();
    try {
      await frozen.synced;
      assert.ok(await frozen.waitFor({ pods: withIp.metadata?.resourceVersion ?? '' }, 5_000));
      assert.deepEqual(frozen.podCreation(nodeName, cachedId), { createdMs, hasIp: false });
      assert.equal(frozen.podCreation(nodeName, runningId)?.hasIp, true);
      assert.equal(frozen.podCreation(nodeName, cachedId, 'another-uid'), undefined, 'an older pod of the name');
      // Stopped, and the pod deleted: only the cache can still date it (a live look-up would not find it).
      await frozen.stop();
      await deletePodNow(kube, { namespace, name: cachedPod.metadata?.name ?? '' });
      const observed: { podId: string; seconds: number }[] = [];
      const activities = createKubeActivities({
        kubeConfig: kube.kubeConfig,
        logger,
        readCache: frozen,
        podIpReady: (pod) => observed.push({ podId: pod.podId, seconds: pod.seconds }),
      });
      const entry = (ip: string, podID?: string) => ({
        ip,
        primary: false,
        status: 'Valid',
        ...(podID === undefined ? {} : { podID, podUID: podID === cachedId ? cachedPod.metadata?.uid : 'u-x' }),
      });
      const eni = (bindings: Record<string, string | undefined>) => ({
        id: 'eni-1',
        status: 'InUse',
        ipv4: Object.fromEntries(Object.entries(bindings).map(([ip, podID]) => [ip, entry(ip, podID)])),
      });
      const write = (bindings: Record<string, string | undefined>) =>
        run(() =>
          activities.writeNodeStatusChanges({ nodeName, eniChanges: [{ path: ['eni-1'], value: eni(bindings) }] }),
        );

      await write({ '10.0.0.2': undefined });
      assert.equal(observed.length, 0, 'an idle IP readies no pod');
      const beforeMs = Date.now();
      await write({ '10.0.0.2': cachedId, '10.0.0.3': `${namespace}/never-created`, '10.0.0.4': runningId });
      assert.deepEqual(
        observed.map((pod) => pod.podId),
        [cachedId],
        'the pod the cache dates is observed; one nobody can date and one already running with its IP are not',
      );
      const seconds = observed[0]?.seconds ?? -1;
      assert.ok(
        seconds >= (beforeMs - createdMs) / 1000 && seconds <= (Date.now() - createdMs) / 1000 + 1,
        String(seconds),
      );
      // The same bindings written again (a retried write): nothing new.
      await write({ '10.0.0.2': cachedId, '10.0.0.3': `${namespace}/never-created`, '10.0.0.4': runningId });
      assert.equal(observed.length, 1);
      const cr = await readNodeCr(kube, nodeName);
      assert.equal(cr.status?.networkInterfaces?.['eni-1']?.ipv4?.['10.0.0.3']?.podID, `${namespace}/never-created`);
    } finally {
      await frozen.stop();
      await deleteNodeCr(kube, nodeName);
    }
  });
});
