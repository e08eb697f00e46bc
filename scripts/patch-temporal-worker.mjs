// The install's patch of @temporalio/worker (issue 29, point 1; docs/decisions.md, "The workflow thread without the
// SDK's per-call tax"). Run by `npm ci`/`npm install` as the root package's postinstall, under whatever Node runs npm
// (maybe the machine's older one), so: plain ESM, Node built-ins only.
//
// What it changes, each as exact string replacements counted against the SDK version they were written for:
// - lib/workflow/vm.js, reusable-vm.js: no `timeout` on the calls into the workflow sandbox (each made Node start and
//   join a watchdog thread: ~100 µs of CPU per call);
// - lib/workflow/vm-shared.js: no v8 promise hook (it captured a stack per workflow promise for the `__stack_trace`
//   query, which then answers "Workflow stack traces are not enabled on this worker");
// - lib/workflow/threaded-vm.js, workflow-worker-thread.js + the new lib/workflow/eniflow-stuck-guard.js (from
//   scripts/temporal-worker-patch/): the guard that replaces the timeout (see that file).
// Every file must be the known original (then it is patched: a temp file renamed over it, as node_modules may be
// hard-linked with other trees) or the known patched result (nothing to do). Anything else fails the install: the
// SDK changed and the patch must be revisited (test/unit/worker/temporal-worker-patch.test.ts checks the same).
//
// Maintenance, on an SDK upgrade: install with `npm ci --ignore-scripts`, adapt SDK_VERSION and the edits, then
// `node scripts/patch-temporal-worker.mjs --print-hashes` on the pristine files prints both hashes of each file.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, realpathSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const SDK_PACKAGE = '@temporalio/worker';
export const SDK_VERSION = '1.24.0';
/** Every edit leaves this mark in the file it changes. */
export const MARK = 'eniflow patch (issue 29)';

const NO_TIMEOUT = `/* ${MARK}: no vm timeout, see eniflow-stuck-guard.js */`;
const REQUIRE_PATCH_CALLBACK = 'const patch_activation_callback_1 = require("./patch-activation-callback");\n';
const REQUIRE_GUARD = `const eniflow_stuck_guard_1 = require("./eniflow-stuck-guard"); // ${MARK}\n`;

/** The file the patch adds, and where its source lives in this repository. */
export const GUARD_FILE = 'lib/workflow/eniflow-stuck-guard.js';
export const GUARD_SOURCE = fileURLToPath(new URL('./temporal-worker-patch/eniflow-stuck-guard.cjs', import.meta.url));

/** The SDK files the patch edits: their hashes before and after, and each edit with how often it must match. */
export const PATCHED_FILES = [
  {
    path: 'lib/workflow/vm.js',
    original: '5d8de8092b481cbc5a3dd76971170e30112c263ae9173bae763c394a37a6f096',
    patched: 'ad2ecc3346f94ef51a426826c1eda5b662ab388894340bc6cb19a1e492ec4cce',
    edits: [{ find: 'timeout: isolateExecutionTimeoutMs,', replace: NO_TIMEOUT, count: 1 }],
  },
  {
    path: 'lib/workflow/reusable-vm.js',
    original: '1f6ec7d347dee4b48fc8ca14a1c3dd7ed1c82abd45175669e13c78aa1164ec68',
    patched: 'e554fff0300eee66670729692c6d707590a8d2cf7139f6b91f065a8ddd3fb294',
    // The Bun workaround, the call-into-scope helper, the module preload, and every call of a workflow's runtime.
    edits: [{ find: 'timeout: isolateExecutionTimeoutMs,', replace: NO_TIMEOUT, count: 4 }],
  },
  {
    path: 'lib/workflow/vm-shared.js',
    original: 'f526eb66f88dd444a23e9862911b69db584dacdd7fab118ac53acd521344026c',
    patched: '7f8ffccf8e08200cc3ce1df0c5cb4f7ff30140bd079a4530a10aee7caf771621',
    edits: [
      {
        find: '            this.setPromiseHook();\n',
        replace: `            /* ${MARK}: no promise hook, no stack per workflow promise (no __stack_trace query) */\n`,
        count: 1,
      },
    ],
  },
  {
    path: 'lib/workflow/threaded-vm.js',
    original: 'c0c76241f3c3e25b39fed3893035370188088b95b0f276ec4e423aec8c912d3b',
    patched: '430ce00d0c4a746050c79214764bb1036b8db7a524ec16194eef843fdb220fad',
    edits: [
      { find: REQUIRE_PATCH_CALLBACK, replace: REQUIRE_PATCH_CALLBACK + REQUIRE_GUARD, count: 1 },
      {
        find: '        const request = { requestId, input };\n',
        replace:
          '        const request = { requestId, input };\n' +
          `        (0, eniflow_stuck_guard_1.onSend)(this, input); // ${MARK}\n`,
        count: 1,
      },
      {
        find: 'this.requestIdToCompletion.set(requestId, { resolve, reject });',
        replace: `this.requestIdToCompletion.set(requestId, { resolve, reject, input }); // ${MARK}: names the stuck one`,
        count: 1,
      },
    ],
  },
  {
    path: 'lib/workflow/workflow-worker-thread.js',
    original: '90673d5b74aa51fdf66e4435c8f73d8a003e892ec9826866fe07ef6251089052',
    patched: '4812db76a65038a8a669c44cf21aa33d6c2ec4f32168d30725a259c8543269b7',
    edits: [
      { find: REQUIRE_PATCH_CALLBACK, replace: REQUIRE_PATCH_CALLBACK + REQUIRE_GUARD, count: 1 },
      {
        find: 'let workflowGetter;\n',
        replace: `let workflowGetter;\nlet stuckMarker; // ${MARK}\n`,
        count: 1,
      },
      {
        find: "        case 'init':\n",
        replace:
          "        case 'init':\n" +
          `            stuckMarker = (0, eniflow_stuck_guard_1.threadMarker)(input.stuckGuardBuffer); // ${MARK}\n`,
        count: 1,
      },
      {
        find: 'postResponse(await handleRequest(request));',
        replace: `postResponse(await (0, eniflow_stuck_guard_1.whileMarked)(stuckMarker, request, handleRequest)); // ${MARK}`,
        count: 1,
      },
    ],
  },
];

