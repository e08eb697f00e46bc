/**
 * What a pass's read brings besides the node (`readNodeViewForPass`): the vSwitches the worker's cache holds fresh
 * (`VSwitchCache.peek`), so the pass looks them up with no activity of its own and calls `describeVSwitches` (the ECS
 * read) only on a miss or a refresh; and the versions the read had seen, so a signal for changes it saw starts no
 * pass. Real workflow code, stub activities.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';

import { reconcileSignal, resyncSignal, stateQuery } from '../../src/workflows/messages.js';
import { openLogicEnv, runNode } from './support/harness.js';
import type { LogicEnv } from './support/harness.js';
import { STUB_VSWITCH, StubNode, stubNodeSpec } from './support/stub-node.js';

let env: LogicEnv;
before(async () => {
  env = await openLogicEnv();
});
after(async () => {
  await env.close();
});

/** A node with one ENI: one pod bound, two idle addresses, within the pool's bounds: nothing to do. */
function idleNode(name: string): StubNode {
  return new StubNode({
    nodeName: name,
    spec: stubNodeSpec({ pool: { minPoolSize: 1, maxPoolSize: 5 } }),
    pods: ['p1'],
    enis: [{ eniId: 'eni-a', pods: ['p1', null, null] }],
  });
}

/** The activities of the last pass (from its read on). */
function lastPassCalls(node: StubNode): string[] {
  const reads = node.callsOf('readNodeView');
  return node.calls.slice(reads[reads.length - 1]?.seq).map((call) => call.name);
}

describe('vSwitches brought by the read', () => {
  it('a pass skips describeVSwitches when the read brings every vSwitch, and uses what it brought', async () => {
    const node = idleNode('vswitch-peek');
    node.cachedVSwitches = { [STUB_VSWITCH.vSwitchId]: { ...STUB_VSWITCH } };
    await runNode(env, node, {}, async (workflow) => {
      await node.waitForPasses(1);
      assert.equal(node.callsOf('readNodeView')[0]?.input.vSwitchIds, undefined, 'a run knows no vSwitch at first');
      assert.equal(node.callsOf('describeVSwitches').length, 1, 'so its first pass looks them up');

      await workflow.signal(reconcileSignal, { reason: 'test' });
      await node.waitForPasses(2);
      assert.deepEqual(node.callsOf('readNodeView')[1]?.input.vSwitchIds, [STUB_VSWITCH.vSwitchId]);
      assert.deepEqual(lastPassCalls(node), ['readNodeView'], 'an idle pass is one local activity');

      // The worker's cache holds the vSwitch blocked: only the read tells the pass so (describe says 200 free).
      node.cachedVSwitches = {
        [STUB_VSWITCH.vSwitchId]: { ...STUB_VSWITCH, availableIpCount: 0, blockedForMs: 60_000 },
      };
      await workflow.signal(reconcileSignal, { reason: 'test' });
      await node.waitForPasses(3);
      assert.ok(!lastPassCalls(node).includes('describeVSwitches'), lastPassCalls(node).join(', '));
      const blocked = await workflow.query(stateQuery);
      assert.deepEqual(
        blocked.blockedVSwitches?.map((block) => block.vSwitchId),
        [STUB_VSWITCH.vSwitchId],
      );

      // A miss in the worker's cache: the pass asks describeVSwitches, as before, and uses its answer.
      node.cachedVSwitches = undefined;
      await workflow.signal(reconcileSignal, { reason: 'test' });
      await node.waitForPasses(4);
      assert.ok(lastPassCalls(node).includes('describeVSwitches'), lastPassCalls(node).join(', '));
      assert.equal((await workflow.query(stateQuery)).blockedVSwitches, undefined, "describe's answer is used");
    });
  });

  it('a resync asks the cloud even when the read brought the vSwitches', async () => {
    const node = idleNode('vswitch-peek-refresh');
    node.cachedVSwitches = { [STUB_VSWITCH.vSwitchId]: { ...STUB_VSWITCH } };
    await runNode(env, node, {}, async (workflow) => {
      await node.waitForPasses(1);
      await workflow.signal(reconcileSignal, { reason: 'test' });
      await node.waitForPasses(2);
      assert.equal(node.callsOf('describeVSwitches').length, 1);

      await workflow.signal(resyncSignal);
      await node.waitForPasses(3);
      const describes = node.callsOf('describeVSwitches');
      assert.equal(describes.length, 2);
      assert.equal(describes[1]?.input.refresh, true);
    });
  });
});

describe('signals for changes a read has seen', () => {
  it('start no pass; a signal for a newer change, or one without versions, does', async () => {
    const node = idleNode('seen-signal');
    node.readSeen = { pods: '120', 'node-crs': '40', 'core-nodes': '30' };
    await runNode(env, node, {}, async (workflow) => {
      await node.waitForPasses(1);
      const reads = () => node.callsOf('readNodeView').length;
      assert.equal(reads(), 1);

      // The watcher saw a pod change at 118 and the CR at 40: the pass's read had seen both.
      await workflow.signal(reconcileSignal, { reason: 'pod-added', seen: { pods: '118', 'node-crs': '40' } });
      const covered = await workflow.query(stateQuery);
      assert.equal(covered.signalsReceived, 1, 'the signal is counted');
      await sleep(300);
      assert.equal((await workflow.query(stateQuery)).reconcileCount, 1, 'and starts no pass');
      assert.equal(reads(), 1);

      await workflow.signal(reconcileSignal, { reason: 'pod-added', seen: { pods: '121' } });
      await node.waitForPasses(2);
      assert.equal(reads(), 2, 'a change newer than the read starts a pass');
      assert.deepEqual(node.callsOf('readNodeView')[1]?.input.after?.['pods'], '121', 'whose read waits for it');

      await workflow.signal(reconcileSignal, { reason: 'watcher-start' });
      await node.waitForPasses(3);
      assert.equal(reads(), 3, 'a signal without versions starts a pass');
    });
  });

  it('a vSwitch that gained addresses starts a pass whatever the versions', async () => {
    const node = idleNode('seen-signal-vswitch');
    node.readSeen = { pods: '120' };
    await runNode(env, node, {}, async (workflow) => {
      await node.waitForPasses(1);
      await workflow.signal(reconcileSignal, {
        reason: 'vswitch-gained-addresses',
        vSwitchesGained: [STUB_VSWITCH.vSwitchId],
        seen: { pods: '100' },
      });
      await node.waitForPasses(2);
      assert.equal(node.callsOf('readNodeView').length, 2);
    });
  });
});
