/**
 * The worker process of the crash tests: `src/worker/main.ts`'s runWorker (configuration from the environment,
 * signal handling, logs) with the workflow bundle the test built once (`ENIFLOW_TEST_WORKFLOW_BUNDLE`), so each of
 * the many restarts takes a second or two instead of bundling the workflow code again.
 */
import { runWorker } from '../../src/worker/run-worker.js';

const codePath = process.env['ENIFLOW_TEST_WORKFLOW_BUNDLE'];
if (codePath === undefined || codePath === '') throw new Error('ENIFLOW_TEST_WORKFLOW_BUNDLE is not set');
await runWorker(process.env, { workflowBundle: { codePath } });
