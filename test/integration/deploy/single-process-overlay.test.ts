/**
 * overlays/single-process, as `kubectl kustomize` renders it: the base with one process running both roles
 * (`node dist/main.js --role all`), the watcher's variables and grants moved to it, and the watcher's own objects
 * gone. The Helm chart's `mode: single` (test/integration/deploy/helm-single.test.ts) renders the same shape.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';

import type { KubernetesObject, V1ConfigMap, V1Container, V1Deployment, V1EnvVar } from '@kubernetes/client-node';

import { loadWatcherConfig } from '../../../src/watcher/watcher-config.js';
import { renderDeployBase } from './deploy-tools.js';

let base: KubernetesObject[];
let overlay: KubernetesObject[];

before(async () => {
  [base, overlay] = await Promise.all([
    renderDeployBase().then((rendered) => rendered.objects),
    renderDeployBase('overlays/single-process').then((rendered) => rendered.objects),
  ]);
});

function key(object: KubernetesObject): string {
  return `${object.kind ?? ''}/${object.metadata?.name ?? ''}`;
}

function containerOf(objects: readonly KubernetesObject[], name: string): V1Container {
  const found = objects.find((object) => object.kind === 'Deployment' && object.metadata?.name === name);
  assert.ok(found, `Deployment/${name}`);
  const containers = (found as V1Deployment).spec?.template.spec?.containers ?? [];
  assert.equal(containers.length, 1);
  return containers[0]!;
}

function envMap(env: readonly V1EnvVar[] | undefined): Record<string, string> {
  return Object.fromEntries((env ?? []).map((entry) => [entry.name, JSON.stringify(entry.value ?? entry.valueFrom)]));
}

describe('overlays/single-process', () => {
  it("drops the watcher's own objects, and only those", () => {
    const overlayKeys = overlay.map(key);
    assert.deepEqual(
      base
        .map(key)
        .filter((name) => !overlayKeys.includes(name))
        .sort(),
      [
        'Deployment/eniflow-watcher',
        'PodDisruptionBudget/eniflow-watcher',
        'Service/eniflow-watcher',
        'ServiceAccount/eniflow-watcher',
      ],
    );
    assert.equal(overlay.length, base.length - 4);
  });

  it("runs both roles in the worker's container with both roles' variables", () => {
    const worker = containerOf(overlay, 'eniflow-worker');
    assert.deepEqual(worker.command, ['node', 'dist/main.js', '--role', 'all']);
    const merged = {
      ...envMap(containerOf(base, 'eniflow-watcher').env),
      ...envMap(containerOf(base, 'eniflow-worker').env),
      // Its own V8 caps: the worker's young generation, and an old generation per isolate for up to 40 nodes.
      NODE_OPTIONS: JSON.stringify('--max-semi-space-size=8 --max-old-space-size=512'),
    };
    assert.deepEqual(envMap(worker.env), merged);
  });

  it("binds the watcher's roles to the worker's ServiceAccount", () => {
    const bindings = overlay.filter((object) => object.kind?.endsWith('Binding'));
    assert.ok(bindings.length >= 3);
    for (const binding of bindings) {
      const { subjects } = binding as { subjects?: { kind: string; name: string; namespace?: string }[] };
      assert.deepEqual(JSON.parse(JSON.stringify(subjects)), [
        { kind: 'ServiceAccount', name: 'eniflow-worker', namespace: 'eniflow-system' },
      ]);
    }
  });

  it("gives the watcher role a configuration it accepts, electing on the base watcher's Lease", () => {
    const settings = overlay.find(
      (object) => object.kind === 'ConfigMap' && object.metadata?.name === 'eniflow-config',
    );
    const env: NodeJS.ProcessEnv = { ...(settings as V1ConfigMap | undefined)?.data, ENIFLOW_CLUSTER_ID: 'c-test' };
    const fields: Record<string, string> = {
      'metadata.namespace': 'eniflow-system',
      'metadata.name': 'eniflow-worker-0',
    };
    for (const entry of containerOf(overlay, 'eniflow-worker').env ?? []) {
      const value = entry.value ?? fields[entry.valueFrom?.fieldRef?.fieldPath ?? ''];
      if (value !== undefined && value !== '') env[entry.name] = value;
    }
    const { lease } = loadWatcherConfig(env);
    assert.deepEqual(
      { namespace: lease.namespace, name: lease.name, identity: lease.identity },
      { namespace: 'eniflow-system', name: 'eniflow-watcher', identity: 'eniflow-worker-0' },
    );
  });
});
