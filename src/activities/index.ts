import { createEcsActivities } from './ecs-activities.js';
import type { EcsActivityDeps } from './ecs-activities.js';
import { createKubeActivities } from './kube-activities.js';
import type { KubeActivityDeps } from './kube-activities.js';
import { withPassRead } from './node-pass-read.js';

export type { EcsActivityDeps } from './ecs-activities.js';
export type { KubeActivityDeps, NodeSnapshot, NodeView, NodeViewReply } from './kube-activities.js';
export type { NodeViewForPass } from './node-pass-read.js';

/** Every activity of the worker, built from its dependencies (ECS and Kubernetes clients, logger). */
export function createActivities(deps: EcsActivityDeps & Omit<KubeActivityDeps, 'logger'>) {
  // The node's read brings what the worker knows besides (see `readNodeViewForPass`).
  return withPassRead(createEcsActivities(deps), createKubeActivities(deps), {
    vSwitches: deps.vSwitches,
    readCache: deps.readCache,
  });
}

/** The activity functions' types: the only thing workflow code imports from this layer. */
export type Activities = ReturnType<typeof createActivities>;
