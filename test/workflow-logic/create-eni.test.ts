/**
 * The create → attach → wait saga and its create intents, on the real workflow code with stub activities: a failed
 * attach is compensated (detach, wait, delete) and never reaches the CR; a compensation that fails leaves the ENI in
 * the CR as `Deleting`; a create whose outcome is unknown is re-issued under the same ClientToken.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { stateQuery } from '../../src/workflows/messages.js';
import { openLogicEnv, runNode, waitForState } from './support/harness.js';
import type { LogicEnv } from './support/harness.js';
import { ecsFailure, gate, StubNode, stubNodeSpec } from './support/stub-node.js';
import type { RecordedCall } from './support/stub-node.js';

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

/** Calls that concern one ENI, as `name` (plus the awaited status for waits), in start order. */
function stepsOn(node: StubNode, eniId: string): string[] {
  return node.calls
    .filter((call) => (call.input as { eniId?: string }).eniId === eniId)
    .map((call) =>
      call.name === 'waitEniStatus' ? `waitEniStatus(${(call.input as { status: string }).status})` : call.name,
    );
}

/** Every ENI id a landed status write mentioned, with the statuses it was written with (`<removed>`: dropped). */
function writtenStatuses(node: StubNode): Map<string, string[]> {
  const seen = new Map<string, string[]>();
  const landed = node.callsOf('writeNodeStatusChanges').filter((call) => call.doneSeq !== undefined && !call.failed);
  for (const write of landed) {
    for (const change of write.input.eniChanges) {
      const [eniId, field] = change.path;
      if (eniId === undefined) continue;
      const statuses = seen.get(eniId) ?? [];
      if ('value' in change) {
        const status =
          field === undefined
            ? (change.value as { status?: string }).status
            : field === 'status'
              ? change.value
              : undefined;
        if (typeof status === 'string') statuses.push(status);
      } else if (field === undefined) statuses.push('<removed>');
      seen.set(eniId, statuses);
    }
  }
  return seen;
}

const attachRefused = ecsFailure({
  type: 'EcsInvalidRequest',
  operation: 'AttachNetworkInterface',
  code: 'InvalidParameter.InstanceId',
  retryable: false,
});

describe('create saga', () => {
  it('compensates a failed attach with detach, wait and delete; the CR never lists that ENI', async () => {
    const node = emptyNode('saga-compensated');
    node.script('attachEni', (input) => {
      if (input.eniId === 'eni-new-1') throw attachRefused;
      return undefined;
    });
    await runNode(env, node, {}, async (workflow) => {
      // The failed pass is retried after its backoff and creates another ENI, which attaches.
      const state = await waitForState(workflow, 'both pods bound', (view) => view.pods.withIp === 2);
      assert.equal(state.ipamState, 'Ready');
      assert.ok(
        state.lastErrors.some(
          (error) => error.operation === 'AttachNetworkInterface' && error.type === 'EcsInvalidRequest',
        ),
        JSON.stringify(state.lastErrors),
      );
    });
    assert.deepEqual(stepsOn(node, 'eni-new-1'), ['attachEni', 'detachEni', 'waitEniStatus(Available)', 'deleteEni']);
    const compensatingWait = node
      .callsOf('waitEniStatus')
      .find((call) => call.input.eniId === 'eni-new-1' && call.input.status === 'Available');
    assert.equal(compensatingWait?.input.goneIsDone, true);
    assert.equal(node.cloud.has('eni-new-1'), false, 'the compensated ENI is deleted in the cloud');
    assert.equal(writtenStatuses(node).has('eni-new-1'), false, 'no status write ever named the compensated ENI');
    assert.deepEqual(Object.keys(node.crEnis()), ['eni-new-2']);
    assert.deepEqual(stepsOn(node, 'eni-new-2'), ['attachEni', 'waitEniStatus(InUse)']);
  });

  it('writes the ENI as Deleting when the compensating delete fails too, and removes it once delete works', async () => {
    const node = emptyNode('saga-left-for-gc');
    const deleteWorks = gate();
    let deleteAllowed = false;
    void deleteWorks.opened.then(() => {
      deleteAllowed = true;
    });
    node.script('attachEni', (input) => {
      if (input.eniId === 'eni-new-1') throw attachRefused;
      return undefined;
    });
    node.script('deleteEni', () => {
      if (!deleteAllowed) {
        throw ecsFailure({
          type: 'EcsInvalidRequest',
          operation: 'DeleteNetworkInterface',
          code: 'Forbidden.RAM',
          retryable: false,
        });
      }
      return undefined;
    });
    await runNode(env, node, {}, async (workflow) => {
      await node.waitForCalls(() => (writtenStatuses(node).get('eni-new-1') ?? []).length > 0);
      assert.deepEqual(writtenStatuses(node).get('eni-new-1'), ['Deleting'], 'first written as Deleting');
      assert.equal(node.crEnis()['eni-new-1']?.status, 'Deleting');
      const state = await workflow.query(stateQuery);
      assert.ok(
        state.lastErrors.some((error) => error.operation === 'DeleteNetworkInterface' && error.eniId === 'eni-new-1'),
      );

      // The GC of the following passes (retried after backoff: the pass failed) deletes it once the cloud lets it.
      deleteWorks.open();
      await node.waitForCalls(() => writtenStatuses(node).get('eni-new-1')?.includes('<removed>') === true);
      await waitForState(workflow, 'both pods bound', (view) => view.pods.withIp === 2);
    });
    // Written Deleting, then removed: never InUse, never dropped while the cloud still had it.
    assert.deepEqual(writtenStatuses(node).get('eni-new-1'), ['Deleting', '<removed>']);
    assert.equal(node.cloud.has('eni-new-1'), false);
    assert.equal(node.crEnis()['eni-new-1'], undefined);
    // The compensation ran in full before the ENI was handed to GC.
    assert.deepEqual(stepsOn(node, 'eni-new-1').slice(0, 4), [
      'attachEni',
      'detachEni',
      'waitEniStatus(Available)',
      'deleteEni',
    ]);
  });
});

