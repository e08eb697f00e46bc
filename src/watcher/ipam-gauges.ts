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
  const crs = new Map<string, NodeCrView>();
  const poolIps = { ipv4: { idle: 0, used: 0 }, ipv6: { idle: 0, used: 0 } };
  for (const [, view] of input.nodeCrs) {
    for (const family of ['ipv4', 'ipv6'] as const) {
      poolIps[family].idle += view.ipam.ips[family].idle;
      poolIps[family].used += view.ipam.ips[family].used;
    }
    if (view.deleting || view.ipam.exclusiveEni) continue;
    crs.set(view.nodeName, view);
  }
  const byNode = new Map<string, NodeWaiting>();
  let waitingPods = 0;
  let oldestWaitSeconds = 0;
  for (const [key, pod] of input.pods) {
    if (pod.ipWaitSinceMs === undefined) continue;
    const cr = crs.get(pod.nodeName);
    if (cr === undefined || cr.ipam.boundPods.has(key)) continue;
    const waitSeconds = Math.max(0, (input.nowMs - pod.ipWaitSinceMs) / 1000);
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
