import { cloneNetworkInterfaces, ipEntries, isIdle } from './eni-records.js';
import type { CloudEni, VSwitchCidrs } from './cloud-eni.js';
import { isUnschedulableInCloud } from './eni-ownership.js';
import { sortedKeys } from './node-model.js';
import { mergePrefixList, prefixListsFromCloud } from './prefix-records.js';
import type { EniSpec, IpEntry, IpFamily, NetworkInterface, NetworkInterfaces } from './node-model.js';

function ipMapFrom(entries: readonly { ip: string; primary: boolean }[]): Record<string, IpEntry> {
  const map: Record<string, IpEntry> = {};
  for (const entry of entries) map[entry.ip] = { ip: entry.ip, primary: entry.primary, status: 'Valid' };
  return map;
}

function ipv6Entries(cloud: CloudEni): { ip: string; primary: boolean }[] {
  return cloud.ipv6.map((ip) => ({ ip, primary: false }));
}

/**
 * The CR record for an ENI first seen in the cloud (`newENIFromAPI` plus the vSwitch CIDRs); `unschedulable` is
 * set when `eniSpec` is given and the ENI is blocked by tag or is an unmanaged HighPerformance ENI.
 */
export function eniFromCloud(input: {
  cloud: CloudEni;
  cidrs?: VSwitchCidrs | undefined;
  eniSpec?: Readonly<EniSpec> | undefined;
}): NetworkInterface {
  const { cloud, cidrs } = input;
  const eni: NetworkInterface = {
    id: cloud.eniId,
    status: cloud.status,
    macAddress: cloud.macAddress,
    vSwitchID: cloud.vSwitchId,
    securityGroupIDs: [...cloud.securityGroupIds].sort(),
    primaryIPAddress: cloud.primaryIp,
    networkInterfaceTrafficMode: cloud.trafficMode,
    networkInterfaceType: cloud.type,
    ipv4: ipMapFrom(cloud.ipv4),
    ipv6: ipMapFrom(ipv6Entries(cloud)),
  };
  if (cidrs?.ipv4Cidr !== undefined) eni.ipv4CIDR = cidrs.ipv4Cidr;
  if (cidrs?.ipv6Cidr !== undefined) eni.ipv6CIDR = cidrs.ipv6Cidr;
  Object.assign(eni, prefixListsFromCloud(cloud));
  if (input.eniSpec !== undefined && isUnschedulableInCloud({ cloud, eniSpec: input.eniSpec })) {
    eni.unschedulable = true;
  }
  return eni;
}

/**
 * Merges the cloud's IPs of one family into the CR's. Unlike the seed's `mergeIPMap`, remote IPs are added
 * even when the local map is missing, and the primary flag follows the cloud. A local IP the cloud no longer
 * has is dropped when idle; when a pod still holds it, it becomes `Invalid` so the binding stays visible and
 * the address is never handed out again (it is dropped once the pod is gone).
 */
function mergeIpFamily(eni: NetworkInterface, merge: { family: IpFamily; remote: { ip: string; primary: boolean }[] }) {
  const local = eni[merge.family] ?? {};
  const remoteByIp = new Map(merge.remote.map((entry) => [entry.ip, entry]));
  for (const entry of ipEntries(eni, merge.family)) {
    const remote = remoteByIp.get(entry.ip);
    if (remote !== undefined) {
      entry.primary = remote.primary;
      if (entry.status === 'Invalid') entry.status = 'Valid';
    } else if (isIdle(entry)) {
      delete local[entry.ip];
    } else {
      entry.status = 'Invalid';
    }
  }
  for (const remote of merge.remote) {
    local[remote.ip] ??= { ip: remote.ip, primary: remote.primary, status: 'Valid' };
  }
  eni[merge.family] = local;
}

