/**
 * The early `IpamState=Error` upsert follows the tracker's failure listener: a capacity refusal (vSwitch exhausted,
 * quota) ends the pass InsufficientIP or Ready, so it must not tell the listener. Before, every failure did.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { ApplicationFailure } from '@temporalio/common';

import { OperationTracker } from '../../../src/workflows/node/act/operation-tracker.js';

async function listenerCalls(type: string): Promise<number> {
  const tracker = new OperationTracker();
  let calls = 0;
  tracker.onFailure(() => {
    calls += 1;
  });
  const failure = ApplicationFailure.create({ type, message: 'refused', nonRetryable: true });
  await assert.rejects(
    tracker.track({ kind: 'createEni', action: 'CreateNetworkInterface', detail: 'create an ENI' }, () =>
      Promise.reject(failure),
    ),
    (error) => error === failure,
  );
  assert.deepEqual(tracker.list(), []);
  return calls;
}

describe('OperationTracker failure listener', () => {
  for (const type of ['EcsVSwitchExhausted', 'EcsQuotaExceeded']) {
    it(`is not told of a capacity refusal (${type})`, async () => {
      assert.equal(await listenerCalls(type), 0);
    });
  }
  for (const type of ['EcsTransient', 'EcsThrottled', 'EcsInvalidState']) {
    it(`is told of a failing call (${type})`, async () => {
      assert.equal(await listenerCalls(type), 1);
    });
  }
});
