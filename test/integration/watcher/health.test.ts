/**
 * The watcher's health endpoint: ready once its informers have listed, alive while it answers, and its counters
 * (with Node's process metrics) in Prometheus text.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { pino } from 'pino';

import { pollUntil } from '../../../scripts/lib/poll-until.js';
import { startHealthServer } from '../../../src/watcher/health-server.js';
import { healthSourceOf, runWatcher } from '../../../src/watcher/run-watcher.js';
import type { WatcherHandle } from '../../../src/watcher/run-watcher.js';
import { kubeTestClients, uniqueName } from '../../support/kube-env.js';
import { connectTemporalTestEnv, uniqueTaskQueue } from '../../support/temporal-env.js';
import type { TemporalTestEnv } from '../../support/temporal-env.js';
import { testWatcherConfig } from './watcher-harness.js';

let temporal: TemporalTestEnv;
let watcher: WatcherHandle;
let health: { port: number; close(): Promise<void> };
const logger = pino({ level: 'silent' });

before(async () => {
  temporal = await connectTemporalTestEnv();
  const config = testWatcherConfig({
    taskQueue: uniqueTaskQueue('health'),
    temporalAddress: temporal.address,
    temporalNamespace: temporal.namespace,
    leaseNamespace: 'default',
    leaseName: uniqueName('health-lease'),
    identity: 'health-test',
  });
  watcher = await runWatcher(config, {
    kubeConfig: kubeTestClients().kubeConfig,
    temporalClient: temporal.client,
    logger,
  });
  health = await startHealthServer({ address: '127.0.0.1:0', source: healthSourceOf(watcher), logger });
});

after(async () => {
  await health.close();
  await watcher.stop();
  await temporal.close();
});

const get = async (path: string) => {
  const response = await fetch(`http://127.0.0.1:${String(health.port)}${path}`);
  return { status: response.status, text: await response.text() };
};

describe('watcher health endpoint', () => {
  it('answers /healthz, becomes ready once synced, and serves its counters', async () => {
    assert.equal((await get('/healthz')).status, 200);
    await pollUntil(async () => ((await get('/readyz')).status === 200 ? true : undefined), {
      description: '/readyz to answer 200',
      timeoutMs: 30_000,
    });
    const metrics = await pollUntil(
      async () => {
        const body = (await get('/metrics')).text;
        return body.includes('eniflow_watcher_is_leader 1') ? body : undefined;
      },
      { description: 'the watcher to lead', timeoutMs: 30_000 },
    );
    assert.match(metrics, /# TYPE eniflow_watcher_signals_sent_total counter/);
    assert.match(metrics, /eniflow_watcher_informer_lists_total\{informer="pods"\} [1-9]/);
    // Node's default process metrics come along (prom-client's collectDefaultMetrics).
    assert.match(metrics, /^process_cpu_user_seconds_total \d/m);
    assert.match(metrics, /^nodejs_eventloop_lag_seconds \d/m);
    assert.equal((await get('/nope')).status, 404);
  });
});
