/**
 * The Kubernetes activities: one read of the node's world, and the writes the reconcile makes. Each group lives in
 * kube/ and shares one {@link KubeContext}; the activity names are the keys of the object returned here, which
 * workflow histories record, so they must not change.
 */
import { createEventsAndConditions } from './kube/events-and-conditions.js';
import { createKubeContext } from './kube/kube-context.js';
import type { KubeActivityDeps } from './kube/kube-context.js';
import { createNodeReads } from './kube/node-reads.js';
import { createStatusWrites } from './kube/status-writes.js';

export type { KubeActivityDeps } from './kube/kube-context.js';
export { KUBE_FAILURE_TYPES, NON_RETRYABLE_KUBE_FAILURES } from './kube/kube-failures.js';
export type { KubeFailureType } from './kube/kube-failures.js';
export { workflowUiLink } from './kube/events-and-conditions.js';
export type { NodeConditionPatch } from './kube/events-and-conditions.js';
export {
  boundPodUids,
  coreNodeSnapshot,
  crSnapshotOf,
  nodeRuntimeViewOf,
  podSnapshotOf,
} from './kube/node-snapshot.js';
export type { NodeSnapshot, RawObject } from './kube/node-snapshot.js';
export { fullViewPage, nodeViewDigest, nodeViewOf, VIEW_PODS_PER_PAGE } from './kube/node-view.js';
export type { NodeView, NodeViewReply } from './kube/node-view.js';

export function createKubeActivities(deps: KubeActivityDeps) {
  const ctx = createKubeContext(deps);
  return { ...createNodeReads(ctx), ...createStatusWrites(ctx), ...createEventsAndConditions(ctx) };
}

export type KubeActivities = ReturnType<typeof createKubeActivities>;
