import type { NodeCrView, PodView } from './relevant-changes.js';

/** One node's waiting pods, as the bounded per-node series carry it. */
export interface NodeWaiting {
  node: string;
  waitingPods: number;
  oldestWaitSeconds: number;
}

/** The user-impact facts of the cluster, from the watcher's informer caches. */
export interface IpamGauges {
  /** Pods on eniflow's nodes without an IP in their node's CR. */
  waitingPods: number;
  /** The longest such wait, in seconds (0 when none waits). */
  oldestWaitSeconds: number;
  /** The `topNodes` nodes with the most waiting pods (ties: the longest wait, then the name), at most that many. */
  topNodes: NodeWaiting[];
  /** Nodes with at least one waiting pod. */
  nodesWithWaitingPods: number;
  /** Pool addresses of every Node CR by family and state. */
  poolIps: { family: 'ipv4' | 'ipv6'; state: 'idle' | 'used'; count: number }[];
  /** Node CRs, i.e. nodes eniflow manages. */
  nodeCrs: number;
}

/** The CRs of the nodes whose pods get IPs from eniflow: not in exclusive ENI mode, not being deleted. */
function managedCrs(nodeCrs: Iterable<[string, NodeCrView]>): Map<string, NodeCrView> {
  const crs = new Map<string, NodeCrView>();
  for (const [, view] of nodeCrs) if (!view.deleting && !view.ipam.exclusiveEni) crs.set(view.nodeName, view);
  return crs;
}

/** The pods waiting for an IP (see `ipamGauges`). */
function* waitingPodsOf(pods: Iterable<[string, PodView]>, crs: ReadonlyMap<string, NodeCrView>): Generator<PodView> {
  for (const [key, pod] of pods) {
    if (pod.ipWaitSinceMs === undefined) continue;
    const cr = crs.get(pod.nodeName);
    if (cr !== undefined && !cr.ipam.boundPods.has(key)) yield pod;
  }
}

/**
 * The nodes with a pod waiting for an IP, in name order (pure). A new leader signals them first, as changes: a pod
 * created while no replica led is no change any informer reports, and its node's sweep turn may be many seconds away.
 */
export function nodesWithWaitingPods(input: {
  pods: Iterable<[string, PodView]>;
  nodeCrs: Iterable<[string, NodeCrView]>;
}): string[] {
  const nodes = new Set<string>();
  for (const pod of waitingPodsOf(input.pods, managedCrs(input.nodeCrs))) nodes.add(pod.nodeName);
  return [...nodes].sort();
}

/**
 * Computes {@link IpamGauges} (pure). A pod waits for an IP when it is bound to a node that has a Node CR (not in
 * exclusive ENI mode, not being deleted), may wait at all (see `PodView.ipWaitSinceMs`: not host-network, not
 * finished, no IP yet), and its `namespace/name` is no `podID` of that CR; it has waited since it was scheduled.
 */
export function ipamGauges(input: {
  pods: Iterable<[string, PodView]>;
  nodeCrs: Iterable<[string, NodeCrView]>;
  nowMs: number;
  topNodes: number;
}): IpamGauges {
  const poolIps = { ipv4: { idle: 0, used: 0 }, ipv6: { idle: 0, used: 0 } };
  const nodeCrs = [...input.nodeCrs];
  for (const [, view] of nodeCrs) {
    for (const family of ['ipv4', 'ipv6'] as const) {
      poolIps[family].idle += view.ipam.ips[family].idle;
      poolIps[family].used += view.ipam.ips[family].used;
    }
  }
  const crs = managedCrs(nodeCrs);
  const byNode = new Map<string, NodeWaiting>();
  let waitingPods = 0;
  let oldestWaitSeconds = 0;
  for (const pod of waitingPodsOf(input.pods, crs)) {
    const waitSeconds = Math.max(0, (input.nowMs - (pod.ipWaitSinceMs ?? input.nowMs)) / 1000);
    waitingPods += 1;
    oldestWaitSeconds = Math.max(oldestWaitSeconds, waitSeconds);
    const node = byNode.get(pod.nodeName) ?? { node: pod.nodeName, waitingPods: 0, oldestWaitSeconds: 0 };
    node.waitingPods += 1;
    node.oldestWaitSeconds = Math.max(node.oldestWaitSeconds, waitSeconds);
    byNode.set(pod.nodeName, node);
  }
  const topNodes = [...byNode.values()]
    .sort(
      (a, b) =>
        b.waitingPods - a.waitingPods ||
        b.oldestWaitSeconds - a.oldestWaitSeconds ||
        (a.node < b.node ? -1 : a.node > b.node ? 1 : 0),
    )
    .slice(0, Math.max(0, input.topNodes));
  return {
    waitingPods,
    oldestWaitSeconds,
    topNodes,
    nodesWithWaitingPods: byNode.size,
    poolIps: (['ipv4', 'ipv6'] as const).flatMap((family) =>
      (['idle', 'used'] as const).map((state) => ({ family, state, count: poolIps[family][state] })),
    ),
    nodeCrs: crs.size,
  };
}
