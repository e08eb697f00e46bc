/**
 * eniflow's metrics on the real servers. The worker serves its registry (ECS calls by outcome, node passes, janitor)
 * with probes on its health endpoint, next to the Temporal SDK's exporter; the leader watcher serves the user-impact
 * gauges (pods waiting for an IP, node workflows by IPAM state) computed from its informer caches and Temporal.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import * as $Ecs from '@alicloud/ecs20140526';
import { Runtime } from '@temporalio/worker';
import { pino } from 'pino';

import { pollUntil } from '../../../scripts/lib/poll-until.js';
import { reserveFreePorts } from '../../../scripts/lib/free-ports.js';
import { loadWorkerConfig } from '../../../src/config.js';
import { startHealthServer } from '../../../src/watcher/health-server.js';
import { healthSourceOf, runWatcher } from '../../../src/watcher/run-watcher.js';
import type { WatcherHandle } from '../../../src/watcher/run-watcher.js';
import { TemporalWorkflowGateway } from '../../../src/watcher/workflow-gateway.js';
import type { WorkflowGateway } from '../../../src/watcher/workflow-gateway.js';
import { startWorkerHealthServer } from '../../../src/worker/health-server.js';
import { startWorker } from '../../../src/worker/run-worker.js';
import type { RunningWorker } from '../../../src/worker/run-worker.js';
import { workerMetrics } from '../../../src/worker/metrics.js';
import { runJanitorUpdate } from '../../../src/workflows/janitor-workflow.js';
import type { eniJanitorWorkflow } from '../../../src/workflows/janitor-workflow.js';
import { JANITOR_WORKFLOW_TYPE } from '../../../src/shared/workflow-ids.js';
import { DEFAULT_JANITOR_SETTINGS } from '../../../src/shared/janitor-settings.js';
import { DEFAULT_NODE_SETTINGS } from '../../../src/workflows/messages.js';
import { TEST_CLUSTER_ID, uniqueName } from '../../support/kube-env.js';
import {
  allBound,
  bindingsOf,
  demoNodeSpec,
  openScenarioEnv,
  startNodeScenario,
  withScenario,
} from '../../support/node-scenario.js';
import type { NodeScenario, ScenarioEnv } from '../../support/node-scenario.js';
import { startTcpProxy } from '../watcher/tcp-proxy.js';
import { testWatcherConfig } from '../watcher/watcher-harness.js';

const [sdkMetricsPort] = await reserveFreePorts(1);
Runtime.install({
  telemetryOptions: { metrics: { prometheus: { bindAddress: `127.0.0.1:${String(sdkMetricsPort)}` } } },
});

const logger = pino({ level: process.env['TEST_LOG_LEVEL'] ?? 'silent' });
let env: ScenarioEnv;
let workerHealth: Awaited<ReturnType<typeof startWorkerHealthServer>>;
before(async () => {
  env = await openScenarioEnv();
  // The in-process workers of the scenarios report to the process's registry, as a worker process does.
  workerHealth = await startWorkerHealthServer({
    address: '127.0.0.1:0',
    registry: workerMetrics.registry,
    worker: () => undefined,
    logger,
  });
});
after(async () => {
  await workerHealth.close();
  await env.close();
});

const fetchText = async (port: number, path: string): Promise<{ status: number; text: string }> => {
  const response = await fetch(`http://127.0.0.1:${String(port)}${path}`);
  return { status: response.status, text: await response.text() };
};

/** The value of one series (`name{labels}` with labels in prom-client's order), or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((entry) => entry.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** The sum of every series of `name` whose labels include all of `labels` (label order does not matter). */
function total(text: string, name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels).map(([label, value]) => `${label}="${value}"`);
  let sum = 0;
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match?.[1] !== name) continue;
    const present = (match[2] ?? '').split(',');
    if (wanted.every((pair) => present.includes(pair))) sum += Number(match[3]);
  }
  return sum;
}

