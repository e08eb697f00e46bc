import { configure } from 'safe-stable-stringify';

import { sortIps } from './ip-address.js';
import { sortedKeys } from './node-model.js';
import type { IpEntry, IpFamily, NetworkInterface, NetworkInterfaces } from './node-model.js';

/** Deep copy of an ENI map, so the pure functions can work on a private copy and hand it back. */
export function cloneNetworkInterfaces(enis: Readonly<NetworkInterfaces> | undefined): NetworkInterfaces {
  const copy: NetworkInterfaces = {};
  for (const id of sortedKeys(enis)) {
    const eni = enis?.[id];
    if (eni !== undefined) copy[id] = cloneNetworkInterface(eni);
  }
  return copy;
}

function cloneIpMap(ips: Readonly<Record<string, IpEntry>>): Record<string, IpEntry> {
  const copy: Record<string, IpEntry> = {};
  for (const ip of sortedKeys(ips)) {
    const entry = ips[ip];
    if (entry !== undefined) copy[ip] = { ...entry };
  }
  return copy;
}

export function cloneNetworkInterface(eni: Readonly<NetworkInterface>): NetworkInterface {
  const copy: NetworkInterface = { ...eni };
  if (eni.securityGroupIDs !== undefined) copy.securityGroupIDs = [...eni.securityGroupIDs];
  if (eni.ipv4 !== undefined) copy.ipv4 = cloneIpMap(eni.ipv4);
  if (eni.ipv6 !== undefined) copy.ipv6 = cloneIpMap(eni.ipv6);
  if (eni.ipv4Prefix !== undefined) copy.ipv4Prefix = eni.ipv4Prefix.map((entry) => ({ ...entry }));
  if (eni.ipv6Prefix !== undefined) copy.ipv6Prefix = eni.ipv6Prefix.map((entry) => ({ ...entry }));
  if (eni.conditions !== undefined) {
    copy.conditions = {};
    for (const key of ['InsufficientIP', 'OperationErr'] as const) {
      const condition = eni.conditions[key];
      if (condition !== undefined) copy.conditions[key] = { ...condition };
    }
  }
  return copy;
}

/** The IP entries of one family, ordered numerically by address. */
export function ipEntries(eni: Readonly<NetworkInterface>, family: IpFamily): IpEntry[] {
  const map = eni[family];
  if (map === undefined) return [];
  return sortIps(Object.keys(map))
    .map((ip) => map[ip])
    .filter((entry): entry is IpEntry => entry !== undefined);
}

/** An IP no pod holds; `podID` may be absent or empty, both mean idle in Terway's CR. */
export function isIdle(entry: Readonly<IpEntry>): boolean {
  return entry.podID === undefined || entry.podID === '';
}

/** Idle and `Valid`: what the reference counts as available (the primary IP included). */
export function isAvailable(entry: Readonly<IpEntry>): boolean {
  return entry.status === 'Valid' && isIdle(entry);
}

/** The IP entries of one family in no particular order: for counts and tests that do not depend on it. */
export function unorderedIpEntries(eni: Readonly<NetworkInterface>, family: IpFamily): IpEntry[] {
  const map = eni[family];
  if (map === undefined) return [];
  return Object.values(map);
}

export function countAvailable(eni: Readonly<NetworkInterface>, family: IpFamily): number {
  // Counted without sorting: the planner and the pool ask this of every ENI several times per pass.
  let count = 0;
  for (const entry of unorderedIpEntries(eni, family)) if (isAvailable(entry)) count += 1;
  return count;
}

export function isTrunk(eni: Readonly<NetworkInterface>): boolean {
  return eni.networkInterfaceType === 'Trunk';
}

export function isHighPerformance(eni: Readonly<NetworkInterface>): boolean {
  return eni.networkInterfaceTrafficMode === 'HighPerformance';
}

function entryCount(eni: Readonly<NetworkInterface>, family: IpFamily): number {
  return Object.keys(eni[family] ?? {}).length;
}

/**
 * The reference's `sortNetworkInterface` with a total order: trunk first, then HighPerformance, then the ENI
 * holding more IPs of the primary family, then by id. New IPs go to the front of this list first (filling the
 * fullest ENIs keeps the emptiest ones free to be released), and release victims are taken from its end.
 */
export function sortEnisForAllocation(input: {
  enis: readonly NetworkInterface[];
  primaryFamily: IpFamily;
}): NetworkInterface[] {
  const { primaryFamily } = input;
  return [...input.enis].sort((a, b) => {
    if (isTrunk(a) !== isTrunk(b)) return isTrunk(a) ? -1 : 1;
    if (isHighPerformance(a) !== isHighPerformance(b)) return isHighPerformance(a) ? -1 : 1;
    const byCount = entryCount(b, primaryFamily) - entryCount(a, primaryFamily);
    if (byCount !== 0) return byCount;
    return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
  });
}

/** The family whose counts drive pool sizing: IPv4 when it is enabled, else IPv6 (as the reference does). */
export function primaryFamilyOf(eniSpec: { enableIPv4?: boolean }): IpFamily {
  return eniSpec.enableIPv4 === true ? 'ipv4' : 'ipv6';
}

/** The IP families the node serves, IPv4 first. */
export function enabledFamilies(eniSpec: { enableIPv4?: boolean; enableIPv6?: boolean }): IpFamily[] {
  const families: IpFamily[] = [];
  if (eniSpec.enableIPv4 === true) families.push('ipv4');
  if (eniSpec.enableIPv6 === true) families.push('ipv6');
  return families;
}

/** Sorts object keys at every level; a cycle throws, as in `JSON.stringify`, instead of printing `"[Circular]"`. */
const sortedKeysStringify = configure({ deterministic: true, circularValue: TypeError });

/** JSON with object keys sorted at every level, so two equal statuses compare equal whatever their key order. */
export function canonicalJson(value: unknown): string {
  return sortedKeysStringify(value) ?? 'null';
}
