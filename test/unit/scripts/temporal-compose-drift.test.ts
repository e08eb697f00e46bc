/**
 * temporal/docker-compose.yml and temporal/dynamicconfig/ against scripts/lib/temporal-settings.ts, the one source
 * the test servers are built from: a change to the compose file's server release, dynamic config, namespace, search
 * attributes or databases that the native test environment does not make too (or the other way round) fails here.
 * No server is started.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { loadAllYaml } from '@kubernetes/client-node';

import {
  composeEnvironment,
  composeJobArgv,
  composeService,
  imageTag,
  readComposeServices,
} from '../../../scripts/lib/compose-file.js';
import { serverEnvironment } from '../../../scripts/lib/temporal-postgres-server.js';
import {
  TEMPORAL_NAMESPACE,
  TEMPORAL_NAMESPACE_RETENTION,
  TEMPORAL_SEARCH_ATTRIBUTES,
  TEMPORAL_SERVER_VERSION,
  TEMPORAL_SQL_DATABASES,
  composeDynamicConfig,
  devServerDynamicConfigValues,
  eniflowDynamicConfig,
  postgresTestServerDynamicConfig,
  renderDynamicConfigYaml,
} from '../../../scripts/lib/temporal-settings.js';
import { REPO_ROOT, TEMPORAL_SERVER } from '../../../scripts/lib/tools-config.js';
import { DEFAULT_ECS_BURST, serverMinBurstSize } from '../../../src/shared/ecs-budget.js';

const services = readComposeServices();

/** The script of a one-shot job (`/bin/sh -ec <script>`). */
function jobScript(job: string): string {
  const [shell, flags, script] = composeJobArgv(composeService(services, job));
  assert.deepEqual([shell, flags], ['/bin/sh', '-ec'], `${job} runs a shell script`);
  return script ?? '';
}

/** The words of the script's `for <variable> in <words>; do` loop. */
function loopWords(script: string, variable: string): string[] {
  const words = new RegExp(`^\\s*for ${variable} in ([^;]+); do`, 'm').exec(script)?.[1];
  assert.ok(words !== undefined, `a loop over ${variable}`);
  return words.trim().split(/\s+/);
}

/** A dynamic config file as key → the value of its single unconstrained entry. */
function parseDynamicConfig(text: string): Record<string, unknown> {
  const [document] = loadAllYaml(text) as [Record<string, { value: unknown; constraints: object }[]>];
  return Object.fromEntries(
    Object.entries(document).map(([key, entries]) => {
      assert.equal(entries.length, 1, `${key} has one value`);
      assert.deepEqual(entries[0]?.constraints, {}, `${key} is unconstrained`);
      return [key, entries[0]?.value];
    }),
  );
}

function composeDynamicConfigFile(): string {
  const path = composeEnvironment(composeService(services, 'temporal'))['DYNAMIC_CONFIG_FILE_PATH'] ?? '';
  return readFileSync(join(REPO_ROOT, 'temporal', 'dynamicconfig', path.split('/').at(-1) ?? ''), 'utf8');
}

