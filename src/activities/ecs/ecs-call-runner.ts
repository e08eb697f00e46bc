import { activityInfo } from '@temporalio/activity';

import type { VSwitchInfo } from '../../ipam/index.js';
import type { Logger } from '../../logger.js';
import { attemptWillBeRetried } from '../activity-log.js';
import type { EcsApi } from './ecs-api.js';
import { ecsApplicationFailure } from './ecs-application-failure.js';
import { EcsCallError } from './ecs-errors.js';
import type { EcsFailure } from './ecs-errors.js';
import type { VSwitchCache } from './vswitch-cache.js';

/** Told, by activity type, of every classified cloud failure and of every success (`CloudRecoveryNotifier`). */
export interface CloudOutcomes {
  failed(activityType: string, failure: EcsFailure): void;
  succeeded(activityType: string): void;
}

/** What one ECS activity does around its cloud call: classify, tell, log once, and keep the vSwitch cache true. */
export interface EcsCallRunner {
  /** Runs a cloud call and converts its failure; `accept` names failure codes that mean "already done". */
  run: <T>(
    log: Logger,
    call: () => Promise<T>,
    options?: { accept?: readonly string[]; onFailure?: (failure: EcsFailure) => void | Promise<void> },
  ) => Promise<T | undefined>;
  /** An exhausted vSwitch gets no more asks for a TTL (see VSwitchCache). */
  blockExhausted: (failure: EcsFailure, vSwitchId: string | undefined) => void;
  /**
   * After an IPv4 ask of `requested` addresses was refused for lack of them: one describe learns what the vSwitch
   * has left, and the cache keeps that count (the next plan asks for that many) or blocks the vSwitch when none is
   * left. Terway blocks it for the cache TTL whatever is left. Other failures: nothing to do.
   */
  reviseAfterRefusal: (
    log: Logger,
    failure: EcsFailure,
    ask: { vSwitchId: string | undefined; requested: number },
  ) => Promise<void>;
}

export function failureOf(error: unknown): EcsFailure | undefined {
  return error instanceof EcsCallError ? error.failure : undefined;
}

export function createEcsCallRunner(deps: {
  ecs: EcsApi;
  vSwitches: VSwitchCache;
  cloudOutcomes?: CloudOutcomes | undefined;
}): EcsCallRunner {
  const blockExhausted = (failure: EcsFailure, vSwitchId: string | undefined): void => {
    if (failure.type === 'EcsVSwitchExhausted' && vSwitchId !== undefined) deps.vSwitches.block(vSwitchId);
  };

  const reviseAfterRefusal = async (
    log: Logger,
    failure: EcsFailure,
    ask: { vSwitchId: string | undefined; requested: number },
  ): Promise<void> => {
    const { vSwitchId, requested } = ask;
    if (failure.type !== 'EcsVSwitchExhausted' || vSwitchId === undefined) return;
    let found: VSwitchInfo | undefined;
    try {
      found = await deps.ecs.describeVSwitch({ vSwitchId });
    } catch (error) {
      log.debug({ err: error, vSwitchId }, 'Could not describe the vSwitch that refused: blocking it');
    }
    const outcome = deps.vSwitches.refused(vSwitchId, requested, found);
    log.info(
      { vSwitchId, requested, available: found?.availableIpCount, outcome },
      outcome === 'revised'
        ? 'vSwitch has fewer addresses than asked for: the next ask takes what is left'
        : 'vSwitch has no address left for this ask: blocked',
    );
  };

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

  return { run, blockExhausted, reviseAfterRefusal };
}
