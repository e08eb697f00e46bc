/**
 * The Helm chart's mode single (deploy/helm/eniflow, values `mode`): one Deployment whose process runs the worker
 * and the watcher (`node dist/main.js --role all`, which test/integration/deploy/build.test.ts builds), with both roles'
 * variables and the watcher's RBAC granted to its ServiceAccount; the test kube-apiserver accepts what it renders.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';

import { KubernetesObjectApi } from '@kubernetes/client-node';
import type { KubernetesObject, V1Container, V1Deployment, V1EnvVar } from '@kubernetes/client-node';

import { createTestNamespace, kubeTestClients } from '../../support/kube-env.js';
import { renderHelmChart } from './deploy-tools.js';

const SINGLE = { set: { mode: 'single', 'cluster.vpcId': 'vpc-test', 'janitor.dryRun': true, degradation: 'l1' } };
const SPLIT = { set: { ...SINGLE.set, mode: 'split' } };

function key(object: KubernetesObject): string {
  return `${object.kind ?? ''}/${object.metadata?.name ?? ''}`;
}

function only<T>(items: readonly T[] | undefined, what: string): T {
  assert.equal(items?.length, 1, what);
  return (items ?? [])[0] as T;
}

function deployment(objects: readonly KubernetesObject[], name: string): V1Deployment {
  const found = objects.find((object) => object.kind === 'Deployment' && object.metadata?.name === name);
  assert.ok(found, `Deployment/${name} is rendered`);
  return found;
}

function containerOf(objects: readonly KubernetesObject[], name: string): V1Container {
  return only(deployment(objects, name).spec?.template.spec?.containers, `${name}: one container`);
}

function envMap(env: readonly V1EnvVar[] | undefined): Record<string, unknown> {
  return Object.fromEntries((env ?? []).map((entry) => [entry.name, JSON.stringify(entry.value ?? entry.valueFrom)]));
}

/** Role name → the ServiceAccounts its bindings name. */
function grants(objects: readonly KubernetesObject[]): Map<string, string[]> {
  const granted = new Map<string, string[]>();
  for (const binding of objects.filter((object) => object.kind?.endsWith('Binding'))) {
    const { roleRef, subjects } = binding as { roleRef: { kind: string; name: string }; subjects: { name: string }[] };
    granted.set(`${roleRef.kind}/${roleRef.name}`, subjects.map((subject) => subject.name).sort());
  }
  return granted;
}

describe('helm chart in mode single', () => {
  let single: KubernetesObject[];
  let split: KubernetesObject[];
  before(async () => {
    [single, split] = await Promise.all([renderHelmChart(SINGLE), renderHelmChart(SPLIT)]);
  });

  it('renders one Deployment running both roles from dist/main.js', () => {
    assert.deepEqual(single.filter((object) => object.kind === 'Deployment').map(key), ['Deployment/eniflow-worker']);
    assert.deepEqual(containerOf(single, 'eniflow-worker').command, ['node', 'dist/main.js', '--role', 'all']);
    assert.deepEqual(containerOf(split, 'eniflow-worker').command, ['node', 'dist/worker/main.js']);
  });

  it('leaves out every watcher-only object, and only those', () => {
    const watcherOnly = split.map(key).filter((name) => !single.map(key).includes(name));
    assert.deepEqual(watcherOnly.sort(), [
      'Deployment/eniflow-watcher',
      'PodDisruptionBudget/eniflow-watcher',
      'Service/eniflow-watcher',
      'ServiceAccount/eniflow-watcher',
    ]);
    assert.deepEqual(
      single.map(key).filter((name) => !split.map(key).includes(name)),
      [],
    );
  });

  it("gives the process the worker's and the watcher's variables", () => {
    const merged = {
      ...envMap(containerOf(split, 'eniflow-watcher').env),
      ...envMap(containerOf(split, 'eniflow-worker').env),
      // Its own V8 caps: the worker's young generation, and an old generation per isolate for up to 40 nodes.
      NODE_OPTIONS: JSON.stringify('--max-semi-space-size=8 --max-old-space-size=512'),
    };
    assert.deepEqual(envMap(containerOf(single, 'eniflow-worker').env), merged);
    for (const name of ['LEASE_NAME', 'POD_NAME', 'ENIFLOW_VPC_ID', 'JANITOR_DRY_RUN', 'ENIFLOW_DEGRADATION']) {
      assert.ok(name in merged, `${name} is set`);
    }
  });

  it("grants the one ServiceAccount both roles' RBAC, and the same roles as split mode", () => {
    const splitGrants = grants(split);
    const singleGrants = grants(single);
    assert.deepEqual([...singleGrants.keys()].sort(), [...splitGrants.keys()].sort());
    for (const [role, accounts] of singleGrants) assert.deepEqual(accounts, ['eniflow-worker'], role);
    assert.equal(deployment(single, 'eniflow-worker').spec?.template.spec?.serviceAccountName, 'eniflow-worker');
  });

  it('refuses an unknown mode', async () => {
    await assert.rejects(renderHelmChart({ set: { mode: 'both' } }), /mode must be split or single/);
  });

  it('is accepted by the test kube-apiserver (server-side dry run)', async () => {
    const clients = kubeTestClients();
    const namespace = await createTestNamespace(clients, 'eniflow-single');
    const api = KubernetesObjectApi.makeApiClient(clients.kubeConfig);
    const objects = (await renderHelmChart({ ...SINGLE, namespace })).filter(
      (object) => object.kind !== 'CustomResourceDefinition' && object.kind !== 'Namespace',
    );
    for (const object of objects) {
      const body = structuredClone(object);
      if (body.metadata?.namespace !== undefined) body.metadata.namespace = namespace;
      await assert.doesNotReject(api.create(body, undefined, 'All'), key(object));
    }
  });
});
