/**
 * Access to the kube-apiserver shared by a test run (started by scripts/with-testenv.ts or `npm run testenv`),
 * plus builders for the objects eniflow reads: core Nodes, Pods bound to a node, and Node CRs.
 *
 * The server has no scheduler, kubelet or controller-manager: Pods are bound by setting spec.nodeName at
 * creation and must be deleted with grace period 0, core Nodes exist only when created here, and deleted
 * namespaces stay Terminating. Every test therefore uses its own namespace and names from {@link uniqueName}.
 */
import { randomBytes } from 'node:crypto';

import { CoreV1Api, CustomObjectsApi, KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { V1Node, V1NodeCondition, V1Pod } from '@kubernetes/client-node';

import { TEST_ENV_VARS, requireTestEnvVar } from '../../scripts/lib/test-env-vars.js';
import {
  NODE_CR_API_VERSION,
  NODE_CR_GROUP,
  NODE_CR_KIND,
  NODE_CR_PLURAL,
  NODE_CR_VERSION,
} from '../../src/ipam/index.js';
import type { NodeCr, NodeSpec } from '../../src/ipam/index.js';

/** A KubeConfig for the shared test server, authenticated as a system:masters user. */

/** The cluster id of the test set-ups (what `ENIFLOW_CLUSTER_ID` gives the watcher in production). */
export const TEST_CLUSTER_ID = 'eniflow-test';
export function kubeConfigFromTestEnv(): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [
      {
        name: 'eniflow-testenv',
        server: requireTestEnvVar(TEST_ENV_VARS.kubeServer),
        caFile: requireTestEnvVar(TEST_ENV_VARS.kubeCaFile),
        skipTLSVerify: false,
      },
    ],
    users: [{ name: 'eniflow-test-admin', token: requireTestEnvVar(TEST_ENV_VARS.kubeToken) }],
    contexts: [{ name: 'eniflow-testenv', cluster: 'eniflow-testenv', user: 'eniflow-test-admin' }],
    currentContext: 'eniflow-testenv',
  });
  return kubeConfig;
}

/**
 * A DNS-1123 name unique to this call (`<prefix>-<8 hex>`), for namespaces, core Nodes and Node CRs, which are
 * cluster-scoped and would otherwise collide between tests and between runs against one `npm run testenv`.
 */
export function uniqueName(prefix: string): string {
  const base = prefix
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 50);
  return `${base || 'test'}-${randomBytes(4).toString('hex')}`;
}

/** The typed API clients tests use, made once per test file. */
export interface KubeTestClients {
  readonly kubeConfig: KubeConfig;
  readonly core: CoreV1Api;
  readonly customObjects: CustomObjectsApi;
}

export function kubeTestClients(kubeConfig: KubeConfig = kubeConfigFromTestEnv()): KubeTestClients {
  return {
    kubeConfig,
    core: kubeConfig.makeApiClient(CoreV1Api),
    customObjects: kubeConfig.makeApiClient(CustomObjectsApi),
  };
}

/** Creates a namespace with a unique name derived from `prefix` and returns the name. */
export async function createTestNamespace(clients: KubeTestClients, prefix: string): Promise<string> {
  const name = uniqueName(prefix);
  await clients.core.createNamespace({ body: { metadata: { name, labels: { 'eniflow.test/owner': 'test' } } } });
  return name;
}

/** A `Ready=True` node condition, as a kubelet reports it (no kubelet runs here). */
export function readyCondition(message = 'test node'): V1NodeCondition {
  const now = new Date();
  return {
    type: 'Ready',
    status: 'True',
    reason: 'KubeletReady',
    message,
    lastHeartbeatTime: now,
    lastTransitionTime: now,
  };
}

export interface CoreNodeInput {
  readonly name: string;
  readonly labels?: Record<string, string>;
  /** ECS instance id, as the cloud controller manager writes it: `<region>.<instance id>`. */
  readonly providerId?: string;
  readonly conditions?: V1NodeCondition[];
}

/** Creates a core Node; conditions are then reported through the status subresource, as a kubelet does. */
export async function createCoreNode(clients: KubeTestClients, input: CoreNodeInput): Promise<V1Node> {
  const node = await clients.core.createNode({
    body: {
      metadata: { name: input.name, labels: input.labels ?? {} },
      spec: input.providerId === undefined ? {} : { providerID: input.providerId },
    },
  });
  if (input.conditions === undefined) return node;
  return clients.core.patchNodeStatus(
    { name: input.name, body: { status: { conditions: input.conditions } } },
    setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
  );
}

export interface PodOnNodeInput {
  readonly namespace: string;
  readonly name: string;
  readonly nodeName: string;
  readonly labels?: Record<string, string>;
  /** `spec.hostNetwork`: such pods take no IP from the pool. */
  readonly hostNetwork?: boolean;
}

/** Creates a Pod already bound to `nodeName` (no scheduler runs); it stays Pending since no kubelet runs. */
export async function createPodOnNode(clients: KubeTestClients, input: PodOnNodeInput): Promise<V1Pod> {
  return clients.core.createNamespacedPod({
    namespace: input.namespace,
    body: {
      metadata: { name: input.name, labels: input.labels ?? {} },
      spec: {
        nodeName: input.nodeName,
        hostNetwork: input.hostNetwork ?? false,
        containers: [{ name: 'main', image: 'registry.invalid/eniflow-test:none' }],
      },
    },
  });
}

/** Deletes a Pod at once: with no kubelet to confirm, a graceful delete would leave it Terminating forever. */
export async function deletePodNow(
  clients: KubeTestClients,
  input: { namespace: string; name: string },
): Promise<void> {
  await clients.core.deleteNamespacedPod({ ...input, gracePeriodSeconds: 0 });
}

export interface NodeCrInput {
  readonly name: string;
  readonly spec?: NodeSpec;
  readonly labels?: Record<string, string>;
}

/** The group/version/plural arguments every CustomObjectsApi call on Node CRs takes. */
export const NODE_CR_RESOURCE = { group: NODE_CR_GROUP, version: NODE_CR_VERSION, plural: NODE_CR_PLURAL } as const;

/** Creates a Node CR (`network.alibabacloud.com/v1beta1`, cluster-scoped). */
export async function createNodeCr(clients: KubeTestClients, input: NodeCrInput): Promise<NodeCr> {
  const body: NodeCr = {
    apiVersion: NODE_CR_API_VERSION,
    kind: NODE_CR_KIND,
    metadata: { name: input.name, labels: input.labels ?? {} },
    spec: input.spec ?? {},
  };
  return (await clients.customObjects.createClusterCustomObject({ ...NODE_CR_RESOURCE, body })) as NodeCr;
}

export async function readNodeCr(clients: KubeTestClients, name: string): Promise<NodeCr> {
  return (await clients.customObjects.getClusterCustomObject({ ...NODE_CR_RESOURCE, name })) as NodeCr;
}

/** Deletes a Node CR; a missing one counts as deleted, so cleanup may run twice. */
export async function deleteNodeCr(clients: KubeTestClients, name: string): Promise<void> {
  try {
    await clients.customObjects.deleteClusterCustomObject({ ...NODE_CR_RESOURCE, name });
  } catch (error) {
    if (apiStatusCode(error) !== 404) throw error;
  }
}

/** The HTTP status of a failed client-node API call (`ApiException.code`), or undefined for other errors. */
export function apiStatusCode(error: unknown): number | undefined {
  return typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'number'
    ? error.code
    : undefined;
}
