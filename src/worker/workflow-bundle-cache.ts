/**
 * A worker started from source would run webpack over the workflow code at every start (about 1.5 s on an idle
 * machine, several seconds on a loaded one), which delays every restart. The bundle depends only on the source tree
 * and the installed packages, so it is kept on disk under a key derived from them and reused by the next start.
 * The production image does not need this: it starts from `dist/` with the bundle `npm run build` wrote.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { join, relative } from 'node:path';

import type { Logger } from '../logger.js';
import { bundleWorkflows } from './workflow-bundle-options.js';

const BUNDLE_PREFIX = 'workflow-bundle-';
/**
 * Every edit under `src/` makes a new entry (about 1.4 MB), and worktrees share the cache, so when one is written
 * the others are pruned to the newest few and to those younger than a week.
 */
const KEEP_ENTRIES = 16;
const PRUNE_AFTER_MS = 7 * 24 * 3600 * 1000;
const SOURCE_MAP_MARKER = '//# sourceMappingURL=data:application/json;';

/** `$XDG_CACHE_HOME/eniflow/workflow-bundles`, else `~/.cache/eniflow/workflow-bundles`. */
export function defaultBundleCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env['XDG_CACHE_HOME'];
  const base = xdg !== undefined && xdg !== '' ? xdg : join(homedir(), '.cache');
  return join(base, 'eniflow', 'workflow-bundles');
}

/** The installed version of the Temporal SDK that bundles and runs the code. */
export function temporalSdkVersion(): string {
  const require = createRequire(import.meta.url);
  return (require('@temporalio/worker/package.json') as { version: string }).version;
}

/**
 * The cache key: every file under `sourceRoot` (a workflow may import any module there, not only `workflows/`),
 * the lock file (the versions of the packages bundled in) and the SDK version. Hashing more than the bundle reads
 * only costs an extra bundle after an unrelated edit; hashing less would serve stale workflow code.
 */
export async function workflowBundleKey(input: {
  sourceRoot: string;
  extraFiles: readonly string[];
  sdkVersion: string;
}): Promise<string> {
  const hash = createHash('sha256');
  hash.update(`sdk ${input.sdkVersion}\n`);
  const entries = await readdir(input.sourceRoot, { recursive: true, withFileTypes: true });
  const files = entries
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
  for (const file of files) {
    hash.update(`file ${relative(input.sourceRoot, file)}\n`);
    hash.update(await readFile(file));
  }
  for (const file of input.extraFiles) {
    hash.update(`extra ${file}\n`);
    hash.update(await readFile(file).catch(() => 'missing'));
  }
  return hash.digest('hex').slice(0, 24);
}

/** Where the workflow code came from, as logged at start. */
export type WorkflowCodeOrigin = 'cached bundle' | 'bundled from source at start';

const quiet = (): undefined => undefined;
const silentLogger = { log: quiet, trace: quiet, debug: quiet, info: quiet, warn: quiet, error: quiet };

/**
 * The workflow bundle for `workflowsPath`: read from the cache when an entry for the current key exists, else
 * bundled now and stored (written to a temporary name and renamed, so a concurrent start never reads half a file).
 * A cache that cannot be read or written (read-only home, full disk) only costs the bundling; it never fails the
 * start.
 */
export async function loadCachedWorkflowBundle(input: {
  workflowsPath: string;
  sourceRoot: string;
  extraFiles: readonly string[];
  logger: Logger;
  cacheDir?: string;
  /** Replaces webpack (tests check that a cache hit does not bundle). */
  bundle?: (workflowsPath: string) => Promise<string>;
}): Promise<{ code: string; origin: WorkflowCodeOrigin; cacheFile: string }> {
  const cacheDir = input.cacheDir ?? defaultBundleCacheDir();
  const sdkVersion = temporalSdkVersion();
  const key = await workflowBundleKey({ sourceRoot: input.sourceRoot, extraFiles: input.extraFiles, sdkVersion });
  const cacheFile = join(cacheDir, `${BUNDLE_PREFIX}${sdkVersion}-${key}.js`);
  const cached = await readFile(cacheFile, 'utf8').catch(() => undefined);
  if (cached !== undefined && isCompleteBundle(cached)) return { code: cached, origin: 'cached bundle', cacheFile };

  const bundle = input.bundle ?? ((workflowsPath: string) => bundleWorkflows(workflowsPath, silentLogger));
  const code = await bundle(input.workflowsPath);
  try {
    await mkdir(cacheDir, { recursive: true });
    const temporary = `${cacheFile}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    await writeFile(temporary, code, { flag: 'wx' });
    await rename(temporary, cacheFile);
    await pruneBundleCache(cacheDir, cacheFile);
  } catch (error) {
    input.logger.warn({ err: error, cacheDir }, 'Could not store the workflow bundle; the next start bundles again');
  }
  return { code, origin: 'bundled from source at start', cacheFile };
}

/**
 * A bundle ends with its inline source map, which the worker parses: a file cut off anywhere (disk full, a copy
 * interrupted) fails that parse here instead of failing the worker's start.
 */
function isCompleteBundle(code: string): boolean {
  const at = code.lastIndexOf(SOURCE_MAP_MARKER);
  if (at < 0) return false;
  const base64At = code.indexOf('base64,', at);
  if (base64At < 0) return false;
  try {
    const map: unknown = JSON.parse(Buffer.from(code.slice(base64At + 'base64,'.length).trim(), 'base64').toString());
    return typeof map === 'object' && map !== null;
  } catch {
    return false;
  }
}

async function pruneBundleCache(cacheDir: string, keep: string): Promise<void> {
  const cutoffMs = Date.now() - PRUNE_AFTER_MS;
  const entries: { file: string; mtimeMs: number }[] = [];
  for (const name of await readdir(cacheDir)) {
    const file = join(cacheDir, name);
    if (!name.startsWith(BUNDLE_PREFIX) || file === keep) continue;
    const info = await stat(file).catch(() => undefined);
    if (info === undefined) continue;
    // Another start may be writing it; one left behind by a crash goes after an hour.
    if (name.endsWith('.tmp')) {
      if (info.mtimeMs < Date.now() - 3600 * 1000) await rm(file, { force: true });
      continue;
    }
    entries.push({ file, mtimeMs: info.mtimeMs });
  }
  // mtime is when an entry was written (atime is unreliable on noatime mounts): a long-lived key may go too, which
  // costs one bundle. A start reading an entry being removed still reads it whole (the file lives until closed).
  entries.sort((a, b) => b.mtimeMs - a.mtimeMs);
  for (const [index, entry] of entries.entries()) {
    if (index >= KEEP_ENTRIES - 1 || entry.mtimeMs < cutoffMs) await rm(entry.file, { force: true });
  }
}
