/**
 * Cost follows change, not time: an idle node's workflow schedules no activity while nothing changes and
 * GC has no work, wakes on its own only while GC has work left, and its slow safety net heals a lost signal.
 * Real Temporal dev server and kube-apiserver, the ECS emulator; the timers are shortened so "an hour" is seconds.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import type { WorkflowHandle } from '@temporalio/client';

import { pollUntil } from '../../../scripts/lib/poll-until.js';
import { countIdleIps } from '../../../src/ipam/index.js';
import { allBound, bindingsOf, demoNodeSpec, openScenarioEnv, withScenario } from '../../support/node-scenario.js';
import type { ScenarioEnv } from '../../support/node-scenario.js';

let env: ScenarioEnv;
before(async () => {
  env = await openScenarioEnv();
});
after(async () => {
  await env.close();
});

/** Activities the workflow has scheduled so far (from its history). */
async function scheduledActivities(workflow: WorkflowHandle): Promise<string[]> {
  const history = await workflow.fetchHistory();
  return (history.events ?? []).flatMap((event) => {
    const name = event.activityTaskScheduledEventAttributes?.activityType?.name;
    return name === undefined || name === null ? [] : [name];
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('event-driven passes', () => {
  it('schedules no activity on an idle node, wakes only while GC has work, then sleeps again', async () => {
    const spec = demoNodeSpec({ instance: 'large-h', pool: { minPoolSize: 0, maxPoolSize: 1 } });
    await withScenario(
      env,
      // The safety net (idleWakeMs) stands for hours; the GC period is short so GC work shows at once.
      { name: 'idle-node', spec, settings: { idleWakeMs: 10 * 60_000, gcPeriodMs: 1_000 } },
      async (scenario) => {
        const pods = ['a', 'b', 'c', 'd'];
        await scenario.createPods(pods);
        await scenario.signal();
        await scenario.waitForCr('4 pods bound', allBound(scenario, pods));
        await pollUntil(
          async () => {
            const state = await scenario.state();
            return state.ipamState === 'Ready' && state.pendingOperations.length === 0 ? true : undefined;
          },
          { description: 'settled', timeoutMs: 30_000 },
        );
        await sleep(1_500);
        const settled = (await scheduledActivities(scenario.workflow)).length;
        const passes = (await scenario.state()).reconcileCount;
        await sleep(8_000);
        assert.equal((await scheduledActivities(scenario.workflow)).length, settled, 'no activity while idle');
        assert.equal((await scenario.state()).reconcileCount, passes, 'no pass while idle');

        // Pods go: idle IPs above maxPoolSize are GC work, so the node wakes by itself (no signal) to release them.
        await scenario.deletePods(['a', 'b', 'c']);
        await scenario.signal('pods-deleted');
        await scenario.waitForCr('the pool shrunk to maxPoolSize without another signal', (cr) => {
          const enis = cr.status?.networkInterfaces ?? {};
          return bindingsOf(cr).size === 1 && countIdleIps({ enis, family: 'ipv4' }) <= 1 ? cr : undefined;
        });
        await sleep(2_500);
        const afterGc = (await scheduledActivities(scenario.workflow)).length;
        const passesAfterGc = (await scenario.state()).reconcileCount;
        await sleep(6_000);
        assert.equal((await scheduledActivities(scenario.workflow)).length, afterGc, 'asleep again once GC is done');
        assert.equal((await scenario.state()).reconcileCount, passesAfterGc);
      },
    );
  });

  it('heals a lost signal with the safety net', async () => {
    const spec = demoNodeSpec({ instance: 'large-h', pool: { minPoolSize: 0, maxPoolSize: 3 } });
    await withScenario(env, { name: 'lost-signal', spec, settings: { idleWakeMs: 3_000 } }, async (scenario) => {
      await scenario.createPods(['a']);
      await scenario.signal();
      await scenario.waitForCr('pod a bound', allBound(scenario, ['a']));
      const passes = (await scenario.state()).reconcileCount;
      // The watcher's signal for this pod is "lost": nobody signals.
      await scenario.createPods(['late']);
      await scenario.waitForCr('the late pod bound by the safety net', allBound(scenario, ['late']), 20_000);
      assert.ok((await scenario.state()).signalsReceived <= 1, 'no signal was sent for the late pod');
      assert.ok((await scenario.state()).reconcileCount > passes);
    });
  });
});
