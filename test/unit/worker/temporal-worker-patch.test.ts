/**
 * The install's patch of @temporalio/worker (scripts/patch-temporal-worker.mjs; issue 29, point 1): the installed SDK
 * is the version the patch was written for, every patched file is exactly the recorded result (so an SDK upgrade, or
 * an install that skipped scripts, fails here), the sandbox calls carry no vm timeout and no promise hook is
 * installed; and the script itself patches only the recorded originals, is idempotent, refuses anything else without
 * writing, and never writes through a hard link.
 */
import assert from 'node:assert/strict';
import { linkSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';

import { GlobalHandlers } from '@temporalio/worker/lib/workflow/vm-shared.js';

import {
  GUARD_FILE,
  GUARD_SOURCE,
  MARK,
  PATCHED_FILES,
  SDK_VERSION,
  installedPackageDir,
  patchTemporalWorker,
  revertEdits,
  sha256,
} from '../../../scripts/patch-temporal-worker.mjs';
import { temporalWorkerPatched } from '../../../src/worker/sdk-patch.js';

const PROJECT_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SDK_DIR = installedPackageDir(PROJECT_ROOT);
const installed = (path: string): string => readFileSync(join(SDK_DIR, path), 'utf8');

const scratch = mkdtempSync(join(tmpdir(), 'eniflow-sdk-patch-'));
after(() => {
  rmSync(scratch, { recursive: true, force: true });
});

/** A copy of the SDK package as published (the installed files with the edits undone), in a fresh directory. */
function pristineCopy(name: string, version = SDK_VERSION): string {
  const dir = join(scratch, name);
  mkdirSync(join(dir, 'lib', 'workflow'), { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: '@temporalio/worker', version }));
  for (const file of PATCHED_FILES) writeFileSync(join(dir, file.path), revertEdits(file, installed(file.path)));
  return dir;
}

describe('the installed @temporalio/worker', () => {
  it('is the version the patch was written for', () => {
    const { version } = JSON.parse(installed('package.json')) as { version: string };
    assert.equal(version, SDK_VERSION, 'an SDK upgrade: revisit scripts/patch-temporal-worker.mjs');
  });

  for (const file of PATCHED_FILES) {
    it(`has ${file.path} patched (the recorded result, from the recorded original)`, () => {
      const text = installed(file.path);
      assert.equal(sha256(text), file.patched, 'not the patched file: did the install skip its scripts?');
      assert.equal(sha256(revertEdits(file, text)), file.original, 'undoing the edits gives the original back');
      assert.ok(text.includes(MARK));
    });
  }

  it('has the stuck guard, wired into the workflow thread and its client', () => {
    assert.equal(installed(GUARD_FILE), readFileSync(GUARD_SOURCE, 'utf8'));
    assert.match(installed('lib/workflow/threaded-vm.js'), /eniflow_stuck_guard_1\.onSend\)\(this, input\)/);
    assert.match(installed('lib/workflow/workflow-worker-thread.js'), /eniflow_stuck_guard_1\.whileMarked\)/);
  });

  it('is seen as patched by the worker (which warns at start otherwise)', () => {
    assert.equal(temporalWorkerPatched(), true);
  });

  it('calls into the workflow sandbox without a vm timeout', () => {
    for (const path of ['lib/workflow/vm.js', 'lib/workflow/reusable-vm.js']) {
      const text = installed(path);
      assert.ok(!/\btimeout:/.test(text), `${path} still passes a timeout`);
      assert.match(text, /runInContext\(/);
    }
  });

  it('installs no promise hook (no stack captured per workflow promise)', () => {
    const handlers = new GlobalHandlers();
    handlers.install();
    try {
      assert.equal(handlers.installed, true);
      assert.equal(handlers.promiseHookInstalled, false);
    } finally {
      // Puts back the process's Error.prepareStackTrace, which install() replaced.
      handlers.uninstall();
    }
  });
});

describe('scripts/patch-temporal-worker.mjs', () => {
  it('patches the published files into the installed ones, then has nothing to do', () => {
    const dir = pristineCopy('fresh');
    const written = patchTemporalWorker(dir);
    assert.equal(written.length, PATCHED_FILES.length + 1, 'every file and the guard');
    for (const file of [...PATCHED_FILES.map(({ path }) => path), GUARD_FILE]) {
      assert.equal(readFileSync(join(dir, file), 'utf8'), installed(file), file);
    }
    assert.deepEqual(patchTemporalWorker(dir), [], 'idempotent');
  });

  it('refuses another SDK version, writing nothing', () => {
    const dir = pristineCopy('other-version', '1.24.1');
    assert.throws(() => patchTemporalWorker(dir), /is 1\.24\.1, not 1\.24\.0[\s\S]*revisit/);
    for (const file of PATCHED_FILES) assert.ok(!readFileSync(join(dir, file.path), 'utf8').includes(MARK));
  });

  it('refuses a file that is neither the original nor the patched one, writing nothing', () => {
    const dir = pristineCopy('changed-file');
    const changed = PATCHED_FILES.at(-1)!;
    writeFileSync(join(dir, changed.path), `${readFileSync(join(dir, changed.path), 'utf8')}\n// changed upstream\n`);
    assert.throws(
      () => patchTemporalWorker(dir),
      new RegExp(`${changed.path} is neither the original nor the patched file[\\s\\S]*revisit`),
    );
    for (const file of PATCHED_FILES) assert.ok(!readFileSync(join(dir, file.path), 'utf8').includes(MARK));
  });

  it('replaces each file instead of writing into it (node_modules may be hard-linked with other trees)', () => {
    const dir = pristineCopy('hard-linked');
    const file = PATCHED_FILES[0]!;
    const elsewhere = join(scratch, 'elsewhere.js');
    linkSync(join(dir, file.path), elsewhere);
    patchTemporalWorker(dir);
    assert.equal(sha256(readFileSync(elsewhere, 'utf8')), file.original, 'the other link keeps the original');
    assert.equal(sha256(readFileSync(join(dir, file.path), 'utf8')), file.patched);
    assert.ok(dirname(elsewhere) !== dirname(join(dir, file.path)));
  });
});
