import { createEcsActivities } from './ecs-activities.js';
import type { EcsActivityDeps } from './ecs-activities.js';
import { createKubeActivities } from './kube-activities.js';
import type { KubeActivityDeps } from './kube-activities.js';

export type { EcsActivityDeps } from './ecs-activities.js';
export type { KubeActivityDeps, NodeSnapshot, NodeView, NodeViewReply } from './kube-activities.js';

/** Every activity of the worker, built from its dependencies (ECS and Kubernetes clients, logger). */
export function createActivities(deps: EcsActivityDeps & Omit<KubeActivityDeps, 'logger'>) {
  return { ...createEcsActivities(deps), ...createKubeActivities(deps) };
}

/** The activity functions' types: the only thing workflow code imports from this layer. */
export type Activities = ReturnType<typeof createActivities>;
