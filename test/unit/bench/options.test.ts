import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { parseOptions, scaledPeriods } from '../../../bench/scale/options.js';

describe('bench options: scaled timer periods', () => {
  it('leaves the settings alone at scale 1', () => {
    assert.deepEqual(scaledPeriods(1, undefined), {});
    assert.deepEqual(scaledPeriods(1, '{"gcPeriodMs":5000}'), { nodeSettings: '{"gcPeriodMs":5000}' });
  });

  it('divides every timer period of the node workflow and the janitor interval', () => {
    const periods = scaledPeriods(60, undefined);
    assert.deepEqual(JSON.parse(periods.nodeSettings ?? '{}'), {
      idleWakeMs: 360_000,
      openApiSyncPeriodMs: 720_000,
      gcPeriodMs: 2_000,
      stuckBackoffMs: 30_000,
      maxRunAgeMs: 10_080_000,
    });
    assert.equal(periods.janitorIntervalSeconds, 30);
  });

  it('keeps a setting given on the command line over its scaled default', () => {
    const periods = scaledPeriods(60, '{"gcPeriodMs":10000,"maxBatchWindowMs":2000}');
    const settings = JSON.parse(periods.nodeSettings ?? '{}') as Record<string, number>;
    assert.equal(settings['gcPeriodMs'], 10_000);
    assert.equal(settings['maxBatchWindowMs'], 2_000);
    assert.equal(settings['idleWakeMs'], 360_000);
  });

  it('the idle preset runs the timers 60 times faster over a 30-minute window', () => {
    const options = parseOptions(['--preset', 'idle']);
    assert.equal(options.periodScale, 60);
    assert.equal(options.idleSeconds, 1_800);
    assert.equal(parseOptions([]).periodScale, 1);
  });

  it('restarts a worker during the burst only when asked', () => {
    assert.equal(parseOptions([]).restartDuringBurst, false);
    assert.equal(parseOptions(['--restart-during-burst', '--workers', '2']).restartDuringBurst, true);
  });

  it('restarts an all-in-one process last only when asked', () => {
    assert.equal(parseOptions([]).allInOneRestart, false);
    assert.equal(parseOptions(['--all-in-one-restart']).allInOneRestart, true);
  });

  it('takes more role environment as a JSON object of strings', () => {
    assert.equal(parseOptions([]).roleEnv, undefined);
    assert.deepEqual(parseOptions(['--role-env', '{"MAX_CONCURRENT_WORKFLOW_TASKS":"8"}']).roleEnv, {
      MAX_CONCURRENT_WORKFLOW_TASKS: '8',
    });
    assert.throws(() => parseOptions(['--role-env', '{"A":8}']), /values must be strings: A/);
    assert.throws(() => parseOptions(['--role-env', '["A"]']), /must be a JSON object/);
  });
});
