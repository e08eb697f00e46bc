/**
 * The degradation switch in the node workflow, on the real workflow code with stub activities: a level given at
 * start holds across continue-as-new, a late signal of an older setting is ignored, `l0` calls no cloud activity
 * while pods wait and tells it once (not per pass, not per run), and lifting it lets the pass allocate; a node being
 * deleted under `l0` keeps its ENIs until the lift.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { degradationSignal, gcUpdate, reconcileSignal, stateQuery } from '../../src/workflows/messages.js';
import { openLogicEnv, runNode, waitForState } from './support/harness.js';
import type { LogicEnv } from './support/harness.js';
import { gate, StubNode, stubNodeSpec, stubPod } from './support/stub-node.js';
import type { RecordedCall } from './support/stub-node.js';

let env: LogicEnv;
before(async () => {
  env = await openLogicEnv();
});
after(async () => {
  await env.close();
});

/** Activities that reach Kubernetes only; every other one is a cloud call. */
const KUBE_ACTIVITIES = new Set([
  'readNodeView',
  'readNodeSnapshot',
  'writeNodeStatusChanges',
  'writeNodeStatus',
  'patchNodeCondition',
  'recordEvent',
  'recordEvents',
  'removeNodeFinalizer',
]);

const cloudCalls = (calls: readonly RecordedCall[]) => calls.filter((call) => !KUBE_ACTIVITIES.has(call.name));

/** The Events the workflow wrote with this reason (single and batched). */
function eventsWithReason(node: StubNode, reason: string): unknown[] {
  return [
    ...node.callsOf('recordEvent').map((call) => call.input),
    ...node.callsOf('recordEvents').flatMap((call) => call.input.events),
  ].filter((event) => event.reason === reason);
}

