/**
 * Durability and failure scenarios of the node workflow: an exhausted vSwitch, a worker killed mid create-attach,
 * continue-as-new, and the deletion of the node. Real servers, the emulator over the SDK, nothing mocked.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';

import { pollUntil } from '../../../scripts/lib/poll-until.js';
import { ENIFLOW_NODE_TAG } from '../../../src/ipam/index.js';
import { reconcileSignal } from '../../../src/workflows/messages.js';
import { NODE_NAME_SEARCH_ATTRIBUTE } from '../../../src/shared/workflow-ids.js';
import { DEMO, demoFixtureWithTinyVSwitch } from '../../support/ecs-emulator.js';
import { deleteNodeCr } from '../../support/kube-env.js';
import {
  allBound,
  bindingsOf,
  demoNodeSpec,
  openScenarioEnv,
  recordHistoryIfAsked,
  withScenario,
} from '../../support/node-scenario.js';
import type { NodeScenario, ScenarioEnv } from '../../support/node-scenario.js';

let env: ScenarioEnv;
before(async () => {
  env = await openScenarioEnv();
});
after(async () => {
  await env.close();
});

const WORKER_MAIN = fileURLToPath(new URL('../../../src/worker/main.ts', import.meta.url));

/** Runs the real worker process (`npm run worker`'s entry) for a scenario. */
function startWorkerProcess(scenario: NodeScenario): { child: ChildProcess; exited: Promise<number | null> } {
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER_MAIN], {
    env: scenario.workerProcessEnv(),
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      resolve(code);
    }),
  );
  return { child, exited };
}

