/**
 * The worker's Prometheus endpoint carries eniflow's ECS call metrics next to the Temporal SDK's. The runtime is
 * installed with a metrics endpoint before any connection, as `npm run worker` does with METRICS_ADDRESS.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import * as $Ecs from '@alicloud/ecs20140526';
import { Runtime } from '@temporalio/worker';

import { pollUntil } from '../../scripts/lib/poll-until.js';
import { reserveFreePorts } from '../../scripts/lib/free-ports.js';
import { runJanitorUpdate } from '../../src/workflows/janitor-workflow.js';
import type { eniJanitorWorkflow } from '../../src/workflows/janitor-workflow.js';
import { JANITOR_WORKFLOW_TYPE } from '../../src/workflows/workflow-ids.js';
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

  it('serves the janitor’s passes, orphans found and ENIs deleted', async () => {
    const scenario = await startNodeScenario(env, {
      name: 'janitor-metrics',
      spec: demoNodeSpec({ instance: 'large-h' }),
    });
    const janitor = await env.temporal.client.workflow.start<typeof eniJanitorWorkflow>(JANITOR_WORKFLOW_TYPE, {
      workflowId: `janitor-metrics-${scenario.nodeName}`,
      taskQueue: scenario.taskQueue,
      args: [{ settings: { graceMs: 0, intervalMs: 60 * 60_000 } }],
    });
    try {
      await scenario.emulator.createEni({
        tag: [new $Ecs.CreateNetworkInterfaceRequestTag({ key: 'creator', value: 'eniflow' })],
      });
      const report = await janitor.executeUpdate(runJanitorUpdate, { args: [{}] });
      assert.equal(report.deleted.length, 1);
      const text = await pollUntil(
        async () => {
          const body = await (await fetch(`http://127.0.0.1:${String(metricsPort)}/metrics`)).text();
          return body.includes('eniflow_janitor_deleted_enis') ? body : undefined;
        },
        { description: 'janitor metrics on the endpoint', timeoutMs: 30_000 },
      );
      assert.match(text, /eniflow_janitor_deleted_enis(_total)?\{[^}]*\} 1\b/);
      assert.match(text, /eniflow_janitor_passes(_total)?\{[^}]*dry_run="false"[^}]*\} 1\b/);
      assert.match(text, /eniflow_janitor_orphans\{[^}]*dry_run="false"[^}]*\} 1\b/);
    } finally {
      await janitor.terminate('test finished');
      await scenario.close();
    }
  });
});
