import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { NodeDegradation } from '../../../src/workflows/node/memory/degradation.js';
import { RunningPass } from '../../../src/workflows/node/memory/running-pass.js';

describe('RunningPass', () => {
  it('is running from start to end, and records each level it acts at once, in order', () => {
    const pass = new RunningPass();
    assert.equal(pass.running, false);
    pass.actsAt('l1');
    assert.equal(pass.levelOtherThan('off'), undefined, 'nothing is recorded between passes');
    pass.start('off');
    assert.equal(pass.running, true);
    assert.equal(pass.levelOtherThan('off'), undefined);
    pass.actsAt('off');
    pass.actsAt('l0');
    pass.actsAt('l1');
    pass.actsAt('l0');
    assert.equal(pass.levelOtherThan('off'), 'l0', 'the first level other than the given one');
    assert.equal(pass.levelOtherThan('l0'), 'off');
    pass.end();
    assert.equal(pass.running, false);
    assert.equal(pass.levelOtherThan('l1'), undefined);
  });
});

describe('NodeDegradation with the running pass', () => {
  it('records the level of every gates call during a pass, which the state view names while the level differs', () => {
    const pass = new RunningPass();
    const degradation = new NodeDegradation({}, pass);
    degradation.offer({ level: 'off', revision: '1' });
    degradation.gates();
    assert.equal(degradation.view()?.passRunningAt, undefined, 'between passes: no pass running');
    pass.start(degradation.level);
    degradation.offer({ level: 'l0', revision: '2' });
    assert.equal(degradation.view()?.passRunningAt, 'off', 'the pass started at off, the level is now l0');
    assert.equal(degradation.gates().release, false, 'l0 holds back releases');
    degradation.offer({ level: 'off', revision: '3' });
    assert.equal(degradation.view()?.passRunningAt, 'l0', 'the pass took gates at l0');
    pass.end();
    assert.equal(degradation.view()?.passRunningAt, undefined);
  });
});
