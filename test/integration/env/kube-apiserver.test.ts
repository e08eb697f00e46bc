import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';

import {
  ApiextensionsV1Api,
  CoreV1Api,
  KubeConfig,
  PatchStrategy,
  RbacAuthorizationV1Api,
  Watch,
  setHeaderOptions,
} from '@kubernetes/client-node';
import type { V1NodeCondition } from '@kubernetes/client-node';

import { pollUntil } from '../../../scripts/lib/poll-until.js';
import type { NodeCr } from '../../../src/ipam/index.js';
import {
  NODE_CR_RESOURCE,
  apiStatusCode,
  createCoreNode,
  createNodeCr,
  createPodOnNode,
  createTestNamespace,
  deleteNodeCr,
  deletePodNow,
  kubeTestClients,
  readNodeCr,
  uniqueName,
} from '../../support/kube-env.js';
import type { KubeTestClients } from '../../support/kube-env.js';

const NODE_CR_PATH = `/apis/${NODE_CR_RESOURCE.group}/${NODE_CR_RESOURCE.version}/${NODE_CR_RESOURCE.plural}`;

function condition(type: string, status: string): V1NodeCondition {
  return { type, status, reason: `${type}Reason`, message: `${type} is ${status}`, lastTransitionTime: new Date() };
}

