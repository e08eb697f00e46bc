/**
 * The Helm chart deploy/helm/eniflow as the real helm renders it (`helm template`): with default values it
 * renders the kustomize base's objects with the same RBAC, settings, hardening, disruption budgets and priority
 * class; with TLS and RRSA values it wires the Temporal TLS Secret and the projected OIDC token to the variables
 * the processes read; and the test kube-apiserver accepts what it renders (server-side dry run).
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, posix } from 'node:path';
import { before, describe, it } from 'node:test';

import { KubernetesObjectApi, loadAllYaml } from '@kubernetes/client-node';
import type {
  KubernetesObject,
  V1ConfigMap,
  V1Container,
  V1Deployment,
  V1EnvVar,
  V1PodDisruptionBudget,
  V1PodSpec,
  V1Volume,
} from '@kubernetes/client-node';

import { WORKER_ENV } from '../../../src/config.js';
import { WATCHER_ENV } from '../../../src/watcher/watcher-config.js';
import { createTestNamespace, kubeTestClients } from '../../support/kube-env.js';
import { lintHelmChart, readRepoFile, renderDeployBase, renderHelmChart } from './deploy-tools.js';

const RBAC_KINDS = new Set(['ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding', 'ServiceAccount']);
const COMPONENTS = ['worker', 'watcher'] as const;

const ROLE_ARN = 'acs:ram::1234567890123456:role/eniflow-worker';
const OIDC_PROVIDER_ARN = 'acs:ram::1234567890123456:oidc-provider/ack-rrsa-c0123456789abcdef';

/** Values a production install would set: TLS (mTLS) to Temporal, RRSA credentials, another region and image. */
const TLS_RRSA_VALUES = {
  set: {
    'image.repository': 'registry.example.com/eniflow',
    'temporal.address': 'temporal.example.com:7233',
    'temporal.tls.enabled': true,
    'temporal.tls.mtls': true,
    'temporal.tls.serverName': 'temporal.example.com',
    'ecs.regionId': 'cn-beijing',
    'ecs.endpoint': 'ecs-vpc.cn-beijing.aliyuncs.com',
    'credentials.rrsa.enabled': true,
    'credentials.rrsa.roleArn': ROLE_ARN,
    'credentials.rrsa.oidcProviderArn': OIDC_PROVIDER_ARN,
    'credentials.rrsa.stsRegion': 'cn-beijing',
    'credentials.rrsa.stsVpcEndpoint': true,
    'credentials.accessKeySecret': '',
    'worker.replicas': 3,
    'worker.metricsPort': 9100,
    'worker.resources.limits.memory': '4Gi',
  },
  setString: { 'image.tag': '1.2.3' },
} as const;

function key(object: KubernetesObject): string {
  return `${object.kind ?? ''}/${object.metadata?.name ?? ''}`;
}

function named(objects: readonly KubernetesObject[], kind: string, name: string): KubernetesObject {
  const found = objects.find((object) => object.kind === kind && object.metadata?.name === name);
  assert.ok(found, `${kind}/${name} is rendered`);
  return found;
}

/** What RBAC means: who is granted what, without the labels each tool adds. */
function rbacView(objects: readonly KubernetesObject[]): Record<string, unknown> {
  const view: Record<string, unknown> = {};
  for (const object of objects.filter((o) => RBAC_KINDS.has(o.kind ?? ''))) {
    const { rules, roleRef, subjects } = object as { rules?: unknown; roleRef?: unknown; subjects?: unknown };
    view[key(object)] = JSON.parse(
      JSON.stringify({ namespace: object.metadata?.namespace, rules, roleRef, subjects }),
    ) as unknown;
  }
  return view;
}

/** The pod template of a Deployment, e.g. `eniflow-worker`. */
function podSpec(objects: readonly KubernetesObject[], deployment: string): V1PodSpec {
  const spec = (named(objects, 'Deployment', deployment) as V1Deployment).spec?.template.spec;
  assert.ok(spec);
  return spec;
}

function container(spec: V1PodSpec): V1Container {
  assert.equal(spec.containers.length, 1);
  const [only] = spec.containers;
  assert.ok(only);
  return only;
}

function envMap(env: readonly V1EnvVar[] | undefined): Record<string, string | undefined> {
  return Object.fromEntries(
    (env ?? []).map((entry) => [
      entry.name,
      entry.value ?? entry.valueFrom?.fieldRef?.fieldPath ?? entry.valueFrom?.secretKeyRef?.name,
    ]),
  );
}

