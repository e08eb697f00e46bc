import { bundleWorkflowCode } from '@temporalio/worker';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';

import { WORKFLOWS_PATH } from '../../src/worker/create-worker.js';

const silent = (): undefined => undefined;

/**
 * Bundles the workflow code once per test file (webpack output kept off the test report); `workflowsPath` names
 * another entry (e.g. test/support/continued-start-workflows.ts) than the worker's.
 */
export function bundleNodeWorkflow(workflowsPath: string = WORKFLOWS_PATH): Promise<WorkflowBundleWithSourceMap> {
  return bundleWorkflowCode({
    workflowsPath,
    logger: { log: silent, trace: silent, debug: silent, info: silent, warn: silent, error: silent },
  });
}
