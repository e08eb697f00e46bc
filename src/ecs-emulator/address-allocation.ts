import { Ipv4AddressPool, Ipv6AddressPool } from './address-pool.js';
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

/**
 * Takes IPv4 /28 prefixes from a vSwitch all-or-nothing: explicit ones must be /28s on their boundary inside the
 * CIDR with all 16 addresses free; counted ones are the lowest free blocks. Each takes 16 available addresses.
 */
export function takeIpv4Prefixes(
  vSwitch: VSwitchRecord,
  request: { explicit: string[]; count: number; exhaustedCode: KnownErrorCode },
): string[] {
  const pool = vSwitch.ipv4;
  const normalized = normalizedPrefixes(request.explicit, (prefix) => Ipv4AddressPool.normalizePrefix(prefix));
  for (const prefix of normalized) {
    if (!pool.containsPrefix(prefix)) {
      throw apiError('InvalidVSwitchId.IpInvalid', `The prefix ${prefix} is not a /28 inside ${vSwitch.cidrBlock}.`);
    }
  }
  return takeAll({
    explicit: normalized,
    count: request.count,
    claim: (prefix) => pool.claimPrefix(prefix),
    allocate: () => pool.allocatePrefix(),
    release: (prefix) => {
      pool.releasePrefix(prefix);
    },
    exhausted: () => apiError(request.exhaustedCode, `The vSwitch ${vSwitch.vSwitchId} has no free /28 left.`),
  });
}

/** Takes IPv6 /80 prefixes from a vSwitch all-or-nothing; the vSwitch must have an IPv6 CIDR. */
export function takeIpv6Prefixes(vSwitch: VSwitchRecord, request: { explicit: string[]; count: number }): string[] {
  const pool = vSwitch.ipv6;
  if (pool === null) throw apiError('InvalidVSwitch.Ipv6NotTurnOn');
  const normalized = normalizedPrefixes(request.explicit, (prefix) => Ipv6AddressPool.normalizePrefix(prefix));
  return takeAll({
    explicit: normalized,
    count: request.count,
    claim: (prefix) => pool.claimPrefix(prefix),
    allocate: () => pool.allocatePrefix(),
    release: (prefix) => {
      pool.releasePrefix(prefix);
    },
    exhausted: () => apiError('InvalidVSwitchId.IpNotEnough', `The vSwitch ${vSwitch.vSwitchId} has no free /80 left.`),
  });
}

/** Canonical prefixes, malformed ones refused with `InvalidParameter`, repeated ones with `Duplicated`. */
function normalizedPrefixes(explicit: string[], normalize: (prefix: string) => string | undefined): string[] {
  const normalized: string[] = [];
  for (const prefix of explicit) {
    const canonical = normalize(prefix);
    if (canonical === undefined) {
      throw apiError('InvalidParameter', `The specified prefix ${prefix} is not a valid CIDR block.`);
    }
    if (normalized.includes(canonical)) {
      throw apiError('InvalidPrivateIpAddress.Duplicated', `The prefix ${prefix} is given twice.`);
    }
    normalized.push(canonical);
  }
  return normalized;
}

/** Claims the explicit items, then allocates `count` more; on any failure gives back everything it took. */
function takeAll(request: {
  explicit: string[];
  count: number;
  claim: (item: string) => 'claimed' | 'outside' | 'taken';
  allocate: () => string | undefined;
  release: (item: string) => void;
  exhausted: () => Error;
}): string[] {
  const taken: string[] = [];
  const undo = (error: Error): Error => {
    for (const item of taken) request.release(item);
    return error;
  };
  for (const item of request.explicit) {
    const claimed = request.claim(item);
    if (claimed === 'outside')
      throw undo(apiError('InvalidVSwitchId.IpInvalid', `The prefix ${item} is not inside the vSwitch.`));
    if (claimed === 'taken') {
      throw undo(apiError('InvalidPrivateIpAddress.Duplicated', `The prefix ${item} overlaps addresses in use.`));
    }
    taken.push(item);
  }
  for (let i = 0; i < request.count; i++) {
    const item = request.allocate();
    if (item === undefined) throw undo(request.exhausted());
    taken.push(item);
  }
  return taken;
}
