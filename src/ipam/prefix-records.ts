/**
 * IP prefixes of an ENI in the CR (prefix mode, Terway v1.17): how they are counted, recorded, merged from the cloud
 * and un-frozen. Lists keep the CR's order; new prefixes are appended in the order the cloud returned them.
 */

import { cloneNetworkInterfaces } from './eni-records.js';
import type { IpFamily, IpPrefixEntry, NetworkInterface, NetworkInterfaces } from './node-model.js';
import { sortedKeys } from './node-model.js';
import { parseRfc3339 } from './rfc3339.js';

/** Addresses in one IPv4 /28 prefix: what a prefix costs the vSwitch. */
export const IPV4_PREFIX_SIZE = 16;

export function prefixListKey(family: IpFamily): 'ipv4Prefix' | 'ipv6Prefix' {
  return family === 'ipv4' ? 'ipv4Prefix' : 'ipv6Prefix';
}

export function prefixEntries(eni: Readonly<NetworkInterface>, family: IpFamily): readonly IpPrefixEntry[] {
  return eni[prefixListKey(family)] ?? [];
}

/**
 * Prefixes the node counts toward its `ipv4PrefixCount`/`ipv6PrefixCount`: `Valid` and `Frozen` ones, as Terway
 * counts them. The daemon freezes a prefix it means to use again; it keeps its slot on the ENI and returns to `Valid`
 * at `frozenExpireAt`, so replacing it would leave the node above its total once it thaws, a surplus never shrunk.
 */
export function countUsablePrefixes(eni: Readonly<NetworkInterface>, family: IpFamily): number {
  return prefixEntries(eni, family).filter((entry) => entry.status === 'Valid' || entry.status === 'Frozen').length;
}

/**
 * Prefixes that hold a slot of the ENI: every one the cloud still has as far as the CR knows (`Valid`, `Frozen`, and
 * `Deleting` until the GC unassigns it). `Invalid` ones are those the last OpenAPI sync did not find.
 */
export function countOccupiedPrefixes(eni: Readonly<NetworkInterface>, family: IpFamily): number {
  return prefixEntries(eni, family).filter((entry) => entry.status !== 'Invalid').length;
}

/** Prefixes the daemon may hand addresses from (`Valid` and `Frozen`): an ENI holding one must not be removed. */
export function holdsUsablePrefixes(eni: Readonly<NetworkInterface>): boolean {
  return (['ipv4', 'ipv6'] as const).some((family) =>
    prefixEntries(eni, family).some((entry) => entry.status === 'Valid' || entry.status === 'Frozen'),
  );
}

/** A copy of the ENIs with one ENI's prefix list of one family replaced by `change` of it (no such ENI: unchanged). */
function withPrefixList(
  input: { enis: Readonly<NetworkInterfaces>; eniId: string; family: IpFamily },
  change: (list: IpPrefixEntry[] | undefined) => IpPrefixEntry[] | undefined,
): NetworkInterfaces {
  const enis = cloneNetworkInterfaces(input.enis);
  const eni = enis[input.eniId];
  if (eni === undefined) return enis;
  const key = prefixListKey(input.family);
  const list = change(eni[key]);
  if (list !== undefined) eni[key] = list;
  return enis;
}

/** Records prefixes the cloud just assigned to an ENI as `Valid`; one already listed keeps its entry. */
export function recordAssignedPrefixes(input: {
  enis: Readonly<NetworkInterfaces>;
  eniId: string;
  family: IpFamily;
  prefixes: readonly string[];
}): NetworkInterfaces {
  return withPrefixList(input, (current) => {
    const list = [...(current ?? [])];
    for (const prefix of input.prefixes) {
      if (!list.some((entry) => entry.prefix === prefix)) list.push({ prefix, status: 'Valid' });
    }
    return list;
  });
}

/** Drops prefixes the cloud has unassigned. */
export function forgetPrefixes(input: {
  enis: Readonly<NetworkInterfaces>;
  eniId: string;
  family: IpFamily;
  prefixes: readonly string[];
}): NetworkInterfaces {
  return withPrefixList(input, (current) => current?.filter((entry) => !input.prefixes.includes(entry.prefix)));
}