/** The cloud's prefixes into the CR's lists (see {@link mergePrefixList}); a family with none stays absent. */
function mergePrefixes(eni: NetworkInterface, cloud: CloudEni): void {
  for (const [key, remote] of [
    ['ipv4Prefix', cloud.ipv4Prefixes] as const,
    ['ipv6Prefix', cloud.ipv6Prefixes] as const,
  ]) {
    const merged = mergePrefixList(eni[key], remote);
    if (merged.length > 0) eni[key] = merged;
    else delete eni[key];
  }
}

export interface OpenApiMergeResult {
  enis: NetworkInterfaces;
  /** ENIs first seen in the cloud, now recorded. */
  added: string[];
  /**
   * ENIs the CR has (not marked `Deleting`) that the instance's listing left out: untouched here. The caller looks
   * each up by id and lets {@link resolveUnlistedEnis} decide; a sync never deletes them on its own.
   */
  unlisted: string[];
}

/**
 * Folds a full `DescribeNetworkInterfaces` of the instance into the CR's ENIs (the reference's `syncWithAPI`).
 * Primary ENIs are never managed. A known ENI takes the cloud's status unless the controller marked it
 * `Deleting`; the cloud's attributes refresh the record, missing CIDRs are filled in, and `unschedulable` follows
 * the cloud's tags and traffic mode (Terway's newer rule). Fields of the CR the model does not know are not
 * touched here (the status write keeps them). An ENI missing from the cloud's list is neither deleted nor marked
 * here, as the seed does: it is reported in `unlisted` for a lookup by id.
 */
export function mergeOpenApiEnis(input: {
  current: Readonly<NetworkInterfaces>;
  remote: readonly CloudEni[];
  vSwitchCidrs: Readonly<Record<string, VSwitchCidrs>>;
  eniSpec?: Readonly<EniSpec>;
}): OpenApiMergeResult {
  const enis = cloneNetworkInterfaces(input.current);
  const remote = [...input.remote]
    .filter((cloud) => cloud.type !== 'Primary')
    .sort((a, b) => (a.eniId < b.eniId ? -1 : a.eniId > b.eniId ? 1 : 0));
  const added: string[] = [];
  for (const cloud of remote) {
    const cidrs = input.vSwitchCidrs[cloud.vSwitchId];
    const known = enis[cloud.eniId];
    if (known === undefined) {
      enis[cloud.eniId] = eniFromCloud({ cloud, cidrs, eniSpec: input.eniSpec });
      added.push(cloud.eniId);
      continue;
    }
    if (known.status !== 'Deleting') known.status = cloud.status;
    known.macAddress = cloud.macAddress;
    known.vSwitchID = cloud.vSwitchId;
    known.securityGroupIDs = [...cloud.securityGroupIds].sort();
    known.primaryIPAddress = cloud.primaryIp;
    known.networkInterfaceTrafficMode = cloud.trafficMode;
    known.networkInterfaceType = cloud.type;
    // The vSwitch's CIDRs are the truth: a missing or wrong one (which makes addresses look Invalid) is corrected.
    if (cidrs?.ipv4Cidr !== undefined) known.ipv4CIDR = cidrs.ipv4Cidr;
    if (cidrs?.ipv6Cidr !== undefined) known.ipv6CIDR = cidrs.ipv6Cidr;
    if (input.eniSpec !== undefined) {
      if (isUnschedulableInCloud({ cloud, eniSpec: input.eniSpec })) known.unschedulable = true;
      else delete known.unschedulable;
    }
    mergeIpFamily(known, { family: 'ipv4', remote: cloud.ipv4 });
    mergeIpFamily(known, { family: 'ipv6', remote: ipv6Entries(cloud) });
    // Outside prefix mode the prefix lists are left as the CR has them (no sync, no GC of them).
    if (input.eniSpec?.enableIPPrefix === true) mergePrefixes(known, cloud);
  }
  const remoteIds = new Set(remote.map((cloud) => cloud.eniId));
  const unlisted = sortedKeys(enis).filter((eniId) => !remoteIds.has(eniId) && enis[eniId]?.status !== 'Deleting');
  return { enis, added, unlisted };
}
