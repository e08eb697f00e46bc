import type { VSwitchInfo } from '../ipam/index.js';
import type { VSwitchCache } from './ecs/vswitch-cache.js';
import type { NodeReadCache } from './node-read-cache.js';
import type { NodeViewReply } from './kube/node-view.js';

/** What `readNodeView` is asked (the kube read's input), plus the vSwitches the pass will look up. */
export interface NodeViewInput {
  nodeName: string;
  base?: string;
  after?: Record<string, string>;
  page?: { digest: string; after: string };
  /** The node's vSwitches as its last pass looked them up: answered from the worker's cache when all are fresh. */
  vSwitchIds?: string[];
}

/** The kube read's reply, with what the worker knew besides (see {@link readNodeViewForPass}). */
export type NodeViewForPass = NodeViewReply & {
  /** The vSwitches asked for, when every one was fresh in the worker's cache. */
  vSwitches?: Record<string, VSwitchInfo>;
  /**
   * The resourceVersion each of the worker's informers had seen before the read (so the read has seen at least as
   * much): a signal for changes no newer than these asks for nothing this read did not already see.
   */
  seen?: Record<string, string>;
};

/** What the pass's read may bring besides the node's view. */
export interface PassReadSources {
  vSwitches: Pick<VSwitchCache, 'peek'>;
  readCache?: Pick<NodeReadCache, 'versions'> | undefined;
}

/**
 * The pass's read, bringing two things the worker knows at no cost, each sparing the workflow work:
 * - the vSwitch lookup that always follows the read, when it needs no cloud call: a pass then records one marker
 *   instead of two and the worker runs one local activity instead of two. The cache is only read (never fetched
 *   from here): a vSwitch missing or stale is left to `describeVSwitches`, the ECS read with its own retry policy;
 * - the versions the read has seen at least, so a signal for changes the read already saw starts no pass.
 */
export function readNodeViewForPass(
  readNodeView: (input: Omit<NodeViewInput, 'vSwitchIds'>) => Promise<NodeViewReply>,
  sources: PassReadSources,
): (input: NodeViewInput) => Promise<NodeViewForPass> {
  return async function readNodeViewAndWhatTheWorkerKnows(input) {
    const { vSwitchIds, ...read } = input;
    // Before the read: the informers only move forward, so the read sees at least these.
    const seen = input.page === undefined ? sources.readCache?.versions() : undefined;
    const reply: NodeViewForPass = await readNodeView(read);
    if (input.page !== undefined) return reply;
    if (seen !== undefined && Object.keys(seen).length > 0) reply.seen = seen;
    if (vSwitchIds === undefined || vSwitchIds.length === 0) return reply;
    const found = sources.vSwitches.peek(vSwitchIds);
    if (found !== undefined) reply.vSwitches = found;
    return reply;
  };
}

/** The worker's activities, ECS and Kubernetes, with the node's read of {@link readNodeViewForPass}. */
export function withPassRead<
  E extends object,
  K extends { readNodeView: (input: NodeViewInput) => Promise<NodeViewReply> },
>(
  ecs: E,
  kube: K,
  sources: PassReadSources,
): E & Omit<K, 'readNodeView'> & { readNodeView: (input: NodeViewInput) => Promise<NodeViewForPass> } {
  return { ...ecs, ...kube, readNodeView: readNodeViewForPass((input) => kube.readNodeView(input), sources) };
}
