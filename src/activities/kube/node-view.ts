import { createHash } from 'node:crypto';

import { canonicalJson } from '../../ipam/index.js';
import type { JsonChange, NodeRuntimeView, ObjectMeta, PodSnapshot, UsableNodeCr } from '../../ipam/index.js';
import type { NodeSnapshot } from './node-snapshot.js';

/**
 * {@link NodeSnapshot} as the read activity sends it: pods keyed by `namespace/name`, so that a change between two
 * reads is a short {@link JsonChange} list (see {@link NodeViewReply}).
 */
export interface NodeView {
  nodeName: string;
  cr?: NonNullable<NodeSnapshot['cr']>;
  pods: Record<string, PodSnapshot>;
  nodeRuntime?: NodeRuntimeView;
  coreNode?: NonNullable<NodeSnapshot['coreNode']>;
}

/**
 * What `readNodeView` returns: the view in full, or the changes since the view whose digest the workflow sent
 * (empty when nothing changed). `digest` names the resulting view, for the next read. A view in full comes in pages
 * of at most {@link VIEW_PODS_PER_PAGE} pods: `more` names the last pod sent when pods remain (the workflow asks for
 * the pods after it), `after` the pod a later page starts after (absent on a first page, which also carries the CR).
 */
export type NodeViewReply =
  | { digest: string; full: NodeView; after?: string; more?: string }
  | { digest: string; base: string; changes: JsonChange[] };

/**
 * Pods per page of a view sent in full. Each reply is a local activity's marker in the workflow's history, and
 * Temporal refuses a payload past 2 MB: a node with 10,000 pods (about 200 bytes each) is read in 5 pages of about
 * 400 KB, not one of 2 MB, and a node with 20,000 still can be.
 */
export const VIEW_PODS_PER_PAGE = 2_000;

/** One page of `view` in full: its pods after `after` (in key order), at most `perPage`; the first page holds the rest. */
export function fullViewPage(input: {
  view: NodeView;
  digest: string;
  after?: string | undefined;
  perPage?: number;
}): Extract<NodeViewReply, { full: NodeView }> {
  const perPage = Math.max(1, input.perPage ?? VIEW_PODS_PER_PAGE);
  const keys = Object.keys(input.view.pods).sort();
  const start = input.after === undefined ? 0 : keys.findIndex((key) => key > (input.after ?? ''));
  const page = start < 0 ? [] : keys.slice(start, start + perPage);
  const pods: Record<string, PodSnapshot> = {};
  for (const key of page) {
    const pod = input.view.pods[key];
    if (pod !== undefined) pods[key] = pod;
  }
  const more = start >= 0 && start + perPage < keys.length ? page.at(-1) : undefined;
  const full: NodeView = input.after === undefined ? { ...input.view, pods } : { nodeName: input.view.nodeName, pods };
  return {
    digest: input.digest,
    full,
    ...(input.after === undefined ? {} : { after: input.after }),
    ...(more === undefined ? {} : { more }),
  };
}

/** The compact view of a snapshot (pods keyed by `namespace/name`, in key order). */
export function nodeViewOf(snapshot: NodeSnapshot): NodeView {
  const pods: Record<string, PodSnapshot> = {};
  const keyed = snapshot.pods.map((pod) => [`${pod.metadata.namespace}/${pod.metadata.name}`, pod] as const);
  for (const [key, pod] of keyed.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) pods[key] = pod;
  const view: NodeView = { nodeName: snapshot.nodeName, pods };
  if (snapshot.cr !== undefined) {
    // Resource versions move with every write and the workflow never reads them: left out, a write costs the
    // next read only the entries it changed.
    const { validation } = snapshot.cr;
    view.cr = { ...snapshot.cr, resourceVersion: '' };
    if (validation.ok && validation.node.metadata.resourceVersion !== undefined) {
      const metadata = { ...validation.node.metadata };
      delete metadata.resourceVersion;
      view.cr.validation = withMetadata(validation, metadata);
    }
  }
  if (snapshot.nodeRuntime !== undefined) view.nodeRuntime = snapshot.nodeRuntime;
  if (snapshot.coreNode !== undefined) view.coreNode = snapshot.coreNode;
  return view;
}

/** The validation with its node's metadata replaced, its kind (ready, blocked, waiting) kept. */
function withMetadata<V extends UsableNodeCr>(validation: V, metadata: ObjectMeta): V {
  return { ...validation, node: { ...validation.node, metadata } };
}

/** Names a view by its content (canonical JSON), so the workflow and any worker agree on what a base is. */
export function nodeViewDigest(view: NodeView): string {
  return createHash('sha256').update(canonicalJson(view)).digest('hex').slice(0, 24);
}

/** The last views each node was sent, by digest: the bases the next read may answer with a delta against. */
export class NodeViewBases {
  private readonly byNode = new Map<string, Map<string, NodeView>>();
  /**
   * Two: the view the workflow holds and the one just sent, so a read retried after its answer was lost still finds
   * its base. Pods are shared with the informers; what a view adds is mostly the validated CR.
   */
  private readonly perNode = 2;

  get(nodeName: string, digest: string): NodeView | undefined {
    return this.byNode.get(nodeName)?.get(digest);
  }

  remember(nodeName: string, digest: string, view: NodeView): void {
    // Map order is recency: the node moves to the end, its oldest base goes first.
    const views = this.byNode.get(nodeName) ?? new Map<string, NodeView>();
    this.byNode.delete(nodeName);
    views.delete(digest);
    views.set(digest, view);
    while (views.size > this.perNode) views.delete(views.keys().next().value ?? '');
    this.byNode.set(nodeName, views);
    // Nodes come and go: the least recently read ones are dropped beyond a bound.
    while (this.byNode.size > 20_000) this.byNode.delete(this.byNode.keys().next().value ?? '');
  }
}