/** The file a path names inside the container: the volume mounted at its directory and the key it reads. */
function volumeFor(spec: V1PodSpec, path: string): { volume: V1Volume; file: string } {
  const mount = container(spec).volumeMounts?.find((m) => posix.dirname(path) === m.mountPath);
  assert.ok(mount, `${path} is on a mounted volume`);
  const volume = spec.volumes?.find((v) => v.name === mount.name);
  assert.ok(volume, `volume ${mount.name}`);
  return { volume, file: posix.basename(path) };
}

/** The parts of a pod that must match between the chart and the base: identity, hardening, probes, sizing. */
function podView(spec: V1PodSpec): unknown {
  const { name, image, command, ports, readinessProbe, livenessProbe, resources, securityContext } = container(spec);
  return JSON.parse(
    JSON.stringify({
      serviceAccountName: spec.serviceAccountName,
      priorityClassName: spec.priorityClassName,
      terminationGracePeriodSeconds: spec.terminationGracePeriodSeconds,
      podSecurityContext: spec.securityContext,
      container: { name, image, command, ports, readinessProbe, livenessProbe, resources, securityContext },
    }),
  );
}

/** Environment variable names the @alicloud/credentials default chain reads (its OIDC provider's source). */
async function credentialChainEnvNames(): Promise<Set<string>> {
  const entry = createRequire(import.meta.url).resolve('@alicloud/credentials');
  const source = await readFile(join(dirname(entry), 'providers', 'oidc_role_arn.js'), 'utf8');
  return new Set([...source.matchAll(/process\.env\.(ALIBABA_CLOUD_[A-Z_]+)/g)].map((match) => match[1] ?? ''));
}

describe('helm chart deploy/helm/eniflow', () => {
  let base: KubernetesObject[];
  let chart: KubernetesObject[];

  before(async () => {
    [base, chart] = await Promise.all([renderDeployBase().then((r) => r.objects), renderHelmChart()]);
  });

  it('passes helm lint --strict', async () => {
    assert.match(await lintHelmChart(), /1 chart\(s\) linted, 0 chart\(s\) failed/);
  });

  it("renders the kustomize base's objects, except the Namespace helm installs into", () => {
    assert.deepEqual(
      chart.map(key).sort(),
      base
        .filter((object) => object.kind !== 'Namespace')
        .map(key)
        .sort(),
    );
    for (const object of chart) {
      const fromBase = named(base, object.kind ?? '', object.metadata?.name ?? '');
      assert.equal(object.metadata?.namespace, fromBase.metadata?.namespace, `${key(object)} namespace`);
    }
  });

  it('grants exactly the RBAC of the kustomize base to the same ServiceAccounts', () => {
    assert.deepEqual(rbacView(chart), rbacView(base));
  });

  it("ships deploy/crd's CRD unchanged", async () => {
    const [fromFile] = loadAllYaml(await readRepoFile('deploy/crd/network.alibabacloud.com_nodes.yaml')) as unknown[];
    const rendered = named(chart, 'CustomResourceDefinition', 'nodes.network.alibabacloud.com');
    assert.deepEqual(JSON.parse(JSON.stringify(rendered)), JSON.parse(JSON.stringify(fromFile)));
  });

  it('defaults to the settings of the kustomize base', () => {
    const settings = (objects: KubernetesObject[]): unknown =>
      (named(objects, 'ConfigMap', 'eniflow-config') as V1ConfigMap).data;
    assert.deepEqual(settings(chart), settings(base));
  });

  for (const component of COMPONENTS) {
    it(`runs the ${component} as the base does: identity, hardening, probes, resources, priority`, () => {
      const fromChart = podSpec(chart, `eniflow-${component}`);
      const fromBase = podSpec(base, `eniflow-${component}`);
      assert.deepEqual(podView(fromChart), podView(fromBase));
      const replicas = (objects: KubernetesObject[]): number | undefined =>
        (named(objects, 'Deployment', `eniflow-${component}`) as V1Deployment).spec?.replicas;
      assert.equal(replicas(chart), replicas(base));
      const expectedEnv = { ...envMap(container(fromBase).env) };
      if (component === 'watcher') expectedEnv['LEASE_NAME'] = 'eniflow-watcher';
      assert.deepEqual(envMap(container(fromChart).env), expectedEnv);
      const envFrom = (spec: V1PodSpec): unknown => JSON.parse(JSON.stringify(container(spec).envFrom));
      assert.deepEqual(envFrom(fromChart), envFrom(fromBase));
    });

    it(`gives the ${component} the disruption budget and priority class of the base`, () => {
      const budget = (objects: KubernetesObject[]): V1PodDisruptionBudget =>
        named(objects, 'PodDisruptionBudget', `eniflow-${component}`);
      assert.equal(budget(chart).spec?.maxUnavailable, budget(base).spec?.maxUnavailable);
      const deployment = named(chart, 'Deployment', `eniflow-${component}`) as V1Deployment;
      assert.deepEqual(budget(chart).spec?.selector?.matchLabels, deployment.spec?.selector.matchLabels);
      const podLabels = deployment.spec?.template.metadata?.labels ?? {};
      for (const [label, value] of Object.entries(deployment.spec?.selector.matchLabels ?? {})) {
        assert.equal(podLabels[label], value, `the pods carry the selector label ${label}`);
      }
    });
  }

  it('creates the priority class of the base', () => {
    const view = (objects: KubernetesObject[]): unknown => {
      const { value, globalDefault, preemptionPolicy, description } = named(
        objects,
        'PriorityClass',
        'eniflow-critical',
      ) as KubernetesObject & Record<string, unknown>;
      return { value, globalDefault, preemptionPolicy, description };
    };
    assert.deepEqual(view(chart), view(base));
  });
});

