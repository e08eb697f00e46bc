/**
 * overlays/tls-example, rendered as `kubectl kustomize` renders it: TLS to Temporal under Temporal's own variable
 * names, files that the mounted Secret provides, and a configuration the worker and the watcher accept.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { loadAllYaml } from '@kubernetes/client-node';
import type { KubernetesObject, V1ConfigMap, V1Deployment, V1Secret } from '@kubernetes/client-node';

import { DEPRECATED_TEMPORAL_ENV, loadWorkerConfig } from '../../../src/config.js';
import { WATCHER_ENV, loadWatcherConfig } from '../../../src/watcher/watcher-config.js';
import { readRepoFile, renderDeployBase } from './deploy-tools.js';

const TLS_SECRET = 'eniflow-temporal-tls';
let base: KubernetesObject[];
let overlay: KubernetesObject[];
let dir: string;

before(async () => {
  [base, overlay] = await Promise.all([
    renderDeployBase().then((rendered) => rendered.objects),
    renderDeployBase('overlays/tls-example').then((rendered) => rendered.objects),
  ]);
  dir = mkdtempSync(join(tmpdir(), 'eniflow-tls-overlay-'));
});

after(() => {
  rmSync(dir, { recursive: true, force: true });
});

function named(objects: KubernetesObject[], kind: string, name: string): KubernetesObject {
  const found = objects.find((object) => object.kind === kind && object.metadata?.name === name);
  assert.ok(found, `${kind}/${name}`);
  return found;
}

function tlsData(): Record<string, string> {
  const data = (named(overlay, 'ConfigMap', 'eniflow-config') as V1ConfigMap).data ?? {};
  return Object.fromEntries(Object.entries(data).filter(([key]) => key.startsWith('TEMPORAL_TLS')));
}

describe('overlays/tls-example', () => {
  it('changes only the ConfigMap and the TLS Secret volumes of the base', () => {
    assert.deepEqual(
      overlay.map((object) => `${object.kind ?? ''}/${object.metadata?.name ?? ''}`),
      base.map((object) => `${object.kind ?? ''}/${object.metadata?.name ?? ''}`),
    );
    assert.deepEqual(Object.keys(tlsData()).sort(), [
      'TEMPORAL_TLS_CLIENT_CERT_PATH',
      'TEMPORAL_TLS_CLIENT_KEY_PATH',
      'TEMPORAL_TLS_SERVER_CA_CERT_PATH',
    ]);
    for (const key of Object.keys(tlsData())) {
      assert.ok(key in WATCHER_ENV, `${key} is read by both processes`);
      assert.ok(!(key in DEPRECATED_TEMPORAL_ENV), `${key} is not a deprecated name`);
    }
  });

  it('points at files the Secret provides where both Deployments mount it, and requires the Secret', async () => {
    const secrets = loadAllYaml(await readRepoFile('deploy/secret.example.yaml')) as V1Secret[];
    const secretKeys = Object.keys(secrets.find((secret) => secret.metadata?.name === TLS_SECRET)?.stringData ?? {});
    for (const name of ['eniflow-worker', 'eniflow-watcher']) {
      const pod = (named(overlay, 'Deployment', name) as V1Deployment).spec?.template.spec;
      const volume = pod?.volumes?.find((candidate) => candidate.secret?.secretName === TLS_SECRET);
      assert.ok(volume?.secret, `${name} mounts ${TLS_SECRET}`);
      assert.equal(volume.secret.optional, false, `${name} waits for the Secret instead of starting without it`);
      const mount = pod?.containers[0]?.volumeMounts?.find((candidate) => candidate.name === volume.name);
      assert.ok(mount, `${name} mounts the volume`);
      for (const path of Object.values(tlsData())) {
        assert.ok(path.startsWith(`${mount.mountPath}/`), `${path} is under ${mount.mountPath}`);
        assert.ok(secretKeys.includes(path.slice(mount.mountPath.length + 1)), `${path} is a key of the Secret`);
      }
    }
  });

  it('is a configuration the worker and the watcher load as mutual TLS', () => {
    const data = (named(overlay, 'ConfigMap', 'eniflow-config') as V1ConfigMap).data ?? {};
    const env: Record<string, string> = { HOME: dir };
    for (const [key, value] of Object.entries(data)) {
      if (!key.startsWith('TEMPORAL_TLS')) {
        env[key] = value;
        continue;
      }
      // The Secret's files, written where the test can read them.
      const file = join(dir, value.split('/').pop() ?? key);
      writeFileSync(file, `PEM for ${key}`);
      env[key] = file;
    }
    for (const temporal of [
      loadWorkerConfig(env).temporal,
      loadWatcherConfig({ ...env, ENIFLOW_CLUSTER_ID: 'c-test' }).temporal,
    ]) {
      assert.equal(temporal.address, data['TEMPORAL_ADDRESS']);
      assert.ok(typeof temporal.tls === 'object');
      assert.equal(
        Buffer.from(temporal.tls.serverRootCACertificate ?? []).toString(),
        'PEM for TEMPORAL_TLS_SERVER_CA_CERT_PATH',
      );
      assert.ok(temporal.tls.clientCertPair, 'mTLS');
      assert.equal(temporal.deprecated, undefined);
    }
  });
});
