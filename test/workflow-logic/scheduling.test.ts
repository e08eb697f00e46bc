/**
 * When the node workflow runs a pass: after its first, an idle node waits for a signal; a signal causes one pass, and
 * signals arriving during a pass one more; a failed pass is retried after its backoff without any signal; and
 * continue-as-new after `maxPassesPerRun` keeps the node's state. Real workflow code, stub activities.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';

import { reconcileSignal, stateQuery } from '../../src/workflows/messages.js';
import { FAST_SETTINGS, openLogicEnv, runNode, waitForState } from './support/harness.js';
import type { LogicEnv, NodeWorkflowHandle } from './support/harness.js';
import { ecsFailure, gate, StubNode, stubNodeSpec } from './support/stub-node.js';

let env: LogicEnv;
before(async () => {
  env = await openLogicEnv();
});
after(async () => {
  await env.close();
});

/**
 * Watches the workflow for `windowMs` and fails as soon as a pass starts or an activity is called. The window is
 * several times every short timer of {@link FAST_SETTINGS} (GC period, failure backoff, minimum interval): a pass
 * one of them wrongly scheduled would fall in it. Nothing waits on this window; it only looks for what must not
 * happen.
 */
async function assertNoPass(workflow: NodeWorkflowHandle, node: StubNode, windowMs: number): Promise<void> {
  const before = await workflow.query(stateQuery);
  const calls = node.calls.length;
  const until = Date.now() + windowMs;
  while (Date.now() < until) {
    const now = await workflow.query(stateQuery);
    assert.equal(now.reconcileCount, before.reconcileCount, 'no pass while idle');
    assert.deepEqual(
      node.calls.slice(calls).map((call) => call.name),
      [],
      'no activity while idle',
    );
    await sleep(50);
  }
}

const QUIET_WINDOW_MS = 5 * Math.max(FAST_SETTINGS.gcPeriodMs ?? 0, FAST_SETTINGS.maxFailureBackoffMs ?? 0);

/** A node with one ENI: one pod bound, two idle addresses, within the pool's bounds: nothing to do. */
function idleNode(name: string): StubNode {
  return new StubNode({
    nodeName: name,
    spec: stubNodeSpec({ pool: { minPoolSize: 1, maxPoolSize: 5 } }),
    pods: ['p1'],
    enis: [{ eniId: 'eni-a', pods: ['p1', null, null] }],
  });
}

