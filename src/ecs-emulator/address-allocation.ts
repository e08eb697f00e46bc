import { Ipv6AddressPool } from './address-pool.js';
import { apiError } from './api-error.js';
import type { KnownErrorCode } from './api-error.js';
import type { VSwitchRecord } from './model-types.js';

/**
 * Takes IPv4 addresses from a vSwitch all-or-nothing: explicit ones must be inside the CIDR and free, and the
 * pool must hold enough for the count before anything is claimed.
 */
export function takeIpv4(
  vSwitch: VSwitchRecord,
  request: { explicit: string[]; count: number; exhaustedCode: KnownErrorCode },
): string[] {
  const seen = new Set<string>();
  for (const ip of request.explicit) {
    if (!vSwitch.ipv4.contains(ip)) {
      throw apiError('InvalidVSwitchId.IpInvalid', `The IP ${ip} is not in ${vSwitch.cidrBlock}.`);
    }
    if (vSwitch.ipv4.isUsed(ip) || seen.has(ip)) {
      throw apiError('InvalidPrivateIpAddress.Duplicated', `The private IP address ${ip} is already in use.`);
    }
    seen.add(ip);
  }
  if (request.explicit.length + request.count > vSwitch.ipv4.availableCount) throw apiError(request.exhaustedCode);
  for (const ip of request.explicit) vSwitch.ipv4.claim(ip);
  const taken = [...request.explicit];
  for (let i = 0; i < request.count; i++) {
    const ip = vSwitch.ipv4.allocateLowest();
    if (ip === undefined) throw new Error('IPv4 pool accounting is inconsistent');
    taken.push(ip);
  }
  return taken;
}

/** Takes IPv6 addresses from a vSwitch all-or-nothing; the vSwitch must have an IPv6 CIDR. */
export function takeIpv6(vSwitch: VSwitchRecord, request: { explicit: string[]; count: number }): string[] {
  const pool = vSwitch.ipv6;
  if (pool === null) throw apiError('InvalidVSwitch.Ipv6NotTurnOn');
  const normalized: string[] = [];
  for (const ip of request.explicit) {
    const canonical = Ipv6AddressPool.normalize(ip);
    if (canonical === undefined || !pool.contains(canonical)) {
      throw apiError('InvalidVSwitchId.IpInvalid', `The IPv6 address ${ip} is not in ${pool.cidr}.`);
    }
    if (normalized.includes(canonical)) throw apiError('InvalidPrivateIpAddress.Duplicated');
    normalized.push(canonical);
  }
  const taken: string[] = [];
  for (const ip of normalized) {
    if (pool.claim(ip) !== 'claimed') {
      for (const undo of taken) pool.release(undo);
      throw apiError('InvalidPrivateIpAddress.Duplicated', `The IPv6 address ${ip} is already in use.`);
    }
    taken.push(ip);
  }
  for (let i = 0; i < request.count; i++) {
    const ip = pool.allocateLowest();
    if (ip === undefined) {
      for (const undo of taken) pool.release(undo);
      throw apiError('InvalidVSwitchId.IpNotEnough');
    }
    taken.push(ip);
  }
  return taken;
}
