import { takeIpv4, takeIpv4Prefixes, takeIpv6, takeIpv6Prefixes } from './address-allocation.js';
import type { CreateEniInput, EniRecord, VSwitchRecord } from './model-types.js';

/** The addresses and prefixes one ENI holds on its vSwitch. */
export type EniAddresses = Pick<EniRecord, 'primaryIp' | 'secondaryIps' | 'ipv6s' | 'ipv4Prefixes' | 'ipv6Prefixes'>;

/**
 * Takes a new ENI's addresses from its vSwitch, all or nothing: whatever this create took goes back to the vSwitch
 * when a later family fails. Explicit primary first, then explicit secondaries, then counted ones; without an
 * explicit primary the first counted address (the lowest) becomes the primary.
 */
export function takeEniAddresses(vSwitch: VSwitchRecord, input: CreateEniInput): EniAddresses {
  const explicitSecondaries = input.secondaryIps ?? [];
  const explicitPrimary = input.primaryIp === undefined ? [] : [input.primaryIp];
  const ipv4 = takeIpv4(vSwitch, {
    explicit: [...explicitPrimary, ...explicitSecondaries],
    count: (input.primaryIp === undefined ? 1 : 0) + (input.secondaryCount ?? 0),
    exhaustedCode: 'InvalidVSwitchId.IpNotEnough',
  });
  let ipv6s: string[] = [];
  let ipv4Prefixes: string[] = [];
  let ipv6Prefixes: string[] = [];
  try {
    if ((input.ipv6s?.length ?? 0) + (input.ipv6Count ?? 0) > 0) {
      ipv6s = takeIpv6(vSwitch, { explicit: input.ipv6s ?? [], count: input.ipv6Count ?? 0 });
    }
    if ((input.ipv4Prefixes?.length ?? 0) + (input.ipv4PrefixCount ?? 0) > 0) {
      ipv4Prefixes = takeIpv4Prefixes(vSwitch, {
        explicit: input.ipv4Prefixes ?? [],
        count: input.ipv4PrefixCount ?? 0,
        exhaustedCode: 'InvalidVSwitchId.IpNotEnough',
      });
    }
    if ((input.ipv6Prefixes?.length ?? 0) + (input.ipv6PrefixCount ?? 0) > 0) {
      ipv6Prefixes = takeIpv6Prefixes(vSwitch, {
        explicit: input.ipv6Prefixes ?? [],
        count: input.ipv6PrefixCount ?? 0,
      });
    }
  } catch (error) {
    for (const ip of ipv4) vSwitch.ipv4.release(ip);
    for (const ip of ipv6s) vSwitch.ipv6?.release(ip);
    for (const prefix of ipv4Prefixes) vSwitch.ipv4.releasePrefix(prefix);
    throw error;
  }
  const primaryIp = input.primaryIp ?? ipv4[explicitSecondaries.length];
  if (primaryIp === undefined) throw new Error('primary IP missing');
  const secondaryIps = ipv4.filter((ip) => ip !== primaryIp);
  return { primaryIp, secondaryIps, ipv6s, ipv4Prefixes, ipv6Prefixes };
}

/** Claims a restored ENI's addresses on its vSwitch; a snapshot whose addresses overlap is refused. */
export function claimRestoredAddresses(vSwitch: VSwitchRecord, eni: EniRecord): void {
  for (const ip of [eni.primaryIp, ...eni.secondaryIps]) {
    if (vSwitch.ipv4.claim(ip) !== 'claimed') throw new Error(`snapshot: ${ip} of ${eni.eniId} is not free`);
  }
  for (const ip of eni.ipv6s) {
    if (vSwitch.ipv6?.claim(ip) !== 'claimed') throw new Error(`snapshot: ${ip} of ${eni.eniId} is not free`);
  }
  for (const prefix of eni.ipv4Prefixes) {
    if (vSwitch.ipv4.claimPrefix(prefix) !== 'claimed') {
      throw new Error(`snapshot: prefix ${prefix} of ${eni.eniId} is not free`);
    }
  }
  for (const prefix of eni.ipv6Prefixes) {
    if (vSwitch.ipv6?.claimPrefix(prefix) !== 'claimed') {
      throw new Error(`snapshot: prefix ${prefix} of ${eni.eniId} is not free`);
    }
  }
}

/** Gives a removed ENI's addresses and prefixes back to its vSwitch. */
export function releaseEniAddresses(vSwitch: VSwitchRecord, eni: EniRecord): void {
  vSwitch.ipv4.release(eni.primaryIp);
  for (const ip of eni.secondaryIps) vSwitch.ipv4.release(ip);
  for (const ip of eni.ipv6s) vSwitch.ipv6?.release(ip);
  for (const prefix of eni.ipv4Prefixes) vSwitch.ipv4.releasePrefix(prefix);
  for (const prefix of eni.ipv6Prefixes) vSwitch.ipv6?.releasePrefix(prefix);
}
