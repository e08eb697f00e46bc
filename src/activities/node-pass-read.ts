import type { VSwitchInfo } from '../ipam/index.js';
import type { VSwitchCache } from './ecs/vswitch-cache.js';
import type { NodeViewReply } from './kube/node-view.js';

/** What `readNodeView` is asked (the kube read's input), plus the vSwitches the pass will look up. */
export type NodeViewInput = {
  nodeName: string;
  base?: string;
  after?: Record<string, string>;
  page?: { digest: string; after: string };
  /** The node's vSwitches as its last pass looked them up: answered from the worker's cache when all are fresh. */
  vSwitchIds?: string[];
};

/** The kube read's reply, with the cached vSwitches when every one asked for was fresh in the worker's cache. */
export type NodeViewWithVSwitches = NodeViewReply & { vSwitches?: Record<string, VSwitchInfo> };

/**
 * The pass's read with the vSwitch lookup that always follows it, when that lookup needs no cloud call: a pass then
 * records one marker instead of two and the worker runs one local activity instead of two. The cache is only read
 * (never fetched from here): a vSwitch that is missing or stale is left to `describeVSwitches`, the ECS read with its
 * own retry policy, exactly as before.
 */
export function readNodeViewWithVSwitches(
  readNodeView: (input: Omit<NodeViewInput, 'vSwitchIds'>) => Promise<NodeViewReply>,
  vSwitches: Pick<VSwitchCache, 'peek'>,
): (input: NodeViewInput) => Promise<NodeViewWithVSwitches> {
  return async function readNodeViewAndCachedVSwitches(input) {
    const { vSwitchIds, ...read } = input;
    const reply: NodeViewWithVSwitches = await readNodeView(read);
    if (vSwitchIds === undefined || vSwitchIds.length === 0 || input.page !== undefined) return reply;
    const found = vSwitches.peek(vSwitchIds);
    if (found !== undefined) reply.vSwitches = found;
    return reply;
  };
}

/** The worker's activities, ECS and Kubernetes, with the node's read bringing the cached vSwitches. */
export function withCachedVSwitches<
  E extends object,
  K extends { readNodeView: (input: NodeViewInput) => Promise<NodeViewReply> },
>(
  ecs: E,
  kube: K,
  vSwitches: Pick<VSwitchCache, 'peek'>,
): E & Omit<K, 'readNodeView'> & { readNodeView: (input: NodeViewInput) => Promise<NodeViewWithVSwitches> } {
  return {
    ...ecs,
    ...kube,
    readNodeView: readNodeViewWithVSwitches((input) => kube.readNodeView(input), vSwitches),
  };
}
