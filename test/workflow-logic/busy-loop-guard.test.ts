/**
 * The guard that replaced the SDK's per-call vm timeout (issue 29, point 1; scripts/patch-temporal-worker.mjs): a
 * workflow stuck in a busy loop must not hang the worker silently. The worker runs in the production thread model
 * (no debugMode) with a short isolateExecutionTimeout; the workflow spins in its first activation; the worker must
 * fail with an error naming that workflow, instead of hanging.
 */
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';

import { Worker } from '@temporalio/worker';
import type { WorkerOptions, WorkflowBundleWithSourceMap } from '@temporalio/worker';

import { connectTemporalTestEnv, uniqueTaskQueue, uniqueWorkflowId } from '../support/temporal-env.js';
import type { TemporalTestEnv } from '../support/temporal-env.js';
import { bundleNodeWorkflow } from '../support/workflow-bundle.js';

const BUSY_LOOP_WORKFLOWS = fileURLToPath(new URL('./support/busy-loop-workflow.ts', import.meta.url));

let env: TemporalTestEnv;
let bundle: WorkflowBundleWithSourceMap;
before(async () => {
  [env, bundle] = await Promise.all([connectTemporalTestEnv(), bundleNodeWorkflow(BUSY_LOOP_WORKFLOWS)]);
});
after(async () => {
  await env.close();
});

describe('a workflow stuck in a busy loop', () => {
  // Without the guard (or with the SDK's timeout instead) the worker keeps running: the test then fails on this bound.
  it('fails the worker with an error naming the workflow, instead of hanging it', { timeout: 90_000 }, async (t) => {
    const taskQueue = uniqueTaskQueue('busy-loop');
    const workflowId = uniqueWorkflowId('busy-loop');
    // isolateExecutionTimeout is honoured by SDK 1.24 but no longer in its public WorkerOptions type.
    const options: WorkerOptions & { isolateExecutionTimeout: string } = {
      connection: env.nativeConnection,
      namespace: env.namespace,
      taskQueue,
      workflowBundle: bundle,
      isolateExecutionTimeout: '1s',
      // The default, made explicit: the production thread model is the one guarded.
      debugMode: false,
    };
    const worker = await Worker.create(options);
    const running = worker.run();
    // At the bound, stop the worker so that the test fails on "missing rejection" instead of leaving it running.
    t.signal.addEventListener('abort', () => {
      if (worker.getState() === 'RUNNING') worker.shutdown();
    });
    const workflow = await env.client.workflow.start('busyLoopWorkflow', { taskQueue, workflowId });
    try {
      await assert.rejects(running, (error: unknown) => {
        assert.ok(error instanceof Error);
        assert.match(error.message, /^Workflow thread stuck: workflow /);
        assert.ok(error.message.includes(workflowId), `names the workflow: ${error.message}`);
        assert.ok(error.message.includes(workflow.firstExecutionRunId), `names the run: ${error.message}`);
        assert.match(error.message, /busyLoopWorkflow/);
        return true;
      });
      assert.equal(worker.getState(), 'FAILED');
    } finally {
      await workflow.terminate('test finished').catch(() => undefined);
    }
  });
});
