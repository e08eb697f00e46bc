import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import type { KubeConfig, KubernetesObject, V1Node, V1Pod } from '@kubernetes/client-node';

import { NODE_CR_PATH, nodeCrList } from '../kube/node-cr-list.js';
import { ResourceInformer } from '../kube/resource-informer.js';
import type { ChangeOrigin } from '../kube/resource-informer.js';
import { abortOptions } from '../kube-request.js';
import type { Logger } from '../logger.js';
import type { NodeChange } from './coalescer.js';
import { coreNodeChange, coreNodeView, nodeCrChange, nodeCrView, podChange, podView } from './relevant-changes.js';
import type { NodeCrObject } from './relevant-changes.js';
import type { WatcherConfig } from './watcher-config.js';

/** Only pods bound to a node matter; the apiserver filters the rest out of both list and watch. */
export const BOUND_PODS_FIELD_SELECTOR = 'spec.nodeName!=';

/** The watcher's three informers (bound Pods, Node CRs, core Nodes), started and stopped together. */
export interface WatcherInformers {
  readonly pods: ResourceInformer<V1Pod, ReturnType<typeof podView>, NodeChange>;
  readonly nodeCrs: ResourceInformer<NodeCrObject & KubernetesObject, ReturnType<typeof nodeCrView>, NodeChange>;
  readonly coreNodes: ResourceInformer<V1Node, ReturnType<typeof coreNodeView>, NodeChange>;
  /** Resolves once every informer has listed once. */
  readonly synced: Promise<void>;
  isSynced(): boolean;
  /** Every node a Node CR or a core Node names. */
  nodeNames(): Set<string>;
  start(): void;
  stop(): Promise<void>;
}

/**
 * The informers, each turning a relevant change into a {@link NodeChange} for `enqueue`. The change carries the
 * resourceVersion the watcher saw, so the worker's read can wait for its own cache.
 */
export function createWatcherInformers(options: {
  kubeConfig: KubeConfig;
  logger: Logger;
  watch: WatcherConfig['watch'];
  enqueue: (change: NodeChange) => void;
}): WatcherInformers {
  const { kubeConfig, enqueue } = options;
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const customObjects = kubeConfig.makeApiClient(CustomObjectsApi);
  const onChange = (change: NodeChange, origin: ChangeOrigin): void => {
    enqueue(
      origin.resourceVersion === undefined
        ? change
        : { ...change, seen: { [origin.informer]: origin.resourceVersion } },
    );
  };
  const common = { kubeConfig, logger: options.logger, watch: options.watch, onChange };

  const pods = new ResourceInformer<V1Pod, ReturnType<typeof podView>, NodeChange>({
    ...common,
    name: 'pods',
    path: '/api/v1/pods',
    fieldSelector: BOUND_PODS_FIELD_SELECTOR,
    list: (signal) => core.listPodForAllNamespaces({ fieldSelector: BOUND_PODS_FIELD_SELECTOR }, abortOptions(signal)),
    view: podView,
    change: podChange,
  });
  const nodeCrs = new ResourceInformer<NodeCrObject & KubernetesObject, ReturnType<typeof nodeCrView>, NodeChange>({
    ...common,
    name: 'node-crs',
    path: NODE_CR_PATH,
    list: nodeCrList(customObjects),
    view: nodeCrView,
    change: nodeCrChange,
  });
  const coreNodes = new ResourceInformer<V1Node, ReturnType<typeof coreNodeView>, NodeChange>({
    ...common,
    name: 'core-nodes',
    path: '/api/v1/nodes',
    list: (signal) => core.listNode({}, abortOptions(signal)),
    view: coreNodeView,
    change: coreNodeChange,
  });
  const all = [pods, nodeCrs, coreNodes];
  const synced = Promise.all(all.map((informer) => informer.synced)).then(() => undefined);
  let isSynced = false;
  void synced.then(() => {
    isSynced = true;
  });
  return {
    pods,
    nodeCrs,
    coreNodes,
    synced,
    isSynced: () => isSynced,
    nodeNames: () => new Set([...nodeCrs.nodeNames(), ...coreNodes.nodeNames()]),
    start: () => {
      for (const informer of all) informer.start();
    },
    stop: async () => {
      await Promise.all(all.map((informer) => informer.stop()));
    },
  };
}