describe('helm chart with Temporal TLS and RRSA values', () => {
  let objects: KubernetesObject[];

  before(async () => {
    objects = await renderHelmChart(TLS_RRSA_VALUES);
  });

  it('runs the image, replicas, resources and metrics port it is given', () => {
    for (const component of COMPONENTS) {
      assert.equal(container(podSpec(objects, `eniflow-${component}`)).image, 'registry.example.com/eniflow:1.2.3');
    }
    const worker = named(objects, 'Deployment', 'eniflow-worker') as V1Deployment;
    assert.equal(worker.spec?.replicas, 3);
    const workerContainer = container(podSpec(objects, 'eniflow-worker'));
    assert.equal(workerContainer.resources?.limits?.['memory'], '4Gi');
    assert.equal(envMap(workerContainer.env)['METRICS_ADDRESS'], '0.0.0.0:9100');
    assert.deepEqual(
      workerContainer.ports?.map((port) => [port.name, port.containerPort]),
      [
        ['health', 8080],
        ['sdk-metrics', 9100],
      ],
    );
    const service = named(objects, 'Service', 'eniflow-worker') as KubernetesObject & {
      spec?: { ports?: { name?: string; port?: number }[] };
    };
    assert.deepEqual(
      service.spec?.ports?.map((port) => [port.name, port.port]),
      [
        ['health', 8080],
        ['sdk-metrics', 9100],
      ],
    );
  });

  it('sets the region, endpoint and TLS variables, each read by the processes', () => {
    const data = (named(objects, 'ConfigMap', 'eniflow-config') as V1ConfigMap).data ?? {};
    assert.deepEqual(
      {
        region: data['ECS_REGION_ID'],
        endpoint: data['ECS_ENDPOINT'],
        address: data['TEMPORAL_ADDRESS'],
        serverName: data['TEMPORAL_TLS_SERVER_NAME'],
      },
      {
        region: 'cn-beijing',
        endpoint: 'ecs-vpc.cn-beijing.aliyuncs.com',
        address: 'temporal.example.com:7233',
        serverName: 'temporal.example.com',
      },
    );
    assert.deepEqual(
      Object.keys(data).filter((name) => !(name in WORKER_ENV)),
      [],
    );
    for (const name of ['TEMPORAL_ADDRESS', 'TEMPORAL_TLS_CA', 'TEMPORAL_TLS_CERT', 'TEMPORAL_TLS_KEY']) {
      assert.ok(name in WATCHER_ENV, `the watcher reads ${name}`);
    }
  });

  for (const component of COMPONENTS) {
    it(`mounts the TLS Secret's ca.crt, tls.crt and tls.key where the ${component}'s variables point`, () => {
      const data = (named(objects, 'ConfigMap', 'eniflow-config') as V1ConfigMap).data ?? {};
      const spec = podSpec(objects, `eniflow-${component}`);
      const files = ['TEMPORAL_TLS_CA', 'TEMPORAL_TLS_CERT', 'TEMPORAL_TLS_KEY'].map((name) => {
        const path = data[name];
        assert.ok(path, `${name} is set`);
        const { volume, file } = volumeFor(spec, path);
        assert.equal(volume.secret?.secretName, 'eniflow-temporal-tls');
        return file;
      });
      assert.deepEqual(files, ['ca.crt', 'tls.crt', 'tls.key']);
    });
  }

  it('gives the worker the RRSA variables and a projected token for STS, which the credential chain reads', async () => {
    const spec = podSpec(objects, 'eniflow-worker');
    const env = envMap(container(spec).env);
    assert.deepEqual(
      {
        roleArn: env['ALIBABA_CLOUD_ROLE_ARN'],
        providerArn: env['ALIBABA_CLOUD_OIDC_PROVIDER_ARN'],
        stsRegion: env['ALIBABA_CLOUD_STS_REGION'],
        stsVpc: env['ALIBABA_CLOUD_VPC_ENDPOINT_ENABLED'],
      },
      { roleArn: ROLE_ARN, providerArn: OIDC_PROVIDER_ARN, stsRegion: 'cn-beijing', stsVpc: 'true' },
    );
    const tokenFile = env['ALIBABA_CLOUD_OIDC_TOKEN_FILE'];
    assert.ok(tokenFile);
    const { volume, file } = volumeFor(spec, tokenFile);
    const sources = volume.projected?.sources ?? [];
    assert.equal(sources.length, 1);
    assert.deepEqual(JSON.parse(JSON.stringify(sources[0]?.serviceAccountToken)), {
      path: file,
      audience: 'sts.aliyuncs.com',
      expirationSeconds: 3600,
    });

    const readByChain = await credentialChainEnvNames();
    const cloudVariables = Object.keys(env).filter((name) => name.startsWith('ALIBABA_CLOUD_'));
    assert.deepEqual(
      cloudVariables.filter((name) => !readByChain.has(name)),
      [],
      '@alicloud/credentials reads every ALIBABA_CLOUD_* variable set',
    );
    assert.deepEqual(
      container(spec).envFrom?.map((source) => source.configMapRef?.name ?? source.secretRef?.name),
      ['eniflow-config'],
      'no AccessKey Secret with RRSA',
    );
  });

  it('gives the watcher no cloud credentials (it makes no cloud calls)', () => {
    const spec = podSpec(objects, 'eniflow-watcher');
    assert.deepEqual(
      Object.keys(envMap(container(spec).env)).filter((name) => name.startsWith('ALIBABA_CLOUD_')),
      [],
    );
    assert.equal(
      spec.volumes?.find((volume) => volume.projected),
      undefined,
    );
  });

  it('refuses RRSA without a role', async () => {
    await assert.rejects(
      renderHelmChart({ set: { 'credentials.rrsa.enabled': true } }),
      /credentials\.rrsa\.roleArn is required/,
    );
  });
});

