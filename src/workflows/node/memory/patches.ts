/**
 * The patch ledger of the node workflow: every `patched()` id, live or retired. The rule for changes that alter
 * the commands a workflow issues (docs/patches.md):
 *
 * 1. **Patch.** Guard the new path with `patched(id)` and keep the old one, so open runs replay; record a replay
 *    history on the new path. Evaluate it once, at the start of a pass, and branch on that value.
 * 2. **Deprecate.** Once every run that could have started before the release is gone, switch to
 *    `deprecatePatch(id)` and delete the old path. Runs hand over to a new run at least every
 *    `maxRunAgeMs` (7 days) and on `maxPassesPerRun`, so "every run" means: one run-age bound after the rollout.
 * 3. **Remove.** After one more run-age bound, remove the id and move it to {@link RETIRED_PATCHES}.
 * `test/unit/workflows/patch-ledger.test.ts` holds the code to this ledger.
 */
/**
 * Patch ids in force: none, since every patch so far was collapsed before the first release. A new one is listed
 * here and evaluated once, at the start of a pass, with `patched(id)`; the pass branches on that one value.
 */
export const LIVE_PATCHES: readonly string[] = [];

/**
 * Ids that were used and must never be used again for something else (a history recorded with one would replay
 * the wrong branch).
 */
export const RETIRED_PATCHES = [
  'pending-pod-events',
  'data-plane-safety',
  'sync-time-from-cr',
  'create-intent',
  'truthful-events',
  'compact-history',
  'node-story',
] as const;
