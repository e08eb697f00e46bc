import type { Logger } from '../../logger.js';
import { activityLogger } from '../activity-log.js';
import type { EcsApi } from './ecs-api.js';
import { createEcsCallRunner } from './ecs-call-runner.js';
import type { CloudOutcomes, EcsCallRunner } from './ecs-call-runner.js';
import type { VSwitchCache } from './vswitch-cache.js';
import { createVSwitchRule } from './vswitch-rule.js';
import type { VSwitchRule } from './vswitch-rule.js';

/** What the ECS activities need, built once per worker process. */
export interface EcsActivityDeps {
  ecs: EcsApi;
  vSwitches: VSwitchCache;
  logger: Logger;
  /** How often `waitEniStatus` polls; Terway starts at 3–5 s, tests use less. */
  eniPollIntervalMs?: number;
  /** Told, by activity type, of every classified cloud failure and of every success (`CloudRecoveryNotifier`). */
  cloudOutcomes?: CloudOutcomes;
}

/** What every group of ECS activities shares: the clients, the call runner, logging and the vSwitch rule. */
export interface EcsContext {
  readonly deps: EcsActivityDeps;
  readonly ecs: EcsApi;
  readonly run: EcsCallRunner['run'];
  readonly logFor: (fields: Record<string, string>) => Logger;
  readonly vSwitchRule: VSwitchRule;
}

export function createEcsContext(deps: EcsActivityDeps): EcsContext {
  return {
    deps,
    ecs: deps.ecs,
    run: createEcsCallRunner(deps).run,
    logFor: (fields) => activityLogger(deps.logger, fields),
    vSwitchRule: createVSwitchRule(deps),
  };
}
