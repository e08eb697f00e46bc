/**
 * The Kubernetes activities against the real test kube-apiserver (Temporal's MockActivityEnvironment provides the
 * activity context).
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import type { Server, Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';

import { KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { ApplicationFailure } from '@temporalio/common';
import { pino } from 'pino';

import { createKubeActivities } from '../../../src/activities/kube-activities.js';
import type { KubeActivities } from '../../../src/activities/kube-activities.js';
import { NODE_CR_FINALIZER } from '../../../src/ipam/index.js';
import type { NodeSpec } from '../../../src/ipam/index.js';
import {
  NODE_CR_RESOURCE,
  createCoreNode,
  createNodeCr,
  createPodOnNode,
  createTestNamespace,
  readyCondition,
  kubeTestClients,
  readNodeCr,
  uniqueName,
} from '../../support/kube-env.js';
import type { KubeTestClients } from '../../support/kube-env.js';
import { quietActivityEnvironment } from '../../support/test-logs.js';

let kube: KubeTestClients;
let namespace: string;
const logger = pino({ level: 'silent' });

const run = <R>(fn: () => Promise<R>): Promise<R> => quietActivityEnvironment({ activityType: 'test' }).run(fn);

const SPEC: NodeSpec = {
  nodeMetadata: { regionID: 'cn-hangzhou', instanceID: 'i-1', instanceType: 'ecs.g7.large', zoneID: 'cn-hangzhou-h' },
  nodeCap: { adapters: 3, ipv4PerAdapter: 6, ipv6PerAdapter: 6 },
  eni: { enableIPv4: true, vSwitchOptions: ['vsw-1'], securityGroupIDs: ['sg-1'], vSwitchSelectPolicy: 'ordered' },
  pool: { minPoolSize: 0, maxPoolSize: 5 },
  flavor: [{ networkInterfaceType: 'Secondary', networkInterfaceTrafficMode: 'Standard', count: 2 }],
};

before(async () => {
  kube = kubeTestClients();
  namespace = await createTestNamespace(kube, 'kube-activities');
});

function activities(
  extra: { beforeStatusReplace?: (attempt: number) => Promise<void>; temporalUiUrl?: string } = {},
): KubeActivities {
  return createKubeActivities({ kubeConfig: kube.kubeConfig, logger, ...extra });
}

describe('readNodeSnapshot', () => {
  it('reads the validated CR, only the pods of this node, and the core Node', async () => {
    const nodeName = uniqueName('snap');
    const other = uniqueName('other');
    await createNodeCr(kube, { name: nodeName, spec: SPEC });
    await createCoreNode(kube, {
      name: nodeName,
      labels: { 'k8s.aliyun.com/exclusive-mode-eni-type': 'default' },
      conditions: [readyCondition('ok')],
    });
    await createPodOnNode(kube, { namespace, name: 'mine', nodeName });
    await createPodOnNode(kube, { namespace, name: 'theirs', nodeName: other });
    const snapshot = await run(() => activities().readNodeSnapshot({ nodeName }));
    assert.deepEqual(
      snapshot.pods.map((pod) => `${pod.metadata.namespace}/${pod.metadata.name}`),
      [`${namespace}/mine`],
    );
    assert.equal(snapshot.cr?.validation.ok, true);
    assert.equal(snapshot.cr.validation.ok && snapshot.cr.validation.readiness, 'ready');
    assert.equal(snapshot.cr.isDeleting, false);
    assert.match(snapshot.cr.resourceVersion, /^\d+$/);
    assert.equal(snapshot.coreNode?.isReady, true);
    assert.equal(snapshot.coreNode.exclusiveEniMode, 'default');
    const missing = await run(() => activities().readNodeSnapshot({ nodeName: uniqueName('missing') }));
    assert.equal(missing.cr, undefined);
    assert.equal(missing.coreNode, undefined);
  });
});

describe('writeNodeStatus', () => {
  it('re-reads and re-applies after a 409 caused by a concurrent spec change, losing neither write', async () => {
    const nodeName = uniqueName('conflict');
    await createNodeCr(kube, { name: nodeName, spec: SPEC });
    const result = await run(() =>
      activities({
        beforeStatusReplace: async (attempt) => {
          if (attempt > 0) return;
          // Terway's daemon raises maxPoolSize between our read and our write.
          await kube.customObjects.patchClusterCustomObject(
            { ...NODE_CR_RESOURCE, name: nodeName, body: { spec: { pool: { minPoolSize: 0, maxPoolSize: 9 } } } },
            setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
          );
        },
      }).writeNodeStatus({
        nodeName,
        status: {
          networkInterfaces: {
            'eni-1': {
              id: 'eni-1',
              status: 'InUse',
              ipv4: { '10.0.0.1': { ip: '10.0.0.1', primary: true, status: 'Valid' } },
            },
          },
          lastSyncOpenAPITime: '2026-12-02T10:00:00Z',
        },
      }),
    );
    assert.equal(result.outcome, 'written');
    assert.equal(result.conflicts, 1, 'exactly one 409 was met and retried');
    const cr = await readNodeCr(kube, nodeName);
    assert.equal(cr.spec.pool?.maxPoolSize, 9, "the daemon's change is kept");
    assert.equal(cr.status?.networkInterfaces?.['eni-1']?.status, 'InUse', 'our status landed');
    assert.equal(cr.status?.lastSyncOpenAPITime, '2026-12-02T10:00:00Z');
  });

  it('keeps status fields it does not own and reports a deleted CR as gone', async () => {
    const nodeName = uniqueName('owned');
    await createNodeCr(kube, { name: nodeName, spec: SPEC });
    await kube.customObjects.patchClusterCustomObjectStatus(
      { ...NODE_CR_RESOURCE, name: nodeName, body: { status: { warmUpTarget: 3 } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await run(() => activities().writeNodeStatus({ nodeName, status: { networkInterfaces: {} } }));
    const cr = (await readNodeCr(kube, nodeName)) as unknown as { status: Record<string, unknown> };
    assert.equal(cr.status['warmUpTarget'], 3);
    const gone = await run(() => activities().writeNodeStatus({ nodeName: uniqueName('nope'), status: {} }));
    assert.equal(gone.outcome, 'gone');
  });
});

describe('node conditions, events, finalizer', () => {
  it('patches one core Node condition and keeps the others', async () => {
    const nodeName = uniqueName('cond');
    await createCoreNode(kube, {
      name: nodeName,
      conditions: [readyCondition('ok')],
    });
    await run(() =>
      activities().patchNodeCondition({
        nodeName,
        condition: {
          type: 'SufficientIP',
          status: 'False',
          reason: 'InsufficientIP',
          message: 'node has insufficient IP',
          lastHeartbeatTime: '2026-12-02T10:00:00Z',
          lastTransitionTime: '2026-12-02T10:00:00Z',
        },
      }),
    );
    const node = await kube.core.readNode({ name: nodeName });
    const types = (node.status?.conditions ?? []).map((c) => `${c.type}=${c.status}`).sort();
    assert.deepEqual(types, ['Ready=True', 'SufficientIP=False']);
  });

  it('records an event on the Node CR', async () => {
    const nodeName = uniqueName('event');
    await run(() =>
      activities().recordEvent({
        nodeName,
        involved: { kind: 'Node', apiVersion: 'network.alibabacloud.com/v1beta1', name: nodeName },
        type: 'Warning',
        reason: 'AllocIPFailed',
        message: 'boom',
      }),
    );
    const events = await kube.core.listNamespacedEvent({
      namespace: 'default',
      fieldSelector: `involvedObject.name=${nodeName}`,
    });
    assert.deepEqual(
      events.items.map((e) => `${e.type}/${e.reason}/${e.message}`),
      ['Warning/AllocIPFailed/boom'],
    );
  });

  it('records repeats of one series as one Event whose count grows, also on the core Node', async () => {
    const nodeName = uniqueName('series');
    const record = (message: string) =>
      run(() =>
        activities().recordEvent({
          nodeName,
          involved: { kind: 'Node', apiVersion: 'network.alibabacloud.com/v1beta1', name: nodeName },
          type: 'Warning',
          reason: 'AllocIPFailed',
          message,
          series: 'AttachNetworkInterface/ServiceUnavailable',
          coreNode: { uid: 'core-uid' },
        }),
      );
    await record('5 attempts');
    await record('10 attempts');
    const events = await kube.core.listNamespacedEvent({
      namespace: 'default',
      fieldSelector: `involvedObject.name=${nodeName}`,
    });
    assert.deepEqual(
      events.items
        .map((e) => `${e.involvedObject.apiVersion}/${e.involvedObject.uid ?? ''}/${e.message}/${e.count}`)
        .sort(),
      ['network.alibabacloud.com/v1beta1//10 attempts/2', 'v1/core-uid/10 attempts/2'],
    );
  });

  it('links the event to the Web UI page of the workflow when a UI URL is configured', async () => {
    const nodeName = uniqueName('link');
    await quietActivityEnvironment({
      activityType: 'recordEvent',
      namespace: 'prod',
      workflowExecution: { workflowId: `eniflow-node/${nodeName}`, runId: 'r' },
    }).run(() =>
      activities({ temporalUiUrl: 'https://temporal.example.com/' }).recordEvent({
        nodeName,
        involved: { kind: 'Node', apiVersion: 'network.alibabacloud.com/v1beta1', name: nodeName },
        type: 'Warning',
        reason: 'AllocIPFailed',
        message: 'boom',
      }),
    );
    const events = await kube.core.listNamespacedEvent({
      namespace: 'default',
      fieldSelector: `involvedObject.name=${nodeName}`,
    });
    assert.deepEqual(
      events.items.map((e) => e.message),
      [`boom https://temporal.example.com/namespaces/prod/workflows/eniflow-node%2F${nodeName}`],
    );
  });

  it('removes only its own finalizer', async () => {
    const nodeName = uniqueName('fin');
    await createNodeCr(kube, { name: nodeName, spec: SPEC });
    await kube.customObjects.patchClusterCustomObject(
      {
        ...NODE_CR_RESOURCE,
        name: nodeName,
        body: { metadata: { finalizers: [NODE_CR_FINALIZER, 'example.com/other'] } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    assert.deepEqual(await run(() => activities().removeNodeFinalizer({ nodeName })), { removed: true });
    assert.deepEqual((await readNodeCr(kube, nodeName)).metadata.finalizers, ['example.com/other']);
    assert.deepEqual(await run(() => activities().removeNodeFinalizer({ nodeName })), { removed: false });
  });
});

describe('deadlines', () => {
  let server: Server;
  let hungKubeConfig: KubeConfig;
  const sockets = new Set<Socket>();

  before(async () => {
    // An apiserver that accepts connections and never answers (as during a failover).
    server = createServer((socket) => {
      sockets.add(socket);
      socket.resume();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    assert.ok(address !== null && typeof address === 'object');
    hungKubeConfig = new KubeConfig();
    hungKubeConfig.loadFromOptions({
      clusters: [{ name: 'hung', server: `http://127.0.0.1:${address.port}`, skipTLSVerify: true }],
      users: [{ name: 'nobody' }],
      contexts: [{ name: 'hung', cluster: 'hung', user: 'nobody' }],
      currentContext: 'hung',
    });
  });

  after(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) =>
      server.close(() => {
        resolve();
      }),
    );
  });

  it('a request without an answer fails at its deadline as a retryable KubeTransient', async () => {
    const hung = createKubeActivities({ kubeConfig: hungKubeConfig, logger, requestTimeoutMs: 300 });
    const started = Date.now();
    await assert.rejects(
      run(() => hung.readNodeSnapshot({ nodeName: 'n1' })),
      (error: unknown) => {
        assert.ok(error instanceof ApplicationFailure);
        assert.equal(error.type, 'KubeTransient');
        assert.equal(error.nonRetryable, false);
        return true;
      },
    );
    const elapsed = Date.now() - started;
    assert.ok(elapsed >= 300 && elapsed < 5_000, `failed after ${elapsed} ms`);
  });

  it('cancelling the activity aborts its request at once', async () => {
    const hung = createKubeActivities({ kubeConfig: hungKubeConfig, logger, requestTimeoutMs: 60_000 });
    const env = quietActivityEnvironment({ activityType: 'test' });
    const started = Date.now();
    const attempt = env.run(() => hung.readNodeSnapshot({ nodeName: 'n1' }));
    setTimeout(() => {
      env.cancel();
    }, 200);
    await assert.rejects(attempt);
    const elapsed = Date.now() - started;
    assert.ok(elapsed >= 200 && elapsed < 5_000, `ended ${elapsed} ms after the start, by the cancellation`);
  });
});
