/** maxInWindow, which the ECS budget test and the throttle bench judge the call log by. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { maxInWindow } from '../../support/call-windows.js';

describe('maxInWindow', () => {
  it('counts the busiest sliding window, whatever the order of the times', () => {
    assert.equal(maxInWindow([], 1_000), 0);
    assert.equal(maxInWindow([5], 1_000), 1);
    // 900..1_800 holds three, though no window aligned on 0 or 1_000 does.
    assert.equal(maxInWindow([1_800, 0, 900, 1_500, 3_000], 1_000), 3);
  });

  it('treats the window as half-open: calls exactly windowMs apart are in different windows', () => {
    assert.equal(maxInWindow([0, 60_000], 60_000), 1);
    assert.equal(maxInWindow([0, 59_999], 60_000), 2);
  });
});
