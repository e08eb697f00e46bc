import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { SeenSignals } from '../../../src/workflows/node/memory/seen-signals.js';

const readSeen = { pods: '120', 'node-crs': '40' };
const seenPod = { reason: 'pod-added', seen: { pods: '118' } };
const newPod = { reason: 'pod-added', seen: { pods: '121' } };

describe('SeenSignals', () => {
  it('between passes: a seen change asks for a pass only if the last pass left work', () => {
    const signals = new SeenSignals();
    assert.equal(signals.asksForPass({ reason: seenPod, readSeen, leftWork: false }), false);
    assert.equal(signals.asksForPass({ reason: seenPod, readSeen, leftWork: true }), true);
    assert.equal(signals.asksForPass({ reason: newPod, readSeen, leftWork: false }), true);
    assert.equal(signals.asksForPass({ reason: { reason: 'watcher-start' }, readSeen, leftWork: false }), true);
    assert.equal(signals.asksForPass({ reason: seenPod, readSeen: undefined, leftWork: false }), true);
    const gained = { ...seenPod, vSwitchesGained: ['vsw-a'] };
    assert.equal(signals.asksForPass({ reason: gained, readSeen, leftWork: false }), true);
  });

  it('during a pass: a seen change is held, and asks for a pass when that pass ends with work left', () => {
    const signals = new SeenSignals();
    signals.passStarting();
    assert.equal(signals.asksForPass({ reason: seenPod, readSeen, leftWork: false }), false);
    assert.equal(signals.passEnded(true), true, 'the pass left pods waiting');
    signals.passStarting();
    assert.equal(signals.asksForPass({ reason: seenPod, readSeen, leftWork: true }), false);
    assert.equal(signals.passEnded(false), false, 'the pass served everything');
    signals.passStarting();
    assert.equal(signals.passEnded(true), false, 'no signal held: nothing to ask');
    signals.passStarting();
    assert.equal(signals.asksForPass({ reason: newPod, readSeen, leftWork: false }), true, 'a new change, at once');
    assert.equal(signals.passEnded(true), false);
  });
});
