/**
 * The Temporal connection settings: Temporal's own environment names and config-file profiles (through
 * `@temporalio/envconfig`), and eniflow's earlier names as deprecated aliases.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import {
  ConfigError,
  loadTemporalConnectionConfig,
  loadWorkerConfig,
  warnDeprecatedVariables,
} from '../../src/config.js';
import type { TemporalConnectionConfig } from '../../src/config.js';

let dir: string;
const files = { ca: '', crt: '', key: '', toml: '' };

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'eniflow-temporal-config-'));
  for (const name of ['ca', 'crt', 'key'] as const) {
    files[name] = join(dir, `${name}.pem`);
    writeFileSync(files[name], `PEM OF ${name}`);
  }
  files.toml = join(dir, 'temporal.toml');
  writeFileSync(
    files.toml,
    [
      '[profile.default]',
      'address = "localhost:7233"',
      '',
      '[profile.prod]',
      'address = "prod.example:7233"',
      'namespace = "eniflow-prod"',
      '[profile.prod.tls]',
      `server_ca_cert_path = "${files.ca}"`,
      'server_name = "temporal.example"',
      '',
    ].join('\n'),
  );
});

after(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** Loads with no home directory, so no developer's own config file leaks into the test. */
function load(env: Record<string, string>): { config: TemporalConnectionConfig; problems: string[] } {
  const problems: string[] = [];
  const config = loadTemporalConnectionConfig({ HOME: dir, ...env }, problems);
  return { config, problems };
}

function tlsOf(config: TemporalConnectionConfig): Exclude<TemporalConnectionConfig['tls'], boolean | undefined> {
  assert.equal(typeof config.tls, 'object', 'TLS settings');
  return config.tls as Exclude<TemporalConnectionConfig['tls'], boolean | undefined>;
}

