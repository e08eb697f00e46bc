/** Which failed attempts are routine (the server retries them) and which end the activity. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { ApplicationFailure } from '@temporalio/common';

import { attemptWillBeRetried } from '../../../src/activities/activity-log.js';

const info = (overrides: Partial<Parameters<typeof attemptWillBeRetried>[0]> = {}) => ({
  attempt: 1,
  retryPolicy: { initialInterval: 2_000, backoffCoefficient: 2, maximumAttempts: 3, nonRetryableErrorTypes: ['Fatal'] },
  scheduledTimestampMs: 0,
  scheduleToCloseTimeoutMs: 0,
  ...overrides,
});
const transient = ApplicationFailure.retryable('try again', 'EcsTransient');

describe('attemptWillBeRetried', () => {
  const cases: {
    name: string;
    info: Parameters<typeof attemptWillBeRetried>[0];
    error: unknown;
    nowMs?: number;
    retried: boolean;
  }[] = [
    { name: 'a retryable failure before the last attempt', info: info(), error: transient, retried: true },
    { name: 'the last allowed attempt', info: info({ attempt: 3 }), error: transient, retried: false },
    {
      name: 'a non-retryable failure',
      info: info(),
      error: ApplicationFailure.nonRetryable('no', 'EcsTransient'),
      retried: false,
    },
    {
      name: 'a type the policy lists as non-retryable',
      info: info(),
      error: ApplicationFailure.retryable('no', 'Fatal'),
      retried: false,
    },
    {
      name: 'a plain error, by its name',
      info: info(),
      error: Object.assign(new Error('x'), { name: 'Fatal' }),
      retried: false,
    },
    { name: 'a plain error otherwise', info: info(), error: new TypeError('bug'), retried: true },
    {
      name: 'no policy: the server retries forever',
      info: { attempt: 9, scheduledTimestampMs: 0, scheduleToCloseTimeoutMs: 0 },
      error: transient,
      retried: true,
    },
    {
      name: 'the next retry would start after schedule-to-close',
      info: info({ scheduleToCloseTimeoutMs: 10_000 }),
      error: transient,
      nowMs: 9_000,
      retried: false,
    },
    {
      name: 'the next retry fits before schedule-to-close',
      info: info({ scheduleToCloseTimeoutMs: 10_000 }),
      error: transient,
      nowMs: 1_000,
      retried: true,
    },
    {
      name: "the failure's own retry delay decides",
      info: info({ scheduleToCloseTimeoutMs: 10_000 }),
      error: ApplicationFailure.create({ message: 'slow down', type: 'EcsThrottled', nextRetryDelay: 30_000 }),
      nowMs: 1_000,
      retried: false,
    },
  ];
  for (const testCase of cases) {
    it(testCase.name, () => {
      assert.equal(attemptWillBeRetried(testCase.info, testCase.error, testCase.nowMs ?? 0), testCase.retried);
    });
  }
});