/** Marks every prefix of an ENI `Deleting` (its node is going away: no pod is left on them). */
export function markPrefixesDeleting(input: { enis: Readonly<NetworkInterfaces>; eniId: string }): NetworkInterfaces {
  const enis = cloneNetworkInterfaces(input.enis);
  const eni = enis[input.eniId];
  if (eni === undefined) return enis;
  for (const key of ['ipv4Prefix', 'ipv6Prefix'] as const) {
    const list = eni[key];
    if (list !== undefined) eni[key] = list.map((entry) => ({ prefix: entry.prefix, status: 'Deleting' }));
  }
  return enis;
}

/**
 * Merges the cloud's prefixes of one family into the CR's list (Terway's `mergeIPPrefixes`): a listed prefix the cloud
 * has keeps its record as it is (a `Frozen` one its expiry, an `Invalid` one stays `Invalid`); a new one is added
 * `Valid`; one the cloud no longer has becomes `Invalid`, except a `Deleting` one, which is gone as asked.
 */
export function mergePrefixList(
  local: readonly IpPrefixEntry[] | undefined,
  remote: readonly string[],
): IpPrefixEntry[] {
  const remoteSet = new Set(remote);
  const merged: IpPrefixEntry[] = [];
  for (const entry of local ?? []) {
    if (remoteSet.has(entry.prefix)) merged.push({ ...entry });
    else if (entry.status !== 'Deleting') merged.push({ ...entry, status: 'Invalid' });
  }
  for (const prefix of remote) {
    if (!merged.some((entry) => entry.prefix === prefix)) merged.push({ prefix, status: 'Valid' });
  }
  return merged;
}

/** The CR's prefix lists for an ENI first seen in the cloud (all `Valid`); absent families stay absent. */
export function prefixListsFromCloud(cloud: {
  ipv4Prefixes?: readonly string[];
  ipv6Prefixes?: readonly string[];
}): Pick<NetworkInterface, 'ipv4Prefix' | 'ipv6Prefix'> {
  const lists: Pick<NetworkInterface, 'ipv4Prefix' | 'ipv6Prefix'> = {};
  if ((cloud.ipv4Prefixes?.length ?? 0) > 0) lists.ipv4Prefix = mergePrefixList([], cloud.ipv4Prefixes ?? []);
  if ((cloud.ipv6Prefixes?.length ?? 0) > 0) lists.ipv6Prefix = mergePrefixList([], cloud.ipv6Prefixes ?? []);
  return lists;
}

/**
 * `Frozen` prefixes whose `frozenExpireAt` has passed go back to `Valid` without an expiry (Terway's
 * `processFrozenExpireAt`). A `Frozen` prefix without a (readable) expiry stays frozen. The controller never freezes.
 */
export function unfreezeExpiredPrefixes(input: { enis: Readonly<NetworkInterfaces>; nowMs: number }): {
  enis: NetworkInterfaces;
  unfrozen: { eniId: string; family: IpFamily; prefix: string }[];
} {
  const enis = cloneNetworkInterfaces(input.enis);
  const unfrozen: { eniId: string; family: IpFamily; prefix: string }[] = [];
  for (const eniId of sortedKeys(enis)) {
    const eni = enis[eniId];
    if (eni === undefined) continue;
    for (const family of ['ipv4', 'ipv6'] as const) {
      const key = prefixListKey(family);
      const list = eni[key];
      if (list === undefined) continue;
      eni[key] = list.map((entry) => {
        const expiresMs = entry.frozenExpireAt === undefined ? undefined : parseRfc3339(entry.frozenExpireAt);
        if (entry.status !== 'Frozen' || expiresMs === undefined || expiresMs > input.nowMs) return entry;
        unfrozen.push({ eniId, family, prefix: entry.prefix });
        return { prefix: entry.prefix, status: 'Valid' };
      });
    }
  }
  return { enis, unfrozen };
}

/** The earliest future `frozenExpireAt` of the node (epoch ms): when a pass has a prefix to un-freeze. */
export function nextFrozenExpiryMs(enis: Readonly<NetworkInterfaces>): number | undefined {
  let earliest: number | undefined;
  for (const eniId of sortedKeys(enis)) {
    const eni = enis[eniId];
    if (eni === undefined) continue;
    for (const family of ['ipv4', 'ipv6'] as const) {
      for (const entry of prefixEntries(eni, family)) {
        const at = entry.frozenExpireAt === undefined ? undefined : parseRfc3339(entry.frozenExpireAt);
        if (entry.status === 'Frozen' && at !== undefined && (earliest === undefined || at < earliest)) earliest = at;
      }
    }
  }
  return earliest;
}
