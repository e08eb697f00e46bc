import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import type { KubeConfig, KubernetesObject, V1Node, V1Pod } from '@kubernetes/client-node';

import { compareResourceVersions } from '../ipam/index.js';
import type { PodSnapshot } from '../ipam/index.js';
import { NODE_CR_PATH, nodeCrList } from '../kube/node-cr-list.js';
import { ResourceInformer } from '../kube/resource-informer.js';
import type { InformerCounters } from '../kube/resource-informer.js';
import { abortOptions } from '../kube-request.js';
import type { Logger } from '../logger.js';
import { coreNodeSnapshot, podSnapshotOf } from './kube/node-snapshot.js';
import type { NodeSnapshot, RawObject } from './kube/node-snapshot.js';

export interface NodeReadCacheOptions {
  kubeConfig: KubeConfig;
  logger: Logger;
  /** Watch timeouts and list deadline, as the watcher's informers take them. */
  watch?: { serverTimeoutSeconds: number; idleTimeoutMs: number; listTimeoutMs: number };
}

/** What the cache holds of a node: the raw Node CR, its pods (projected), the core Node (projected). */
export interface CachedNode {
  cr?: RawObject;
  pods: PodSnapshot[];
  coreNode?: NonNullable<NodeSnapshot['coreNode']>;
}

const BOUND_PODS = 'spec.nodeName!=';

/** When a pod was created (epoch ms), and whether it already runs with an IP (then it was not waiting for one). */
export interface PodCreation {
  createdMs: number;
  hasIp: boolean;
}

/** A pod's `metadata.creationTimestamp` in epoch ms, when it has one. */
export function creationOf(pod: V1Pod): { createdMs?: number } {
  const created = pod.metadata?.creationTimestamp;
  if (created === undefined) return {};
  const ms = new Date(created).getTime();
  return Number.isFinite(ms) ? { createdMs: ms } : {};
}
const DEFAULT_WATCH = { serverTimeoutSeconds: 300, idleTimeoutMs: 90_000, listTimeoutMs: 60_000 };

/**
 * The worker's shared read cache: informers on bound Pods, Node CRs and core Nodes, the same
 * list/watch/relist machinery as the watcher's, so a pass reads its node from memory instead of four apiserver
 * requests. Informers are named as the watcher's (`pods`, `node-crs`, `core-nodes`), so the resource versions a
 * signal carries ({@link waitFor}) name the informer that must have seen them.
 */
export class NodeReadCache {
  private readonly pods: ResourceInformer<V1Pod, { nodeName: string; pod: PodSnapshot; createdMs?: number }>;
  private readonly nodeCrs: ResourceInformer<KubernetesObject, { nodeName: string; raw: RawObject }>;
  private readonly coreNodes: ResourceInformer<
    V1Node,
    { nodeName: string; node: NonNullable<NodeSnapshot['coreNode']> }
  >;
  private readonly byName: Map<string, { resourceVersion(): string }>;

  constructor(options: NodeReadCacheOptions) {
    const core = options.kubeConfig.makeApiClient(CoreV1Api);
    const custom = options.kubeConfig.makeApiClient(CustomObjectsApi);
    const common = { kubeConfig: options.kubeConfig, logger: options.logger, watch: options.watch ?? DEFAULT_WATCH };
    this.pods = new ResourceInformer({
      ...common,
      name: 'pods',
      path: '/api/v1/pods',
      fieldSelector: BOUND_PODS,
      list: (signal) => core.listPodForAllNamespaces({ fieldSelector: BOUND_PODS }, abortOptions(signal)),
      view: (pod: V1Pod) => ({
        nodeName: pod.spec?.nodeName ?? '',
        pod: podSnapshotOf(pod),
        ...creationOf(pod),
      }),
    });
    this.nodeCrs = new ResourceInformer({
      ...common,
      name: 'node-crs',
      path: NODE_CR_PATH,
      list: nodeCrList<KubernetesObject>(custom),
      view: (cr: KubernetesObject) => ({ nodeName: cr.metadata?.name ?? '', raw: cr as RawObject }),
    });
    this.coreNodes = new ResourceInformer({
      ...common,
      name: 'core-nodes',
      path: '/api/v1/nodes',
      list: (signal) => core.listNode({}, abortOptions(signal)),
      view: (node: V1Node) => ({ nodeName: node.metadata?.name ?? '', node: coreNodeSnapshot(node) }),
    });
    this.byName = new Map<string, { resourceVersion(): string }>([
      ['pods', this.pods],
      ['node-crs', this.nodeCrs],
      ['core-nodes', this.coreNodes],
    ]);
  }

