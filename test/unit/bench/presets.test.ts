/** Issue 29's presets and the one-process mode of the scale benchmark's command line. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { parseOptions } from '../../../bench/scale/options.js';
import { deployedNodeOptions, roleArgs } from '../../../bench/scale/roles.js';

describe('issue 29 presets', () => {
  it('cold40: 40 × 20, pool 0–5, 2.5 s attach, built code, worker and watcher apart with their NODE_OPTIONS', () => {
    const options = parseOptions(['--preset', 'cold40']);
    assert.deepEqual(
      [options.nodes, options.pods, options.pool, options.attachMs, options.dist, options.deployedNodeOptions],
      [40, 20, { min: 0, max: 5 }, 2_500, true, true],
    );
    assert.equal(options.oneProcess, false);
  });

  it('burst200: 200 × 25 in one process, from src unless --dist', () => {
    const options = parseOptions(['--preset', 'burst200']);
    assert.deepEqual([options.nodes, options.pods, options.oneProcess, options.dist], [200, 25, true, false]);
    assert.equal(parseOptions(['--preset', 'burst200', '--dist']).dist, true);
    assert.equal(parseOptions(['--preset', 'burst200', '--nodes', '3']).nodes, 3);
  });

  it('runs every preset on the Temporal server --temporal names: the dev server unless postgres is asked for', () => {
    assert.equal(parseOptions(['--preset', 'burst200']).temporal, 'dev');
    const onPostgres = parseOptions(['--preset', 'burst200', '--temporal', 'postgres']);
    assert.deepEqual(
      [onPostgres.temporal, onPostgres.nodes, onPostgres.pods, onPostgres.oneProcess],
      ['postgres', 200, 25, true],
    );
    assert.throws(() => parseOptions(['--temporal', 'cassandra']), /unknown Temporal server "cassandra"/);
  });

  it('one process is one replica', () => {
    assert.throws(() => parseOptions(['--one-process', '--workers', '2']), /needs --workers 1/);
  });

  it('runs the one process as npm start does, or dist/main.js with --dist', () => {
    assert.deepEqual(roleArgs('all', false), ['--import', 'tsx', 'src/main.ts', '--role', 'all']);
    assert.deepEqual(roleArgs('worker', false), ['--import', 'tsx/esm', 'src/worker/main.ts']);
  });

  it("reads each process's NODE_OPTIONS where its manifests set them (the one process: overlays/single-process)", () => {
    assert.equal(deployedNodeOptions('worker'), '--max-semi-space-size=8');
    assert.equal(deployedNodeOptions('watcher'), '--max-semi-space-size=2');
    assert.equal(deployedNodeOptions('all'), '--max-semi-space-size=8 --max-old-space-size=512');
  });
});
