import { createRequire } from 'node:module';

/**
 * Whether the install patched @temporalio/worker (scripts/patch-temporal-worker.mjs, docs/decisions.md "The workflow
 * thread without the SDK's per-call tax"): the guard file it adds is there. An install that skipped scripts still
 * runs, with the SDK's own per-call vm timeout, so the worker only says so.
 */
export function temporalWorkerPatched(): boolean {
  try {
    createRequire(import.meta.url).resolve('@temporalio/worker/lib/workflow/eniflow-stuck-guard.js');
    return true;
  } catch {
    return false;
  }
}
