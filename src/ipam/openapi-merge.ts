import { cloneNetworkInterfaces, ipEntries, isIdle } from './eni-records.js';
import { sortedKeys } from './node-model.js';
import type { IpEntry, IpFamily, NetworkInterface, NetworkInterfaces } from './node-model.js';

/** One ENI as ECS `DescribeNetworkInterfaces` reports it, reduced to what the CR keeps. */
export interface CloudEni {
  eniId: string;
  status: string;
  type: string;
  trafficMode: string;
  macAddress: string;
  vSwitchId: string;
  securityGroupIds: string[];
  primaryIp: string;
  ipv4: { ip: string; primary: boolean }[];
  ipv6: string[];
}

/** CIDRs of a vSwitch, copied into each ENI so the daemon can derive the gateway. */
export interface VSwitchCidrs {
  ipv4Cidr?: string;
  ipv6Cidr?: string;
}

function ipMapFrom(entries: readonly { ip: string; primary: boolean }[]): Record<string, IpEntry> {
  const map: Record<string, IpEntry> = {};
  for (const entry of entries) map[entry.ip] = { ip: entry.ip, primary: entry.primary, status: 'Valid' };
  return map;
}

function ipv6Entries(cloud: CloudEni): { ip: string; primary: boolean }[] {
  return cloud.ipv6.map((ip) => ({ ip, primary: false }));
}

/** The CR record for an ENI first seen in the cloud (`newENIFromAPI` plus the vSwitch CIDRs). */
export function eniFromCloud(input: { cloud: CloudEni; cidrs?: VSwitchCidrs | undefined }): NetworkInterface {
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

export interface OpenApiMergeResult {
  enis: NetworkInterfaces;
  /** ENIs first seen in the cloud, now recorded. */
  added: string[];
  /** ENIs the CR had but the instance no longer lists, newly marked `Deleting` so GC detaches and deletes them. */
  vanished: string[];
}

/**
 * Folds a full `DescribeNetworkInterfaces` of the instance into the CR's ENIs (the reference's `syncWithAPI`).
 * Primary ENIs are never managed. A known ENI takes the cloud's status unless the controller marked it
 * `Deleting`; the cloud's attributes refresh the record and missing CIDRs are filled in. An ENI missing from
 * the cloud's list is not deleted on the spot as the seed does: it is marked `Deleting`, so the GC (whose
 * delete treats "not found" as done and refuses an ENI still attached elsewhere) removes it safely.
 */
export function mergeOpenApiEnis(input: {
  current: Readonly<NetworkInterfaces>;
  remote: readonly CloudEni[];
  vSwitchCidrs: Readonly<Record<string, VSwitchCidrs>>;
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
      enis[cloud.eniId] = eniFromCloud({ cloud, cidrs });
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
    if (known.ipv4CIDR === undefined && cidrs?.ipv4Cidr !== undefined) known.ipv4CIDR = cidrs.ipv4Cidr;
    if (known.ipv6CIDR === undefined && cidrs?.ipv6Cidr !== undefined) known.ipv6CIDR = cidrs.ipv6Cidr;
    mergeIpFamily(known, { family: 'ipv4', remote: cloud.ipv4 });
    mergeIpFamily(known, { family: 'ipv6', remote: ipv6Entries(cloud) });
  }
  const remoteIds = new Set(remote.map((cloud) => cloud.eniId));
  const vanished: string[] = [];
  for (const eniId of sortedKeys(enis)) {
    const eni = enis[eniId];
    if (eni === undefined || remoteIds.has(eniId) || eni.status === 'Deleting') continue;
    vanished.push(eniId);
    eni.status = 'Deleting';
  }
  return { enis, added, vanished };
}
