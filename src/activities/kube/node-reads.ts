import { cancellationSignal } from '@temporalio/activity';

import { NODE_CR_GROUP, NODE_CR_PLURAL, NODE_CR_VERSION, jsonDelta } from '../../ipam/index.js';
import type { KubeContext } from './kube-context.js';
import { kubeFailure, statusOf } from './kube-failures.js';
import {
  asRecord,
  boundPodUids,
  coreNodeSnapshot,
  crSnapshotOf,
  nodeRuntimeViewOf,
  podSnapshotOf,
} from './node-snapshot.js';
import type { NodeSnapshot, RawObject } from './node-snapshot.js';
import { fullViewPage, nodeViewDigest, nodeViewOf, NodeViewBases } from './node-view.js';
import type { NodeViewReply } from './node-view.js';

/** Terway's per-node runtime CR (cluster-scoped, named after the node), written by its daemon since v1.11.3. */
const NODE_RUNTIME_PLURAL = 'noderuntimes';

/** The reads of a pass: the node's world (live, or from the worker's read cache), and the ENIs every CR lists. */
export function createNodeReads(ctx: KubeContext) {
  const { deps, core, custom, call, logFor, getCr, validateCr } = ctx;

  /**
   * Reads the node live: the pods from the apiserver's watch cache (`resourceVersion: "0"`), or from etcd when
   * `consistent` (the worker's own cache was found behind what the watcher saw, so the watch cache may be too).
   */
  async function readLive(input: { nodeName: string }, options: { consistent?: boolean } = {}): Promise<NodeSnapshot> {
    const snapshot: NodeSnapshot = { nodeName: input.nodeName, pods: [] };
    const raw = await getCr(input.nodeName);
    if (raw !== undefined) snapshot.cr = crSnapshotOf(raw, validateCr);
    try {
      const pods = await core.listPodForAllNamespaces(
        {
          fieldSelector: `spec.nodeName=${input.nodeName}`,
          ...(options.consistent === true ? {} : { resourceVersion: '0' }),
        },
        call(),
      );
      snapshot.pods = pods.items.map(podSnapshotOf);
    } catch (error) {
      throw kubeFailure(error, `list pods of ${input.nodeName}`);
    }
    await readRuntimeInto(snapshot, raw);
    try {
      snapshot.coreNode = coreNodeSnapshot(await core.readNode({ name: input.nodeName }, call()));
    } catch (error) {
      if (statusOf(error) !== 404) throw kubeFailure(error, `read Node ${input.nodeName}`);
    }
    return snapshot;
  }

  /** Terway's NodeRuntime, read live (written by the daemon, often absent: one GET, no informer). */
  async function readRuntimeInto(snapshot: NodeSnapshot, raw: RawObject | undefined): Promise<void> {
    try {
      const runtime = (await custom.getClusterCustomObject(
        {
          group: NODE_CR_GROUP,
          version: NODE_CR_VERSION,
          plural: NODE_RUNTIME_PLURAL,
          name: snapshot.nodeName,
        },
        call(),
      )) as RawObject;
      snapshot.nodeRuntime = nodeRuntimeViewOf(runtime, boundPodUids(raw));
    } catch (error) {
      if (statusOf(error) !== 404) throw kubeFailure(error, `get NodeRuntime ${snapshot.nodeName}`);
    }
  }

  /**
   * The node from the worker's read cache once it has seen at least `after` (what the watcher saw, what the
   * workflow last wrote), waiting up to `cacheWaitMs`; live otherwise (no cache, not synced, or still behind).
   */
  async function readNode(input: { nodeName: string; after?: Record<string, string> }): Promise<NodeSnapshot> {
    const cache = deps.readCache;
    if (cache?.hasSynced() !== true) return readLive(input);
    const caughtUp = await cache.waitFor(input.after ?? {}, deps.cacheWaitMs ?? 2_000, cancellationSignal());
    const cached = caughtUp ? cache.read(input.nodeName) : undefined;
    if (cached === undefined) {
      logFor(input.nodeName).info({ after: input.after }, 'Read cache behind what the workflow saw; reading live');
      return readLive(input, { consistent: true });
    }
    const snapshot: NodeSnapshot = { nodeName: input.nodeName, pods: cached.pods };
    // A CR the cache does not hold yet is not a CR that is gone: the workflow releases the node's ENIs and ends on
    // the CR's absence, so absence is confirmed live (one GET, for a new node or a deleted one, never per pass).
    // At 200 new nodes the cache was seconds behind the watcher, and two nodes' workflows ended before their CRs came.
    const cr = cached.cr ?? (await getCr(input.nodeName));
    if (cr !== undefined) snapshot.cr = crSnapshotOf(cr, validateCr);
    if (cached.coreNode !== undefined) snapshot.coreNode = cached.coreNode;
    await readRuntimeInto(snapshot, cr);
    return snapshot;
  }

  const bases = new NodeViewBases();

  return {
    /** Reads the Node CR (validated), the pods bound to the node and the core Node, in one activity. */
    async readNodeSnapshot(input: { nodeName: string }): Promise<NodeSnapshot> {
      return readLive(input);
    },

    /**
     * The node's {@link NodeView}: only the changes since `base` (the digest of the view the workflow holds) when
     * this worker still has that view, else in full. An unchanged node costs a digest and an empty list.
     */
    async readNodeView(input: {
      nodeName: string;
      base?: string;
      after?: Record<string, string>;
      /** The next page of a view sent in full (see `fullViewPage`); a worker without that view reads afresh. */
      page?: { digest: string; after: string };
    }): Promise<NodeViewReply> {
      const paged = input.page === undefined ? undefined : bases.get(input.nodeName, input.page.digest);
      if (input.page !== undefined && paged !== undefined) {
        return fullViewPage({ view: paged, digest: input.page.digest, after: input.page.after });
      }
      const view = nodeViewOf(await readNode(input));
      const digest = nodeViewDigest(view);
      const base = input.base === undefined ? undefined : bases.get(input.nodeName, input.base);
      bases.remember(input.nodeName, digest, view);
      if (input.base === undefined || base === undefined) return fullViewPage({ view, digest });
      return { digest, base: input.base, changes: jsonDelta(base, view) };
    },

    /**
     * The ids of every ENI any Node CR lists (the janitor never touches those). The plan reads the watch cache;
     * `live` (the re-check right before a delete) reads from etcd, so a status write that just landed is seen.
     */
    async listKnownEniIds(input: { live?: boolean } = {}): Promise<string[]> {
      try {
        const list = (await custom.listClusterCustomObject(
          {
            group: NODE_CR_GROUP,
            version: NODE_CR_VERSION,
            plural: NODE_CR_PLURAL,
            ...(input.live === true ? {} : { resourceVersion: '0' }),
          },
          call(),
        )) as { items?: RawObject[] };
        const ids = new Set<string>();
        for (const cr of list.items ?? []) {
          for (const id of Object.keys(asRecord(cr.status?.['networkInterfaces']))) ids.add(id);
        }
        return [...ids].sort();
      } catch (error) {
        throw kubeFailure(error, 'list Node CRs');
      }
    },
  };
}
