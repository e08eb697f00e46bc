/**
 * The process entries load `@kubernetes/client-node` with only the API groups eniflow constructs
 * (src/kube/slim-client-node.ts), and each role's entry loads only what its role needs. The processes are spawned the
 * way the tests run the code (tsx), with a preload that records every module URL loaded.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';

import { slimGeneratedApis, USED_KUBE_APIS } from '../../../src/kube/slim-client-node.js';

const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const require = createRequire(import.meta.url);
const CLIENT_NODE_DIST = dirname(require.resolve('@kubernetes/client-node'));
const GENERATED = [
  ['ObservableAPI', 'Observable'],
  ['ObjectParamAPI', 'Object'],
  ['PromiseAPI', 'Promise'],
] as const;

/** A preload that writes the URL of every module this process loads to RECORD_LOADS, one per line, at exit. */
const RECORDER =
  'data:text/javascript,' +
  encodeURIComponent(
    "import { registerHooks } from 'node:module'; import { writeFileSync } from 'node:fs';" +
      'const urls = new Set(); registerHooks({ load(url, context, next) { urls.add(url); return next(url, context); } });' +
      "process.on('exit', () => writeFileSync(process.env.RECORD_LOADS, [...urls].join('\\n')));",
  );

/** Starts `node --import tsx <recorder> <args>` in the repository with only PATH and `env`; the URLs it loaded. */
function loadsOf(args: string[], out: string, env: NodeJS.ProcessEnv = {}): { urls: string[]; stderr: string } {
  const child = spawnSync(process.execPath, ['--import', 'tsx', '--import', RECORDER, ...args], {
    cwd: REPO_ROOT,
    env: { PATH: process.env['PATH'] ?? '', RECORD_LOADS: out, ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { urls: readFileSync(out, 'utf8').split('\n'), stderr: child.stderr };
}

describe('slimGeneratedApis on the installed @kubernetes/client-node', () => {
  for (const [file, prefix] of GENERATED) {
    it(`${file}.js keeps the classes of ${USED_KUBE_APIS.join(', ')} and stubs every other group`, () => {
      const source = readFileSync(join(CLIENT_NODE_DIST, 'gen', 'types', `${file}.js`), 'utf8');
      const groups = [...source.matchAll(/^export class (\w+) \{/gm)].map((match) => match[1]?.slice(prefix.length));
      const slim = slimGeneratedApis(source, prefix, USED_KUBE_APIS);

      // A generator change this pattern misses falls back to the whole file: this fails, so the hook is re-checked.
      assert.deepEqual([...slim.kept].sort(), [...USED_KUBE_APIS].sort());
      assert.deepEqual([...slim.kept, ...slim.stubbed].sort(), [...groups].sort());
      assert.ok(slim.stubbed.length > 50, `${String(slim.stubbed.length)} groups stubbed`);
      // Every class name still exists (imports of it link), and the kept classes are the package's own text.
      for (const group of groups)
        assert.match(slim.source, new RegExp(`^export class ${prefix}${group ?? ''} \\{`, 'm'));
      const coreV1 = /^export class \w*CoreV1Api \{\n[\s\S]*?\n\}\n/m.exec(source)?.[0] ?? 'missing';
      assert.ok(slim.source.includes(coreV1));
      assert.ok(slim.source.length < source.length / 3, 'most of the source is gone');
      if (file === 'ObservableAPI') {
        assert.match(slim.source, /from "\.\.\/apis\/CoreV1Api\.js"/);
        assert.doesNotMatch(slim.source, /from "\.\.\/apis\/AppsV1Api\.js"/);
      }
    });
  }

  it('returns a file it does not recognise unchanged', () => {
    const other = 'export class ObservableCoreV1Api {\n}\n';
    assert.deepEqual(slimGeneratedApis(other, 'Observable', USED_KUBE_APIS), { source: other, kept: [], stubbed: [] });
    const layout = "import { A } from './a.js';\nexport class ObservableAppsV1Api {\n}\n";
    assert.equal(slimGeneratedApis(layout, 'Observable', USED_KUBE_APIS).source, layout, 'a kept group is missing');
  });
});

describe('the process entries', () => {
  const clientNode = (urls: string[], file: string): boolean =>
    urls.some((url) => url.includes('/@kubernetes/client-node/dist/') && url.endsWith(file));

  it('construct the API groups they use, and a stubbed group says how to add it', () => {
    const script =
      "import { prepareProcess } from './src/process-entry.ts'; prepareProcess();" +
      "const { KubeConfig, CoreV1Api, CustomObjectsApi, CoordinationV1Api, AppsV1Api } = await import('@kubernetes/client-node');" +
      "const { stubbedKubeApis } = await import('./src/kube/slim-client-node.ts');" +
      "const kc = new KubeConfig(); kc.loadFromClusterAndUser({ name: 'c', server: 'https://127.0.0.1:1' }, { name: 'u' });" +
      'for (const api of [CoreV1Api, CustomObjectsApi, CoordinationV1Api]) kc.makeApiClient(api);' +
      "let message = ''; try { kc.makeApiClient(AppsV1Api); } catch (error) { message = error.message; }" +
      'console.log(JSON.stringify({ message, stubbed: stubbedKubeApis().length }));';
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(child.status, 0, child.stderr);
    const result = JSON.parse(child.stdout) as { message: string; stubbed: number };
    assert.match(result.message, /AppsV1Api is not loaded in eniflow \(add it to USED_KUBE_APIS/);
    assert.ok(result.stubbed > 50);
  });

  it('the watcher loads client-node without the unused API groups, and none of the worker, the ECS SDK or the emulator', (t) => {
    const out = join(process.env['TMPDIR'] ?? '/tmp', `eniflow-loads-watcher-${String(process.pid)}.txt`);
    // Without configuration the entry stops at its config check, after loading the whole watcher.
    const { urls, stderr } = loadsOf(['src/watcher/main.ts'], out);
    t.diagnostic(`${String(urls.length)} modules`);
    assert.match(stderr, /ENIFLOW_CLUSTER_ID is required/);
    assert.ok(urls.some((url) => url.endsWith('/src/watcher/run-watcher.ts')));
    assert.ok(clientNode(urls, '/gen/apis/CoreV1Api.js') && clientNode(urls, '/gen/apis/CoordinationV1Api.js'));
    assert.ok(!clientNode(urls, '/gen/apis/AppsV1Api.js'), 'an unused API group was loaded');
    for (const unwanted of [
      '/@temporalio/worker/',
      '/@alicloud/',
      '/src/ecs-emulator/',
      '/src/worker/',
      '/src/activities/',
    ]) {
      assert.deepEqual(
        urls.filter((url) => url.includes(unwanted)),
        [],
        `the watcher loads ${unwanted}`,
      );
    }
  });

  for (const entry of ['src/worker/main.ts', 'src/main.ts']) {
    it(`${entry} loads client-node without the unused API groups`, () => {
      const out = join(
        process.env['TMPDIR'] ?? '/tmp',
        `eniflow-loads-${entry.replaceAll('/', '-')}-${String(process.pid)}.txt`,
      );
      // A connection setting keeps src/main.ts off the embedded default; the config check then stops both entries.
      const { urls, stderr } = loadsOf([entry], out, { TEMPORAL_ADDRESS: '127.0.0.1:1' });
      assert.match(stderr, /ECS_REGION_ID is required/);
      assert.ok(clientNode(urls, '/gen/apis/CoreV1Api.js'));
      assert.ok(!clientNode(urls, '/gen/apis/AppsV1Api.js'), 'an unused API group was loaded');
    });
  }
});
