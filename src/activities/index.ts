import { createEcsActivities } from './ecs-activities.js';
import type { EcsActivityDeps } from './ecs-activities.js';
import { createKubeActivities } from './kube-activities.js';
import type { KubeActivityDeps } from './kube-activities.js';
import { withPassRead } from './node-pass-read.js';

export type { EcsActivityDeps } from './ecs-activities.js';
export type { KubeActivityDeps, NodeSnapshot, NodeView, NodeViewReply } from './kube-activities.js';
export type { NodeViewForPass } from './node-pass-read.js';

/**
 * Every activity of the worker, built from its dependencies (ECS and Kubernetes clients, logger), and the names of
 * the ECS ones: the worker routes each of those to its action's budget queue, and refuses one it cannot route.
 */
export function createWorkerActivities(deps: EcsActivityDeps & Omit<KubeActivityDeps, 'logger'>) {
  const ecs = createEcsActivities(deps);
  // The node's read brings what the worker knows besides (see `readNodeViewForPass`).
  const activities = withPassRead(ecs, createKubeActivities(deps), {
    vSwitches: deps.vSwitches,
    readCache: deps.readCache,
  });
  return { activities, ecsActivityNames: Object.keys(ecs) };
}

/** The activity functions' types: the only thing workflow code imports from this layer. */
export type Activities = ReturnType<typeof createWorkerActivities>['activities'];
