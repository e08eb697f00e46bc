/**
 * Intents that hold the whole request, and attaches that keep failing, on the real workflow code with stub
 * activities: an ambiguous create answer is resolved by a list by the intent tag, never by dropping the intent; an
 * ENI whose attach keeps failing is kept (recorded Available in the CR) and attached again, never churned.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import type { ApplicationFailure } from '@temporalio/common';

import { ENIFLOW_INTENT_TAG } from '../../src/ipam/index.js';
import { reconcileSignal } from '../../src/workflows/messages.js';
import { FAST_SETTINGS, openLogicEnv, runNode, waitForState } from './support/harness.js';
import type { LogicEnv } from './support/harness.js';
import { ecsFailure, StubNode, stubNodeSpec } from './support/stub-node.js';

let env: LogicEnv;
before(async () => {
  env = await openLogicEnv();
});
after(async () => {
  await env.close();
});

function emptyNode(name: string, pods: readonly string[] = ['a', 'b']): StubNode {
  return new StubNode({ nodeName: name, spec: stubNodeSpec(), pods });
}

/**
 * Scripts `createEni`: the cloud applies the first call but its answer is lost (`lostAs`), the second call is
 * refused (`refusal`), later calls succeed. Failures are built inside the activity: `ecsFailure` reads the
 * activity's attempt and retry policy for its retry delay.
 */
function appliedThenRefused(node: StubNode, lostAs: () => ApplicationFailure, refusal: () => ApplicationFailure): void {
  node.script('createEni', (input) => {
    const calls = node.callsOf('createEni').length;
    if (calls === 1) {
      node.cloudCreate(input); // created, answer lost
      throw lostAs();
    }
    if (calls === 2) throw refusal();
    return undefined;
  });
}

const lost = ecsFailure({
  type: 'EcsTransient',
  operation: 'CreateNetworkInterface',
  code: 'ServiceUnavailable',
  retryable: false,
});

describe('create intents resolved by their tag', () => {
  it('a re-issue answered IdempotentParameterMismatch is resolved by a list once its attempts ended: one ENI', async () => {
    const node = emptyNode('intent-mismatch');
    appliedThenRefused(
      node,
      () => lost,
      () =>
        ecsFailure({
          type: 'EcsInvalidRequest',
          operation: 'CreateNetworkInterface',
          code: 'IdempotentParameterMismatch',
          retryable: false,
        }),
    );
    await runNode(env, node, { ...FAST_SETTINGS, createAttemptHorizonMs: 3_000 }, async (workflow) => {
      await waitForState(workflow, 'both pods bound', (view) => view.pods.withIp === 2);
    });
    const creates = node.callsOf('createEni');
    assert.equal(creates.length, 2, 'the lost create, its re-issue (the mismatch), and no create after it');
    for (const call of creates) {
      assert.deepEqual(call.input, creates[0]?.input, 'a re-issue is the recorded request, byte for byte');
    }
    assert.equal(creates[0]?.input.tags[ENIFLOW_INTENT_TAG], creates[0]?.input.clientToken);
    const finds = node.callsOf('findEnisByIntent');
    assert.ok(
      finds.some((find) => find.seq > (creates[1]?.seq ?? Infinity)),
      'a list by the intent tag after the mismatch: that is what found the ENI',
    );
    assert.deepEqual([...node.cloud.keys()], ['eni-new-1']);
    assert.deepEqual(Object.keys(node.crEnis()), ['eni-new-1']);
  });

  it('a refusal on a retried attempt does not close the intent; the list after the horizon finds the ENI', async () => {
    const node = emptyNode('intent-refused-on-retry');
    appliedThenRefused(
      node,
      () => ecsFailure({ ...LOST_RETRYABLE }),
      () =>
        ecsFailure({
          type: 'EcsVSwitchExhausted',
          operation: 'CreateNetworkInterface',
          code: 'InvalidVSwitchId.IpNotEnough',
          retryable: false,
        }),
    );
    await runNode(env, node, { ...FAST_SETTINGS, createAttemptHorizonMs: 1_500 }, async (workflow) => {
      await waitForState(workflow, 'both pods bound', (view) => view.pods.withIp === 2);
    });
    assert.deepEqual(
      node.callsOf('createEni').map((call) => call.attempt),
      [1, 2],
      'two attempts of one activity, then no create: the list decided',
    );
    const refused = node.callsOf('createEni')[1]?.seq ?? Infinity;
    assert.ok(
      node.callsOf('findEnisByIntent').some((find) => find.seq > refused),
      'a list by the intent tag after the refused attempt',
    );
    assert.deepEqual([...node.cloud.keys()], ['eni-new-1']);
    assert.deepEqual(Object.keys(node.crEnis()), ['eni-new-1']);
  });

  it('a list that finds nothing after the horizon closes the intent; the demand gets a create under a new token', async () => {
    const node = emptyNode('intent-found-nothing');
    node.script('createEni', () => {
      if (node.callsOf('createEni').length === 1) {
        throw ecsFailure({
          type: 'EcsInvalidRequest',
          operation: 'CreateNetworkInterface',
          code: 'IdempotentFailed',
          retryable: false,
        });
      }
      return undefined;
    });
    await runNode(env, node, { ...FAST_SETTINGS, createAttemptHorizonMs: 1_000 }, async (workflow) => {
      await waitForState(workflow, 'both pods bound', (view) => view.pods.withIp === 2);
    });
    const tokens = node.callsOf('createEni').map((call) => call.input.clientToken);
    assert.equal(tokens.length, 2);
    assert.notEqual(tokens[0], tokens[1]);
    const finds = node.callsOf('findEnisByIntent');
    assert.ok(finds.length >= 1);
    assert.ok((finds[0]?.seq ?? Infinity) < (node.callsOf('createEni')[1]?.seq ?? 0), 'listed before the new create');
  });
});

