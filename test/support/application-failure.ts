import assert from 'node:assert/strict';

import { ApplicationFailure } from '@temporalio/common';

/** The ApplicationFailure an activity call rejects with (an activity's classified failure); fails the test otherwise. */
export async function applicationFailureOf(call: () => Promise<unknown>): Promise<ApplicationFailure> {
  try {
    await call();
  } catch (error) {
    assert.ok(error instanceof ApplicationFailure, `expected an ApplicationFailure, got ${String(error)}`);
    return error;
  }
  assert.fail('expected the activity to fail');
}