describe('the compose file and the native Temporal test server', () => {
  it('run the same server release, the tools build it, the jobs use its admin-tools', () => {
    assert.equal(imageTag(composeService(services, 'temporal')), TEMPORAL_SERVER_VERSION);
    assert.equal(TEMPORAL_SERVER.version, `v${TEMPORAL_SERVER_VERSION}`);
    for (const job of ['temporal-schema', 'temporal-namespace', 'temporal-search-attributes']) {
      assert.equal(composeService(services, job).image, `temporalio/admin-tools:${TEMPORAL_SERVER_VERSION}`, job);
    }
  });

  it('ship the dynamic config temporal-settings.ts renders, byte for byte', () => {
    assert.equal(
      composeDynamicConfigFile(),
      renderDynamicConfigYaml(composeDynamicConfig()),
      'temporal/dynamicconfig/development-sql.yaml differs from renderDynamicConfigYaml(composeDynamicConfig()) ' +
        '(scripts/lib/temporal-settings.ts): change the settings there and write the rendering into the file',
    );
  });

  it("give the native server every compose setting with the compose value, and the ECS budget's burst", () => {
    const compose = parseDynamicConfig(composeDynamicConfigFile());
    const native = parseDynamicConfig(renderDynamicConfigYaml(postgresTestServerDynamicConfig()));
    for (const [key, value] of Object.entries(compose)) assert.equal(native[key], value, key);
    assert.equal(compose['matching.minTaskThrottlingBurstSize'], serverMinBurstSize(DEFAULT_ECS_BURST));
    const smallBurst = parseDynamicConfig(renderDynamicConfigYaml(postgresTestServerDynamicConfig(40)));
    assert.equal(smallBurst['matching.minTaskThrottlingBurstSize'], 10, 'a test burst reaches the server');
    assert.equal(native['frontend.enableServerVersionCheck'], false, 'no call to temporal.io');
  });

  it("give the dev server eniflow's settings that differ from the server defaults", () => {
    const flags = devServerDynamicConfigValues(200);
    for (const setting of eniflowDynamicConfig(200).filter(({ key }) => key !== 'limit.maxIDLength')) {
      assert.ok(flags.includes(`${setting.key}=${String(setting.value)}`), setting.key);
    }
    assert.ok(flags.includes('matching.minTaskThrottlingBurstSize=50'));
  });

  it("register eniflow's search attributes with their types, in the shared list's order", () => {
    assert.deepEqual(
      loopWords(jobScript('temporal-search-attributes'), 'attribute'),
      Object.entries(TEMPORAL_SEARCH_ATTRIBUTES).map(([name, type]) => `${name}:${type}`),
    );
    assert.equal(
      composeEnvironment(composeService(services, 'temporal-search-attributes'))['TEMPORAL_NAMESPACE'],
      TEMPORAL_NAMESPACE,
    );
  });

  it('create the same namespace with the same retention', () => {
    const script = jobScript('temporal-namespace');
    assert.match(
      script,
      new RegExp(
        `temporal operator namespace create --namespace ${TEMPORAL_NAMESPACE} --retention ${TEMPORAL_NAMESPACE_RETENTION}\\n`,
      ),
    );
  });

  it('set up the same databases from the same schema directories', () => {
    assert.deepEqual(
      loopWords(jobScript('temporal-schema'), 'pair'),
      TEMPORAL_SQL_DATABASES.map(({ database, schema }) => `${database}:${schema}`),
    );
    const plugin = composeEnvironment(composeService(services, 'temporal'))['DB'];
    assert.match(jobScript('temporal-schema'), new RegExp(`--plugin ${plugin ?? '?'} `));
    assert.match(jobScript('temporal-schema'), /schema_root=\/etc\/temporal\/schema\/postgresql\/v12\n/);
    assert.ok(TEMPORAL_SERVER.postgresSchemaDir.endsWith(join('schema', 'postgresql', 'v12')));
  });

  it("start the server with the compose service's environment, only addresses, ports and paths local", () => {
    const compose = composeEnvironment(composeService(services, 'temporal'));
    const native = serverEnvironment({
      postgresPort: 5999,
      dynamicConfigPath: '/run/dc.yaml',
      metricsPort: 9000,
      ports: [7001, 7002, 7003, 7004, 7005, 7006, 7007, 7008, 7009],
    });
    const localOnly = new Set(['POSTGRES_SEEDS', 'DB_PORT', 'BIND_ON_IP', 'DYNAMIC_CONFIG_FILE_PATH']);
    for (const [name, value] of Object.entries(compose)) {
      if (!localOnly.has(name)) assert.equal(native[name], value, name);
    }
    assert.deepEqual(
      [native['POSTGRES_SEEDS'], native['DB_PORT'], native['BIND_ON_IP'], native['FRONTEND_GRPC_PORT']],
      ['127.0.0.1', '5999', '127.0.0.1', '7001'],
    );
    assert.equal(native['DYNAMIC_CONFIG_FILE_PATH'], '/run/dc.yaml');
  });
});
