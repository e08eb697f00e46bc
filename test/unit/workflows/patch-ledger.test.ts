/**
 * The patch ledger is the truth about `patched()` ids: every id the workflow code uses is listed as live, and no
 * retired id comes back (a history recorded under it would replay the wrong branch).
 */
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';

import { LIVE_PATCHES, RETIRED_PATCHES } from '../../../src/workflows/node/memory/patches.js';

const WORKFLOWS = resolve(import.meta.dirname, '../../../src/workflows');

async function workflowSources(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(
    entries.map(async (entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return workflowSources(path);
      return entry.name.endsWith('.ts') ? [await readFile(path, 'utf8')] : [];
    }),
  );
  return nested.flat();
}

/** The ids passed to `patched(…)` or `deprecatePatch(…)` as string literals. */
export function patchIdsIn(source: string): string[] {
  return [...source.matchAll(/\b(?:patched|deprecatePatch)\(\s*'([^']+)'\s*\)/g)].map((match) => match[1] ?? '');
}

describe('patch ledger', () => {
  it('reads patch ids from code (the check itself works)', () => {
    assert.deepEqual(patchIdsIn("if (patched('a-b')) x(); deprecatePatch( 'c' ); patchedX('d');"), ['a-b', 'c']);
  });

  it('every id used in src/workflows is live, none is retired, and no id is both', async () => {
    const used = (await workflowSources(WORKFLOWS)).flatMap(patchIdsIn);
    const retired: readonly string[] = RETIRED_PATCHES;
    for (const id of used) {
      assert.ok(LIVE_PATCHES.includes(id), `patch id '${id}' is used but not listed in LIVE_PATCHES`);
      assert.ok(!retired.includes(id), `patch id '${id}' was retired and must not be used again`);
    }
    assert.deepEqual(
      LIVE_PATCHES.filter((id) => retired.includes(id)),
      [],
    );
  });
});
