/**
 * Which watch events matter to a node's workflow, decided on small projections of the objects (pure). The
 * watcher keeps only these projections, so pod churn never carries more than node binding, phase and IPs.
 */
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { configure } from 'safe-stable-stringify';

import type { NodeChange } from './coalescer.js';

/** What the watcher remembers of a Pod: the node it is bound to, its phase and its IPs. */
export interface PodView {
  nodeName: string;
  phase: string;
  ips: string;
}

/** What the watcher remembers of a Node CR: its spec and whether it is being deleted. */
export interface NodeCrView {
  nodeName: string;
  spec: string;
  deleting: boolean;
}

/** What the watcher remembers of a core Node: readiness, labels and provider id. */
export interface CoreNodeView {
  nodeName: string;
  ready: string;
  labels: string;
  providerId: string;
}

/** The minimal shape of a Node CR the watcher reads (metadata and spec). */
export interface NodeCrObject {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; resourceVersion?: string; deletionTimestamp?: unknown };
  spec?: unknown;
}

/** The ECS instance a Node CR view names (`spec.nodeMetadata.instanceID`), if any. */
export function instanceIdOf(view: NodeCrView | undefined): string | undefined {
  if (view === undefined) return undefined;
  const spec = JSON.parse(view.spec) as { nodeMetadata?: { instanceID?: unknown } };
  const instanceId = spec.nodeMetadata?.instanceID;
  return typeof instanceId === 'string' && instanceId !== '' ? instanceId : undefined;
}

export function podView(pod: V1Pod): PodView {
  const ips = (pod.status?.podIPs ?? []).map((entry) => entry.ip);
  if (ips.length === 0 && pod.status?.podIP !== undefined) ips.push(pod.status.podIP);
  return { nodeName: pod.spec?.nodeName ?? '', phase: pod.status?.phase ?? '', ips: ips.sort().join(',') };
}

export function nodeCrView(node: NodeCrObject): NodeCrView {
  return {
    nodeName: node.metadata?.name ?? '',
    spec: stableJson(node.spec ?? {}),
    deleting: node.metadata?.deletionTimestamp != null,
  };
}

export function coreNodeView(node: V1Node): CoreNodeView {
  const ready = node.status?.conditions?.find((condition) => condition.type === 'Ready')?.status ?? '';
  return {
    nodeName: node.metadata?.name ?? '',
    ready,
    labels: stableJson(node.metadata?.labels ?? {}),
    providerId: node.spec?.providerID ?? '',
  };
}

/** The node change a pod event means, or undefined when nothing that matters changed (e.g. only labels). */
export function podChange(before: PodView | undefined, after: PodView | undefined): NodeChange | undefined {
  if (after === undefined) {
    const nodeName = before?.nodeName ?? '';
    return nodeName === '' ? undefined : { nodeName, reason: 'pod-deleted', pod: 'deleted' };
  }
  if (after.nodeName === '') return undefined;
  if (before?.nodeName !== after.nodeName) {
    return { nodeName: after.nodeName, reason: 'pod-added', pod: 'added' };
  }
  if (before.phase !== after.phase || before.ips !== after.ips) {
    return { nodeName: after.nodeName, reason: 'pod-updated', pod: 'updated' };
  }
  return undefined;
}

/** The change a Node CR event means: added, spec or deletion changed, or deleted; status-only writes do not count. */
export function nodeCrChange(before: NodeCrView | undefined, after: NodeCrView | undefined): NodeChange | undefined {
  if (after === undefined) {
    return before === undefined ? undefined : { nodeName: before.nodeName, reason: 'node-cr-deleted' };
  }
  if (before === undefined) return { nodeName: after.nodeName, reason: 'node-cr-added' };
  if (before.spec !== after.spec || before.deleting !== after.deleting) {
    return { nodeName: after.nodeName, reason: 'node-cr-changed' };
  }
  return undefined;
}

/** The change a core Node event means: added, Ready / labels / provider id changed, or deleted. */
export function coreNodeChange(
  before: CoreNodeView | undefined,
  after: CoreNodeView | undefined,
): NodeChange | undefined {
  if (after === undefined) {
    return before === undefined ? undefined : { nodeName: before.nodeName, reason: 'core-node-deleted' };
  }
  if (before === undefined) return { nodeName: after.nodeName, reason: 'core-node-added' };
  if (before.ready !== after.ready || before.labels !== after.labels || before.providerId !== after.providerId) {
    return { nodeName: after.nodeName, reason: 'core-node-changed' };
  }
  return undefined;
}

/** Sorts object keys at every level; a cycle throws, as in `JSON.stringify`. */
const sortedKeysStringify = configure({ deterministic: true, circularValue: TypeError });

/** JSON with object keys sorted, so equal values compare equal whatever order the server wrote them in. */
export function stableJson(value: unknown): string {
  return sortedKeysStringify(value) ?? 'null';
}
