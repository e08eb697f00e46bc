/**
 * Failures that persist cost little and wait without churn (issue 28, points 1, 7 and 11): a retryable error that
 * keeps coming back lengthens the node's wait and is tried once per pass, until the node counts as stuck on it and
 * sleeps until the worker's wake; a missing instance is found once and the node waits with its one ENI kept; the
 * node shows `IpamState = Error` while its first failing pass is still running. Real workflow code, stub activities.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';

import { IPAM_STATE_SEARCH_ATTRIBUTE } from '../../src/shared/workflow-ids.js';
import { reconcileSignal, stateQuery } from '../../src/workflows/messages.js';
import { openLogicEnv, runNode, waitForState } from './support/harness.js';
import type { LogicEnv } from './support/harness.js';
import { ecsFailure, StubNode, stubNodeSpec } from './support/stub-node.js';

let env: LogicEnv;
before(async () => {
  env = await openLogicEnv();
});
after(async () => {
  await env.close();
});

/** A node with no ENI yet and pods waiting: the first pass plans one create. */
function emptyNode(name: string, pods: readonly string[] = ['a', 'b']): StubNode {
  return new StubNode({ nodeName: name, spec: stubNodeSpec(), pods });
}

/** Backoffs short enough for a test, long enough that each step of the growth is a pass of its own. */
const GROWING = { transientFailureBackoffMs: 50, maxFailureBackoffMs: 100_000, stuckBackoffMs: 3_600_000 };

describe('a call that keeps failing with a retryable error', () => {
  it('is tried once per pass once known, the wait grows, then the node sleeps until the cloud answers', async () => {
    const node = emptyNode('attach-outage');
    let down = true;
    node.script('attachEni', () => {
      if (down) {
        throw ecsFailure({
          type: 'EcsTransient',
          operation: 'AttachNetworkInterface',
          code: 'ServiceUnavailable',
          retryable: true,
        });
      }
      return undefined;
    });
    await runNode(env, node, GROWING, async (workflow) => {
      const stuck = await waitForState(
        workflow,
        'stuck on the failing attach',
        (state) => state.stuckWait?.cause === 'cloudCallsFailing',
        60_000,
      );
      assert.match(stuck.stuckWait?.message ?? '', /woken when the worker sees that call answer again/);
      assert.match(stuck.nextPass?.reason ?? '', /does not change by itself/);
      const passes = stuck.reconcileCount;
      assert.equal(passes, 4, 'stuck after the fourth pass failing the same way');
      // The first pass's activity retries the attach (3 attempts); the later passes know it fails and try it once.
      const attempts = node.callsOf('attachEni').map((call) => call.attempt);
      assert.deepEqual(attempts, [1, 2, 3, 1, 1, 1]);
      // The waits between the passes grew (full jitter under 50, 100, 200 ms caps) and the next one is far.
      assert.ok(Date.parse(stuck.nextPass?.at ?? '') - Date.now() > 60_000, JSON.stringify(stuck.nextPass));
      assert.equal(node.callsOf('createEni').length, 1, 'one ENI, kept while its attach fails');
      assert.equal(node.callsOf('deleteEni').length, 0);

      await sleep(500);
      assert.equal((await workflow.query(stateQuery)).reconcileCount, passes, 'no pass while stuck');

      // The worker's wake when the call answers again (CloudRecoveryNotifier) is a reconcile signal.
      down = false;
      await workflow.signal(reconcileSignal, { reason: 'cloud-recovered' });
      const served = await waitForState(workflow, 'pods served', (state) => state.pods.pending === 0);
      assert.equal(served.stuckWait, undefined);
      assert.equal(served.ipamState, 'Ready');
    });
  });

  it('shows IpamState=Error as soon as the failing call is known, before the pass ends', async () => {
    const node = emptyNode('early-error');
    node.script('attachEni', () => {
      throw ecsFailure({
        type: 'EcsInvalidRequest',
        operation: 'AttachNetworkInterface',
        code: 'InvalidParameter.InstanceId',
        retryable: false,
      });
    });
    // The refused attach is compensated (detach, wait, delete): the pass cannot end while the detach is held.
    let open: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      open = resolve;
    });
    node.script('detachEni', async () => {
      await held;
      return undefined;
    });
    await runNode(env, node, GROWING, async (workflow) => {
      try {
        await node.waitForCalls(() => node.callsOf('detachEni').length > 0);
        const state = await pollState(workflow);
        assert.equal(node.passes.length, 0, 'the first pass has not ended');
        assert.equal(state, 'Error');
      } finally {
        open();
      }
      await node.waitForPasses(1);
    });
  });
});

/** The node's `IpamState` search attribute once it is Error, or what it is after a few seconds. */
async function pollState(workflow: Parameters<Parameters<typeof runNode>[3]>[0]): Promise<string | undefined> {
  let state: string | undefined;
  for (let tries = 0; tries < 40; tries += 1) {
    state = (await workflow.describe()).typedSearchAttributes.get(IPAM_STATE_SEARCH_ATTRIBUTE);
    if (state === 'Error') return state;
    await sleep(100);
  }
  return state;
}

describe('a node whose instance does not exist', () => {
  it('finds it once, keeps its one ENI and waits, instead of creating and deleting ENIs', async () => {
    const node = emptyNode('instance-missing');
    let missing = true;
    node.script('attachEni', () => {
      if (!missing) return undefined;
      throw ecsFailure({
        type: 'EcsInstanceNotFound',
        operation: 'AttachNetworkInterface',
        code: 'InvalidEcsId.NotFound',
        retryable: false,
      });
    });
    await runNode(env, node, {}, async (workflow) => {
      const stuck = await waitForState(workflow, 'waiting on the missing instance', (state) => {
        return state.stuckWait?.cause === 'instanceNotFound';
      });
      assert.match(stuck.stuckWait?.message ?? '', /does not exist/);
      // Pods that come and go wake it: it looks again, with the ENI it has, and makes no new one.
      for (const reason of ['pod-added', 'pod-added']) {
        const before = (await workflow.query(stateQuery)).reconcileCount;
        await workflow.signal(reconcileSignal, { reason });
        await waitForState(workflow, 'the woken pass', (state) => state.reconcileCount > before);
        await node.waitForPasses(before + 1);
      }
      await sleep(300);
      assert.equal(node.callsOf('createEni').length, 1, 'one ENI for the node');
      assert.equal(node.callsOf('deleteEni').length, 0, 'never deleted');
      assert.equal(node.callsOf('detachEni').length, 0);
      assert.deepEqual([...node.cloud.keys()], ['eni-new-1']);
      assert.equal(node.crEnis()['eni-new-1']?.status, 'Available', 'known to the CR while it waits');

      // The instance appears (the daemon's spec names the right one, or it was a lag): the node is served.
      missing = false;
      await workflow.signal(reconcileSignal, { reason: 'spec-changed' });
      await waitForState(workflow, 'pods served', (state) => state.pods.pending === 0);
    });
  });
});
