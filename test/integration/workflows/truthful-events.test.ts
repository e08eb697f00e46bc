/**
 * Events that tell the truth, on the real servers: a waiting pod's event names the failing call and grows as one
 * series, the core Node carries `ENIOperationsFailing` and the node's events, the node serves its pods soon after
 * the cloud recovers (no signal) and says `Recovered`; a blocked vSwitch shows in `state` and a resync lifts it.
 */
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';

import type { CoreV1Event } from '@kubernetes/client-node';

import { pollUntil } from '../../../scripts/lib/poll-until.js';
import { resyncSignal, stateQuery } from '../../../src/workflows/messages.js';
import type { NodeIpamSettings } from '../../../src/workflows/messages.js';
import { CARRIED_STATE_VERSION } from '../../../src/workflows/node/memory/carried-state.js';
import { nodeWorkflowId } from '../../../src/shared/workflow-ids.js';
import type { continuedNodeStart } from '../../support/continued-start-workflows.js';
import { DEMO } from '../../support/ecs-emulator.js';
import {
  createCoreNode,
  createNodeCr,
  createPodOnNode,
  deleteNodeCr,
  readNodeCr,
  readyCondition,
  uniqueName,
} from '../../support/kube-env.js';
import {
  allBound,
  bindingsOf,
  demoNodeSpec,
  openScenarioEnv,
  TEST_SETTINGS,
  withScenario,
} from '../../support/node-scenario.js';
import type { ScenarioEnv } from '../../support/node-scenario.js';

let env: ScenarioEnv;
before(async () => {
  env = await openScenarioEnv({
    workflowsPath: fileURLToPath(new URL('../../support/continued-start-workflows.ts', import.meta.url)),
  });
});
after(async () => {
  await env.close();
});

async function eventsOf(input: { namespace: string; name: string; reason: string }): Promise<CoreV1Event[]> {
  const list = await env.kube.core.listNamespacedEvent({
    namespace: input.namespace,
    fieldSelector: `involvedObject.name=${input.name},reason=${input.reason}`,
  });
  return list.items;
}

async function waitForEvent(
  input: { namespace: string; name: string; reason: string; kind?: string; check?: (event: CoreV1Event) => boolean },
  timeoutMs = 60_000,
): Promise<CoreV1Event> {
  return pollUntil(
    async () =>
      (await eventsOf(input)).find(
        (event) =>
          (input.kind === undefined || event.involvedObject.kind === input.kind) &&
          (input.kind !== 'Node' || event.involvedObject.apiVersion === 'v1') &&
          (input.check?.(event) ?? true),
      ),
    { description: `event ${input.reason} on ${input.name}`, timeoutMs, intervalMs: 250 },
  );
}

/** The production caps: a node that backs off the long way waits up to 5 minutes between passes. */
const PRODUCTION_BACKOFF: Partial<NodeIpamSettings> = {
  maxFailureBackoffMs: 5 * 60_000,
  transientFailureBackoffMs: 10_000,
};

/**
 * Starts a node's workflow as if it had already failed ten passes in a row (carried across continue-as-new), as a
 * node does after minutes of cloud failures: its next backoff is the long cap unless something shortens it.
 */
async function startLongFailingNode(input: {
  nodeName: string;
  taskQueue: string;
  settings: Partial<NodeIpamSettings>;
}): Promise<void> {
  // A fresh start refuses carried state: the test bundle's continuedNodeStart hands it on by continue-as-new.
  await env.temporal.client.workflow.start<typeof continuedNodeStart>('continuedNodeStart', {
    workflowId: nodeWorkflowId(input.nodeName),
    taskQueue: input.taskQueue,
    args: [
      {
        nodeName: input.nodeName,
        settings: { ...TEST_SETTINGS, ...input.settings },
        carried: {
          version: CARRIED_STATE_VERSION,
          needResync: false,
          reconcileCount: 10,
          signalsReceived: 0,
          failureStreak: 10,
          lastErrors: [],
          eventTimes: {},
        },
      },
    ],
  });
}

