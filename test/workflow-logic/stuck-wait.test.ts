/**
 * A node whose waiting pods are stuck (every vSwitch exhausted) sleeps `stuckBackoffMs` instead of retrying every GC
 * period, tells all its waiting pods why in one activity, names the vSwitch it waits on, and a `reconcile` signal
 * saying the vSwitch gained addresses wakes it with a fresh look at the cloud. Real workflow code, stub activities.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';

import { reconcileSignal, stateQuery } from '../../src/workflows/messages.js';
import { FAST_SETTINGS, openLogicEnv, runNode, waitForState } from './support/harness.js';
import type { LogicEnv } from './support/harness.js';
import { STUB_VSWITCH, StubNode, stubNodeSpec } from './support/stub-node.js';

let env: LogicEnv;
before(async () => {
  env = await openLogicEnv();
});
after(async () => {
  await env.close();
});

describe('a stuck node', () => {
  it('sleeps long instead of retrying, tells its pods in one activity, and wakes on the vSwitch signal', async () => {
    const node = new StubNode({ nodeName: 'stuck-node', spec: stubNodeSpec(), pods: ['p1', 'p2', 'p3'] });
    // The worker reports the only vSwitch without a free address, until the signal below.
    let exhausted = true;
    node.script('describeVSwitches', () =>
      exhausted ? { result: { [STUB_VSWITCH.vSwitchId]: { ...STUB_VSWITCH, availableIpCount: 0 } } } : undefined,
    );
    const settings = { stuckBackoffMs: 3_600_000, pendingPodEventAfterMs: 0 };
    await runNode(env, node, settings, async (workflow) => {
      const stuck = await waitForState(workflow, 'stuck', (state) => state.stuckWait !== undefined);
      assert.equal(stuck.stuckWait?.cause, 'vSwitchExhausted');
      assert.deepEqual(stuck.stuckWait?.wakeOnVSwitches, [STUB_VSWITCH.vSwitchId]);
      assert.match(stuck.nextPass?.reason ?? '', /does not change by itself/);
      assert.equal(stuck.pods.pending, 3);

      // The GC period (100 ms) would have woken it 20 times in this window.
      const passes = stuck.reconcileCount;
      await sleep(20 * (FAST_SETTINGS.gcPeriodMs ?? 0));
      assert.equal((await workflow.query(stateQuery)).reconcileCount, passes, 'no pass while stuck');
      const batches = node
        .callsOf('recordEvents')
        .filter((call) => call.input.events.some((event) => event.reason === 'IPAllocationPending'));
      assert.equal(batches.length, 1, 'one activity for the waiting pods');
      assert.equal(batches[0]?.input.events.length, 3);
      assert.equal(
        node.callsOf('recordEvent').filter((call) => call.input.reason === 'IPAllocationPending').length,
        0,
        'no activity per pod',
      );

      exhausted = false;
      const reads = node.callsOf('describeVSwitches').length;
      await workflow.signal(reconcileSignal, {
        reason: 'vswitch-gained-addresses',
        vSwitchesGained: [STUB_VSWITCH.vSwitchId],
      });
      const served = await waitForState(workflow, 'served', (state) => state.pods.pending === 0);
      assert.equal(served.stuckWait, undefined);
      assert.equal(node.callsOf('describeVSwitches')[reads]?.input.refresh, true, 'the woken pass asks the cloud');
    });
  });
});
