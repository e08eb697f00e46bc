/**
 * What outlives a run: a new run after continue-as-new takes the next OpenAPI sync time from the CR
 * instead of syncing again, clears an `IPAMConfigValid=False` the previous run set once the spec is fixed, and
 * replays with the settings it was started with. Real Temporal dev server and kube-apiserver, the ECS emulator.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';

import { pollUntil } from '../../../scripts/lib/poll-until.js';
import { DEFAULT_NODE_SETTINGS, reconcileSignal } from '../../../src/workflows/messages.js';
import { NODE_CR_RESOURCE } from '../../support/kube-env.js';
import { TEST_CLUSTER_ID, allBound, demoNodeSpec, openScenarioEnv, withScenario } from '../../support/node-scenario.js';
import type { NodeScenario, ScenarioEnv } from '../../support/node-scenario.js';

let env: ScenarioEnv;
before(async () => {
  env = await openScenarioEnv();
});
after(async () => {
  await env.close();
});

/** Pokes the workflow until it has continued as new `times` times; returns the run ids seen. */
async function continueAsNew(scenario: NodeScenario, times: number): Promise<string[]> {
  const runs = [(await scenario.workflow.describe()).runId];
  while (runs.length <= times) {
    await scenario.workflow.signal(reconcileSignal, { reason: 'poke' });
    const next = await pollUntil(
      async () => {
        const described = await scenario.workflow.describe();
        return !runs.includes(described.runId) && described.status.name === 'RUNNING' ? described.runId : undefined;
      },
      { description: 'the workflow to continue as new', timeoutMs: 5_000 },
    ).catch(() => undefined);
    if (next !== undefined) runs.push(next);
  }
  return runs;
}

describe('state across continue-as-new', () => {
  it('a new run takes the next sync time from the CR instead of syncing again', async () => {
    await withScenario(
      env,
      { name: 'sync-time-carried', spec: demoNodeSpec({ instance: 'large-h' }), settings: { maxPassesPerRun: 2 } },
      async (scenario) => {
        await scenario.createPods(['a']);
        await scenario.signal();
        await scenario.waitForCr('pod bound', allBound(scenario, ['a']));
        const runs = await continueAsNew(scenario, 3);
        assert.equal(new Set(runs).size, 4);
        await scenario.createPods(['b']);
        await scenario.workflow.signal(reconcileSignal, { reason: 'after' });
        await scenario.waitForCr('the last run still allocates', allBound(scenario, ['a', 'b']));
        const listings = (await scenario.emulator.emulator.admin.calls({ action: 'DescribeNetworkInterfaces' })).filter(
          (call) => call.params['InstanceId'] !== undefined,
        );
        assert.equal(listings.length, 1, 'one OpenAPI sync in four runs: the CR says when the next is due');
      },
    );
  });

  it('clears IPAMConfigValid=False set by an earlier run once the spec is fixed', async () => {
    const spec = demoNodeSpec({ instance: 'large-h' });
    const broken = { ...spec, eni: { ...spec.eni, tagFilter: { '': 'x' } } };
    await withScenario(
      env,
      { name: 'config-condition-carried', spec: broken, settings: { maxPassesPerRun: 2 } },
      async (scenario) => {
        const conditionStatus = async (): Promise<string | undefined> => {
          const node = await env.kube.core.readNode({ name: scenario.nodeName });
          return node.status?.conditions?.find((c) => c.type === 'IPAMConfigValid')?.status;
        };
        await scenario.signal();
        await pollUntil(async () => ((await conditionStatus()) === 'False' ? true : undefined), {
          description: 'IPAMConfigValid=False',
          timeoutMs: 30_000,
        });
        await continueAsNew(scenario, 1);
        await env.kube.customObjects.patchClusterCustomObject(
          { ...NODE_CR_RESOURCE, name: scenario.nodeName, body: { spec: { eni: { tagFilter: null } } } },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        );
        await scenario.workflow.signal(reconcileSignal, { reason: 'spec-fixed' });
        await pollUntil(async () => ((await conditionStatus()) === 'True' ? true : undefined), {
          description: 'IPAMConfigValid=True in a run that never set it False',
          timeoutMs: 30_000,
        });
      },
    );
  });

  it('runs with the production default settings it was started with (recorded for the replay tests)', async () => {
    await withScenario(
      env,
      {
        name: 'production-defaults',
        spec: demoNodeSpec({ instance: 'large-h' }),
        settings: { ...DEFAULT_NODE_SETTINGS, clusterId: TEST_CLUSTER_ID },
      },
      async (scenario) => {
        await scenario.createPods(['a', 'b']);
        await scenario.signal();
        await scenario.waitForCr('pods bound', allBound(scenario, ['a', 'b']));
        const history = await scenario.workflow.fetchHistory();
        const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
        assert.ok(started?.input?.payloads?.[0]?.data, 'the settings are in the start event');
        const input = JSON.parse(Buffer.from(started.input.payloads[0].data).toString('utf8')) as {
          settings?: Record<string, unknown>;
        };
        assert.deepEqual(input.settings, { ...DEFAULT_NODE_SETTINGS, clusterId: TEST_CLUSTER_ID });
        // With ENIFLOW_RECORD_HISTORIES=1 the scenario's close records this history as production-defaults.json.
      },
    );
  });
});
