/**
 * The watcher and the worker together, started as `npm start` starts them (configuration from the environment),
 * on the shared test servers and an emulator: nobody signals by hand, Kubernetes changes drive everything.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { pino } from 'pino';

import { TEST_ENV_VARS, requireTestEnvVar } from '../../../scripts/lib/test-env-vars.js';
import { loadWorkerConfig } from '../../../src/config.js';
import { loadWatcherConfig, runWatcher } from '../../../src/watcher/run-watcher.js';
import type { WatcherHandle } from '../../../src/watcher/run-watcher.js';
import { startWorker } from '../../../src/worker/run-worker.js';
import type { RunningWorker } from '../../../src/worker/run-worker.js';
import { gcUpdate } from '../../../src/workflows/messages.js';
import { nodeWorkflowId } from '../../../src/shared/workflow-ids.js';
import { DEMO, startEmulatorHarness } from '../../support/ecs-emulator.js';
import type { EmulatorHarness } from '../../support/ecs-emulator.js';
import {
  createCoreNode,
  createNodeCr,
  createPodOnNode,
  createTestNamespace,
  readyCondition,
  deleteNodeCr,
  deletePodNow,
  kubeTestClients,
  readNodeCr,
  TEST_CLUSTER_ID,
  uniqueName,
} from '../../support/kube-env.js';
import type { KubeTestClients } from '../../support/kube-env.js';
import { bindingsOf } from '../../support/node-scenario.js';
import { pollUntil } from '../../../scripts/lib/poll-until.js';
import { connectTemporalTestEnv, uniqueTaskQueue } from '../../support/temporal-env.js';
import type { TemporalTestEnv } from '../../support/temporal-env.js';

let kube: KubeTestClients;
let temporal: TemporalTestEnv;
let emulator: EmulatorHarness;
let worker: RunningWorker;
let watcher: WatcherHandle;
const logger = pino({ level: process.env['TEST_LOG_LEVEL'] ?? 'silent' });

before(async () => {
  kube = kubeTestClients();
  temporal = await connectTemporalTestEnv();
  emulator = await startEmulatorHarness();
  const env: NodeJS.ProcessEnv = {
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_NAMESPACE: temporal.namespace,
    TEMPORAL_TASK_QUEUE: uniqueTaskQueue('watcher-and-worker'),
    KUBECONFIG: requireTestEnvVar(TEST_ENV_VARS.kubeconfig),
    ECS_REGION_ID: emulator.emulator.regionId,
    ECS_ENDPOINT: emulator.emulator.endpoint,
    ECS_PROTOCOL: 'http',
    ALIBABA_CLOUD_ACCESS_KEY_ID: emulator.emulator.accessKeyId,
    ALIBABA_CLOUD_ACCESS_KEY_SECRET: emulator.emulator.accessKeySecret,
    ENI_POLL_INTERVAL_MS: '20',
    LEASE_NAMESPACE: 'default',
    LEASE_NAME: uniqueName('eniflow-watcher'),
    ENIFLOW_CLUSTER_ID: TEST_CLUSTER_ID,
  };
  worker = await startWorker({ config: loadWorkerConfig(env), logger });
  watcher = await runWatcher(loadWatcherConfig(env), { logger });
});

after(async () => {
  await watcher.stop();
  await worker.stop();
  await emulator.close();
  await temporal.close();
});

describe('watcher and worker together', () => {
  it('a Node CR and 20 pods get their IPs, and deleted pods give them back, with no signal sent by hand', async () => {
    const nodeName = uniqueName('together');
    const namespace = await createTestNamespace(kube, 'together');
    await createCoreNode(kube, {
      name: nodeName,
      conditions: [readyCondition('test')],
    });
    await createNodeCr(kube, {
      name: nodeName,
      spec: {
        nodeMetadata: {
          regionID: DEMO.regionId,
          instanceType: 'ecs.g7.2xlarge',
          instanceID: DEMO.instance2xlH,
          zoneID: DEMO.zoneH,
        },
        nodeCap: { adapters: 4, totalAdapters: 4, ipv4PerAdapter: 15, ipv6PerAdapter: 15 },
        eni: {
          enableIPv4: true,
          enableIPv6: false,
          vSwitchOptions: [DEMO.vSwitchH],
          securityGroupIDs: [DEMO.securityGroup],
          vSwitchSelectPolicy: 'ordered',
        },
        pool: { minPoolSize: 2, maxPoolSize: 4 },
        flavor: [{ networkInterfaceType: 'Secondary', networkInterfaceTrafficMode: 'Standard', count: 3 }],
      },
    });
    try {
      const pods = Array.from({ length: 20 }, (_, i) => `web-${i}`);
      for (const name of pods) await createPodOnNode(kube, { namespace, name, nodeName });
      await pollUntil(
        async () => {
          const bound = bindingsOf(await readNodeCr(kube, nodeName));
          return pods.every((pod) => bound.has(`${namespace}/${pod}`)) ? true : undefined;
        },
        { description: 'all 20 pods bound by the watcher-driven workflow', timeoutMs: 90_000, intervalMs: 200 },
      );
      assert.ok(watcher.signalsFor(nodeName) >= 1);
      assert.ok(watcher.signalsFor(nodeName) <= 10, `${watcher.signalsFor(nodeName)} signals for 20 pods`);

      for (const pod of pods.slice(5)) await deletePodNow(kube, { namespace, name: pod });
      await pollUntil(async () => (bindingsOf(await readNodeCr(kube, nodeName)).size === 5 ? true : undefined), {
        description: 'the 15 deleted pods unbound',
        timeoutMs: 60_000,
        intervalMs: 200,
      });
      const result = await temporal.client.workflow.getHandle(nodeWorkflowId(nodeName)).executeUpdate(gcUpdate);
      const released = result.releasedIps.flatMap((entry) => entry.ips).length + result.removedEnis.length;
      assert.ok(released > 0, 'idle addresses above maxPoolSize went back to the cloud');
      const cr = await readNodeCr(kube, nodeName);
      const idle = Object.values(cr.status?.networkInterfaces ?? {})
        .filter((eni) => eni.status === 'InUse')
        .flatMap((eni) => Object.values(eni.ipv4 ?? {}))
        .filter((ip) => ip.status === 'Valid' && (ip.podID ?? '') === '').length;
      assert.ok(idle <= 4 + 3, `${idle} idle IPs: at most maxPoolSize plus primaries that cannot go`);
    } finally {
      await deleteNodeCr(kube, nodeName);
    }
  });
});