describe('scheduling', () => {
  it('an idle node makes no pass after its first until a signal, and a signal makes exactly one', async () => {
    const node = idleNode('idle-node');
    await runNode(env, node, {}, async (workflow) => {
      await node.waitForPasses(1);
      const first = await workflow.query(stateQuery);
      assert.equal(first.ipamState, 'Ready');
      assert.equal(first.reconcileCount, 1);
      assert.match(first.nextPass?.reason ?? '', /safety-net/, JSON.stringify(first.nextPass));
      const firstPassCalls = node.calls.map((call) => call.name);
      assert.ok(
        firstPassCalls.includes('describeNodeEnis'),
        `the first pass syncs with the cloud: ${firstPassCalls.join(', ')}`,
      );
      assert.ok(firstPassCalls.includes('writeNodeStatusChanges'), 'and writes the sync times');
      await assertNoPass(workflow, node, QUIET_WINDOW_MS);

      await workflow.signal(reconcileSignal, { reason: 'test' });
      await node.waitForPasses(2);
      await assertNoPass(workflow, node, QUIET_WINDOW_MS);
      const second = await workflow.query(stateQuery);
      assert.equal(second.reconcileCount, 2);
      assert.equal(second.signalsReceived, 1);
      assert.equal(node.callsOf('readNodeView').length, 2, 'one read per pass');
      // Nothing changed: the second pass reads, and neither calls the cloud nor writes.
      assert.deepEqual(
        node.calls.slice(node.callsOf('readNodeView')[1]?.seq).map((call) => call.name),
        ['readNodeView', 'describeVSwitches'],
      );
    });
  });

  it("a new node's first pass lists its ENIs but leaves the vSwitch cache (and its blocks) alone", async () => {
    const node = idleNode('first-pass-no-vswitch-refresh');
    await runNode(env, node, {}, async () => {
      await node.waitForPasses(1);
      assert.equal(node.callsOf('describeNodeEnis').length, 1, 'the first pass syncs with the cloud');
      const reads = node.callsOf('describeVSwitches');
      assert.ok(reads.length > 0, 'the first pass reads its vSwitches');
      assert.deepEqual(
        reads.map((call) => call.input.refresh ?? false),
        reads.map(() => false),
        'without asking the cache to refresh',
      );
    });
  });

  it('signals arriving during a pass are coalesced into one more pass', async () => {
    const node = idleNode('coalesced-signals');
    const hold = gate();
    node.script('readNodeView', async () => {
      if (node.callsOf('readNodeView').length === 2) await hold.opened;
      return undefined;
    });
    await runNode(env, node, {}, async (workflow) => {
      await node.waitForPasses(1);
      await workflow.signal(reconcileSignal, { reason: 'first' });
      await node.waitForCalls((calls) => calls.filter((call) => call.name === 'readNodeView').length === 2);
      for (const reason of ['burst-1', 'burst-2', 'burst-3']) await workflow.signal(reconcileSignal, { reason });
      hold.open();
      await node.waitForPasses(3);
      await assertNoPass(workflow, node, QUIET_WINDOW_MS);
      const state = await workflow.query(stateQuery);
      assert.equal(state.signalsReceived, 4);
      assert.equal(state.reconcileCount, 3, 'the pass held during the burst, and one more for the burst');
      assert.equal(node.passes.length, 3);
    });
  });

  it('retries a failed pass after its backoff, without any signal', async () => {
    const node = new StubNode({ nodeName: 'failed-pass', spec: stubNodeSpec(), pods: ['a'] });
    const hold = gate();
    node.script('createEni', async () => {
      if (node.callsOf('createEni').length === 1) {
        throw ecsFailure({
          type: 'EcsQuotaExceeded',
          operation: 'CreateNetworkInterface',
          code: 'EniPerInstanceLimitExceeded',
          retryable: false,
        });
      }
      await hold.opened;
      return undefined;
    });
    await runNode(env, node, {}, async (workflow) => {
      // The second pass is under way (its create is held): nobody signalled, and the first pass counts as failed.
      await node.waitForCalls((calls) => calls.filter((call) => call.name === 'createEni').length === 2);
      const during = await workflow.query(stateQuery);
      assert.equal(during.signalsReceived, 0);
      assert.equal(during.reconcileCount, 2);
      assert.equal(during.failedPasses, 1);
      assert.ok(during.pendingOperations.some((operation) => operation.kind === 'createEni'));
      assert.ok(during.lastErrors.some((error) => error.type === 'EcsQuotaExceeded'));
      assert.deepEqual(
        node.passes.map((pass) => pass.ok),
        [false],
      );
      hold.open();
      await node.waitForPasses(2);
      const afterwards = await workflow.query(stateQuery);
      assert.equal(afterwards.failedPasses, 0);
      assert.equal(afterwards.pods.withIp, 1);
      assert.deepEqual(
        node.passes.map((pass) => pass.ok),
        [false, true],
      );
    });
  });

  it('continues as new after maxPassesPerRun, keeping the open create intent and the pass count', async () => {
    const node = new StubNode({ nodeName: 'continue-as-new', spec: stubNodeSpec(), pods: ['a'] });
    // Three passes of two attempts each fail (the outcome of each is unknown to the workflow), then the cloud answers.
    node.script('createEni', () => {
      if (node.callsOf('createEni').length <= 6) {
        throw ecsFailure({
          type: 'EcsTransient',
          operation: 'CreateNetworkInterface',
          code: 'ServiceUnavailable',
          retryable: true,
          retryAfterMs: 10,
        });
      }
      return undefined;
    });
    await runNode(env, node, { maxPassesPerRun: 2 }, async (workflow) => {
      const state = await waitForState(workflow, 'the pod bound', (view) => view.pods.withIp === 1);
      await node.waitForPasses(5);
      const description = await workflow.describe();
      assert.notEqual(description.runId, workflow.firstExecutionRunId, 'the workflow continued as new');
      // Passes 1-2 in the first run, 3-4 in the second (its pass 4 creates the ENI), 5 in the third.
      const runs = [...new Set(node.passes.map((pass) => pass.runId))];
      assert.equal(runs.length, 3, JSON.stringify(node.passes));
      assert.deepEqual(
        node.passes.map((pass) => runs.indexOf(pass.runId)),
        [0, 0, 1, 1, 2],
      );
      assert.deepEqual(
        node.passes.map((pass) => pass.ok),
        [false, false, false, true, true],
      );
      // The count of passes goes on across runs.
      assert.ok(state.reconcileCount >= 4, JSON.stringify(state));
      assert.equal((await workflow.query(stateQuery)).reconcileCount, 5);
    });
    const creates = node.callsOf('createEni');
    assert.equal(creates.length, 7);
    const token = creates[0]?.input.clientToken;
    assert.ok(token !== undefined);
    assert.deepEqual(
      creates.map((call) => call.input.clientToken),
      creates.map(() => token),
      'the intent crossed both continue-as-new boundaries with its token',
    );
    assert.equal(new Set(creates.map((call) => call.runId)).size, 2, 'creates were issued from two runs');
  });
});
