import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

/** The mark every patched line carries (scripts/patch-temporal-worker.mjs `MARK`). */
const PATCH_MARK = 'eniflow patch (issue 29)';

/** SDK files the patch edits, each of which must carry the mark (threaded-vm.js requires the guard file it adds). */
const PATCHED_SDK_FILES = [
  '@temporalio/worker/lib/workflow/vm.js',
  '@temporalio/worker/lib/workflow/reusable-vm.js',
  '@temporalio/worker/lib/workflow/vm-shared.js',
  '@temporalio/worker/lib/workflow/threaded-vm.js',
  '@temporalio/worker/lib/workflow/workflow-worker-thread.js',
];

/**
 * Whether the install patched @temporalio/worker (scripts/patch-temporal-worker.mjs, docs/decisions.md "The workflow
 * thread without the SDK's per-call tax"): every file the patch touches carries its mark, so a half-patched or
 * re-extracted SDK counts as unpatched. An install that skipped scripts still runs, with the SDK's own per-call vm
 * timeout, so the worker only says so.
 */
export function temporalWorkerPatched(): boolean {
  const require = createRequire(import.meta.url);
  try {
    return PATCHED_SDK_FILES.every((file) => readFileSync(require.resolve(file), 'utf8').includes(PATCH_MARK));
  } catch {
    return false;
  }
}