const LOST_RETRYABLE = {
  type: 'EcsTransient' as const,
  operation: 'CreateNetworkInterface' as const,
  code: 'ServiceUnavailable',
  retryable: true,
  retryAfterMs: 10,
};

describe('an attach that keeps failing', () => {
  const attach5xx = ecsFailure({
    type: 'EcsTransient',
    operation: 'AttachNetworkInterface',
    code: 'ServiceUnavailable',
    retryable: false,
  });

  it('keeps the one ENI, recorded Available in the CR, and attaches it once the fault clears', async () => {
    const node = emptyNode('attach-keeps-failing');
    let faulty = true;
    node.script('attachEni', () => {
      if (faulty) throw attach5xx;
      return undefined;
    });
    await runNode(env, node, FAST_SETTINGS, async (workflow) => {
      await node.waitForCalls(() => node.callsOf('attachEni').length >= 4);
      assert.equal(node.crEnis()['eni-new-1']?.status, 'Available', 'known to the CR while it waits');
      assert.ok(node.crEnis()['eni-new-1']?.conditions?.OperationErr !== undefined);
      faulty = false;
      await waitForState(workflow, 'both pods bound', (view) => view.pods.withIp === 2);
    });
    assert.equal(node.callsOf('createEni').length, 1, 'one create for the one demand');
    assert.equal(node.callsOf('deleteEni').length, 0, 'never deleted');
    assert.equal(node.callsOf('detachEni').length, 0);
    assert.deepEqual([...node.cloud.keys()], ['eni-new-1']);
    assert.equal(node.crEnis()['eni-new-1']?.status, 'InUse');
    assert.ok(node.callsOf('attachEni').every((call) => call.input.eniId === 'eni-new-1'));
  });

  it('releases the waiting ENI through the GC once the demand is gone', async () => {
    const node = emptyNode('attach-demand-gone');
    node.script('attachEni', () => {
      throw attach5xx;
    });
    await runNode(env, node, FAST_SETTINGS, async (workflow) => {
      await node.waitForCalls(() => node.crEnis()['eni-new-1']?.status === 'Available');
      node.pods = [];
      await workflow.signal(reconcileSignal, { reason: 'pods gone' });
      await node.waitForCalls(() => !node.cloud.has('eni-new-1') && node.crEnis()['eni-new-1'] === undefined);
    });
    assert.equal(node.callsOf('createEni').length, 1);
    assert.equal(node.crEnis()['eni-new-1'], undefined);
  });
});