async function coreCondition(nodeName: string, type: string) {
  const node = await env.kube.core.readNode({ name: nodeName });
  return node.status?.conditions?.find((condition) => condition.type === type);
}

describe('truthful events and self-recovery', () => {
  it('a persistent attach fault: one pod event naming the call grows, the Node says so, and recovery needs no signal', async () => {
    const pods = ['a', 'b', 'c'];
    await withScenario(
      env,
      {
        name: 'attach-5xx',
        spec: demoNodeSpec({ instance: 'large-h' }),
      },
      async (scenario) => {
        const { admin } = scenario.emulator.emulator;
        await admin.addFaults(['AttachNetworkInterface always error ServiceUnavailable 503']);
        await scenario.createPods(pods);
        // Production's long cap: only the short cap for transient failures brings the node back quickly.
        await startLongFailingNode({
          nodeName: scenario.nodeName,
          taskQueue: scenario.taskQueue,
          settings: { ...PRODUCTION_BACKOFF, pendingPodEventAfterMs: 0, eventRepeatMs: 1_000 },
        });

        const podA = { namespace: scenario.namespace, name: 'a', reason: 'IPAllocationPending' };
        const first = await waitForEvent(
          { ...podA, check: (event) => (event.message ?? '').includes('AttachNetworkInterface') },
          90_000,
        );
        assert.match(
          first.message ?? '',
          /AttachNetworkInterface failed with ServiceUnavailable: \d+ attempts since \d{4}-/,
        );
        assert.match(first.message ?? '', /workflow eniflow-node\//);
        const grown = await waitForEvent({ ...podA, check: (event) => (event.count ?? 1) >= 2 }, 120_000);
        assert.equal(grown.metadata?.name, first.metadata?.name, 'the repeat updated the same Event');
        assert.equal((await eventsOf(podA)).length, 1, 'one Event object for one cause');
        const attempts = (message: string | undefined) => Number(/: (\d+) attempts/.exec(message ?? '')?.[1] ?? 0);
        assert.ok(attempts(grown.message) > attempts(first.message), 'the message counts the attempts');

        const failing = await pollUntil(
          async () => {
            const condition = await coreCondition(scenario.nodeName, 'ENIOperationsFailing');
            return condition?.status === 'True' ? condition : undefined;
          },
          { description: 'ENIOperationsFailing True', timeoutMs: 30_000 },
        );
        assert.match(failing.message ?? '', /AttachNetworkInterface failed with ServiceUnavailable/);
        const nodeEvent = await waitForEvent({
          namespace: 'default',
          name: scenario.nodeName,
          reason: 'AllocIPFailed',
          kind: 'Node',
        });
        assert.match(nodeEvent.message ?? '', /AttachNetworkInterface/, 'node events are on the core Node too');
        const state = await scenario.state();
        assert.ok(state.failingOperations?.some((failure) => failure.operation === 'AttachNetworkInterface'));
        assert.equal(bindingsOf(await scenario.readCr()).size, 0);

        await admin.clearFaults();
        // No signal: the short transient backoff alone brings the node back (the long cap would be 5 minutes).
        await scenario.waitForCr('all pods bound after the fault is gone', allBound(scenario, pods), 30_000);
        const recovered = await waitForEvent(
          { namespace: 'default', name: scenario.nodeName, reason: 'Recovered' },
          30_000,
        );
        assert.equal(recovered.type, 'Normal');
        await pollUntil(
          async () =>
            (await coreCondition(scenario.nodeName, 'ENIOperationsFailing'))?.status === 'False' ? true : undefined,
          { description: 'ENIOperationsFailing False', timeoutMs: 30_000 },
        );
        assert.equal((await scenario.state()).failingOperations, undefined);
      },
    );
  });

  it('a vSwitch blocked after IpNotEnough shows in state and an event, and a resync lifts the block', async () => {
    await withScenario(env, { name: 'vsw-block', spec: demoNodeSpec({ instance: 'large-h' }) }, async (scenario) => {
      const { admin } = scenario.emulator.emulator;
      // The cloud says the vSwitch is full once, though it has plenty left: the worker blocks it.
      await admin.addFaults(['CreateNetworkInterface next 1 error InvalidVSwitchId.IpNotEnough 400']);
      await scenario.createPods(['a']);
      await scenario.signal();
      const blocked = await pollUntil(
        async () => {
          const state = await scenario.state();
          return state.blockedVSwitches?.find((block) => block.vSwitchId === DEMO.vSwitchH);
        },
        { description: 'the block in state', timeoutMs: 30_000 },
      );
      assert.ok(blocked.blockedForMs > 0);
      const event = await waitForEvent({ namespace: 'default', name: scenario.nodeName, reason: 'VSwitchBlocked' });
      assert.match(event.message ?? '', new RegExp(DEMO.vSwitchH));
      const state = await scenario.state();
      assert.equal(state.pods.pending, 1, 'the pod waits while the vSwitch is blocked');

      await scenario.workflow.signal(resyncSignal);
      await scenario.waitForCr('the pod bound after the resync', allBound(scenario, ['a']), 30_000);
      assert.equal((await scenario.state()).blockedVSwitches, undefined);
    });
  });

  it('when the cloud recovers for one node, another node backing off the long way is woken (no signal)', async () => {
    await withScenario(env, { name: 'wake-a', spec: demoNodeSpec({ instance: 'large-h' }) }, async (scenario) => {
      const { admin } = scenario.emulator.emulator;
      await admin.addFaults(['AttachNetworkInterface always error ServiceUnavailable 503']);
      // Node B shares the worker (and so the region's view of the cloud) and backs off up to 5 minutes.
      const nodeB = uniqueName('wake-b');
      await createCoreNode(env.kube, { name: nodeB, conditions: [readyCondition()] });
      await createNodeCr(env.kube, { name: nodeB, spec: demoNodeSpec({ instance: 'erdma-i' }) });
      const handleB = env.temporal.client.workflow.getHandle(nodeWorkflowId(nodeB));
      try {
        await createPodOnNode(env.kube, { namespace: scenario.namespace, name: 'b-0', nodeName: nodeB });
        await startLongFailingNode({
          nodeName: nodeB,
          taskQueue: scenario.taskQueue,
          settings: { maxFailureBackoffMs: 5 * 60_000, transientFailureBackoffMs: 5 * 60_000 },
        });
        await pollUntil(
          async () => {
            const state = await handleB.query(stateQuery);
            return state.ipamState === 'Error' && (state.failingOperations?.length ?? 0) > 0 ? true : undefined;
          },
          { description: 'node B failed a pass and backs off', timeoutMs: 90_000 },
        );
        await scenario.createPods(['a-0']);
        await startLongFailingNode({
          nodeName: scenario.nodeName,
          taskQueue: scenario.taskQueue,
          settings: { maxFailureBackoffMs: 5 * 60_000, transientFailureBackoffMs: 1_000 },
        });
        await admin.clearFaults();
        await scenario.waitForCr('node A served', allBound(scenario, ['a-0']), 60_000);
        // Node B's own timer is minutes away: only the worker's notice that attach works again wakes it.
        await pollUntil(
          async () => {
            const bound = bindingsOf(await readNodeCr(env.kube, nodeB)).has(`${scenario.namespace}/b-0`);
            return bound ? true : undefined;
          },
          { description: 'node B served after the cloud recovered', timeoutMs: 45_000 },
        );
      } finally {
        await handleB.terminate('test finished').catch(() => undefined);
        await deleteNodeCr(env.kube, nodeB);
        await env.kube.core.deleteNode({ name: nodeB }).catch(() => undefined);
      }
    });
  });
});
