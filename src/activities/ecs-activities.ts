/**
 * The ECS activities. Each wraps one cloud call, is safe to retry, and throws only `ApplicationFailure`s. The groups
 * live in ecs/ and share one {@link EcsContext}; the activity names are the keys of the object returned here, which
 * workflow histories record, so they must not change.
 */
import { createAddressActivities } from './ecs/address-activities.js';
import { createEcsContext } from './ecs/ecs-context.js';
import type { EcsActivityDeps, EcsContext } from './ecs/ecs-context.js';
import { createEniActivities } from './ecs/eni-activities.js';
import { createReadActivities } from './ecs/read-activities.js';

export type { EcsActivityDeps } from './ecs/ecs-context.js';
export type { CreateEniPrefixCounts } from './ecs/eni-activities.js';
export { ENI_STATUS_PENDING } from './ecs/wait-eni-status.js';

export function createEcsActivities(deps: EcsActivityDeps) {
  const ctx: EcsContext = createEcsContext(deps);
  return { ...createEniActivities(ctx), ...createReadActivities(ctx), ...createAddressActivities(ctx) };
}

export type EcsActivities = ReturnType<typeof createEcsActivities>;
