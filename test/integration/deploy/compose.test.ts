/**
 * temporal/docker-compose.yml: compose-go, the loader behind `docker compose config`, accepts it (built into the
 * cache as compose-config by `npm run tools`), the services, images and ports are what we ship, and the one-shot jobs' own shell entrypoints are run for real against stand-in CLIs to show they do
 * their work once and are no-ops on a second `up`.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';

import { loadAllYaml } from '@kubernetes/client-node';

import { TEMPORAL_SEARCH_ATTRIBUTES } from '../../../scripts/lib/temporal-dev-server.js';
import { REPO_ROOT, composeConfig, readRepoFile } from './deploy-tools.js';

const execFileAsync = promisify(execFile);
const COMPOSE_FILE = 'temporal/docker-compose.yml';

interface ComposeService {
  image?: string;
  ports?: (string | { host_ip?: string; published?: string | number; target?: number })[];
  environment?: Record<string, string> | string[];
  depends_on?: Record<string, { condition?: string }> | string[];
  entrypoint?: string[];
  command?: string[];
  volumes?: (string | { source?: string; target?: string })[];
}

interface ComposeFile {
  services: Record<string, ComposeService>;
}

function parseCompose(text: string): ComposeFile {
  const [document] = loadAllYaml(text) as unknown[];
  assert.ok(typeof document === 'object' && document !== null && 'services' in document);
  return document as ComposeFile;
}

function service(file: ComposeFile, name: string): ComposeService {
  const found = file.services[name];
  assert.ok(found, `service ${name}`);
  return found;
}

function environmentOf(entry: ComposeService): Record<string, string> {
  const env = entry.environment ?? {};
  if (!Array.isArray(env)) return env;
  return Object.fromEntries(env.map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]));
}

/** `host_ip:published:target` of every published port, from the short or the long syntax. */
function publishedPorts(entry: ComposeService): string[] {
  return (entry.ports ?? []).map((port) =>
    typeof port === 'string'
      ? port.replace(/\/tcp$/, '')
      : `${port.host_ip ?? ''}:${String(port.published ?? '')}:${String(port.target ?? '')}`,
  );
}

function dependsOn(entry: ComposeService): Record<string, string> {
  const deps = entry.depends_on ?? {};
  if (Array.isArray(deps)) return Object.fromEntries(deps.map((name) => [name, 'service_started']));
  return Object.fromEntries(Object.entries(deps).map(([name, dep]) => [name, dep.condition ?? 'service_started']));
}

