import { ApplicationFailure } from '@temporalio/common';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';

import {
  NODE_CR_FINALIZER,
  compareResourceVersions,
  POOL_STATUS_FIELDS,
  applyJsonDelta,
  deltaFitsBase,
  mergeNetworkInterfacesOverRaw,
} from '../../ipam/index.js';
import type { JsonChange, NetworkInterfaces, NodeStatus, PoolStatusFields } from '../../ipam/index.js';
import type { KubeContext } from './kube-context.js';
import { kubeFailure, statusOf } from './kube-failures.js';
import type { RawObject } from './node-snapshot.js';
import { createPodIpReadyReporter } from './pod-ip-ready.js';

/** The writes to the Node CR: its status (in full or as changes) and, on deletion, this controller's finalizer. */
export function createStatusWrites(ctx: KubeContext) {
  const { deps, custom, call, logFor, crRef, getCr, replaceCrStatus, validateCr } = ctx;
  const reportReadyPods = createPodIpReadyReporter(ctx);

  /** Per node, the resourceVersion of this worker's last status write: a cached CR older than that is no base. */
  const lastWritten = new Map<string, string>();

  /**
   * The Node CR as the worker's read cache holds it, when it is at least as new as this worker's last write of it.
   * A write usually finds its base there, and saves the GET: a base that is behind after all (another writer, a
   * cache that has not seen the newest version) costs a 409 and a live read, the path every conflict takes.
   */
  function cachedBase(nodeName: string): RawObject | undefined {
    const raw = deps.readCache?.cr(nodeName);
    const version = raw?.metadata?.['resourceVersion'];
    if (raw === undefined || typeof version !== 'string') return undefined;
    const written = lastWritten.get(nodeName);
    if (written === undefined) return raw;
    const order = compareResourceVersions(version, written);
    return order === 0 || order === 1 ? raw : undefined;
  }

  /** Writes the status `build` makes of the CR as it is now, retrying on conflicts (see `writeNodeStatus`). */
  async function replaceStatus(input: {
    nodeName: string;
    maxConflicts?: number;
    build: (raw: RawObject) => NodeStatus;
    /** Warm-up and idle reclaim fields: each set, or removed when absent; undefined leaves them as they are. */
    pool?: PoolStatusFields | undefined;
  }) {
    const log = logFor(input.nodeName);
    const maxConflicts = input.maxConflicts ?? 5;
    let useCache = true;
    for (let attempt = 0; ;) {
      const cached = useCache ? cachedBase(input.nodeName) : undefined;
      useCache = false;
      let raw = cached ?? (await getCr(input.nodeName));
      if (raw === undefined) return { outcome: 'gone' as const, conflicts: attempt };
      let next: NodeStatus;
      try {
        next = input.build(raw);
      } catch (error) {
        if (cached === undefined) throw error;
        // The cached CR is behind what the changes were made against: the CR as it is now decides.
        raw = await getCr(input.nodeName);
        if (raw === undefined) return { outcome: 'gone' as const, conflicts: attempt };
        next = input.build(raw);
      }
      const status: Record<string, unknown> = { ...(raw.status ?? {}) };
      for (const key of ['nextSyncOpenAPITime', 'lastSyncOpenAPITime'] as const) {
        const value = next[key];
        if (value === undefined) delete status[key];
        else status[key] = value;
      }
      const pool = input.pool;
      if (pool !== undefined) {
        for (const key of POOL_STATUS_FIELDS) {
          if (pool[key] === undefined) delete status[key];
          else status[key] = pool[key];
        }
      }
      // Laid over the CR as it is now, so fields of ENIs and IPs the model does not know survive the write.
      status['networkInterfaces'] = mergeNetworkInterfacesOverRaw({
        raw: status['networkInterfaces'],
        enis: next.networkInterfaces ?? {},
      });
      await deps.beforeStatusReplace?.(attempt);
      let written: RawObject;
      try {
        written = await replaceCrStatus(input.nodeName, { ...raw, status });
      } catch (error) {
        // A cached base that was behind is no conflict of writers: the CR is read live and the write tried again.
        if (statusOf(error) === 409 && cached !== undefined) continue;
        if (statusOf(error) === 409 && attempt < maxConflicts) {
          log.info({ attempt }, 'Node CR changed meanwhile; re-reading');
          attempt += 1;
          continue;
        }
        if (statusOf(error) === 404) return { outcome: 'gone' as const, conflicts: attempt };
        throw kubeFailure(error, `write status of Node CR ${input.nodeName}`);
      }
      const resourceVersion = written.metadata?.['resourceVersion'];
      if (typeof resourceVersion === 'string') lastWritten.set(input.nodeName, resourceVersion);
      // Nodes come and go: the oldest entries go beyond a bound (a missing one only means "trust the cache").
      if (lastWritten.size > 20_000) lastWritten.delete(lastWritten.keys().next().value ?? '');
      log.info({ conflicts: attempt }, 'Wrote Node CR status');
      // `raw` is the exact version the write replaced (its resourceVersion is the precondition).
      await reportReadyPods({
        nodeName: input.nodeName,
        replaced: raw,
        written: status['networkInterfaces'],
        writtenAtMs: Date.now(),
      });
      return {
        outcome: 'written' as const,
        conflicts: attempt,
        resourceVersion: typeof resourceVersion === 'string' ? resourceVersion : '',
      };
    }
  }

  return {
    /**
     * Writes the fields of `status` the controller owns (every other status field, and every field of an ENI or IP
     * entry the model does not know, is kept as it is) through the status subresource with optimistic concurrency: a 409 re-reads the CR and re-applies, so neither the
     * daemon's concurrent writes nor ours are lost. Returns the new resourceVersion, or `gone` when the CR was
     * deleted meanwhile.
     */
    async writeNodeStatus(input: { nodeName: string; status: NodeStatus; maxConflicts?: number }) {
      return replaceStatus({
        nodeName: input.nodeName,
        ...(input.maxConflicts === undefined ? {} : { maxConflicts: input.maxConflicts }),
        build: () => input.status,
      });
    },

    /**
     * Like `writeNodeStatus`, but carries only what the pass changed: `eniChanges` (from `jsonDelta` of the
     * ENIs as the pass read them and as it leaves them, `STATUS_CHANGE_DEPTH` deep) is applied to the ENIs of
     * the CR as it is now, so the history holds the few entries that changed, not the node's whole status. A
     * change to an entry of an ENI the CR no longer has fails for good (`KubeStaleBase`): the workflow keeps its
     * ENIs and writes them in full on its next pass.
     */
    async writeNodeStatusChanges(input: {
      nodeName: string;
      eniChanges: JsonChange[];
      lastSyncOpenAPITime?: string;
      nextSyncOpenAPITime?: string;
      pool?: PoolStatusFields;
      maxConflicts?: number;
    }) {
      return replaceStatus({
        nodeName: input.nodeName,
        ...(input.maxConflicts === undefined ? {} : { maxConflicts: input.maxConflicts }),
        pool: input.pool,
        build: (raw) => {
          const validation = validateCr(raw);
          const current: NetworkInterfaces = validation.ok ? (validation.node.status?.networkInterfaces ?? {}) : {};
          if (!deltaFitsBase(current, input.eniChanges)) {
            throw ApplicationFailure.nonRetryable(
              `status of Node CR ${input.nodeName} changed under the write: an ENI it updates is gone`,
              'KubeStaleBase',
            );
          }
          const status: NodeStatus = { networkInterfaces: applyJsonDelta(current, input.eniChanges) };
          if (input.lastSyncOpenAPITime !== undefined) status.lastSyncOpenAPITime = input.lastSyncOpenAPITime;
          if (input.nextSyncOpenAPITime !== undefined) status.nextSyncOpenAPITime = input.nextSyncOpenAPITime;
          return status;
        },
      });
    },

    /** Removes this controller's finalizer from a Node CR being deleted (precondition on resourceVersion). */
    async removeNodeFinalizer(input: { nodeName: string }): Promise<{ removed: boolean }> {
      for (let attempt = 0; attempt < 5; attempt += 1) {
        const raw = await getCr(input.nodeName);
        const metadata = raw?.metadata ?? {};
        const finalizers = Array.isArray(metadata['finalizers']) ? (metadata['finalizers'] as string[]) : [];
        if (raw === undefined || !finalizers.includes(NODE_CR_FINALIZER)) return { removed: false };
        try {
          await custom.patchClusterCustomObject(
            {
              ...crRef(input.nodeName),
              body: {
                metadata: {
                  resourceVersion: metadata['resourceVersion'],
                  finalizers: finalizers.filter((finalizer) => finalizer !== NODE_CR_FINALIZER),
                },
              },
            },
            call(setHeaderOptions('Content-Type', PatchStrategy.MergePatch)),
          );
          logFor(input.nodeName).info('Removed Node CR finalizer');
          return { removed: true };
        } catch (error) {
          if (statusOf(error) === 409) continue;
          if (statusOf(error) === 404) return { removed: false };
          throw kubeFailure(error, `remove finalizer of Node CR ${input.nodeName}`);
        }
      }
      throw ApplicationFailure.retryable(`finalizer of ${input.nodeName} kept conflicting`, 'KubeConflict');
    },
  };
}
