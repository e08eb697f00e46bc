/**
 * The RBAC of deploy/ on the real test kube-apiserver (RBAC authorization on): the rendered roles and bindings
 * are applied, each component's ServiceAccount gets a token from the TokenRequest API, and every call the
 * component makes succeeds with it (the worker's through its real activity functions), while calls outside its
 * grants are refused with 403.
 *
 * Cluster-scoped names get a unique suffix and eniflow-system becomes a unique namespace, so runs against one
 * `npm run testenv` do not collide; the rules themselves are applied exactly as rendered.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';

import {
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  PatchStrategy,
  RbacAuthorizationV1Api,
  Watch,
  setHeaderOptions,
} from '@kubernetes/client-node';
import type {
  KubernetesObject,
  V1ClusterRole,
  V1ClusterRoleBinding,
  V1Role,
  V1RoleBinding,
  V1ServiceAccount,
} from '@kubernetes/client-node';
import { pino } from 'pino';

import { pollUntil } from '../../../scripts/lib/poll-until.js';
import { createKubeActivities } from '../../../src/activities/kube-activities.js';
import type { KubeActivities } from '../../../src/activities/kube-activities.js';
import { NodeReadCache } from '../../../src/activities/node-read-cache.js';
import { NODE_CR_FINALIZER } from '../../../src/ipam/index.js';
import type { NodeSpec } from '../../../src/ipam/index.js';
import {
  NODE_CR_RESOURCE,
  apiStatusCode,
  createCoreNode,
  createNodeCr,
  createPodOnNode,
  deleteNodeCr,
  kubeTestClients,
  readNodeCr,
  uniqueName,
} from '../../support/kube-env.js';
import type { KubeTestClients } from '../../support/kube-env.js';
import { renderDeployBase } from './deploy-tools.js';
import { quietActivityEnvironment } from '../../support/test-logs.js';

const RENDERED_NAMESPACE = 'eniflow-system';
const NODE_CR_PATH = `/apis/${NODE_CR_RESOURCE.group}/${NODE_CR_RESOURCE.version}/${NODE_CR_RESOURCE.plural}`;
const SPEC: NodeSpec = {
  nodeMetadata: {
    regionID: 'cn-hangzhou',
    instanceID: 'i-rbac',
    instanceType: 'ecs.g7.large',
    zoneID: 'cn-hangzhou-h',
  },
  nodeCap: { adapters: 3, ipv4PerAdapter: 6 },
  eni: { enableIPv4: true, vSwitchOptions: ['vsw-1'], securityGroupIDs: ['sg-1'], vSwitchSelectPolicy: 'ordered' },
  pool: { minPoolSize: 0, maxPoolSize: 5 },
};

interface Identity {
  readonly kubeConfig: KubeConfig;
  readonly core: CoreV1Api;
  readonly customObjects: CustomObjectsApi;
  readonly coordination: CoordinationV1Api;
}

/** Resolves to the HTTP status of a failed call, or 'ok'. */
async function outcome(call: Promise<unknown>): Promise<number | 'ok'> {
  try {
    await call;
    return 'ok';
  } catch (error) {
    const code = apiStatusCode(error);
    if (code === undefined) throw error;
    return code;
  }
}

/** The rendered RBAC objects with cluster-scoped names suffixed and eniflow-system replaced by `namespace`. */
function localize<T extends KubernetesObject>(input: { object: T; suffix: string; namespace: string }): T {
  const text = JSON.stringify(input.object).replaceAll(`"${RENDERED_NAMESPACE}"`, `"${input.namespace}"`);
  const copy = JSON.parse(text) as T & { roleRef?: { kind: string; name: string } };
  const clusterScoped = copy.kind === 'ClusterRole' || copy.kind === 'ClusterRoleBinding';
  if (clusterScoped && copy.metadata?.name !== undefined) copy.metadata.name = `${copy.metadata.name}-${input.suffix}`;
  if (copy.roleRef?.kind === 'ClusterRole') copy.roleRef.name = `${copy.roleRef.name}-${input.suffix}`;
  return copy;
}

