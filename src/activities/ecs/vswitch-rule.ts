import type { VSwitchInfo } from '../../ipam/index.js';
import type { Logger } from '../../logger.js';
import type { EcsApi } from './ecs-api.js';
import type { EcsFailure } from './ecs-errors.js';
import type { VSwitchCache } from './vswitch-cache.js';

/** One ask for addresses from a vSwitch (a create, an assign), as the vSwitch rule judges its answer. */
export interface VSwitchAsk {
  /** The vSwitch the addresses come from; unknown (an assign without it): the cache is left alone. */
  vSwitchId: string | undefined;
  /**
   * The IPv4 addresses asked for, when the planner sized the ask by the vSwitch's cached free count: a refusal then
   * revises that count instead of blocking. Absent for prefix and IPv6 asks, which no count sizes (Terway blocks).
   */
  sizedIpv4?: number;
}

/**
 * What every answer to an ask for addresses tells the worker's vSwitch cache, written once for all of them:
 * - refused for lack of addresses (`IpNotEnough`): an ask sized by the count learns what is left with one describe
 *   and keeps that count (or blocks when none is left); any other ask blocks the vSwitch for a TTL;
 * - granted: a block is lifted (it was a guess, the cloud's answer is the truth), or else the cached free count
 *   drops by the IPv4 addresses taken (IPv6 takes none of the count the cloud reports).
 */
export interface VSwitchRule {
  refused(log: Logger, failure: EcsFailure, ask: VSwitchAsk): Promise<void>;
  granted(vSwitchId: string | undefined, ipv4Taken: number): void;
}

export function createVSwitchRule(deps: { ecs: EcsApi; vSwitches: VSwitchCache }): VSwitchRule {
  return {
    async refused(log, failure, ask) {
      const { vSwitchId, sizedIpv4 } = ask;
      if (failure.type !== 'EcsVSwitchExhausted' || vSwitchId === undefined) return;
      if (sizedIpv4 === undefined) {
        deps.vSwitches.block(vSwitchId);
        return;
      }
      let found: VSwitchInfo | undefined;
      try {
        found = await deps.ecs.describeVSwitch({ vSwitchId });
      } catch (error) {
        log.debug({ err: error, vSwitchId }, 'Could not describe the vSwitch that refused: blocking it');
      }
      const outcome = deps.vSwitches.refused(vSwitchId, sizedIpv4, found);
      log.info(
        { vSwitchId, requested: sizedIpv4, available: found?.availableIpCount, outcome },
        outcome === 'revised'
          ? 'vSwitch has fewer addresses than asked for: the next ask takes what is left'
          : 'vSwitch has no address left for this ask: blocked',
      );
    },
    granted(vSwitchId, ipv4Taken) {
      if (vSwitchId === undefined) return;
      if (!deps.vSwitches.unblock(vSwitchId)) deps.vSwitches.took(vSwitchId, ipv4Taken);
    },
  };
}
