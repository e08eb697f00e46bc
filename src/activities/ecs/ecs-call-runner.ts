import { activityInfo } from '@temporalio/activity';

import type { Logger } from '../../logger.js';
import { attemptWillBeRetried } from '../activity-log.js';
import { ecsApplicationFailure } from './ecs-application-failure.js';
import { EcsCallError } from './ecs-errors.js';
import type { EcsFailure } from './ecs-errors.js';

/** Told, by activity type, of every classified cloud failure and of every success (`CloudRecoveryNotifier`). */
export interface CloudOutcomes {
  failed(activityType: string, failure: EcsFailure): void;
  succeeded(activityType: string): void;
}

/** What one ECS activity does around its cloud call: classify, tell, log once (the vSwitch cache: vswitch-rule.ts). */
export interface EcsCallRunner {
  /** Runs a cloud call and converts its failure; `accept` names failure codes that mean "already done". */
  run: <T>(
    log: Logger,
    call: () => Promise<T>,
    options?: { accept?: readonly string[]; onFailure?: (failure: EcsFailure) => void | Promise<void> },
  ) => Promise<T | undefined>;
}

export function failureOf(error: unknown): EcsFailure | undefined {
  return error instanceof EcsCallError ? error.failure : undefined;
}

export function createEcsCallRunner(deps: { cloudOutcomes?: CloudOutcomes | undefined }): EcsCallRunner {
  async function run<T>(
    log: Logger,
    call: () => Promise<T>,
    options: { accept?: readonly string[]; onFailure?: (failure: EcsFailure) => void | Promise<void> } = {},
  ): Promise<T | undefined> {
    try {
      const result = await call();
      deps.cloudOutcomes?.succeeded(activityInfo().activityType);
      return result;
    } catch (error) {
      const failure = failureOf(error);
      if (failure === undefined) throw error;
      if (options.accept?.includes(failure.code) === true) {
        log.info({ errorCode: failure.code, requestId: failure.requestId }, 'Treated as already done');
        return undefined;
      }
      deps.cloudOutcomes?.failed(activityInfo().activityType, failure);
      await options.onFailure?.(failure);
      const applicationFailure = ecsApplicationFailure(failure);
      // A failure the server will retry is routine; the one that ends the activity reaches the workflow, whose
      // pass then logs one warning for the node.
      const level = attemptWillBeRetried(activityInfo(), applicationFailure) ? 'debug' : 'info';
      log[level]({ errorCode: failure.code, requestId: failure.requestId, failureType: failure.type }, failure.message);
      throw applicationFailure;
    }
  }

  return { run };
}