async function pollMetrics<T>(
  port: number,
  description: string,
  check: (text: string) => T | undefined,
  timeoutMs = 60_000,
): Promise<T> {
  return pollUntil(async () => check((await fetchText(port, '/metrics')).text), {
    description,
    timeoutMs,
    intervalMs: 200,
  });
}

describe('worker metrics', () => {
  it('counts ECS calls by operation and outcome, their latency in seconds, and each node’s passes', async () => {
    await withScenario(env, { name: 'metrics', spec: demoNodeSpec({ instance: 'large-h' }) }, async (scenario) => {
      await scenario.createPods(['a']);
      await scenario.signal();
      await scenario.waitForCr('pod bound', (cr) => (bindingsOf(cr).size === 1 ? true : undefined));
      const node = `{node="${scenario.nodeName}"}`;
      const text = await pollMetrics(workerHealth.port, 'a successful pass of the node', (body) =>
        sample(body, `eniflow_node_last_successful_pass_timestamp_seconds${node}`) === undefined ? undefined : body,
      );
      assert.ok(
        (sample(text, 'eniflow_ecs_calls_total{operation="CreateNetworkInterface",outcome="success",code="OK"}') ??
          0) >= 1,
      );
      assert.ok(
        (sample(text, 'eniflow_ecs_calls_total{operation="AttachNetworkInterface",outcome="success",code="OK"}') ??
          0) >= 1,
      );
      assert.match(
        text,
        /^eniflow_ecs_call_duration_seconds_bucket\{le="[^"]+",operation="AttachNetworkInterface",outcome="success"\} [1-9]/m,
      );
      const last = sample(text, `eniflow_node_last_pass_timestamp_seconds${node}`) ?? 0;
      assert.ok(Math.abs(last - Date.now() / 1000) < 600, `a recent pass time in seconds, got ${String(last)}`);
      assert.equal(sample(text, `eniflow_node_last_successful_pass_timestamp_seconds${node}`), last);
      assert.ok((sample(text, 'eniflow_node_passes_total{outcome="success"}') ?? 0) >= 1);
      assert.match(text, /^nodejs_eventloop_lag_seconds \d/m, "Node's process and event-loop metrics");
      const sdk = (await fetchText(sdkMetricsPort ?? 0, '/metrics')).text;
      assert.match(sdk, /temporal_/, 'the Temporal SDK metrics stay on its own exporter');
      assert.doesNotMatch(sdk, /eniflow_ecs_calls/);
    });
  });

  it('observes each pod’s creation → IP once, across a worker restart, and each attach by result', async () => {
    await withScenario(env, { name: 'latency', spec: demoNodeSpec({ instance: 'large-h' }) }, async (scenario) => {
      const admin = scenario.emulator.emulator.admin;
      const readyCount = (text: string): number => total(text, 'eniflow_pod_ip_ready_seconds_count');
      const attachCount = (text: string, result: string): number =>
        total(text, 'eniflow_eni_attach_duration_seconds_count', { result, eni_type: 'secondary' });
      const attachesMade = async (): Promise<number> =>
        (await admin.calls({ action: 'AttachNetworkInterface' })).filter((call) => call.code === 'Success').length;
      const start = (await fetchText(workerHealth.port, '/metrics')).text;
      const startedMs = Date.now();

      await scenario.createPods(['a', 'b']);
      await scenario.signal();
      await scenario.waitForCr('a and b bound', allBound(scenario, ['a', 'b']));
      const attached = await attachesMade();
      assert.ok(attached >= 1, 'the node got an ENI');
      const first = await pollMetrics(workerHealth.port, 'two pods observed', (text) =>
        readyCount(text) - readyCount(start) >= 2 ? text : undefined,
      );
      assert.equal(readyCount(first) - readyCount(start), 2, 'one observation per pod bound');
      assert.equal(attachCount(first, 'success') - attachCount(start, 'success'), attached);
      assert.equal(
        attachCount(first, 'failed') + attachCount(first, 'timeout'),
        attachCount(start, 'failed') + attachCount(start, 'timeout'),
      );
      // Measured from each pod's creation (whole seconds, so up to 1 s early), not from some other origin.
      const observedSeconds =
        total(first, 'eniflow_pod_ip_ready_seconds_sum') - total(start, 'eniflow_pod_ip_ready_seconds_sum');
      const sinceStart = (Date.now() - startedMs) / 1000 + 1;
      assert.ok(observedSeconds > 0 && observedSeconds <= 2 * sinceStart, `${String(observedSeconds)} s for two pods`);

      // A new worker replays the workflow and passes again: the pods already bound and the attach it replays are
      // not observed again; the pod bound after the restart is.
      await scenario.worker.restart();
      await scenario.createPods(['c']);
      await scenario.signal('after restart');
      await scenario.waitForCr('c bound', allBound(scenario, ['a', 'b', 'c']));
      const attachedAfter = await attachesMade();
      const second = await pollMetrics(workerHealth.port, 'the third pod observed', (text) =>
        readyCount(text) - readyCount(start) >= 3 ? text : undefined,
      );
      await scenario.signal('one more pass');
      await scenario.waitForCr('a pass after c', allBound(scenario, ['a', 'b', 'c']));
      const last = (await fetchText(workerHealth.port, '/metrics')).text;
      assert.equal(readyCount(second) - readyCount(start), 3);
      assert.equal(readyCount(last) - readyCount(start), 3, 'no pod observed twice');
      assert.equal(attachCount(last, 'success') - attachCount(start, 'success'), attachedAfter);
    });
  });

  it('counts the saga’s clean-up of an ENI that never attached as noop, not as a failure', async () => {
    await withScenario(env, { name: 'noop-metrics', spec: demoNodeSpec({ instance: 'large-h' }) }, async (scenario) => {
      const before = (await fetchText(workerHealth.port, '/metrics')).text;
      await scenario.emulator.emulator.admin.addFaults(['AttachNetworkInterface next 1 attach-fail']);
      await scenario.createPods(['a']);
      await scenario.signal();
      await scenario.waitForCr('pod bound', allBound(scenario, ['a']));
      const detaches = await scenario.emulator.emulator.admin.calls({ action: 'DetachNetworkInterface' });
      assert.ok(detaches.length >= 1, 'the saga detached the ENI whose attach failed');
      const text = (await fetchText(workerHealth.port, '/metrics')).text;
      const detachLines = text
        .split('\n')
        .filter((line) => line.startsWith('eniflow_ecs_calls_total{operation="DetachNetworkInterface"'));
      assert.ok(
        (sample(
          text,
          'eniflow_ecs_calls_total{operation="DetachNetworkInterface",outcome="noop",code="InvalidOperation.InvalidEniState"}',
        ) ?? 0) >= 1,
        detachLines.join('\n'),
      );
      assert.deepEqual(
        detachLines.filter((line) => line.includes('outcome="failure"')),
        [],
        'no detach counted as a failure',
      );
      const failedAttaches = (body: string): number =>
        total(body, 'eniflow_eni_attach_duration_seconds_count', { result: 'failed', eni_type: 'secondary' });
      const failed = await pollMetrics(workerHealth.port, 'the failed attach observed', (body) =>
        failedAttaches(body) > failedAttaches(before) ? body : undefined,
      );
      assert.equal(
        failedAttaches(failed) - failedAttaches(before),
        1,
        'the attach that fell back is observed as failed',
      );
    });
  });

  it('serves the janitor’s passes, orphans found and ENIs deleted', async () => {
    const scenario = await startNodeScenario(env, {
      name: 'janitor-metrics',
      spec: demoNodeSpec({ instance: 'large-h' }),
    });
    const janitor = await env.temporal.client.workflow.start<typeof eniJanitorWorkflow>(JANITOR_WORKFLOW_TYPE, {
      workflowId: `janitor-metrics-${scenario.nodeName}`,
      taskQueue: scenario.taskQueue,
      args: [{ settings: { graceMs: 0, intervalMs: 60 * 60_000, clusterId: TEST_CLUSTER_ID } }],
    });
    try {
      await scenario.emulator.createEni({
        tag: [
          new $Ecs.CreateNetworkInterfaceRequestTag({ key: 'creator', value: 'eniflow' }),
          new $Ecs.CreateNetworkInterfaceRequestTag({ key: 'eniflow.io/cluster-id', value: TEST_CLUSTER_ID }),
        ],
      });
      const report = await janitor.executeUpdate(runJanitorUpdate, { args: [{}] });
      assert.equal(report.deleted.length, 1);
      const text = await pollMetrics(workerHealth.port, 'janitor metrics', (body) =>
        sample(body, 'eniflow_janitor_deleted_enis_total') === 1 ? body : undefined,
      );
      assert.equal(sample(text, 'eniflow_janitor_passes_total{dry_run="false"}'), 1);
      assert.equal(sample(text, 'eniflow_janitor_orphans{dry_run="false"}'), 1);
      assert.equal(sample(text, 'eniflow_janitor_delete_failures_total'), 0);
    } finally {
      await janitor.terminate('test finished');
      await scenario.close();
    }
  });
});

