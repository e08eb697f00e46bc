import type { NodeSpec, VSwitchSelectPolicy } from './node-model.js';

/** What the controller knows of one vSwitch (from `DescribeVSwitches`, possibly cached or blocked). */
export interface VSwitchInfo {
  vSwitchId: string;
  zoneId: string;
  /** Free IPv4 addresses; 0 when exhausted or blocked after `InvalidVSwitchId.IpNotEnough`. */
  availableIpCount: number;
  ipv4Cidr?: string;
  ipv6Cidr?: string;
  /** Set while the worker holds the vSwitch blocked after `InvalidVSwitchId.IpNotEnough`: how long still (ms). */
  blockedForMs?: number;
}

export type VSwitchChoice =
  { ok: true; vSwitch: VSwitchInfo } | { ok: false; reason: 'noVSwitchWithFreeIp'; message: string };

/**
 * Picks the vSwitch for a new ENI among the node's `vSwitchOptions` (the reference's `GetOne`): only known
 * vSwitches of the node's zone with free addresses qualify. `ordered` takes the first in the given order,
 * `most` the one with the most free addresses (ties by position), `random` the one `randomValue` ∈ [0, 1)
 * points at. The options list is never reordered in place (the seed shuffles the CR's own slice).
 */
export function chooseVSwitch(input: {
  vSwitchOptions: readonly string[];
  vSwitches: Readonly<Record<string, VSwitchInfo>>;
  zoneId: string;
  policy: VSwitchSelectPolicy | undefined;
  randomValue: number;
}): VSwitchChoice {
  const eligible = input.vSwitchOptions
    .map((id) => input.vSwitches[id])
    .filter((info): info is VSwitchInfo => info !== undefined)
    .filter((info) => info.zoneId === input.zoneId && info.availableIpCount > 0);
  const first = eligible[0];
  if (first === undefined) {
    return {
      ok: false,
      reason: 'noVSwitchWithFreeIp',
      message: `no available vSwitch for zone ${input.zoneId}, vswList [${input.vSwitchOptions.join(' ')}]`,
    };
  }
  switch (input.policy) {
    case 'most':
      return {
        ok: true,
        vSwitch: eligible.reduce((best, info) => (info.availableIpCount > best.availableIpCount ? info : best), first),
      };
    case 'random': {
      const index = Math.min(eligible.length - 1, Math.max(0, Math.floor(input.randomValue * eligible.length)));
      return { ok: true, vSwitch: eligible[index] ?? first };
    }
    case 'ordered':
    case undefined:
      return { ok: true, vSwitch: first };
  }
}

/** The vSwitch of a new ENI as the node's spec asks for it (its options, zone and policy). */
export function chooseVSwitchForSpec(
  spec: Pick<NodeSpec, 'eni' | 'nodeMetadata'>,
  vSwitches: Readonly<Record<string, VSwitchInfo>>,
  randomValue: number,
): VSwitchChoice {
  return chooseVSwitch({
    vSwitchOptions: spec.eni?.vSwitchOptions ?? [],
    vSwitches,
    zoneId: spec.nodeMetadata?.zoneID ?? '',
    policy: spec.eni?.vSwitchSelectPolicy,
    randomValue,
  });
}