describe('temporal/docker-compose.yml', () => {
  let rendered: ComposeFile;

  before(async () => {
    rendered = parseCompose(await composeConfig(COMPOSE_FILE));
  });

  it('is accepted by the Compose loader with the services in their start order', () => {
    assert.deepEqual(Object.keys(rendered.services).sort(), [
      'postgresql',
      'temporal',
      'temporal-namespace',
      'temporal-schema',
      'temporal-search-attributes',
      'temporal-ui',
    ]);
    assert.deepEqual(dependsOn(service(rendered, 'temporal-schema')), { postgresql: 'service_healthy' });
    assert.deepEqual(dependsOn(service(rendered, 'temporal')), {
      'temporal-schema': 'service_completed_successfully',
    });
    assert.deepEqual(dependsOn(service(rendered, 'temporal-namespace')), { temporal: 'service_started' });
    assert.deepEqual(dependsOn(service(rendered, 'temporal-search-attributes')), {
      'temporal-namespace': 'service_completed_successfully',
    });
  });

  it('pins every image tag: PostgreSQL 16, the same server and admin-tools release', () => {
    const images = Object.fromEntries(Object.entries(rendered.services).map(([name, s]) => [name, s.image ?? '']));
    for (const [name, image] of Object.entries(images)) {
      assert.match(image, /^[\w./-]+:\d+\.\d+(\.\d+)?(-[\w.]+)?$/, `${name} has a pinned version tag: ${image}`);
    }
    assert.match(images['postgresql'] ?? '', /^postgres:16\./);
    const serverVersion = (images['temporal'] ?? '').replace('temporalio/server:', '');
    for (const job of ['temporal-schema', 'temporal-namespace', 'temporal-search-attributes']) {
      assert.equal(images[job], `temporalio/admin-tools:${serverVersion}`);
    }
    assert.match(images['temporal-ui'] ?? '', /^temporalio\/ui:/);
  });

  it('publishes the frontend and the UI on loopback only, nothing else', () => {
    const published = Object.fromEntries(
      Object.entries(rendered.services)
        .map(([name, s]) => [name, publishedPorts(s)] as const)
        .filter(([, ports]) => ports.length > 0),
    );
    assert.deepEqual(published, { temporal: ['127.0.0.1:7233:7233'], 'temporal-ui': ['127.0.0.1:8080:8080'] });
  });

  it('gives the server the dynamic config file it names', () => {
    const server = service(rendered, 'temporal');
    const env = environmentOf(server);
    assert.equal(env['DB'], 'postgres12');
    const configPath = env['DYNAMIC_CONFIG_FILE_PATH'] ?? '';
    assert.match(configPath, /^config\/dynamicconfig\/[\w-]+\.yaml$/);
    assert.ok(existsSync(`${REPO_ROOT}temporal/dynamicconfig/${configPath.split('/').at(-1) ?? ''}`));
    const mounts = (server.volumes ?? []).map((v) =>
      typeof v === 'string' ? v : `${v.source ?? ''}:${v.target ?? ''}`,
    );
    assert.ok(
      mounts.some((mount) => /temporal\/dynamicconfig:\/etc\/temporal\/config\/dynamicconfig(:ro)?$/.test(mount)),
    );
  });
});

describe('the Compose validator', () => {
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'eniflow-compose-invalid-'));
  });

  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  for (const [problem, body, message] of [
    ['an unknown key', 'services:\n  a:\n    image: busybox:1.37\n    restart_policy: always\n', /restart_policy/],
    [
      'a dependency on a missing service',
      'services:\n  a:\n    image: busybox:1.37\n    depends_on: [b]\n',
      /undefined service "b"/,
    ],
  ] as const) {
    it(`rejects ${problem}, as docker compose config does`, async () => {
      const file = join(dir, 'compose.yml');
      await writeFile(file, body);
      await assert.rejects(composeConfig(file), message);
    });
  }
});

/** Runs a job's entrypoint + command from the compose file (with `$$` unescaped) with stand-in CLIs first on PATH. */
async function runJob(input: { job: string; stubs: string; log: string }): Promise<string[]> {
  const source = parseCompose(await readRepoFile(COMPOSE_FILE));
  const job = service(source, input.job);
  const argv = [...(job.entrypoint ?? []), ...(job.command ?? []).map((part) => part.replaceAll('$$', '$'))];
  const [program, ...args] = argv;
  assert.equal(program, '/bin/sh');
  await execFileAsync(program, args, {
    env: { ...environmentOf(job), PATH: `${input.stubs}:${process.env['PATH'] ?? ''}`, STUB_DIR: input.stubs },
  });
  const text = await readFile(input.log, 'utf8').catch(() => '');
  await rm(input.log, { force: true });
  return text.split('\n').filter((line) => line !== '');
}

async function writeStub(input: { dir: string; name: string; script: string }): Promise<void> {
  const path = join(input.dir, input.name);
  await writeFile(path, `#!/bin/sh\necho "$*" >> "$STUB_DIR/calls.log"\n${input.script}`);
  await chmod(path, 0o755);
}