async function identityFor(input: { admin: KubeTestClients; namespace: string; name: string }): Promise<Identity> {
  const request = await input.admin.core.createNamespacedServiceAccountToken({
    namespace: input.namespace,
    name: input.name,
    body: { spec: { audiences: [], expirationSeconds: 600 } },
  });
  const token = request.status?.token;
  assert.ok(token, 'the TokenRequest API returned a token');
  const kubeConfig = new KubeConfig();
  const cluster = input.admin.kubeConfig.getCurrentCluster();
  assert.ok(cluster);
  kubeConfig.loadFromOptions({
    clusters: [cluster],
    users: [{ name: input.name, token }],
    contexts: [{ name: input.name, cluster: cluster.name, user: input.name }],
    currentContext: input.name,
  });
  return {
    kubeConfig,
    core: kubeConfig.makeApiClient(CoreV1Api),
    customObjects: kubeConfig.makeApiClient(CustomObjectsApi),
    coordination: kubeConfig.makeApiClient(CoordinationV1Api),
  };
}

/** Opens a watch; returns its HTTP status if refused, else waits for the first event `trigger` causes. */
async function watchFor(input: {
  identity: Identity;
  path: string;
  query: Record<string, string>;
  trigger?: () => Promise<unknown>;
}): Promise<{ refused: number } | { event: string; name: string }> {
  const events: { type: string; name: string }[] = [];
  let failure: unknown;
  const controller = await new Watch(input.identity.kubeConfig).watch(
    input.path,
    input.query,
    (type: string, object: KubernetesObject) => {
      events.push({ type, name: object.metadata?.name ?? '' });
    },
    (error: unknown) => {
      failure ??= error;
    },
  );
  try {
    if (typeof failure === 'object' && failure !== null && 'statusCode' in failure) {
      return { refused: Number(failure.statusCode) };
    }
    await input.trigger?.();
    const first = await pollUntil(
      () => {
        if (failure != null) return Promise.reject(new Error('the watch ended', { cause: failure }));
        return Promise.resolve(events[0]);
      },
      { description: `a watch event on ${input.path}`, timeoutMs: 15_000, intervalMs: 50 },
    );
    return { event: first.type, name: first.name };
  } finally {
    controller.abort();
  }
}

