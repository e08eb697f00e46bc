import { enabledFamilies, newlyReadyPods, podIpReadySeconds } from '../../ipam/index.js';
import type { ReadyPod } from '../../ipam/index.js';
import { creationOf } from '../node-read-cache.js';
import type { PodCreation } from '../node-read-cache.js';
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
 * never the write. A pod that already runs with an IP when it is bound (take-over after a CR was rebuilt or a
 * migration) was not waiting: it is not observed, or its age would page as latency.
 */
export function createPodIpReadyReporter(ctx: KubeContext) {
  const { deps, core, call, logFor } = ctx;

  async function liveCreations(nodeName: string): Promise<Map<string, PodCreation & { uid?: string }>> {
    const pods = await core.listPodForAllNamespaces(
      { fieldSelector: `spec.nodeName=${nodeName}`, resourceVersion: '0' },
      call(),
    );
    const creations = new Map<string, PodCreation & { uid?: string }>();
    for (const pod of pods.items) {
      const { createdMs } = creationOf(pod);
      if (createdMs === undefined) continue;
      creations.set(`${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`, {
        createdMs,
        hasIp: (pod.status?.podIP ?? '') !== '',
        ...(pod.metadata?.uid === undefined ? {} : { uid: pod.metadata.uid }),
      });
    }
    return creations;
  }

  async function creations(nodeName: string, pods: readonly ReadyPod[]): Promise<Map<string, PodCreation>> {
    const found = new Map<string, PodCreation>();
    const missing: ReadyPod[] = [];
    for (const pod of pods) {
      const creation = deps.readCache?.podCreation(nodeName, pod.podId, pod.podUid);
      if (creation === undefined) missing.push(pod);
      else found.set(pod.podId, creation);
    }
    if (missing.length === 0) return found;
    try {
      const live = await liveCreations(nodeName);
      for (const pod of missing) {
        const entry = live.get(pod.podId);
        if (entry === undefined) continue;
        if (pod.podUid === undefined || entry.uid === undefined || entry.uid === pod.podUid) {
          found.set(pod.podId, { createdMs: entry.createdMs, hasIp: entry.hasIp });
        }
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
    const known = await creations(input.nodeName, pods);
    for (const pod of pods) {
      const creation = known.get(pod.podId);
      // A pod already running with an IP was taken over (a CR rebuilt, a migration), not served: its age is no wait.
      if (creation === undefined || creation.hasIp) continue;
      observe({
        nodeName: input.nodeName,
        podId: pod.podId,
        seconds: podIpReadySeconds({ createdMs: creation.createdMs, readyMs: input.writtenAtMs }),
      });
    }
  };
}
