/**
 * Every metric the README lists is served in every role layout, as `npm start` starts them (configuration from the
 * environment, on the shared test servers and an emulator): `--role worker` serves the worker's, `--role watcher`
 * the watcher's, `--role all` both, on the one `HEALTH_ADDRESS`. The README's list (its "Metrics" section) is
 * checked against the registries both ways, so the two cannot drift.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';

import { pino } from 'pino';

import { pollUntil } from '../../../scripts/lib/poll-until.js';
import { TEST_ENV_VARS, requireTestEnvVar } from '../../../scripts/lib/test-env-vars.js';
import { startRoles } from '../../../src/start-roles.js';
import type { Role } from '../../../src/start-roles.js';
import { watcherRegistry } from '../../../src/watcher/health-server.js';
import type { HealthSource } from '../../../src/watcher/health-server.js';
import { createWorkerMetrics } from '../../../src/worker/metrics.js';
import { startEmulatorHarness } from '../../support/ecs-emulator.js';
import type { EmulatorHarness } from '../../support/ecs-emulator.js';
import { TEST_CLUSTER_ID, uniqueName } from '../../support/kube-env.js';
import { connectTemporalTestEnv, uniqueTaskQueue } from '../../support/temporal-env.js';
import type { TemporalTestEnv } from '../../support/temporal-env.js';

const logger = pino({ level: process.env['TEST_LOG_LEVEL'] ?? 'silent' });
let temporal: TemporalTestEnv;
let emulator: EmulatorHarness;

before(async () => {
  temporal = await connectTemporalTestEnv();
  emulator = await startEmulatorHarness();
});
after(async () => {
  await emulator.close();
  await temporal.close();
});

/** The metric names the README's "Metrics" table lists for a role. */
function readmeMetrics(role: 'worker' | 'watcher'): string[] {
  const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');
  const section = readme.slice(readme.indexOf('\n### Metrics\n'), readme.indexOf('\n## How a node is reconciled'));
  const row = section.split('\n').find((line) => line.startsWith(`| ${role} `));
  assert.ok(row, `the README's Metrics table has a ${role} row`);
  return [...new Set([...row.matchAll(/`(eniflow_[a-z0-9_]+)`/g)].map((match) => match[1] ?? ''))].sort();
}

const idleSource: HealthSource = {
  isSynced: () => true,
  metrics: () => ({ signalsSent: 0, signalFailures: 0, isLeader: false, leader: { acquired: 0 }, informers: {} }),
} as unknown as HealthSource;

async function eniflowNames(registry: { getMetricsAsJSON(): Promise<{ name: string }[]> }): Promise<string[]> {
  return (await registry.getMetricsAsJSON())
    .map((metric) => metric.name)
    .filter((name) => name.startsWith('eniflow_'))
    .sort();
}

/** The metric names a scrape of `/metrics` declares (`# TYPE <name> <type>`), served with or without samples. */
function declaredNames(exposition: string): Set<string> {
  return new Set([...exposition.matchAll(/^# TYPE (\S+) /gm)].map((match) => match[1] ?? ''));
}

/** Starts `role` as `npm start -- --role <role>` does, scrapes its health address, and stops it. */
async function scrapeLayout(role: Role): Promise<{ metrics: Set<string>; ready: string }> {
  const env: NodeJS.ProcessEnv = {
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_NAMESPACE: temporal.namespace,
    TEMPORAL_TASK_QUEUE: uniqueTaskQueue(`layout-${role}`),
    KUBECONFIG: requireTestEnvVar(TEST_ENV_VARS.kubeconfig),
    ECS_REGION_ID: emulator.emulator.regionId,
    ECS_ENDPOINT: emulator.emulator.endpoint,
    ECS_PROTOCOL: 'http',
    ALIBABA_CLOUD_ACCESS_KEY_ID: emulator.emulator.accessKeyId,
    ALIBABA_CLOUD_ACCESS_KEY_SECRET: emulator.emulator.accessKeySecret,
    LEASE_NAMESPACE: 'default',
    LEASE_NAME: uniqueName('eniflow-watcher'),
    ENIFLOW_CLUSTER_ID: TEST_CLUSTER_ID,
    HEALTH_ADDRESS: '127.0.0.1:0',
  };
  const running = await startRoles({ role, env, logger });
  try {
    const port = running.find((started) => started.name === 'health')?.port;
    assert.ok(port !== undefined, `--role ${role} serves HEALTH_ADDRESS`);
    const base = `http://127.0.0.1:${String(port)}`;
    const ready = await pollUntil(
      async () => {
        const response = await fetch(`${base}/readyz`);
        const body = await response.text();
        return response.status === 200 ? body : undefined;
      },
      { description: `--role ${role} ready`, timeoutMs: 60_000, intervalMs: 200 },
    );
    const live = await fetch(`${base}/healthz`);
    assert.equal(live.status, 200);
    const scrape = await fetch(`${base}/metrics`);
    assert.equal(scrape.status, 200);
    return { metrics: declaredNames(await scrape.text()), ready };
  } finally {
    for (const started of [...running].reverse()) await started.stop();
  }
}

describe('metrics in every role layout', () => {
  it("lists in the README exactly the metrics each role's registry exports", async () => {
    assert.deepEqual(readmeMetrics('worker'), await eniflowNames(createWorkerMetrics().registry));
    assert.deepEqual(readmeMetrics('watcher'), await eniflowNames(watcherRegistry(idleSource)));
  });

  const layouts: { role: Role; serves: ('worker' | 'watcher')[] }[] = [
    { role: 'all', serves: ['worker', 'watcher'] },
    { role: 'worker', serves: ['worker'] },
    { role: 'watcher', serves: ['watcher'] },
  ];
  for (const layout of layouts) {
    it(`--role ${layout.role} serves the ${layout.serves.join(' and ')} metrics the README lists, and Node's once`, async () => {
      const { metrics, ready } = await scrapeLayout(layout.role);
      assert.equal(ready.trim(), 'ok');
      for (const role of ['worker', 'watcher'] as const) {
        for (const name of readmeMetrics(role)) {
          assert.equal(metrics.has(name), layout.serves.includes(role), `${name} (${role}) on --role ${layout.role}`);
        }
      }
      assert.ok(metrics.has('process_cpu_user_seconds_total') && metrics.has('nodejs_eventloop_lag_p99_seconds'));
    });
  }
});
