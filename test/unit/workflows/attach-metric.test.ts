import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  ActivityFailure,
  ApplicationFailure,
  CancelledFailure,
  RetryState,
  TimeoutFailure,
  TimeoutType,
} from '@temporalio/common';

import { attachResultOfFailure } from '../../../src/workflows/node/act/attach-metric.js';

/** An activity failure as the workflow receives it, wrapping `cause`. */
function activityFailure(cause: Error, activityType = 'waitEniStatus'): ActivityFailure {
  return new ActivityFailure('activity failed', activityType, '1', RetryState.NON_RETRYABLE_FAILURE, 'worker', cause);
}

describe('attachResultOfFailure', () => {
  const cases: { name: string; error: unknown; expected: 'failed' | 'timeout' | undefined }[] = [
    {
      name: 'the wait ran out of its schedule-to-close time: timeout',
      error: activityFailure(new TimeoutFailure('timed out', undefined, TimeoutType.SCHEDULE_TO_CLOSE)),
      expected: 'timeout',
    },
    {
      name: 'the attach call hung past its start-to-close time on its last attempt: timeout',
      error: activityFailure(new TimeoutFailure('timed out', undefined, TimeoutType.START_TO_CLOSE), 'attachEni'),
      expected: 'timeout',
    },
    {
      name: 'the ENI fell back to Available: failed',
      error: activityFailure(ApplicationFailure.nonRetryable('fell back', 'EniAttachFailed')),
      expected: 'failed',
    },
    {
      name: 'the cloud refused the attach: failed',
      error: activityFailure(ApplicationFailure.nonRetryable('refused', 'EcsInvalidState'), 'attachEni'),
      expected: 'failed',
    },
    { name: 'anything else: failed', error: new Error('boom'), expected: 'failed' },
    { name: 'the workflow was cancelled: not observed', error: new CancelledFailure('cancelled'), expected: undefined },
    {
      name: 'an activity cancelled with the workflow: not observed',
      error: activityFailure(new CancelledFailure('cancelled')),
      expected: undefined,
    },
  ];
  for (const row of cases) {
    it(row.name, () => {
      assert.equal(attachResultOfFailure(row.error), row.expected);
    });
  }
});