describe('node IPAM workflow durability', () => {
  it('an exhausted vSwitch is blocked and reported: ENI InsufficientIP, Node SufficientIP=False, an Event', async () => {
    await withScenario(
      env,
      {
        name: 'exhausted',
        spec: demoNodeSpec({
          instance: 'large-h',
          vSwitchIds: [DEMO.vSwitchHSmall],
          pool: { minPoolSize: 0, maxPoolSize: 5 },
        }),
        emulator: { fixture: await demoFixtureWithTinyVSwitch() },
      },
      async (scenario) => {
        const pods = ['a', 'b', 'c', 'd', 'e', 'f'];
        await scenario.createPods(pods);
        await scenario.signal();
        const condition = await scenario.waitForCr(
          'an InsufficientIP ENI condition',
          (cr) =>
            Object.values(cr.status?.networkInterfaces ?? {}).find(
              (eni) => eni.conditions?.InsufficientIP !== undefined,
            )?.conditions?.InsufficientIP,
        );
        assert.equal(condition.message, `${DEMO.vSwitchHSmall} ip is not enough`);
        const cr = await scenario.readCr();
        assert.equal(bindingsOf(cr).size, 4, 'the four addresses of the /29 serve four pods');
        const sufficient = await pollUntil(
          async () => {
            const node = await env.kube.core.readNode({ name: scenario.nodeName });
            const found = node.status?.conditions?.find((c) => c.type === 'SufficientIP');
            return found?.status === 'False' ? found : undefined;
          },
          { description: 'SufficientIP=False', timeoutMs: 30_000 },
        );
        assert.equal(sufficient.reason, 'InsufficientIP');
        // The Warning follows the condition patch in the same pass; the poll may see the condition first.
        await pollUntil(
          async () => {
            const events = await env.kube.core.listNamespacedEvent({
              namespace: 'default',
              fieldSelector: `involvedObject.name=${scenario.nodeName}`,
            });
            return events.items.some((e) => e.reason === 'InsufficientIP' && e.type === 'Warning') ? true : undefined;
          },
          { description: 'the InsufficientIP Warning on the node', timeoutMs: 10_000 },
        );
        const state = await scenario.state();
        assert.equal(state.ipamState, 'InsufficientIP');
        // The worker counted the 4 addresses the create took: no ask was sent to the vSwitch it knew to be empty.
        const stuck = await pollUntil(
          async () => {
            const now = await scenario.state();
            return now.stuckWait;
          },
          { description: 'the node waiting on the vSwitch', timeoutMs: 30_000 },
        );
        assert.deepEqual(stuck.wakeOnVSwitches, [DEMO.vSwitchHSmall]);
        const refusedAssigns = (
          await scenario.emulator.emulator.admin.calls({ action: 'AssignPrivateIpAddresses' })
        ).filter((c) => c.code !== 'Success');
        assert.equal(refusedAssigns.length, 0);
        const bound = bindingsOf(await scenario.readCr());
        const waiting = pods.filter((pod) => !bound.has(`${scenario.namespace}/${pod}`));
        assert.equal(waiting.length, 2);
        const podEvents = await pollUntil(
          async () => {
            const list = await env.kube.core.listNamespacedEvent({ namespace: scenario.namespace });
            const found = list.items.filter((e) => e.reason === 'IPAllocationPending');
            return found.length >= 2 ? found : undefined;
          },
          { description: 'IPAllocationPending events on the waiting pods', timeoutMs: 30_000 },
        );
        assert.deepEqual(podEvents.map((e) => e.involvedObject.name).sort(), waiting.sort());
        for (const event of podEvents) assert.match(event.message ?? '', /vSwitch exhausted/);
        const creates = await scenario.emulator.emulator.admin.calls({ action: 'CreateNetworkInterface' });
        const afterBlock = creates.filter((c) => c.code !== 'Success');
        assert.ok(afterBlock.length <= 1, 'once blocked, the vSwitch is not tried again for new ENIs');
      },
    );
  });

  it('pods of a node that is not Ready get no IP and an event saying why', async () => {
    await withScenario(
      env,
      {
        name: 'not-ready',
        spec: demoNodeSpec({ instance: 'large-h' }),
        coreNodeReady: false,
        settings: { pendingPodEventAfterMs: 500 },
      },
      async (scenario) => {
        await scenario.createPods(['a']);
        await scenario.signal();
        const event = await pollUntil(
          async () => {
            const list = await env.kube.core.listNamespacedEvent({ namespace: scenario.namespace });
            return list.items.find((e) => e.reason === 'IPAllocationPending');
          },
          { description: 'an IPAllocationPending event', timeoutMs: 30_000 },
        );
        assert.equal(event.involvedObject.name, 'a');
        assert.match(event.message ?? '', /not Ready/);
        const state = await scenario.state();
        assert.equal(state.ipamState, 'NodeNotReady');
        assert.equal((await scenario.emulator.emulator.admin.calls({ action: 'CreateNetworkInterface' })).length, 0);
      },
    );
  });

  it('a worker killed (SIGKILL) mid create-attach resumes on a new worker and leaks no ENI', async () => {
    await withScenario(
      env,
      { name: 'sigkill', spec: demoNodeSpec({ instance: 'large-h' }), inProcessWorker: false },
      async (scenario) => {
        const admin = scenario.emulator.emulator.admin;
        await admin.updateSettings({ transitionDelays: { attachMs: 4_000 } });
        await scenario.createPods(['a', 'b']);
        const first = startWorkerProcess(scenario);
        await scenario.signal();
        await pollUntil(
          async () => ((await admin.calls({ action: 'AttachNetworkInterface' })).length > 0 ? true : undefined),
          { description: 'the attach to start', timeoutMs: 60_000 },
        );
        first.child.kill('SIGKILL');
        assert.equal(await first.exited, null, 'the worker died from the signal');
        await admin.updateSettings({ transitionDelays: { attachMs: 0 } });
        const second = startWorkerProcess(scenario);
        try {
          await scenario.waitForCr('2 pods bound after the restart', allBound(scenario, ['a', 'b']), 120_000);
          const cr = await scenario.readCr();
          const inStatus = new Set(Object.keys(cr.status?.networkInterfaces ?? {}));
          const ours = (await admin.inventory()).networkInterfaces.filter(
            (e) => e.tags['eniflow.io/node'] === scenario.nodeName,
          );
          assert.ok(ours.length >= 1);
          for (const eni of ours) assert.ok(inStatus.has(eni.eniId), `${eni.eniId} is known to the CR`);
          const creates = await admin.calls({ action: 'CreateNetworkInterface' });
          assert.equal(creates.length, 1, 'the create was not repeated');
        } finally {
          second.child.kill('SIGTERM');
          assert.equal(await second.exited, 0, 'the worker shuts down cleanly on SIGTERM');
        }
      },
    );
  });

  it('continue-as-new keeps the working state', async () => {
    await withScenario(
      env,
      { name: 'continue-as-new', spec: demoNodeSpec({ instance: 'large-h' }), settings: { maxPassesPerRun: 2 } },
      async (scenario) => {
        await scenario.createPods(['a']);
        await scenario.signal();
        await scenario.waitForCr('pod bound', allBound(scenario, ['a']));
        const firstRun = (await scenario.workflow.describe()).runId;
        await scenario.workflow.signal(reconcileSignal, { reason: 'poke' });
        const described = await pollUntil(
          async () => {
            const d = await scenario.workflow.describe();
            return d.runId !== firstRun && d.status.name === 'RUNNING' ? d : undefined;
          },
          { description: 'the workflow to continue as new', timeoutMs: 30_000 },
        );
        assert.equal(described.typedSearchAttributes.get(NODE_NAME_SEARCH_ATTRIBUTE), scenario.nodeName);
        // The first run's history ends in ContinueAsNew: the replay tests keep it.
        await recordHistoryIfAsked({
          workflow: env.temporal.client.workflow.getHandle(scenario.workflow.workflowId, firstRun),
          name: 'continue-as-new-first-run',
        });
        const state = await pollUntil(
          async () => {
            const s = await scenario.state();
            return s.reconcileCount > 2 ? s : undefined;
          },
          { description: 'a pass in the new run', timeoutMs: 30_000 },
        );
        assert.ok(state.signalsReceived >= 2, 'counters carried over');
        await scenario.createPods(['b']);
        await scenario.workflow.signal(reconcileSignal, { reason: 'after-can' });
        await scenario.waitForCr('the new run still allocates', allBound(scenario, ['a', 'b']));
      },
    );
  });

  it('a Node CR being deleted gets its ENIs deleted and its finalizer removed; the workflow ends', async () => {
    await withScenario(
      env,
      { name: 'deleted', spec: demoNodeSpec({ instance: 'large-h' }), finalizer: true },
      async (scenario) => {
        await scenario.createPods(['a']);
        await scenario.signal();
        const bindings = await scenario.waitForCr('pod bound', allBound(scenario, ['a']));
        const eniId = [...bindings.values()][0]?.eniId ?? '';
        await deleteNodeCr(env.kube, scenario.nodeName);
        await scenario.workflow.signal(reconcileSignal, { reason: 'node-cr-deleted' });
        const result = await scenario.workflow.result();
        assert.equal(result.ipamState, 'Gone');
        const inventory = await scenario.emulator.emulator.admin.inventory();
        assert.equal(
          inventory.networkInterfaces.find((e) => e.eniId === eniId),
          undefined,
          'the ENI was deleted in the cloud',
        );
        await assert.rejects(scenario.readCr(), 'the CR is gone once the finalizer is removed');
      },
    );
  });

  it('a Node CR deleted without a finalizer while its pass attaches a new ENI: the ENI is released; the workflow ends', async () => {
    await withScenario(
      env,
      {
        name: 'vanished',
        spec: demoNodeSpec({ instance: 'large-h' }),
        // The attach takes 3 s: the CR goes while the pass waits for it, and the pass's status write finds it gone.
        emulator: { settings: { transitionDelays: { attachMs: 3_000 } } },
      },
      async (scenario) => {
        const { admin } = scenario.emulator.emulator;
        await scenario.createPods(['a']);
        await scenario.signal();
        await pollUntil(
          async () => ((await admin.calls({ action: 'CreateNetworkInterface' })).length > 0 ? true : undefined),
          { description: 'the create answered', timeoutMs: 30_000, intervalMs: 100 },
        );
        // No finalizer holds it: the CR is gone at once, while the new ENI is still attaching.
        await deleteNodeCr(env.kube, scenario.nodeName);
        await scenario.workflow.signal(reconcileSignal, { reason: 'node-cr-deleted' });
        const result = await scenario.workflow.result();
        assert.equal(result.ipamState, 'Gone');
        const created = (await admin.calls({ action: 'CreateNetworkInterface' })).filter((call) => call.applied);
        assert.ok(created.length >= 1, 'the create went through');
        const madeForNode = async () =>
          (await admin.inventory()).networkInterfaces.filter((eni) => eni.tags[ENIFLOW_NODE_TAG] === scenario.nodeName);
        // Every ENI made for the node is being deleted when the workflow ends (the cloud finishes a delete later).
        const atEnd = await madeForNode();
        assert.deepEqual(
          atEnd.map((eni) => eni.status),
          atEnd.map(() => 'Deleting'),
        );
        await pollUntil(async () => ((await madeForNode()).length === 0 ? true : undefined), {
          description: 'the ENI made for the vanished node, found by its tags, deleted',
          timeoutMs: 10_000,
          intervalMs: 100,
        });
      },
    );
  });
});