/** Signals only the scenario's node: the shared apiserver has other tests' nodes, which this worker must not touch. */
function gatewayFor(scenario: NodeScenario): WorkflowGateway {
  const gateway = new TemporalWorkflowGateway({
    client: env.temporal.client,
    taskQueue: scenario.taskQueue,
    nodeSettings: { ...DEFAULT_NODE_SETTINGS, clusterId: TEST_CLUSTER_ID },
    janitorSettings: { ...DEFAULT_JANITOR_SETTINGS, clusterId: TEST_CLUSTER_ID },
  });
  return {
    signalNode: async (signal) => {
      if (signal.nodeName === scenario.nodeName) await gateway.signalNode(signal);
    },
    countNodesByState: () => gateway.countNodesByState(),
  };
}

describe('watcher IPAM metrics', () => {
  it('shows the pods waiting for an IP during a persistent ECS fault, and none once it is gone', async () => {
    const scenario = await startNodeScenario(env, {
      name: 'waiting-metrics',
      spec: demoNodeSpec({ instance: 'large-h' }),
    });
    let watcher: WatcherHandle | undefined;
    let health: { port: number; close(): Promise<void> } | undefined;
    try {
      const admin = scenario.emulator.emulator.admin;
      // A 5xx: transient, so the node must recover on its own (short backoff), with no signal once it is gone.
      await admin.addFaults(['CreateNetworkInterface always error ServiceUnavailable 503']);
      await scenario.createPods(['a', 'b']);
      await scenario.signal();
      watcher = await runWatcher(
        {
          ...testWatcherConfig({
            taskQueue: scenario.taskQueue,
            temporalAddress: env.temporal.address,
            temporalNamespace: env.temporal.namespace,
            leaseNamespace: 'default',
            leaseName: uniqueName('metrics-lease'),
            identity: 'metrics-test',
          }),
          metrics: { topNodes: 1000, nodeStatePollMs: 500 },
        },
        { kubeConfig: env.kube.kubeConfig, gateway: gatewayFor(scenario), logger },
      );
      health = await startHealthServer({ address: '127.0.0.1:0', source: healthSourceOf(watcher), logger });
      const port = health.port;
      const node = `{node="${scenario.nodeName}"}`;

      const faulted = await pollMetrics(port, 'two waiting pods and a failing node', (text) =>
        sample(text, `eniflow_node_pods_waiting_for_ip${node}`) === 2 &&
        sample(text, 'eniflow_node_workflows{ipam_state="Error"}') === 1
          ? text
          : undefined,
      );
      assert.ok((sample(faulted, 'eniflow_pods_waiting_for_ip') ?? 0) >= 2, 'the total counts them');
      assert.ok((sample(faulted, `eniflow_node_pod_ip_wait_oldest_seconds${node}`) ?? -1) >= 0);
      assert.ok((sample(faulted, 'eniflow_pod_ip_wait_oldest_seconds') ?? -1) >= 0);
      assert.equal(sample(faulted, 'eniflow_watcher_is_leader'), 1);
      const worker = (await fetchText(workerHealth.port, '/metrics')).text;
      assert.ok(
        (sample(
          worker,
          'eniflow_ecs_calls_total{operation="CreateNetworkInterface",outcome="failure",code="ServiceUnavailable"}',
        ) ?? 0) >= 1,
      );
      assert.equal(
        sample(worker, `eniflow_node_last_successful_pass_timestamp_seconds${node}`),
        undefined,
        'no pass of the node has succeeded',
      );

      await admin.clearFaults();
      await scenario.waitForCr('both pods bound, with no signal', allBound(scenario, ['a', 'b']), 60_000);
      const recovered = await pollMetrics(port, 'no waiting pod on the node, and the node Ready', (text) =>
        sample(text, `eniflow_node_pods_waiting_for_ip${node}`) === undefined &&
        sample(text, 'eniflow_node_workflows{ipam_state="Ready"}') === 1
          ? text
          : undefined,
      );
      assert.equal(sample(recovered, 'eniflow_node_workflows{ipam_state="Error"}'), 0);
      assert.ok((sample(recovered, 'eniflow_pool_ips{family="ipv4",state="used"}') ?? 0) >= 2);
    } finally {
      await health?.close();
      await watcher?.stop();
      await scenario.close();
    }
  });
});

