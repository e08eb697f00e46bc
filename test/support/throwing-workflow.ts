/** A workflow that fails at a known line of this file (test/integration/worker/workflow-stack-trace.test.ts reads the line). */
import { ApplicationFailure } from '@temporalio/workflow';

export async function failsAtAKnownLine(): Promise<void> {
  await Promise.resolve();
  throw ApplicationFailure.nonRetryable('failed at a known line'); // KNOWN LINE
}