describe('RBAC of deploy/ on a real apiserver', () => {
  const suffix = randomBytes(4).toString('hex');
  const logger = pino({ level: 'silent' });
  const run = <R>(fn: () => Promise<R>): Promise<R> => quietActivityEnvironment({ activityType: 'rbac' }).run(fn);
  let admin: KubeTestClients;
  let rbac: RbacAuthorizationV1Api;
  let namespace: string;
  let worker: Identity;
  let watcher: Identity;
  let activities: KubeActivities;
  let nodeName: string;
  const clusterObjects: { kind: 'ClusterRole' | 'ClusterRoleBinding'; name: string }[] = [];

  before(async () => {
    admin = kubeTestClients();
    rbac = admin.kubeConfig.makeApiClient(RbacAuthorizationV1Api);
    const { objects } = await renderDeployBase();
    namespace = uniqueName('eniflow-system');
    await admin.core.createNamespace({ body: { metadata: { name: namespace } } });
    const local = objects.map((object) => localize({ object, suffix, namespace }));
    const ofKind = <T extends KubernetesObject>(kind: string): T[] => local.filter((o) => o.kind === kind) as T[];
    for (const body of ofKind<V1ServiceAccount>('ServiceAccount')) {
      await admin.core.createNamespacedServiceAccount({ namespace, body });
    }
    for (const body of ofKind<V1ClusterRole>('ClusterRole')) {
      await rbac.createClusterRole({ body });
      clusterObjects.push({ kind: 'ClusterRole', name: body.metadata?.name ?? '' });
    }
    for (const body of ofKind<V1ClusterRoleBinding>('ClusterRoleBinding')) {
      await rbac.createClusterRoleBinding({ body });
      clusterObjects.push({ kind: 'ClusterRoleBinding', name: body.metadata?.name ?? '' });
    }
    for (const body of ofKind<V1Role>('Role')) await rbac.createNamespacedRole({ namespace, body });
    for (const body of ofKind<V1RoleBinding>('RoleBinding'))
      await rbac.createNamespacedRoleBinding({ namespace, body });
    assert.equal(clusterObjects.length, 4, 'two ClusterRoles and their bindings were rendered');

    worker = await identityFor({ admin, namespace, name: 'eniflow-worker' });
    watcher = await identityFor({ admin, namespace, name: 'eniflow-watcher' });
    activities = createKubeActivities({ kubeConfig: worker.kubeConfig, logger, component: 'eniflow-rbac-test' });

    nodeName = uniqueName('rbac-node');
    await createCoreNode(admin, {
      name: nodeName,
      conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'ok' }],
    });
    await createNodeCr(admin, { name: nodeName, spec: SPEC });
    await admin.customObjects.patchClusterCustomObject(
      { ...NODE_CR_RESOURCE, name: nodeName, body: { metadata: { finalizers: [NODE_CR_FINALIZER] } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await createPodOnNode(admin, { namespace, name: 'on-node', nodeName });

    // The RBAC authorizer reads roles through an informer: wait until both grants are in effect.
    await pollUntil(
      async () => ((await outcome(worker.core.readNode({ name: nodeName }))) === 'ok' ? true : undefined),
      { description: "the worker's ClusterRoleBinding to take effect", timeoutMs: 30_000 },
    );
    await pollUntil(
      async () =>
        (await outcome(watcher.coordination.readNamespacedLease({ namespace, name: 'absent' }))) === 404
          ? true
          : undefined,
      { description: "the watcher's RoleBinding to take effect", timeoutMs: 30_000 },
    );
  });

  after(async () => {
    // A failed finalizer test would otherwise leave the CR behind for good.
    await admin.customObjects
      .patchClusterCustomObject(
        { ...NODE_CR_RESOURCE, name: nodeName, body: { metadata: { finalizers: null } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      )
      .catch(() => undefined);
    await deleteNodeCr(admin, nodeName).catch(() => undefined);
    await admin.core.deleteNode({ name: nodeName }).catch(() => undefined);
    for (const { kind, name } of clusterObjects) {
      if (kind === 'ClusterRole') await rbac.deleteClusterRole({ name }).catch(() => undefined);
      else await rbac.deleteClusterRoleBinding({ name }).catch(() => undefined);
    }
    await admin.core.deleteNamespace({ name: namespace }).catch(() => undefined);
  });

  it("lets the worker's read cache list and watch the node's pods, core Node and Node CR", async () => {
    const cache = new NodeReadCache({ kubeConfig: worker.kubeConfig, logger });
    cache.start();
    try {
      const cached = await pollUntil(
        () => {
          const node = cache.read(nodeName);
          const complete = node?.cr !== undefined && node.coreNode !== undefined && node.pods.length > 0;
          return Promise.resolve(complete ? node : undefined);
        },
        { description: 'the read cache synced with the worker identity', timeoutMs: 30_000 },
      );
      assert.deepEqual(
        cached.pods.map((pod) => `${pod.metadata.namespace}/${pod.metadata.name}`),
        [`${namespace}/on-node`],
      );
      assert.equal(cache.counters().pods.errors, 0, 'no informer was refused');
    } finally {
      await cache.stop();
    }
  });

  it("lets the worker's activities read, write the status, patch a condition, record events, drop the finalizer", async () => {
    const snapshot = await run(() => activities.readNodeSnapshot({ nodeName }));
    assert.equal(snapshot.cr?.validation.ok, true);
    assert.equal(snapshot.cr.hasFinalizer, true);
    assert.deepEqual(
      snapshot.pods.map((pod) => `${pod.metadata.namespace}/${pod.metadata.name}`),
      [`${namespace}/on-node`],
    );
    assert.equal(snapshot.coreNode?.isReady, true);

    const written = await run(() =>
      activities.writeNodeStatus({
        nodeName,
        status: {
          networkInterfaces: { 'eni-1': { id: 'eni-1', status: 'InUse', ipv4: {} } },
          lastSyncOpenAPITime: '2026-12-02T10:00:00Z',
        },
      }),
    );
    assert.equal(written.outcome, 'written');
    assert.equal((await readNodeCr(admin, nodeName)).status?.networkInterfaces?.['eni-1']?.status, 'InUse');

    await run(() =>
      activities.patchNodeCondition({
        nodeName,
        condition: {
          type: 'SufficientIP',
          status: 'True',
          reason: 'SufficientIP',
          message: 'pool has IPs',
          lastHeartbeatTime: '2026-12-02T10:00:00Z',
          lastTransitionTime: '2026-12-02T10:00:00Z',
        },
      }),
    );
    const node = await admin.core.readNode({ name: nodeName });
    assert.deepEqual((node.status?.conditions ?? []).map((c) => `${c.type}=${c.status}`).sort(), [
      'Ready=True',
      'SufficientIP=True',
    ]);

    await run(() =>
      activities.recordEvent({
        nodeName,
        involved: { kind: 'Node', apiVersion: 'network.alibabacloud.com/v1beta1', name: nodeName },
        type: 'Normal',
        reason: 'RbacNode',
        message: 'on the Node CR',
      }),
    );
    await run(() =>
      activities.recordEvent({
        nodeName,
        involved: { kind: 'Pod', apiVersion: 'v1', name: 'on-node', namespace },
        type: 'Warning',
        reason: 'RbacPod',
        message: 'on a pod',
      }),
    );
    // A repeat of one series reads and updates its Event.
    for (let i = 0; i < 2; i += 1) {
      await run(() =>
        activities.recordEvent({
          nodeName,
          involved: { kind: 'Pod', apiVersion: 'v1', name: 'on-node', namespace },
          type: 'Warning',
          reason: 'RbacSeries',
          message: `repeat ${i}`,
          series: 'one-cause',
        }),
      );
    }
    const series = await admin.core.listNamespacedEvent({ namespace, fieldSelector: 'reason=RbacSeries' });
    assert.deepEqual(
      series.items.map((event) => event.count),
      [2],
    );
    const reasons = async (ns: string, name: string): Promise<string[]> =>
      (await admin.core.listNamespacedEvent({ namespace: ns, fieldSelector: `involvedObject.name=${name}` })).items.map(
        (event) => event.reason ?? '',
      );
    assert.deepEqual(await reasons('default', nodeName), ['RbacNode']);
    assert.deepEqual((await reasons(namespace, 'on-node')).sort(), ['RbacPod', 'RbacSeries']);

    assert.ok((await run(() => activities.listKnownEniIds())).includes('eni-1'), 'the janitor lists the CRs');

    await deleteNodeCr(admin, nodeName);
    const deleting = await run(() => activities.readNodeSnapshot({ nodeName }));
    assert.equal(deleting.cr?.isDeleting, true, 'the finalizer holds the CR');
    assert.deepEqual(await run(() => activities.removeNodeFinalizer({ nodeName })), { removed: true });
    const gone = await outcome(admin.customObjects.getClusterCustomObject({ ...NODE_CR_RESOURCE, name: nodeName }));
    assert.equal(gone, 404, 'without the finalizer the CR is deleted');
  });

  it('refuses the worker every call outside its grants with 403', async () => {
    const refused = {
      'delete a pod': await outcome(
        worker.core.deleteNamespacedPod({ namespace, name: 'on-node', gracePeriodSeconds: 0 }),
      ),
      'list secrets': await outcome(worker.core.listNamespacedSecret({ namespace })),
      'update a core Node spec': await outcome(
        worker.core.patchNode(
          { name: nodeName, body: { spec: { unschedulable: true } } },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        ),
      ),
      'delete a Node CR': await outcome(
        worker.customObjects.deleteClusterCustomObject({ ...NODE_CR_RESOURCE, name: nodeName }),
      ),
      'create a Lease': await outcome(
        worker.coordination.createNamespacedLease({ namespace, body: { metadata: { name: 'worker' } } }),
      ),
      'watch secrets': (await watchFor({
        identity: worker,
        path: `/api/v1/namespaces/${namespace}/secrets`,
        query: {},
      })) as unknown,
    };
    assert.deepEqual(refused, {
      'delete a pod': 403,
      'list secrets': 403,
      'update a core Node spec': 403,
      'delete a Node CR': 403,
      'create a Lease': 403,
      'watch secrets': { refused: 403 },
    });
  });

  it('lets the watcher list and watch the pods of a node, core Nodes and Node CRs', async () => {
    // The pod informer's own selector (every bound pod), then one node's pods.
    const bound = await watcher.core.listPodForAllNamespaces({ fieldSelector: 'spec.nodeName!=' });
    assert.ok(bound.items.some((pod) => pod.metadata?.name === 'on-node'));
    const pods = await watcher.core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${nodeName}` });
    assert.deepEqual(
      pods.items.map((pod) => pod.metadata?.name),
      ['on-node'],
    );
    const podEvent = await watchFor({
      identity: watcher,
      path: '/api/v1/pods',
      query: { fieldSelector: `spec.nodeName=${nodeName}`, resourceVersion: pods.metadata?.resourceVersion ?? '' },
      trigger: () => createPodOnNode(admin, { namespace, name: 'second', nodeName }),
    });
    assert.deepEqual(podEvent, { event: 'ADDED', name: 'second' });

    const nodes = await watcher.core.listNode({ fieldSelector: `metadata.name=${nodeName}` });
    assert.deepEqual(
      nodes.items.map((node) => node.metadata?.name),
      [nodeName],
    );
    const nodeEvent = await watchFor({
      identity: watcher,
      path: '/api/v1/nodes',
      query: { fieldSelector: `metadata.name=${nodeName}`, resourceVersion: nodes.metadata?.resourceVersion ?? '' },
      trigger: () =>
        admin.core.patchNode(
          { name: nodeName, body: { metadata: { labels: { 'eniflow.test/touched': 'yes' } } } },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        ),
    });
    assert.deepEqual(nodeEvent, { event: 'MODIFIED', name: nodeName });

    const crName = uniqueName('rbac-cr');
    const crs = (await watcher.customObjects.listClusterCustomObject(NODE_CR_RESOURCE)) as {
      metadata: { resourceVersion: string };
    };
    try {
      const crEvent = await watchFor({
        identity: watcher,
        path: NODE_CR_PATH,
        query: { fieldSelector: `metadata.name=${crName}`, resourceVersion: crs.metadata.resourceVersion },
        trigger: () => createNodeCr(admin, { name: crName, spec: SPEC }),
      });
      assert.deepEqual(crEvent, { event: 'ADDED', name: crName });
    } finally {
      await deleteNodeCr(admin, crName);
    }
  });

  it('lets the watcher get, create and update its Lease in its own namespace only', async () => {
    const name = 'eniflow-watcher';
    assert.equal(await outcome(watcher.coordination.readNamespacedLease({ namespace, name })), 404);
    const created = await watcher.coordination.createNamespacedLease({
      namespace,
      body: { metadata: { name }, spec: { holderIdentity: 'watcher-a', leaseDurationSeconds: 15 } },
    });
    const read = await watcher.coordination.readNamespacedLease({ namespace, name });
    assert.equal(read.spec?.holderIdentity, 'watcher-a');
    const taken = await watcher.coordination.replaceNamespacedLease({
      namespace,
      name,
      // Optimistic concurrency, as a leader elector does: the update names the resourceVersion it read.
      body: {
        metadata: { name, resourceVersion: read.metadata?.resourceVersion ?? 'missing' },
        spec: { holderIdentity: 'watcher-b', leaseDurationSeconds: 15 },
      },
    });
    assert.equal(taken.spec?.holderIdentity, 'watcher-b');
    assert.notEqual(taken.metadata?.resourceVersion, created.metadata?.resourceVersion);

    assert.equal(
      await outcome(
        watcher.coordination.createNamespacedLease({
          namespace: 'default',
          body: { metadata: { name: uniqueName('l') } },
        }),
      ),
      403,
      'no Lease outside its namespace',
    );
    assert.equal(await outcome(watcher.coordination.deleteNamespacedLease({ namespace, name })), 403);
  });

  it('lets the watcher get, list and watch the control ConfigMap only, never write it', async () => {
    const name = 'eniflow-control';
    await admin.core.createNamespacedConfigMap({ namespace, body: { metadata: { name }, data: { degradation: '' } } });
    await admin.core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'other' }, data: {} } });
    const selector = `metadata.name=${name}`;
    const listed = await watcher.core.listNamespacedConfigMap({ namespace, fieldSelector: selector });
    assert.deepEqual(
      listed.items.map((item) => item.metadata?.name),
      [name],
    );
    assert.equal(await outcome(watcher.core.readNamespacedConfigMap({ namespace, name })), 'ok');
    const changed = await watchFor({
      identity: watcher,
      path: `/api/v1/namespaces/${namespace}/configmaps`,
      query: { fieldSelector: selector, resourceVersion: listed.metadata?.resourceVersion ?? '' },
      trigger: () =>
        admin.core.patchNamespacedConfigMap(
          { namespace, name, body: { data: { degradation: 'l1' } } },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        ),
    });
    assert.deepEqual(changed, { event: 'MODIFIED', name });
    assert.deepEqual(
      {
        'list every ConfigMap': await outcome(watcher.core.listNamespacedConfigMap({ namespace })),
        'get another ConfigMap': await outcome(watcher.core.readNamespacedConfigMap({ namespace, name: 'other' })),
        'patch the control ConfigMap': await outcome(
          watcher.core.patchNamespacedConfigMap(
            { namespace, name, body: { data: { degradation: 'l0' } } },
            setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
          ),
        ),
        'a ConfigMap of that name elsewhere': await outcome(
          watcher.core.readNamespacedConfigMap({ namespace: 'default', name }),
        ),
      },
      {
        'list every ConfigMap': 403,
        'get another ConfigMap': 403,
        'patch the control ConfigMap': 403,
        'a ConfigMap of that name elsewhere': 403,
      },
    );
  });

  it('refuses the watcher every write and every read outside its informers with 403', async () => {
    const refused = {
      'patch a core Node condition': await outcome(
        watcher.core.patchNodeStatus(
          { name: nodeName, body: { status: { conditions: [] } } },
          setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
        ),
      ),
      'get a pod': await outcome(watcher.core.readNamespacedPod({ namespace, name: 'on-node' })),
      'delete a pod': await outcome(
        watcher.core.deleteNamespacedPod({ namespace, name: 'on-node', gracePeriodSeconds: 0 }),
      ),
      'list secrets': await outcome(watcher.core.listSecretForAllNamespaces()),
      'create an event': await outcome(
        watcher.core.createNamespacedEvent({
          namespace: 'default',
          body: { metadata: { name: uniqueName('e') }, involvedObject: { kind: 'Node', name: nodeName } },
        }),
      ),
      'get a Node CR': await outcome(
        watcher.customObjects.getClusterCustomObject({ ...NODE_CR_RESOURCE, name: nodeName }),
      ),
    };
    assert.deepEqual(refused, {
      'patch a core Node condition': 403,
      'get a pod': 403,
      'delete a pod': 403,
      'list secrets': 403,
      'create an event': 403,
      'get a Node CR': 403,
    });
  });
});
