/**
 * Every test file is run by exactly one suite. The suites glob their folders (package.json's `test:*` scripts), so a
 * test file left in a folder no suite globs (an old path brought back by a merge, a new folder) would never run and
 * nothing would say so; one matched by two suites would run twice.
 */
import assert from 'node:assert/strict';
import { globSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';

const ROOT = resolve(import.meta.dirname, '../../..');
const SUITES = ['unit', 'emulator', 'replay', 'workflow-logic', 'integration', 'chaos', 'temporal-postgres'];

const scripts = (JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> })
  .scripts;

/** The quoted `test/…` globs of one npm script. */
function globsOf(script: string): string[] {
  return [...script.matchAll(/'(test\/[^']+)'/g)].map((match) => match[1] ?? '');
}

describe('test layout', () => {
  it('each suite names its own folder', () => {
    for (const suite of SUITES) {
      assert.deepEqual(globsOf(scripts[`test:${suite}`] ?? ''), [`test/${suite}/**/*.test.ts`], suite);
    }
  });

  it('every test file is run by exactly one suite', () => {
    const runBy = new Map<string, string[]>();
    for (const suite of SUITES) {
      for (const pattern of globsOf(scripts[`test:${suite}`] ?? '')) {
        for (const file of globSync(pattern, { cwd: ROOT })) runBy.set(file, [...(runBy.get(file) ?? []), suite]);
      }
    }
    const files = globSync('test/**/*.test.ts', { cwd: ROOT });
    assert.ok(files.length > 100, `found ${files.length} test files`);
    const wrong = files
      .filter((file) => runBy.get(file)?.length !== 1)
      .map((file) => `${file}: ${runBy.get(file)?.join(', ') ?? 'no suite'}`);
    assert.deepEqual(wrong, []);
  });
});