describe('the compose jobs, run against stand-in CLIs', () => {
  let stubs: string;
  let log: string;

  before(async () => {
    stubs = await mkdtemp(join(tmpdir(), 'eniflow-compose-jobs-'));
    log = join(stubs, 'calls.log');
    // temporal: `cluster health` and the first `search-attribute list` fail once (a namespace not yet served);
    // namespaces and search attributes live in files.
    await writeStub({
      dir: stubs,
      name: 'temporal',
      script: `case "$*" in
  "operator cluster health")
    [ -e "$STUB_DIR/healthy" ] && exit 0; touch "$STUB_DIR/healthy"; exit 1 ;;
  "operator namespace describe --namespace default") [ -e "$STUB_DIR/namespace" ] ;;
  "operator namespace create --namespace default "*) touch "$STUB_DIR/namespace" ;;
  "operator search-attribute list")
    [ -e "$STUB_DIR/served" ] || { touch "$STUB_DIR/served"; exit 1; }
    printf 'Name Type\\nWorkflowId Keyword\\nBuildIds KeywordList\\n'; cat "$STUB_DIR/attributes" 2>/dev/null; exit 0 ;;
  "operator search-attribute create --name "*) echo "$5 $7" >> "$STUB_DIR/attributes" ;;
  *) echo "unexpected: $*" >&2; exit 2 ;;
esac
`,
    });
    // temporal-sql-tool: `create` fails when the database exists.
    await writeStub({
      dir: stubs,
      name: 'temporal-sql-tool',
      script: `db=$(echo "$*" | sed -n 's/.*--db \\([a-z_]*\\).*/\\1/p')
case "$*" in
  *" create") [ -e "$STUB_DIR/db-$db" ] && exit 1; touch "$STUB_DIR/db-$db" ;;
esac
exit 0
`,
    });
  });

  after(async () => {
    await rm(stubs, { recursive: true, force: true });
  });

  it("waits until the namespace is served, then registers eniflow's search attributes with their types once", async () => {
    const first = await runJob({ job: 'temporal-search-attributes', stubs, log });
    assert.deepEqual(first.slice(0, 2), ['operator search-attribute list', 'operator search-attribute list']);
    assert.deepEqual(
      first.filter((call) => call.includes('create')),
      Object.entries(TEMPORAL_SEARCH_ATTRIBUTES).map(
        ([name, type]) => `operator search-attribute create --name ${name} --type ${type}`,
      ),
    );
    const second = await runJob({ job: 'temporal-search-attributes', stubs, log });
    assert.deepEqual(
      second,
      Array<string>(Object.keys(TEMPORAL_SEARCH_ATTRIBUTES).length + 1).fill('operator search-attribute list'),
      'a second run only looks',
    );
  });

  it('waits for the frontend, then creates the default namespace once', async () => {
    const first = await runJob({ job: 'temporal-namespace', stubs, log });
    assert.deepEqual(first, [
      'operator cluster health',
      'operator cluster health',
      'operator namespace describe --namespace default',
      'operator namespace create --namespace default --retention 72h',
    ]);
    const second = await runJob({ job: 'temporal-namespace', stubs, log });
    assert.deepEqual(second, ['operator cluster health', 'operator namespace describe --namespace default']);
  });

  it('creates and sets up both databases once, and updates both schemas on every run', async () => {
    const base = '--plugin postgres12 --ep postgresql -p 5432 -u temporal';
    const update = (db: string, dir: string): string =>
      `${base} --db ${db} update-schema -d /etc/temporal/schema/postgresql/v12/${dir}/versioned`;
    const first = await runJob({ job: 'temporal-schema', stubs, log });
    assert.deepEqual(first, [
      `${base} --db temporal create`,
      `${base} --db temporal setup-schema -v 0.0`,
      update('temporal', 'temporal'),
      `${base} --db temporal_visibility create`,
      `${base} --db temporal_visibility setup-schema -v 0.0`,
      update('temporal_visibility', 'visibility'),
    ]);
    const second = await runJob({ job: 'temporal-schema', stubs, log });
    assert.deepEqual(second, [
      `${base} --db temporal create`,
      update('temporal', 'temporal'),
      `${base} --db temporal_visibility create`,
      update('temporal_visibility', 'visibility'),
    ]);
  });
});
