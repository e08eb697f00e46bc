import { ENI_KINDS, ENI_KIND_SHAPE } from './eni-plan.js';
import type { EniKind } from './eni-plan.js';
import type { IpFamily } from './node-model.js';

/** A pod a status write made ready: bound in every family the node serves. */
export interface ReadyPod {
  /** `<namespace>/<name>`, as in the IP entry's `podID`. */
  podId: string;
  /** The `podUID` the entries carry, when any does. */
  podUid?: string;
}

function recordOf(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function nonEmptyString(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * The pods bound in every one of `families` in a raw `status.networkInterfaces`, with the first non-empty `podUID`
 * their entries carry (ENIs and IPs in sorted order, so the answer does not depend on the JSON's key order).
 */
function readyPodsIn(families: readonly IpFamily[], networkInterfaces: unknown): Map<string, string | undefined> {
  const bound = new Map<string, { families: Set<IpFamily>; uid: string | undefined }>();
  const enis = recordOf(networkInterfaces);
  for (const eniId of Object.keys(enis).sort()) {
    const eni = recordOf(enis[eniId]);
    for (const family of families) {
      const entries = recordOf(eni[family]);
      for (const ip of Object.keys(entries).sort()) {
        const entry = recordOf(entries[ip]);
        const podId = nonEmptyString(entry['podID']);
        if (podId === undefined) continue;
        const pod = bound.get(podId) ?? { families: new Set<IpFamily>(), uid: undefined };
        pod.families.add(family);
        pod.uid ??= nonEmptyString(entry['podUID']);
        bound.set(podId, pod);
      }
    }
  }
  const ready = new Map<string, string | undefined>();
  for (const [podId, pod] of bound) if (pod.families.size === families.length) ready.set(podId, pod.uid);
  return ready;
}

/**
 * The pods one status write made ready: bound in every family of `families` in `after` (the status written) and not
 * already ready as the same pod in `before` (the status the write replaced). Same pod means same `podID` and, when
 * both sides name a `podUID`, the same one: a StatefulSet pod re-created under its name is a new pod, a `podUID`
 * filled in later for a pod already bound is not. Comparing the write against the exact version it replaced is
 * what makes each binding count once: a retried or replayed write finds the pod already bound. Inputs are raw JSON
 * (`status.networkInterfaces`), read defensively; sorted by `podId`. No family (a node serving none) makes none.
 */
export function newlyReadyPods(input: { families: readonly IpFamily[]; before: unknown; after: unknown }): ReadyPod[] {
  if (input.families.length === 0) return [];
  const before = readyPodsIn(input.families, input.before);
  const after = readyPodsIn(input.families, input.after);
  const ready: ReadyPod[] = [];
  for (const podId of [...after.keys()].sort()) {
    const uid = after.get(podId);
    const previous = before.has(podId) ? { uid: before.get(podId) } : undefined;
    const samePod = previous !== undefined && (previous.uid === undefined || uid === undefined || previous.uid === uid);
    if (samePod) continue;
    ready.push(uid === undefined ? { podId } : { podId, podUid: uid });
  }
  return ready;
}

/**
 * Seconds from a pod's creation to its IP in the CR. `metadata.creationTimestamp` has whole seconds, so the value
 * may be up to 1 s high; a clock behind the apiserver's would make it negative, which reads as 0.
 */
export function podIpReadySeconds(input: { createdMs: number; readyMs: number }): number {
  return Math.max(0, input.readyMs - input.createdMs) / 1000;
}

/** The `eni_type` label of the attach histogram: the ENI's kind as eniflow creates them, `other` for any else. */
export function attachEniTypeOf(cloud: { type: string; trafficMode: string }): EniKind | 'other' {
  const mode = cloud.trafficMode === 'HighPerformance' ? 'HighPerformance' : 'Standard';
  return (
    ENI_KINDS.find((kind) => ENI_KIND_SHAPE[kind].type === cloud.type && ENI_KIND_SHAPE[kind].trafficMode === mode) ??
    'other'
  );
}

/** How an attach ended, as Terway labels `terway_eni_attach_duration_seconds`. */
export type AttachResult = 'success' | 'failed' | 'timeout';
