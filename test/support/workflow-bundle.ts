import { bundleWorkflowCode } from '@temporalio/worker';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';

import { WORKFLOWS_PATH } from '../../src/worker/create-worker.js';

const silent = (): undefined => undefined;

/** Bundles the workflow code once per test file (webpack output kept off the test report). */
export function bundleNodeWorkflow(): Promise<WorkflowBundleWithSourceMap> {
  return bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH,
    logger: { log: silent, trace: silent, debug: silent, info: silent, warn: silent, error: silent },
  });
}
