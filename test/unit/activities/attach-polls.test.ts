import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { firstAttachPollMs, nextAttachPollMs } from '../../../src/activities/ecs/attach-polls.js';

describe('attach polls', () => {
  it('the first describe of an attach waits two thirds of the poll interval', () => {
    assert.equal(firstAttachPollMs(3_000), 2_000);
    assert.equal(firstAttachPollMs(20), 13);
  });

  it('the next ones start at a third of it and grow by half up to it', () => {
    assert.deepEqual(
      [1, 2, 3, 4, 5, 10].map((attempt) => nextAttachPollMs(3_000, attempt)),
      [1_000, 1_500, 2_250, 3_000, 3_000, 3_000],
    );
  });

  it('a typical 2–2.5 s attach is seen in one or two describes, by 3 s: earlier than Terway (3 s, then 4.5 s)', () => {
    const describesAt = [firstAttachPollMs(3_000)];
    for (let attempt = 1; describesAt.length < 3; attempt += 1) {
      describesAt.push((describesAt.at(-1) ?? 0) + nextAttachPollMs(3_000, attempt));
    }
    assert.deepEqual(describesAt, [2_000, 3_000, 4_500]);
  });
});
