import { enabledFamilies, newlyReadyPods, podIpReadySeconds } from '../../ipam/index.js';
import type { ReadyPod } from '../../ipam/index.js';
import { creationOf } from '../node-read-cache.js';
import type { KubeContext } from './kube-context.js';
import { asRecord } from './node-snapshot.js';
import type { RawObject } from './node-snapshot.js';

/**
 * Observes pod creation → IP in the Node CR for the pods a successful status write made ready.
 *
 * Measured here, on the write, because this is the one place that sees each binding land exactly once: the write
 * replaces one exact version of the CR (optimistic concurrency), so comparing what it wrote with what it replaced
 * names the pods it bound, and only those. A retried activity (its first attempt wrote, the answer was lost) finds
 * them already bound; a replayed workflow runs no activity; a restarted worker reads the bindings from the CR. The
 * watcher could see both objects too, but only from its watch events, later, and would count again after every
 * relist or leader change.
 *
 * Creation times come from the worker's read cache; pods it does not hold (no cache, or not synced yet) are looked
 * up with one list of the node's pods from the apiserver's watch cache. A failed look-up loses the observation,
 * never the write.
 */
export function createPodIpReadyReporter(ctx: KubeContext) {
  const { deps, core, call, logFor } = ctx;

  async function liveCreationTimes(nodeName: string): Promise<Map<string, { uid?: string; createdMs?: number }>> {
    const pods = await core.listPodForAllNamespaces(
      { fieldSelector: `spec.nodeName=${nodeName}`, resourceVersion: '0' },
      call(),
    );
    const times = new Map<string, { uid?: string; createdMs?: number }>();
    for (const pod of pods.items) {
      const podId = `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;
      times.set(podId, { ...(pod.metadata?.uid === undefined ? {} : { uid: pod.metadata.uid }), ...creationOf(pod) });
    }
    return times;
  }

  async function creationTimes(nodeName: string, pods: readonly ReadyPod[]): Promise<Map<string, number>> {
    const found = new Map<string, number>();
    const missing: ReadyPod[] = [];
    for (const pod of pods) {
      const createdMs = deps.readCache?.podCreatedMs(nodeName, pod.podId, pod.podUid);
      if (createdMs === undefined) missing.push(pod);
      else found.set(pod.podId, createdMs);
    }
    if (missing.length === 0) return found;
    try {
      const live = await liveCreationTimes(nodeName);
      for (const pod of missing) {
        const entry = live.get(pod.podId);
        const samePod = pod.podUid === undefined || entry?.uid === undefined || entry.uid === pod.podUid;
        if (entry?.createdMs !== undefined && samePod) found.set(pod.podId, entry.createdMs);
      }
    } catch (error) {
      logFor(nodeName).debug({ err: error }, 'Pod creation times unavailable: pod→IP latency not observed');
    }
    return found;
  }

  return async function reportReadyPods(input: {
    nodeName: string;
    /** The CR the write replaced. */
    replaced: RawObject;
    /** The `status.networkInterfaces` the write stored. */
    written: unknown;
    writtenAtMs: number;
  }): Promise<void> {
    const observe = deps.podIpReady;
    if (observe === undefined) return;
    const eni = asRecord(asRecord(input.replaced['spec'])['eni']);
    const pods = newlyReadyPods({
      families: enabledFamilies({ enableIPv4: eni['enableIPv4'] === true, enableIPv6: eni['enableIPv6'] === true }),
      before: asRecord(input.replaced.status)['networkInterfaces'],
      after: input.written,
    });
    if (pods.length === 0) return;
    const created = await creationTimes(input.nodeName, pods);
    for (const pod of pods) {
      const createdMs = created.get(pod.podId);
      if (createdMs === undefined) continue;
      observe({
        nodeName: input.nodeName,
        podId: pod.podId,
        seconds: podIpReadySeconds({ createdMs, readyMs: input.writtenAtMs }),
      });
    }
  };
}