describe('degradation in the node workflow', () => {
  it('l0 from the start input holds across continue-as-new, makes no cloud call, and is told once', async () => {
    const node = new StubNode({ nodeName: 'degraded-l0', spec: stubNodeSpec(), pods: ['a', 'b'] });
    await runNode(
      env,
      node,
      { maxPassesPerRun: 2 },
      async (workflow) => {
        for (let i = 0; node.passes.length < 5; i += 1) {
          await workflow.signal(reconcileSignal, { reason: `poke-${i}` });
          await node.waitForPasses(Math.min(5, node.passes.length + 1));
        }
        const description = await workflow.describe();
        assert.notEqual(description.runId, workflow.firstExecutionRunId, 'the workflow continued as new');
        assert.ok(new Set(node.passes.map((pass) => pass.runId)).size >= 2, JSON.stringify(node.passes));
        // The pass count comes from a sink, so the query may reach a run that has just continued as new and not
        // yet ended its first pass: wait for a pass's view rather than read the run's initial one.
        const state = await waitForState(workflow, 'the pods held back', (view) => view.pods.pending === 2);
        assert.equal(state.degradation?.level, 'l0');
        assert.deepEqual(cloudCalls(node.calls), [], 'no cloud activity under l0');
        assert.equal(eventsWithReason(node, 'DegradationHoldsBack').length, 1, 'told once over two runs');
        // A GC request is answered at once: nothing would be released.
        const gc = await workflow.executeUpdate(gcUpdate);
        assert.match(gc.deferred ?? '', /GC held back: degradation l0/);

        // A late signal of an older setting changes nothing…
        await workflow.signal(degradationSignal, { level: 'off', revision: '9' });
        await workflow.signal(reconcileSignal, { reason: 'after-late-signal' });
        await node.waitForPasses(node.passes.length + 1);
        assert.equal((await workflow.query(stateQuery)).degradation?.level, 'l0');
        assert.deepEqual(cloudCalls(node.calls), []);

        // …a newer one, riding on a reconcile signal, lifts it: the pods get their IPs.
        await workflow.signal(reconcileSignal, { reason: 'pod-added', degradation: { level: 'off', revision: '11' } });
        const lifted = await waitForState(workflow, 'the pods bound', (view) => view.pods.withIp === 2);
        assert.deepEqual(lifted.degradation?.heldBack, []);
        assert.ok(cloudCalls(node.calls).length > 0);
        assert.equal(eventsWithReason(node, 'DegradationLifted').length, 1);
      },
      { degradation: { level: 'l0', revision: '10' } },
    );
  });

  it('a node deleted under l0 keeps its ENIs and says why; lifted, they are released and the workflow ends', async () => {
    const node = new StubNode({
      nodeName: 'degraded-deleting',
      spec: stubNodeSpec(),
      enis: [{ eniId: 'eni-seed', pods: [null, null] }],
    });
    node.cr.metadata['deletionTimestamp'] = '2026-01-01T00:00:00Z';
    await runNode(
      env,
      node,
      {},
      async (workflow) => {
        const held = await waitForState(workflow, 'the release held back', (view) => view.skipReason !== undefined);
        assert.equal(held.ipamState, 'Deleting');
        assert.match(held.skipReason ?? '', /released once lifted: degradation l0/);
        assert.deepEqual(cloudCalls(node.calls), [], 'no cloud activity under l0');
        assert.ok(node.cloud.has('eni-seed'));
        assert.equal(eventsWithReason(node, 'DegradationHoldsBack').length, 1);

        await workflow.signal(degradationSignal, { level: 'off', revision: '11' });
        const result = await workflow.result();
        assert.equal(result.ipamState, 'Gone');
        assert.ok(!node.cloud.has('eni-seed'), 'the ENI was deleted in the cloud');
        assert.equal(node.callsOf('removeNodeFinalizer').length, 1);
      },
      { degradation: { level: 'l0', revision: '10' } },
    );
  });

  it('a pass running when l0 arrives finishes the calls it began, says so in the query, and the next makes none', async () => {
    const node = new StubNode({ nodeName: 'degraded-mid-pass', spec: stubNodeSpec(), pods: ['a', 'b'] });
    const attachHeld = gate();
    node.script('attachEni', async () => {
      await attachHeld.opened;
      return undefined;
    });
    await runNode(env, node, {}, async (workflow) => {
      await node.waitForCalls((calls) => calls.some((call) => call.name === 'attachEni'));
      await workflow.signal(degradationSignal, { level: 'l0', revision: '3' });
      const midPass = await waitForState(workflow, 'l0 taken', (view) => view.degradation?.level === 'l0');
      // Opened before asserting: a held attach would keep the workflow (and a failing test) from ending.
      attachHeld.open();
      assert.equal(midPass.degradation?.passRunningAt, 'off', 'the running pass took its gates at off');
      assert.equal(midPass.passRunning, true);
      const done = await waitForState(
        workflow,
        'the pass begun at off ended',
        (view) => view.pods.withIp === 2 && view.degradation?.passRunningAt === undefined,
      );
      assert.equal(done.degradation?.level, 'l0');
      assert.equal(done.passRunning, undefined);
      // The begun create-attach ran to its end: its ENI is in use, not left half made.
      assert.ok(node.callsOf('waitEniStatus').some((call) => call.input.status === 'InUse'));
      const callsAtL0 = node.calls.length;
      node.pods = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'].map(stubPod);
      await workflow.signal(reconcileSignal, { reason: 'more-pods' });
      await waitForState(workflow, 'a pass at l0', (view) => view.reconcileCount > done.reconcileCount);
      assert.deepEqual(cloudCalls(node.calls.slice(callsAtL0)), [], 'no cloud call from a pass begun at l0');
    });
  });

  it('setting or repeating a level on a node with nothing to do wakes no pass and tells nothing', async () => {
    const node = new StubNode({ nodeName: 'degraded-idle', spec: stubNodeSpec(), pods: ['a'] });
    await runNode(env, node, {}, async (workflow) => {
      const bound = await waitForState(
        workflow,
        'the pod bound, nothing in flight',
        (view) => view.pods.withIp === 1 && view.pendingOperations.length === 0,
      );
      await workflow.signal(degradationSignal, { level: 'l1', revision: '5' });
      await workflow.signal(degradationSignal, { level: 'l1', revision: '6' });
      // Malformed settings are ignored, not trusted.
      await workflow.signal(degradationSignal, { level: 'l9' as 'l0', revision: '7' });
      await waitForState(workflow, 'the newer revision held', (view) => view.degradation?.revision === '6');
      await workflow.signal(degradationSignal, { level: 'off', revision: '8' });
      await waitForState(workflow, 'lifted', (view) => view.degradation?.level === 'off');
      await workflow.signal(reconcileSignal, { reason: 'after-the-levels' });
      const after = await waitForState(workflow, 'one more pass', (view) => view.reconcileCount > bound.reconcileCount);
      // Only the reconcile signal woke a pass: setting, repeating and lifting a level on an idle node did not.
      assert.equal(after.reconcileCount, bound.reconcileCount + 1);
      assert.deepEqual(eventsWithReason(node, 'DegradationHoldsBack'), []);
      assert.deepEqual(eventsWithReason(node, 'DegradationLifted'), []);
    });
  });
});
