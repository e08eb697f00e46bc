/** The SDK's shapes of an ENI and of tags, mapped to and from the core's. */
import type { CloudEni } from '../../ipam/index.js';

export function tagsOf(tags: Readonly<Record<string, string>>): { key: string; value: string }[] {
  return Object.keys(tags)
    .sort()
    .map((key) => ({ key, value: tags[key] ?? '' }));
}

export interface SdkEni {
  networkInterfaceId?: string;
  status?: string;
  type?: string;
  networkInterfaceTrafficMode?: string;
  macAddress?: string;
  vSwitchId?: string;
  privateIpAddress?: string;
  securityGroupIds?: { securityGroupId?: string[] };
  privateIpSets?: { privateIpSet?: { privateIpAddress?: string; primary?: boolean }[] };
  ipv6Sets?: { ipv6Set?: { ipv6Address?: string }[] };
  ipv4PrefixSets?: { ipv4PrefixSet?: { ipv4Prefix?: string }[] };
  ipv6PrefixSets?: { ipv6PrefixSet?: { ipv6Prefix?: string }[] };
  instanceId?: string;
  tags?: { tag?: { tagKey?: string; tagValue?: string }[] };
  creationTime?: string;
}

/** Prefixes as the core keeps them: the non-empty ones, in code-unit order, so lists compare between calls. */
export function sortedPrefixes(prefixes: readonly (string | undefined)[]): string[] {
  return prefixes.filter((prefix): prefix is string => prefix !== undefined && prefix !== '').sort();
}

export function cloudEniFrom(sdk: SdkEni): CloudEni {
  return {
    eniId: sdk.networkInterfaceId ?? '',
    status: sdk.status ?? '',
    type: sdk.type ?? '',
    trafficMode: sdk.networkInterfaceTrafficMode ?? 'Standard',
    macAddress: sdk.macAddress ?? '',
    vSwitchId: sdk.vSwitchId ?? '',
    securityGroupIds: [...(sdk.securityGroupIds?.securityGroupId ?? [])],
    primaryIp: sdk.privateIpAddress ?? '',
    ipv4: (sdk.privateIpSets?.privateIpSet ?? []).flatMap((set) =>
      set.privateIpAddress === undefined ? [] : [{ ip: set.privateIpAddress, primary: set.primary === true }],
    ),
    ipv6: (sdk.ipv6Sets?.ipv6Set ?? []).flatMap((set) => (set.ipv6Address === undefined ? [] : [set.ipv6Address])),
    ipv4Prefixes: sortedPrefixes((sdk.ipv4PrefixSets?.ipv4PrefixSet ?? []).map((set) => set.ipv4Prefix)),
    ipv6Prefixes: sortedPrefixes((sdk.ipv6PrefixSets?.ipv6PrefixSet ?? []).map((set) => set.ipv6Prefix)),
    instanceId: sdk.instanceId ?? '',
    ...(sdk.creationTime === undefined ? {} : { creationTime: sdk.creationTime }),
    tags: Object.fromEntries(
      (sdk.tags?.tag ?? [])
        .flatMap((tag) => (tag.tagKey === undefined ? [] : [[tag.tagKey, tag.tagValue ?? ''] as const]))
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
    ),
  };
}