  start(): void {
    this.pods.start();
    this.nodeCrs.start();
    this.coreNodes.start();
  }

  async stop(): Promise<void> {
    await Promise.all([this.pods.stop(), this.nodeCrs.stop(), this.coreNodes.stop()]);
  }

  /** Resolves once every informer has listed once. */
  get synced(): Promise<void> {
    return Promise.all([this.pods.synced, this.nodeCrs.synced, this.coreNodes.synced]).then(() => undefined);
  }

  hasSynced(): boolean {
    return this.pods.hasSynced() && this.nodeCrs.hasSynced() && this.coreNodes.hasSynced();
  }

  counters(): { pods: InformerCounters; nodeCrs: InformerCounters; coreNodes: InformerCounters } {
    return { pods: this.pods.counters(), nodeCrs: this.nodeCrs.counters(), coreNodes: this.coreNodes.counters() };
  }

  /**
   * The resourceVersion each informer has seen up to: a read from the cache after this call has seen at least these
   * (the informers only move forward). Empty until every informer has listed.
   */
  versions(): Record<string, string> {
    if (!this.hasSynced()) return {};
    return Object.fromEntries([...this.byName].map(([name, informer]) => [name, informer.resourceVersion()]));
  }

  /**
   * Whether every informer named in `after` has seen at least that resourceVersion, waiting up to `waitMs` for
   * it; false at once for a name or version this cache cannot compare (the caller then reads live).
   */
  async waitFor(after: Readonly<Record<string, string>>, waitMs: number, signal?: AbortSignal): Promise<boolean> {
    const behind = (): boolean | undefined => {
      let any = false;
      for (const [name, version] of Object.entries(after)) {
        const informer = this.byName.get(name);
        if (informer === undefined) return undefined;
        const order = compareResourceVersions(informer.resourceVersion(), version);
        if (order === undefined) return undefined;
        if (order < 0) any = true;
      }
      return any;
    };
    const deadline = Date.now() + waitMs;
    for (;;) {
      const state = behind();
      if (state === undefined) return false;
      if (!state) return true;
      if (Date.now() >= deadline || signal?.aborted === true) return false;
      // Watch events arrive in order: polling the informers' versions is enough (a bookmark also moves them).
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /**
   * When the pod `podId` (`namespace/name`) on the node was created, and whether it already runs with an IP, if the
   * cache holds it; given `podUid`, only if it is that pod (not an older one of the same name). Not in {@link read}'s
   * snapshots: those land in history.
   */
  podCreation(nodeName: string, podId: string, podUid?: string): PodCreation | undefined {
    for (const view of this.pods.viewsOf(nodeName)) {
      const { namespace, name, uid } = view.pod.metadata;
      if (`${namespace}/${name}` !== podId) continue;
      if (podUid !== undefined && uid !== undefined && uid !== podUid) return undefined;
      if (view.createdMs === undefined) return undefined;
      return { createdMs: view.createdMs, hasIp: (view.pod.status?.podIP ?? '') !== '' };
    }
    return undefined;
  }

  /** The Node CR as its informer holds it now; undefined before it has synced or when it holds none. */
  cr(nodeName: string): RawObject | undefined {
    if (!this.nodeCrs.hasSynced()) return undefined;
    return this.nodeCrs.get(nodeName)?.raw;
  }

  /** The node as the informers hold it now; undefined before they have synced. */
  read(nodeName: string): CachedNode | undefined {
    if (!this.hasSynced()) return undefined;
    const node: CachedNode = { pods: this.pods.viewsOf(nodeName).map((view) => view.pod) };
    const cr = this.nodeCrs.get(nodeName);
    if (cr !== undefined) node.cr = cr.raw;
    const coreNode = this.coreNodes.get(nodeName);
    if (coreNode !== undefined) node.coreNode = coreNode.node;
    return node;
  }
}
