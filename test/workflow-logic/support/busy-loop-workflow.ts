/**
 * Test-only workflow code for test/workflow-logic/busy-loop-guard.test.ts: a workflow stuck in a synchronous loop,
 * the bug the workflow thread's stuck guard (scripts/temporal-worker-patch/eniflow-stuck-guard.cjs) must report.
 */

/** Never yields: the workflow thread stays inside this activation until something terminates it. */
// eslint-disable-next-line @typescript-eslint/require-await -- a workflow function is async; this one never awaits
export async function busyLoopWorkflow(): Promise<never> {
  for (;;) {
    // Spins: no await, no timer, so neither the workflow nor the thread ever gets control back.
  }
}
