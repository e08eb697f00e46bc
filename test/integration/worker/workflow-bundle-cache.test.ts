/**
 * The on-disk workflow bundle cache of a worker started from source (src/worker/workflow-bundle-cache.ts): what the
 * key covers, hits without webpack, atomic writes under concurrent starts, and a cache it cannot use. The last test
 * starts the real worker from source twice against the test servers: the second start uses the cached bundle.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { Writable } from 'node:stream';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import { pollUntil } from '../../../scripts/lib/poll-until.js';
import { TEST_ENV_VARS, requireTestEnvVar } from '../../../scripts/lib/test-env-vars.js';
import { REPO_ROOT } from '../../../scripts/lib/tools-config.js';
import { createLogger } from '../../../src/logger.js';
import { WORKFLOWS_PATH } from '../../../src/worker/create-worker.js';
import {
  defaultBundleCacheDir,
  loadCachedWorkflowBundle,
  temporalSdkVersion,
  workflowBundleKey,
} from '../../../src/worker/workflow-bundle-cache.js';
import { connectTemporalTestEnv, uniqueTaskQueue } from '../../support/temporal-env.js';

const SOURCE_ROOT = fileURLToPath(new URL('../../../src/', import.meta.url));
const EXTRA_FILES = [join(REPO_ROOT, 'package-lock.json')];
const scratch = mkdtempSync(join(tmpdir(), 'bundle-cache-test-'));
after(() => {
  rmSync(scratch, { recursive: true, force: true });
});

/** What a bundle looks like to the cache: code ending with its inline source map. */
function fakeBundle(label: string): string {
  return `/* ${label} */\n//# sourceMappingURL=data:application/json;charset=utf-8;base64,e30=\n`;
}

function capturingLogger(): { logger: ReturnType<typeof createLogger>; lines: () => string[] } {
  const chunks: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(chunk.toString());
      callback();
    },
  });
  return { logger: createLogger({ name: 'test', level: 'debug', destination }), lines: () => chunks };
}

describe('workflow bundle key', () => {
  it('changes with any file under the source root, the extra files and the SDK version, and only then', async () => {
    const root = join(scratch, 'key-src');
    mkdirSync(join(root, 'deep', 'er'), { recursive: true });
    writeFileSync(join(root, 'a.ts'), 'export const a = 1;');
    writeFileSync(join(root, 'deep', 'er', 'b.ts'), 'export const b = 2;');
    const lock = join(scratch, 'key-lock.json');
    writeFileSync(lock, '{"lockfileVersion":3}');
    const key = (sdkVersion = '1.24.0'): Promise<string> =>
      workflowBundleKey({ sourceRoot: root, extraFiles: [lock], sdkVersion });

    const first = await key();
    assert.match(first, /^[0-9a-f]{24}$/);
    assert.equal(await key(), first, 'same inputs, same key');
    assert.notEqual(await key('1.25.0'), first, 'another SDK');

    writeFileSync(join(root, 'deep', 'er', 'b.ts'), 'export const b = 3;');
    const afterEdit = await key();
    assert.notEqual(afterEdit, first, 'a nested file edited');

    writeFileSync(join(root, 'c.ts'), '');
    const afterAdd = await key();
    assert.notEqual(afterAdd, afterEdit, 'a file added');

    writeFileSync(lock, '{"lockfileVersion":3,"packages":{}}');
    assert.notEqual(await key(), afterAdd, 'the lock file changed');
  });

  it('lives under XDG_CACHE_HOME, else ~/.cache', () => {
    assert.equal(defaultBundleCacheDir({ XDG_CACHE_HOME: '/x' }), '/x/eniflow/workflow-bundles');
    assert.match(defaultBundleCacheDir({ XDG_CACHE_HOME: '' }), /\/\.cache\/eniflow\/workflow-bundles$/);
  });
});

