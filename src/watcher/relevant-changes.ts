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
  /**
   * Set while the pod may be waiting for an IP (not host-network, not finished or being deleted, no IP yet): when it
   * was scheduled (else created), epoch ms. Metrics only; never compared for signalling.
   */
  ipWaitSinceMs?: number;
}

/** What the watcher remembers of a Node CR: its spec and whether it is being deleted. */
export interface NodeCrView {
  nodeName: string;
  spec: string;
  deleting: boolean;
  /** What the status says, for metrics only (status-only writes never signal): see {@link NodeCrIpam}. */
  ipam: NodeCrIpam;
}

/** The IPAM facts of a Node CR's status the watcher exports as metrics. */
export interface NodeCrIpam {
  /** `namespace/name` of every pod holding an IP of the node (a set, built once per CR event, not per scrape). */
  boundPods: ReadonlySet<string>;
  /** Pool addresses by family: bound to a pod (`used`) or valid and free (`idle`). */
  ips: { ipv4: { idle: number; used: number }; ipv6: { idle: number; used: number } };
  /** The node runs in exclusive ENI mode: the controller leaves its pods alone. */
  exclusiveEni: boolean;
}

/** What the watcher remembers of a core Node: readiness, labels and provider id. */
export interface CoreNodeView {
  nodeName: string;
  ready: string;
  labels: string;
  providerId: string;
}

/** The minimal shape of a Node CR the watcher reads (metadata, spec, and the IP entries of its status). */
export interface NodeCrObject {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    namespace?: string;
    resourceVersion?: string;
    deletionTimestamp?: unknown;
    labels?: Record<string, string>;
  };
  spec?: unknown;
  status?: {
    networkInterfaces?: Record<
      string,
      { ipv4?: Record<string, NodeCrIpEntry>; ipv6?: Record<string, NodeCrIpEntry> } | undefined
    >;
  };
}

interface NodeCrIpEntry {
  status?: string;
  podID?: string;
}

function epochMs(time: Date | string | undefined): number | undefined {
  if (time === undefined) return undefined;
  const ms = new Date(time).getTime();
  return Number.isFinite(ms) ? ms : undefined;
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
  const view: PodView = {
    nodeName: pod.spec?.nodeName ?? '',
    phase: pod.status?.phase ?? '',
    ips: ips.sort().join(','),
  };
  const phase = view.phase;
  const mayWait =
    view.nodeName !== '' &&
    ips.length === 0 &&
    pod.spec?.hostNetwork !== true &&
    phase !== 'Succeeded' &&
    phase !== 'Failed' &&
    pod.metadata?.deletionTimestamp == null;
  if (mayWait) {
    const scheduled = pod.status?.conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'True');
    const since = epochMs(scheduled?.lastTransitionTime) ?? epochMs(pod.metadata?.creationTimestamp);
    if (since !== undefined) view.ipWaitSinceMs = since;
  }
  return view;
}

/** The label Terway puts on a node (and its CR) in exclusive ENI mode. */
const EXCLUSIVE_ENI_LABEL = 'k8s.aliyun.com/exclusive-mode-eni-type';

export function nodeCrView(node: NodeCrObject): NodeCrView {
  const bound = new Set<string>();
  const ipam: NodeCrIpam = {
    boundPods: bound,
    ips: { ipv4: { idle: 0, used: 0 }, ipv6: { idle: 0, used: 0 } },
    exclusiveEni: (node.metadata?.labels?.[EXCLUSIVE_ENI_LABEL] ?? '').toLowerCase() === 'enionly',
  };
  for (const eni of Object.values(node.status?.networkInterfaces ?? {})) {
    for (const family of ['ipv4', 'ipv6'] as const) {
      for (const entry of Object.values(eni?.[family] ?? {})) {
        if (entry.podID !== undefined && entry.podID !== '') {
          bound.add(entry.podID);
          ipam.ips[family].used += 1;
        } else if (entry.status === 'Valid') {
          ipam.ips[family].idle += 1;
        }
      }
    }
  }
  return {
    nodeName: node.metadata?.name ?? '',
    spec: stableJson(node.spec ?? {}),
    deleting: node.metadata?.deletionTimestamp != null,
    ipam,
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
