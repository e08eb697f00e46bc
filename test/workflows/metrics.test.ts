/**
 * The worker's Prometheus endpoint carries eniflow's ECS call metrics next to the Temporal SDK's. The runtime is
 * installed with a metrics endpoint before any connection, as `npm run worker` does with METRICS_ADDRESS.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { Runtime } from '@temporalio/worker';

import { pollUntil } from '../../scripts/lib/poll-until.js';
import { reserveFreePorts } from '../../scripts/lib/free-ports.js';
import { bindingsOf, demoNodeSpec, openScenarioEnv, startNodeScenario } from '../support/node-scenario.js';
import type { ScenarioEnv } from '../support/node-scenario.js';

const [metricsPort] = await reserveFreePorts(1);
Runtime.install({ telemetryOptions: { metrics: { prometheus: { bindAddress: `127.0.0.1:${String(metricsPort)}` } } } });

let env: ScenarioEnv;
before(async () => {
  env = await openScenarioEnv();
});
after(async () => {
  await env.close();
});

describe('worker metrics', () => {
  it('serves ECS call counts and latencies by operation and result code', async () => {
    const scenario = await startNodeScenario(env, { name: 'metrics', spec: demoNodeSpec({ instance: 'large-h' }) });
    try {
      await scenario.createPods(['a']);
      await scenario.signal();
      await scenario.waitForCr('pod bound', (cr) => (bindingsOf(cr).size === 1 ? true : undefined));
      const text = await pollUntil(
        async () => {
          const body = await (await fetch(`http://127.0.0.1:${String(metricsPort)}/metrics`)).text();
          return /eniflow_ecs_calls\{[^}]*operation="CreateNetworkInterface"/.test(body) ? body : undefined;
        },
        { description: 'eniflow metrics on the endpoint', timeoutMs: 30_000 },
      );
      assert.match(
        text,
        /eniflow_ecs_calls\{[^}]*code="OK"[^}]*operation="AttachNetworkInterface"|eniflow_ecs_calls\{[^}]*operation="AttachNetworkInterface"[^}]*code="OK"/,
      );
      assert.match(text, /eniflow_ecs_call_duration_bucket\{/);
      assert.match(text, /temporal_/, 'the SDK metrics are on the same endpoint');
    } finally {
      await scenario.close();
    }
  });
});
