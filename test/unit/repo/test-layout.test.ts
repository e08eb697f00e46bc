/**
 * Every test file is run by exactly one suite's folder. The suites glob their folders (package.json's `test:*`
 * scripts), so a test file left in a folder no suite globs (an old path brought back by a merge, a new folder) would
 * never run and nothing would say so; one matched by two suites would run twice.
 *
 * A suite may also re-run named files of other suites on another server (`test:temporal-postgres` runs some
 * integration and chaos files on the PostgreSQL-backed Temporal server): after its own folder's glob come plain file
 * paths, each of which must exist and belong to another suite's folder, so a moved or deleted file fails here rather
 * than in `run-test-files.ts` on CI.
 */
import assert from 'node:assert/strict';
import { existsSync, globSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';

const ROOT = resolve(import.meta.dirname, '../../..');
const SUITES = ['unit', 'emulator', 'replay', 'workflow-logic', 'integration', 'chaos', 'temporal-postgres'];

const scripts = (JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> })
  .scripts;

/** The `test/…` arguments of one npm script, quotes removed, in order. */
function testPathsOf(script: string): string[] {
  return script
    .split(/\s+/)
    .map((word) => word.replace(/^'(.*)'$/, '$1'))
    .filter((word) => word.startsWith('test/'));
}

/** A suite's own folder glob (its first `test/…` argument) and the files of other suites it re-runs (the rest). */
function suiteArgs(suite: string): { ownGlob: string | undefined; reRuns: string[] } {
  const [ownGlob, ...reRuns] = testPathsOf(scripts[`test:${suite}`] ?? '');
  return { ownGlob, reRuns };
}

/** The suite whose own folder glob matches each test file. */
function ownersByFile(): Map<string, string[]> {
  const runBy = new Map<string, string[]>();
  for (const suite of SUITES) {
    const { ownGlob } = suiteArgs(suite);
    if (ownGlob === undefined) continue;
    for (const file of globSync(ownGlob, { cwd: ROOT })) runBy.set(file, [...(runBy.get(file) ?? []), suite]);
  }
  return runBy;
}

describe('test layout', () => {
  it('each suite names its own folder first', () => {
    for (const suite of SUITES) {
      const script = scripts[`test:${suite}`] ?? '';
      assert.ok(script.includes(`'test/${suite}/**/*.test.ts'`), `test:${suite} quotes its glob`);
      assert.equal(suiteArgs(suite).ownGlob, `test/${suite}/**/*.test.ts`, suite);
    }
  });

  it('every test file is run by exactly one suite', () => {
    const runBy = ownersByFile();
    const files = globSync('test/**/*.test.ts', { cwd: ROOT });
    assert.ok(files.length > 100, `found ${files.length} test files`);
    const wrong = files
      .filter((file) => runBy.get(file)?.length !== 1)
      .map((file) => `${file}: ${runBy.get(file)?.join(', ') ?? 'no suite'}`);
    assert.deepEqual(wrong, []);
  });

  it('a suite re-runs only existing files of other suites, each once, by path (no glob)', () => {
    const runBy = ownersByFile();
    const wrong: string[] = [];
    for (const suite of SUITES) {
      const { reRuns } = suiteArgs(suite);
      for (const [index, file] of reRuns.entries()) {
        const owners = runBy.get(file) ?? [];
        if (/[*?[{]/.test(file)) wrong.push(`${suite}: ${file} is a glob`);
        else if (!existsSync(resolve(ROOT, file))) wrong.push(`${suite}: ${file} does not exist`);
        else if (!file.endsWith('.test.ts')) wrong.push(`${suite}: ${file} is not a test file`);
        else if (owners.includes(suite) || owners.length !== 1)
          wrong.push(`${suite}: ${file} is run by ${owners.join(', ') || 'no suite'}`);
        else if (reRuns.indexOf(file) !== index) wrong.push(`${suite}: ${file} is named twice`);
      }
    }
    assert.deepEqual(wrong, []);
  });

  it('npm test runs every suite', () => {
    const test = scripts['test'] ?? '';
    const missing = SUITES.filter((suite) => !new RegExp(`npm run test:${suite}(?:\\s|$)`).test(test));
    assert.deepEqual(missing, []);
  });
});