describe('helm chart under another release name', () => {
  it('prefixes every name, binds the roles to its own ServiceAccounts and elects on its own Lease', async () => {
    const objects = await renderHelmChart({
      release: 'ipam',
      namespace: 'kube-system',
      set: { 'temporal.apiKey.existingSecret': 'temporal-cloud' },
    });
    const names = objects
      .filter((object) => object.kind !== 'CustomResourceDefinition' && object.kind !== 'PriorityClass')
      .map((object) => object.metadata?.name ?? '');
    assert.deepEqual(
      names.filter((name) => !name.startsWith('ipam-eniflow-')),
      [],
    );
    for (const binding of objects.filter((object) => object.kind?.endsWith('Binding'))) {
      const { subjects } = binding as { subjects?: { name: string; namespace?: string }[] };
      for (const subject of subjects ?? []) {
        assert.ok(named(objects, 'ServiceAccount', subject.name));
        assert.equal(subject.namespace, 'kube-system');
      }
    }
    const watcherEnv = envMap(container(podSpec(objects, 'ipam-eniflow-watcher')).env);
    assert.equal(watcherEnv['LEASE_NAME'], 'ipam-eniflow-watcher');
    for (const deployment of ['ipam-eniflow-worker', 'ipam-eniflow-watcher']) {
      const spec = podSpec(objects, deployment);
      assert.equal(spec.serviceAccountName, deployment);
      assert.equal(envMap(container(spec).env)['TEMPORAL_API_KEY'], 'temporal-cloud', 'the API key from the Secret');
      assert.equal(container(spec).envFrom?.[0]?.configMapRef?.name, 'ipam-eniflow-config');
    }
  });
});

describe('server-side dry run on the test kube-apiserver', () => {
  for (const [what, render] of [
    ['the chart with TLS and RRSA values', (namespace: string) => renderHelmChart({ ...TLS_RRSA_VALUES, namespace })],
    ['the kustomize base', async () => (await renderDeployBase()).objects],
  ] as const) {
    it(`accepts every object of ${what}`, async () => {
      const clients = kubeTestClients();
      const namespace = await createTestNamespace(clients, 'eniflow-dry-run');
      const api = KubernetesObjectApi.makeApiClient(clients.kubeConfig);
      // The CRD and the Namespace exist already; everything else goes through validation and admission unsaved.
      const objects = (await render(namespace)).filter(
        (object) => object.kind !== 'CustomResourceDefinition' && object.kind !== 'Namespace',
      );
      assert.ok(objects.some((object) => object.kind === 'PodDisruptionBudget'));
      for (const object of objects) {
        const body = structuredClone(object);
        if (body.metadata?.namespace !== undefined) body.metadata.namespace = namespace;
        await assert.doesNotReject(api.create(body, undefined, 'All'), key(object));
      }
    });
  }
});