describe('Temporal connection settings', () => {
  it('defaults to a local server without TLS', () => {
    const { config, problems } = load({});
    assert.deepEqual(problems, []);
    assert.deepEqual(config, { address: '127.0.0.1:7233', namespace: 'default', taskQueue: 'eniflow' });
  });

  it('reads the Temporal CLI names: CA, client certificate and key files, server name', () => {
    const { config, problems } = load({
      TEMPORAL_ADDRESS: 'temporal.example:7233',
      TEMPORAL_NAMESPACE: 'ipam',
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: files.ca,
      TEMPORAL_TLS_CLIENT_CERT_PATH: files.crt,
      TEMPORAL_TLS_CLIENT_KEY_PATH: files.key,
      TEMPORAL_TLS_SERVER_NAME: 'frontend.example',
    });
    assert.deepEqual(problems, []);
    assert.equal(config.address, 'temporal.example:7233');
    assert.equal(config.namespace, 'ipam');
    const tls = tlsOf(config);
    assert.equal(Buffer.from(tls.serverRootCACertificate ?? []).toString(), 'PEM OF ca');
    assert.equal(Buffer.from(tls.clientCertPair?.crt ?? []).toString(), 'PEM OF crt');
    assert.equal(Buffer.from(tls.clientCertPair?.key ?? []).toString(), 'PEM OF key');
    assert.equal(tls.serverNameOverride, 'frontend.example');
    assert.equal(config.deprecated, undefined);
  });

  it('accepts the PEMs themselves (…_DATA), an API key (TLS on), TEMPORAL_TLS=false and gRPC metadata', () => {
    const data = load({ TEMPORAL_TLS_SERVER_CA_CERT_DATA: 'INLINE CA' }).config;
    assert.equal(Buffer.from(tlsOf(data).serverRootCACertificate ?? []).toString(), 'INLINE CA');
    const cloud = load({ TEMPORAL_API_KEY: 'key', TEMPORAL_GRPC_META_X_TENANT: 'a' }).config;
    assert.equal(cloud.tls, true);
    assert.equal(cloud.apiKey, 'key');
    assert.deepEqual(cloud.metadata, { 'x-tenant': 'a' });
    assert.equal(load({ TEMPORAL_API_KEY: 'key', TEMPORAL_TLS: 'false' }).config.tls, false);
  });

  it('reads a profile of the config file, with the environment on top', () => {
    const { config, problems } = load({
      TEMPORAL_CONFIG_FILE: files.toml,
      TEMPORAL_PROFILE: 'prod',
      TEMPORAL_NAMESPACE: 'from-env',
    });
    assert.deepEqual(problems, []);
    assert.equal(config.address, 'prod.example:7233');
    assert.equal(config.namespace, 'from-env');
    assert.equal(tlsOf(config).serverNameOverride, 'temporal.example');
    assert.equal(Buffer.from(tlsOf(config).serverRootCACertificate ?? []).toString(), 'PEM OF ca');
    assert.equal(load({ TEMPORAL_CONFIG_FILE: files.toml }).config.address, 'localhost:7233', 'profile default');
  });

  it('reports a missing profile, an unreadable PEM and a certificate without key, all at once', () => {
    const { problems } = load({
      TEMPORAL_CONFIG_FILE: files.toml,
      TEMPORAL_PROFILE: 'staging',
    });
    assert.equal(problems.length, 1);
    assert.match(problems[0] ?? '', /staging/);
    const tlsProblems = load({
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: join(dir, 'missing.pem'),
      TEMPORAL_TLS_CLIENT_CERT_PATH: files.crt,
    }).problems;
    assert.equal(tlsProblems.length, 2, tlsProblems.join('\n'));
    assert.match(tlsProblems.join('\n'), /TEMPORAL_TLS_SERVER_CA_CERT_PATH: cannot read .*missing\.pem/);
    assert.match(tlsProblems.join('\n'), /certificate and key go together/);
  });

  it('still reads the deprecated TEMPORAL_TLS_CA / _CERT / _KEY, and warns once per process', () => {
    const { config, problems } = load({
      TEMPORAL_TLS_CA: files.ca,
      TEMPORAL_TLS_CERT: files.crt,
      TEMPORAL_TLS_KEY: files.key,
    });
    assert.deepEqual(problems, []);
    const tls = tlsOf(config);
    assert.equal(Buffer.from(tls.serverRootCACertificate ?? []).toString(), 'PEM OF ca');
    assert.equal(Buffer.from(tls.clientCertPair?.key ?? []).toString(), 'PEM OF key');
    assert.deepEqual(config.deprecated, ['TEMPORAL_TLS_CA', 'TEMPORAL_TLS_CERT', 'TEMPORAL_TLS_KEY']);
    const warnings: string[] = [];
    const warn = (fields: { variable: string; use: string }): void => {
      warnings.push(`${fields.variable} → ${fields.use}`);
    };
    warnDeprecatedVariables(config, warn);
    warnDeprecatedVariables(load({ TEMPORAL_TLS_CA: files.ca }).config, warn);
    assert.deepEqual(warnings, [
      'TEMPORAL_TLS_CA → TEMPORAL_TLS_SERVER_CA_CERT_PATH',
      'TEMPORAL_TLS_CERT → TEMPORAL_TLS_CLIENT_CERT_PATH',
      'TEMPORAL_TLS_KEY → TEMPORAL_TLS_CLIENT_KEY_PATH',
    ]);
  });

  it('refuses an alias that contradicts the new name', () => {
    const { problems } = load({ TEMPORAL_TLS_CA: files.ca, TEMPORAL_TLS_SERVER_CA_CERT_PATH: files.crt });
    assert.deepEqual(problems, [
      'TEMPORAL_TLS_CA (deprecated) and TEMPORAL_TLS_SERVER_CA_CERT_PATH differ: set only TEMPORAL_TLS_SERVER_CA_CERT_PATH',
    ]);
  });

  it('the worker reports Temporal problems together with its own', () => {
    assert.throws(
      () => loadWorkerConfig({ HOME: dir, TEMPORAL_TLS_CLIENT_KEY_PATH: files.key }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.equal(error.problems.length, 2, error.message);
        return true;
      },
    );
  });
});
