/**
 * Determinism guard: the recorded histories of the workflow scenarios (test/replay/histories/, recorded with
 * `ENIFLOW_RECORD_HISTORIES=1 npm run test:integration`) must replay against the current workflow code. A change
 * that breaks one needs `patched()` (or a new recording, when no such workflow can be running anywhere).
 */
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { before, describe, it } from 'node:test';

import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
import { Worker } from '@temporalio/worker';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';

import { createWorkerMetrics } from '../../src/worker/metrics.js';
import { installQuietRuntime } from '../support/temporal-env.js';
import { bundleNodeWorkflow } from '../support/workflow-bundle.js';

const HISTORIES = new URL('./histories/', import.meta.url);
const files = (await readdir(HISTORIES)).filter((file) => file.endsWith('.json')).sort();

let bundle: WorkflowBundleWithSourceMap;
before(async () => {
  // Each replay starts a worker: its state changes would otherwise fill the test report.
  installQuietRuntime();
  bundle = await bundleNodeWorkflow();
});

describe('workflow replay', () => {
  it('has recorded histories to replay', () => {
    assert.ok(files.length >= 8, `only ${files.length} histories in test/replay/histories`);
  });
  for (const file of files) {
    it(`replays ${file}`, async () => {
      const history = historyFromJSON(JSON.parse(await readFile(new URL(file, HISTORIES), 'utf8')) as unknown);
      assert.ok((history.events?.length ?? 0) > 3, 'a real history, not an empty one');
      // The production sinks too: the node workflow's pass metrics are also called during replay.
      await Worker.runReplayHistory(
        { workflowBundle: bundle, sinks: createWorkerMetrics().sinks },
        history,
        `replay-${file}`,
      );
    });
  }
});