export function sha256(text) {
  return createHash('sha256').update(text).digest('hex');
}

function occurrences(text, part) {
  return text.split(part).length - 1;
}

function replaceCounted(path, text, { from, to, count }) {
  const found = occurrences(text, from);
  if (found !== count) {
    throw new Error(`${SDK_PACKAGE}/${path}: expected ${count} × ${JSON.stringify(from)}, found ${found}`);
  }
  return text.split(from).join(to);
}

/** The patched text of one file from its original text; throws when an edit does not match as often as expected. */
export function applyEdits(file, text) {
  return file.edits.reduce(
    (out, edit) => replaceCounted(file.path, out, { from: edit.find, to: edit.replace, count: edit.count }),
    text,
  );
}

/** The original text of one file from its patched text (the edits undone, last first). */
export function revertEdits(file, text) {
  return file.edits.reduceRight(
    (out, edit) => replaceCounted(file.path, out, { from: edit.replace, to: edit.find, count: edit.count }),
    text,
  );
}

function revisit(message) {
  return new Error(
    `${message}\nThe eniflow patch of ${SDK_PACKAGE} (scripts/patch-temporal-worker.mjs) was written for ` +
      `${SDK_PACKAGE} ${SDK_VERSION}: revisit it for the installed SDK (docs/decisions.md, "The workflow thread ` +
      `without the SDK's per-call tax"). If the SDK is unchanged, node_modules may hold another version of this ` +
      `patch: reinstall (npm ci).`,
  );
}

/** Writes next to the file and renames over it: a hard-linked original in another tree is left untouched. */
function replaceFile(path, text) {
  const temporary = `${path}.eniflow-patch-${process.pid}.tmp`;
  writeFileSync(temporary, text);
  renameSync(temporary, path);
}

/**
 * Checks and patches the SDK package at `packageDir`. Returns the files written (none when already patched); throws
 * (writing nothing) when the version or any file is not the one the patch was written for.
 */
export function patchTemporalWorker(packageDir, guardSource = readFileSync(GUARD_SOURCE, 'utf8')) {
  const { version } = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8'));
  if (version !== SDK_VERSION) throw revisit(`${SDK_PACKAGE} is ${version}, not ${SDK_VERSION}.`);
  const writes = [];
  for (const file of PATCHED_FILES) {
    const path = join(packageDir, file.path);
    const text = readFileSync(path, 'utf8');
    const hash = sha256(text);
    if (hash === file.patched) continue;
    if (hash !== file.original) {
      throw revisit(`${SDK_PACKAGE}/${file.path} is neither the original nor the patched file (sha256 ${hash}).`);
    }
    const patched = applyEdits(file, text);
    if (sha256(patched) !== file.patched) {
      throw new Error(`${file.path}: the edits no longer give the recorded patched hash; run --print-hashes`);
    }
    writes.push({ path, text: patched });
  }
  const guardPath = join(packageDir, GUARD_FILE);
  if (!existsSync(guardPath) || readFileSync(guardPath, 'utf8') !== guardSource) {
    writes.push({ path: guardPath, text: guardSource });
  }
  // All checks first, then the writes: a refused SDK is left as installed.
  for (const { path, text } of writes) replaceFile(path, text);
  return writes.map(({ path }) => path);
}

/** The installed package's directory, as the project's own code resolves it. */
export function installedPackageDir(projectRoot) {
  const entry = createRequire(join(projectRoot, 'package.json')).resolve(SDK_PACKAGE);
  return dirname(dirname(entry));
}

function printHashes(packageDir) {
  for (const file of PATCHED_FILES) {
    const text = readFileSync(join(packageDir, file.path), 'utf8');
    console.log(`${file.path}\n  original: ${sha256(text)}\n  patched:  ${sha256(applyEdits(file, text))}`);
  }
}

// Run as a script (postinstall), not imported (the test).
if (process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const packageDir = installedPackageDir(fileURLToPath(new URL('..', import.meta.url)));
  try {
    if (process.argv.includes('--print-hashes')) {
      printHashes(packageDir);
    } else {
      const written = patchTemporalWorker(packageDir);
      console.log(
        written.length === 0
          ? `${SDK_PACKAGE} ${SDK_VERSION}: eniflow patch already applied`
          : `${SDK_PACKAGE} ${SDK_VERSION}: eniflow patch applied (${written.length} files)`,
      );
    }
  } catch (error) {
    console.error(`eniflow postinstall failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  }
}