describe('kube-apiserver', () => {
  let clients: KubeTestClients;

  before(() => {
    clients = kubeTestClients();
  });

  it('serves the eniflow Node CRD as Established', async () => {
    const crd = await clients.kubeConfig
      .makeApiClient(ApiextensionsV1Api)
      .readCustomResourceDefinition({ name: 'nodes.network.alibabacloud.com' });
    assert.equal(crd.spec.scope, 'Cluster');
    assert.deepEqual(
      crd.status?.conditions?.filter((c) => c.type === 'Established').map((c) => c.status),
      ['True'],
    );
  });

  it('creates a Node CR and reads it back', async () => {
    const name = uniqueName('cr-read-back');
    const spec = {
      nodeMetadata: { regionID: 'cn-hangzhou', instanceID: 'i-test0001', instanceType: 'ecs.g7.large' },
      nodeCap: { adapters: 3, ipv4PerAdapter: 10 },
      pool: { minPoolSize: 2, maxPoolSize: 5 },
    };
    const created = await createNodeCr(clients, { name, spec });
    try {
      const read = await readNodeCr(clients, name);
      assert.equal(read.apiVersion, 'network.alibabacloud.com/v1beta1');
      assert.equal(read.kind, 'Node');
      assert.deepEqual(read.spec, spec);
      assert.equal(read.metadata.uid, created.metadata.uid);
      assert.equal(read.metadata.resourceVersion, created.metadata.resourceVersion);
    } finally {
      await deleteNodeCr(clients, name);
    }
  });

  it('writes status only through the status subresource', async () => {
    const name = uniqueName('cr-status');
    const created = await createNodeCr(clients, { name, spec: { pool: { minPoolSize: 0, maxPoolSize: 1 } } });
    try {
      const status = { nextSyncOpenAPITime: '2030-01-01T00:00:00Z' };
      // The main resource ignores .status when the status subresource is enabled.
      const replacedMain = (await clients.customObjects.replaceClusterCustomObject({
        ...NODE_CR_RESOURCE,
        name,
        body: { ...created, status },
      })) as NodeCr;
      assert.equal(replacedMain.status, undefined);

      const patched = (await clients.customObjects.patchClusterCustomObjectStatus(
        { ...NODE_CR_RESOURCE, name, body: { status } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      )) as NodeCr & { metadata: { generation?: number } };
      assert.deepEqual(patched.status, status);
      assert.equal((await readNodeCr(clients, name)).status?.nextSyncOpenAPITime, '2030-01-01T00:00:00Z');
      assert.equal(patched.metadata.generation, 1, 'a status write does not bump metadata.generation');
    } finally {
      await deleteNodeCr(clients, name);
    }
  });

  it('rejects an update with a stale resourceVersion with 409 Conflict', async () => {
    const name = uniqueName('cr-conflict');
    const stale = await createNodeCr(clients, { name, spec: { pool: { minPoolSize: 0, maxPoolSize: 1 } } });
    try {
      const fresh = (await clients.customObjects.replaceClusterCustomObject({
        ...NODE_CR_RESOURCE,
        name,
        body: { ...stale, spec: { pool: { minPoolSize: 1, maxPoolSize: 2 } } },
      })) as NodeCr;
      assert.notEqual(fresh.metadata.resourceVersion, stale.metadata.resourceVersion);

      const conflict = await clients.customObjects
        .replaceClusterCustomObjectStatus({
          ...NODE_CR_RESOURCE,
          name,
          body: { ...stale, status: { nextSyncOpenAPITime: '2030-01-01T00:00:00Z' } },
        })
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      assert.equal(apiStatusCode(conflict), 409);
      const body = JSON.parse((conflict as { body: string }).body) as { reason: string };
      assert.equal(body.reason, 'Conflict');
      assert.equal((await readNodeCr(clients, name)).status, undefined, 'the conflicting write changed nothing');
    } finally {
      await deleteNodeCr(clients, name);
    }
  });

  it('watches ADDED, MODIFIED and DELETED in order and resumes from a resourceVersion', async () => {
    const name = uniqueName('cr-watch');
    const list = (await clients.customObjects.listClusterCustomObject(NODE_CR_RESOURCE)) as {
      metadata: { resourceVersion: string };
    };
    const events = watchNodeCrs(clients, { name, resourceVersion: list.metadata.resourceVersion });
    try {
      await createNodeCr(clients, { name, spec: { pool: { minPoolSize: 0, maxPoolSize: 1 } } });
      await clients.customObjects.patchClusterCustomObject(
        { ...NODE_CR_RESOURCE, name, body: { spec: { pool: { minPoolSize: 0, maxPoolSize: 3 } } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      await deleteNodeCr(clients, name);

      const seen = await events.waitForCount(3);
      assert.deepEqual(
        seen.map((event) => event.type),
        ['ADDED', 'MODIFIED', 'DELETED'],
      );
      assert.equal(seen[1]?.object.spec.pool?.maxPoolSize, 3);

      // A watch resumed from the ADDED event's resourceVersion replays only what came after it.
      const resumeFrom = seen[0]?.object.metadata.resourceVersion;
      assert.ok(resumeFrom !== undefined);
      const resumed = watchNodeCrs(clients, { name, resourceVersion: resumeFrom });
      try {
        const replayed = await resumed.waitForCount(2);
        assert.deepEqual(
          replayed.map((event) => [event.type, event.object.metadata.resourceVersion]),
          seen.slice(1).map((event) => [event.type, event.object.metadata.resourceVersion]),
        );
      } finally {
        resumed.stop();
      }
    } finally {
      events.stop();
      await deleteNodeCr(clients, name);
    }
  });

  it('keeps the other conditions when a strategic-merge patch sets one condition of a core Node', async () => {
    const name = uniqueName('core-node');
    await createCoreNode(clients, {
      name,
      providerId: 'cn-hangzhou.i-test0002',
      conditions: [condition('Ready', 'True'), condition('MemoryPressure', 'False')],
    });
    try {
      await clients.core.patchNodeStatus(
        { name, body: { status: { conditions: [condition('SufficientIP', 'True')] } } },
        setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
      );
      await clients.core.patchNodeStatus(
        { name, body: { status: { conditions: [condition('Ready', 'False')] } } },
        setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
      );
      const node = await clients.core.readNode({ name });
      const conditions = Object.fromEntries((node.status?.conditions ?? []).map((c) => [c.type, c.status]));
      assert.deepEqual(conditions, { Ready: 'False', MemoryPressure: 'False', SufficientIP: 'True' });
    } finally {
      await clients.core.deleteNode({ name });
    }
  });

  it('lists Pods bound to a node by spec.nodeName and deletes them without a kubelet', async () => {
    const namespace = await createTestNamespace(clients, 'pods');
    const nodeName = uniqueName('pod-host');
    await createCoreNode(clients, { name: nodeName });
    try {
      await createPodOnNode(clients, { namespace, name: 'bound', nodeName });
      await createPodOnNode(clients, { namespace, name: 'elsewhere', nodeName: uniqueName('other-host') });
      const onNode = await clients.core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${nodeName}` });
      assert.deepEqual(
        onNode.items.map((pod) => `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`),
        [`${namespace}/bound`],
      );

      await deletePodNow(clients, { namespace, name: 'bound' });
      const remaining = await clients.core.listNamespacedPod({ namespace });
      assert.deepEqual(
        remaining.items.map((pod) => pod.metadata?.name),
        ['elsewhere'],
      );
    } finally {
      await clients.core.deleteNode({ name: nodeName });
      await clients.core.deleteNamespace({ name: namespace });
    }
  });

  it('authenticates a ServiceAccount token and authorizes it with RBAC', async () => {
    const namespace = await createTestNamespace(clients, 'rbac');
    const serviceAccount = 'node-reader';
    const roleName = uniqueName('node-reader');
    const rbac = clients.kubeConfig.makeApiClient(RbacAuthorizationV1Api);
    try {
      await clients.core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: serviceAccount } } });
      const tokenRequest = await clients.core.createNamespacedServiceAccountToken({
        namespace,
        name: serviceAccount,
        body: { spec: { audiences: [], expirationSeconds: 600 } },
      });
      const asServiceAccount = new KubeConfig();
      asServiceAccount.loadFromOptions({
        clusters: clients.kubeConfig.clusters,
        users: [{ name: serviceAccount, token: tokenRequest.status?.token ?? '' }],
        contexts: [
          { name: serviceAccount, cluster: clients.kubeConfig.getCurrentCluster()?.name ?? '', user: serviceAccount },
        ],
        currentContext: serviceAccount,
      });
      const core = asServiceAccount.makeApiClient(CoreV1Api);

      // 403, not 401: the token authenticates, and RBAC has nothing granting it yet.
      const denied = await core.listNode().then(
        () => undefined,
        (error: unknown) => error,
      );
      assert.equal(apiStatusCode(denied), 403);

      await rbac.createClusterRole({
        body: { metadata: { name: roleName }, rules: [{ apiGroups: [''], resources: ['nodes'], verbs: ['list'] }] },
      });
      await rbac.createClusterRoleBinding({
        body: {
          metadata: { name: roleName },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: roleName },
          subjects: [{ kind: 'ServiceAccount', name: serviceAccount, namespace }],
        },
      });
      // The RBAC authorizer reads roles from an informer cache, so the grant takes effect shortly after.
      const nodes = await pollUntil(() => core.listNode(), {
        description: 'the ClusterRoleBinding to take effect',
        timeoutMs: 30_000,
      });
      assert.ok(Array.isArray(nodes.items));
    } finally {
      await rbac.deleteClusterRoleBinding({ name: roleName }).catch(() => undefined);
      await rbac.deleteClusterRole({ name: roleName }).catch(() => undefined);
      await clients.core.deleteNamespace({ name: namespace });
    }
  });
});

interface NodeCrEvent {
  readonly type: string;
  readonly object: NodeCr;
}

/** Watches one Node CR by name from a resourceVersion and collects its events. */
function watchNodeCrs(
  clients: KubeTestClients,
  { name, resourceVersion }: { name: string; resourceVersion: string },
): { waitForCount(count: number): Promise<NodeCrEvent[]>; stop(): void } {
  const events: NodeCrEvent[] = [];
  let watchError: unknown;
  const controller = new Watch(clients.kubeConfig).watch(
    NODE_CR_PATH,
    { resourceVersion, fieldSelector: `metadata.name=${name}` },
    (type, object: NodeCr) => {
      events.push({ type, object });
    },
    (error: unknown) => {
      watchError = error;
    },
  );
  return {
    waitForCount: (count) =>
      pollUntil(
        () => {
          if (watchError != null) {
            return Promise.reject(
              watchError instanceof Error ? watchError : new Error('the watch failed', { cause: watchError }),
            );
          }
          return Promise.resolve(events.length >= count ? [...events] : undefined);
        },
        { description: `${count} watch events for ${name}`, timeoutMs: 30_000, intervalMs: 50 },
      ),
    stop: () => {
      void controller.then((abort) => {
        abort.abort();
      });
    },
  };
}