describe('loadCachedWorkflowBundle', () => {
  const load = (input: { cacheDir: string; bundle: () => Promise<string> }) =>
    loadCachedWorkflowBundle({
      workflowsPath: WORKFLOWS_PATH,
      sourceRoot: SOURCE_ROOT,
      extraFiles: EXTRA_FILES,
      logger: capturingLogger().logger,
      ...input,
    });

  it('bundles on a miss, stores the bundle, and serves it on the next start without bundling', async () => {
    const cacheDir = join(scratch, 'hit');
    const first = await load({ cacheDir, bundle: () => Promise.resolve(fakeBundle('one')) });
    assert.equal(first.origin, 'bundled from source at start');
    assert.ok(first.cacheFile.startsWith(cacheDir));
    assert.ok(first.cacheFile.includes(`workflow-bundle-${temporalSdkVersion()}-`));
    assert.equal(readFileSync(first.cacheFile, 'utf8'), fakeBundle('one'));

    const second = await load({
      cacheDir,
      bundle: () => Promise.reject(new Error('a cache hit must not bundle')),
    });
    assert.equal(second.origin, 'cached bundle');
    assert.equal(second.code, fakeBundle('one'));
  });

  it('leaves one complete file and no temporary one when several starts miss at once', async () => {
    const cacheDir = join(scratch, 'concurrent');
    const results = await Promise.all(
      ['a', 'b', 'c', 'd'].map((label) => load({ cacheDir, bundle: () => Promise.resolve(fakeBundle(label)) })),
    );
    // A start that looks after another has stored its bundle loads it; every other one bundles. None sees a part.
    assert.ok(results.some((result) => result.origin === 'bundled from source at start'));
    for (const result of results) assert.match(result.origin, /^(bundled from source at start|cached bundle)$/);
    const files = readdirSync(cacheDir);
    assert.equal(files.length, 1, `files: ${files.join(', ')}`);
    const stored = readFileSync(join(cacheDir, files[0] ?? ''), 'utf8');
    assert.ok(
      results.some((result) => result.code === stored),
      'the stored file is one whole bundle',
    );
  });

  it('bundles again over a cut-off entry', async () => {
    const cacheDir = join(scratch, 'truncated');
    const first = await load({ cacheDir, bundle: () => Promise.resolve(fakeBundle('whole')) });
    writeFileSync(first.cacheFile, fakeBundle('whole').slice(0, -4));
    const second = await load({ cacheDir, bundle: () => Promise.resolve(fakeBundle('again')) });
    assert.equal(second.origin, 'bundled from source at start');
    assert.equal(readFileSync(first.cacheFile, 'utf8'), fakeBundle('again'));
  });

  it('keeps the newest entries when it writes one, and leaves a temporary file being written alone', async () => {
    const cacheDir = join(scratch, 'prune');
    mkdirSync(cacheDir);
    const nowS = Date.now() / 1000;
    const old = (index: number): string =>
      join(cacheDir, `workflow-bundle-0.0.0-old${String(index).padStart(2, '0')}.js`);
    // 20 entries, old00 the newest (1 minute old), old19 the oldest; old03 is 8 days old.
    for (let index = 0; index < 20; index += 1) {
      writeFileSync(old(index), fakeBundle(`old ${index}`));
      const ageS = index === 3 ? 8 * 24 * 3600 : 60 * (index + 1);
      utimesSync(old(index), nowS - ageS, nowS - ageS);
    }
    const writing = join(cacheDir, 'workflow-bundle-0.0.0-other.js.123.abcd.tmp');
    writeFileSync(writing, 'half a bundle');
    const fresh = await load({ cacheDir, bundle: () => Promise.resolve(fakeBundle('fresh')) });
    const left = readdirSync(cacheDir).sort();
    const expected = [
      ...[0, 1, 2, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15].map((index) => basename(old(index))),
      basename(fresh.cacheFile),
      basename(writing),
    ].sort();
    assert.deepEqual(left, expected);
  });

  it('still returns the bundle, with a warning, when the cache cannot be written', async () => {
    const blocker = join(scratch, 'a-file');
    writeFileSync(blocker, '');
    const { logger, lines } = capturingLogger();
    const result = await loadCachedWorkflowBundle({
      workflowsPath: WORKFLOWS_PATH,
      sourceRoot: SOURCE_ROOT,
      extraFiles: EXTRA_FILES,
      logger,
      cacheDir: join(blocker, 'cache'),
      bundle: () => Promise.resolve(fakeBundle('uncached')),
    });
    assert.equal(result.code, fakeBundle('uncached'));
    assert.match(lines().join(''), /Could not store the workflow bundle/);
  });
});

describe('worker started from source', () => {
  it('bundles at its first start and loads the cached bundle at the next', async (t) => {
    const temporal = await connectTemporalTestEnv();
    t.after(() => temporal.close());
    const cacheHome = join(scratch, 'xdg');
    const start = async (name: string): Promise<string> => {
      const taskQueue = uniqueTaskQueue(`bundle-cache-${name}`);
      const child = spawn(process.execPath, ['--import', 'tsx', 'src/worker/main.ts'], {
        cwd: REPO_ROOT,
        env: {
          PATH: process.env['PATH'] ?? '',
          HOME: scratch,
          XDG_CACHE_HOME: cacheHome,
          TEMPORAL_ADDRESS: temporal.address,
          TEMPORAL_NAMESPACE: temporal.namespace,
          TEMPORAL_TASK_QUEUE: taskQueue,
          KUBECONFIG: requireTestEnvVar(TEST_ENV_VARS.kubeconfig),
          ECS_REGION_ID: 'cn-hangzhou',
          ECS_ENDPOINT: '127.0.0.1:9',
          ECS_PROTOCOL: 'http',
          ALIBABA_CLOUD_ACCESS_KEY_ID: 'bundle-cache-test',
          ALIBABA_CLOUD_ACCESS_KEY_SECRET: 'bundle-cache-test',
          LOG_LEVEL: 'info',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      try {
        await pollUntil(() => Promise.resolve(output.includes('"Worker started"') ? true : undefined), {
          description: `the ${name} worker to start`,
          timeoutMs: 90_000,
          intervalMs: 50,
        });
      } finally {
        child.kill('SIGTERM');
        await exited;
      }
      return output;
    };

    const first = await start('first');
    assert.match(first, /"workflowCode":"bundled from source at start"/);
    assert.equal(readdirSync(join(cacheHome, 'eniflow', 'workflow-bundles')).length, 1);
    const second = await start('second');
    assert.match(second, /"workflowCode":"cached bundle"/);
    assert.doesNotMatch(second, /Workflow bundle created|webpack/i, 'no bundling at the second start');
    const loadMs = (output: string): number => Number(/"loadMs":(\d+)/.exec(output)?.[1]);
    t.diagnostic(`workflow code: bundled in ${loadMs(first)} ms, then loaded from the cache in ${loadMs(second)} ms`);
  });
});