describe('create intent', () => {
  it('re-issues a create whose outcome is unknown with the same ClientToken on the next pass', async () => {
    const node = emptyNode('create-intent');
    // The cloud creates the ENI but every answer of the first pass is lost (a timeout): both attempts fail.
    node.script('createEni', (input) => {
      if (node.callsOf('createEni').length <= 2) {
        node.cloudCreate(input);
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
    await runNode(env, node, {}, async (workflow) => {
      await waitForState(workflow, 'both pods bound', (view) => view.pods.withIp === 2);
    });
    const creates = node.callsOf('createEni');
    assert.equal(creates.length, 3, 'two attempts in the first pass, one in the next');
    assert.deepEqual(
      creates.map((call) => call.attempt),
      [1, 2, 1],
    );
    const [first] = creates;
    assert.ok(first !== undefined);
    for (const call of creates) {
      assert.equal(call.input.clientToken, first.input.clientToken, 'every create carries the first token');
      assert.deepEqual({ ...call.input, clientToken: '' }, { ...first.input, clientToken: '' }, 'same parameters');
    }
    assert.equal(node.createdByToken.size, 1);
    assert.deepEqual([...node.cloud.keys()], ['eni-new-1'], 'the cloud holds the one ENI, found again by its token');
    assert.deepEqual(Object.keys(node.crEnis()), ['eni-new-1']);
  });

  it('plans a definitely refused create anew, under a new ClientToken', async () => {
    const node = emptyNode('create-refused');
    node.script('createEni', () => {
      if (node.callsOf('createEni').length === 1) {
        throw ecsFailure({
          type: 'EcsQuotaExceeded',
          operation: 'CreateNetworkInterface',
          code: 'EniPerInstanceLimitExceeded',
          retryable: false,
        });
      }
      return undefined;
    });
    await runNode(env, node, {}, async (workflow) => {
      await waitForState(workflow, 'both pods bound', (view) => view.pods.withIp === 2);
    });
    const tokens = node.callsOf('createEni').map((call: RecordedCall<'createEni'>) => call.input.clientToken);
    assert.equal(tokens.length, 2);
    assert.notEqual(tokens[0], tokens[1], 'a refusal leaves no intent: the next create is a new one');
  });
});