describe('worker health endpoint', () => {
  it('is alive while starting, ready once the pollers run and Temporal answers, and not ready without either', async () => {
    const scenario = await startNodeScenario(env, {
      name: 'worker-health',
      spec: demoNodeSpec({ instance: 'large-h' }),
      inProcessWorker: false,
    });
    const [host, portText] = env.temporal.address.split(':');
    const proxy = await startTcpProxy({ host: host ?? '127.0.0.1', port: Number(portText) });
    let running: RunningWorker | undefined;
    const health = await startWorkerHealthServer({
      address: '127.0.0.1:0',
      registry: workerMetrics.registry,
      worker: () => running,
      logger,
    });
    try {
      assert.equal((await fetchText(health.port, '/healthz')).status, 200);
      assert.deepEqual(await fetchText(health.port, '/readyz'), { status: 503, text: 'worker starting\n' });
      const config = loadWorkerConfig({
        ...scenario.workerProcessEnv(),
        TEMPORAL_ADDRESS: `127.0.0.1:${String(proxy.port)}`,
      });
      running = await startWorker({ config, logger, workflowBundle: env.bundle });
      await pollUntil(async () => ((await fetchText(health.port, '/readyz')).status === 200 ? true : undefined), {
        description: '/readyz 200 once the worker polls',
        timeoutMs: 30_000,
      });
      proxy.cut();
      const cut = await pollUntil(
        async () => {
          const readyz = await fetchText(health.port, '/readyz');
          return readyz.status === 503 ? readyz.text : undefined;
        },
        { description: '/readyz 503 while Temporal is unreachable', timeoutMs: 30_000 },
      );
      assert.match(cut, /Temporal unreachable|not serving|pollers/);
      assert.equal((await fetchText(health.port, '/healthz')).status, 200, 'still alive: the SDK reconnects');
      proxy.restore();
      await pollUntil(async () => ((await fetchText(health.port, '/readyz')).status === 200 ? true : undefined), {
        description: '/readyz 200 again once Temporal answers',
        timeoutMs: 60_000,
      });
      assert.match((await fetchText(health.port, '/metrics')).text, /^# TYPE eniflow_ecs_calls_total counter$/m);
      await running.stop();
      const stopped = await fetchText(health.port, '/readyz');
      assert.equal(stopped.status, 503);
      assert.match(stopped.text, /worker is (STOPPED|DRAINED|DRAINING|STOPPING)/);
    } finally {
      await running?.stop();
      await health.close();
      await proxy.close();
      await scenario.close();
    }
  });
});
