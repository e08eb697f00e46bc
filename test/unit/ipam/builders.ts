/**
 * Builders for IPAM test data: sensible defaults plus overrides, so each table row states only what matters.
 * Nothing here is shared mutable state: every call returns fresh objects.
 */
import type {
  CloudEni,
  EniAllocation,
  IpEntry,
  NetworkInterface,
  NetworkInterfaces,
  NodeSpec,
  PodIpRequest,
  PodSnapshot,
  VSwitchInfo,
} from '../../../src/ipam/index.js';
import { ENI_KIND_SHAPE, fillAfterAttach, recordAssignedIps, recordCreatedEni } from '../../../src/ipam/index.js';

export function aSpec(
  overrides: Partial<NodeSpec> & { eni?: NodeSpec['eni']; pool?: NodeSpec['pool'] } = {},
): NodeSpec {
  return {
    nodeMetadata: { regionID: 'cn-hangzhou', instanceID: 'i-1', instanceType: 'ecs.g7.large', zoneID: 'zone-a' },
    nodeCap: { adapters: 4, totalAdapters: 4, ipv4PerAdapter: 10, ipv6PerAdapter: 10, eriQuantity: 0 },
    eni: {
      enableIPv4: true,
      enableIPv6: false,
      vSwitchOptions: ['vsw-a'],
      securityGroupIDs: ['sg-1'],
      vSwitchSelectPolicy: 'ordered',
    },
    pool: { minPoolSize: 0, maxPoolSize: 5 },
    flavor: [{ networkInterfaceType: 'Secondary', networkInterfaceTrafficMode: 'Standard', count: 3 }],
    ...overrides,
  };
}

export function dualStackSpec(overrides: Partial<NodeSpec> = {}): NodeSpec {
  const base = aSpec(overrides);
  return { ...base, eni: { ...base.eni, enableIPv4: true, enableIPv6: true } };
}

/** An IP entry; `pod` binds it to `<ns>/<name>`. */
export function anIp(ip: string, opts: { pod?: string; status?: IpEntry['status']; primary?: boolean } = {}): IpEntry {
  const entry: IpEntry = { ip, primary: opts.primary ?? false, status: opts.status ?? 'Valid' };
  if (opts.pod !== undefined) {
    entry.podID = opts.pod;
    entry.podUID = `uid-${opts.pod}`;
  }
  return entry;
}

export function anEni(
  id: string,
  opts: {
    status?: string;
    type?: string;
    mode?: string;
    vSwitch?: string;
    ipv4?: IpEntry[];
    ipv6?: IpEntry[];
    unschedulable?: boolean;
  } = {},
): NetworkInterface {
  const eni: NetworkInterface = {
    id,
    status: opts.status ?? 'InUse',
    macAddress: '00:16:3e:00:00:01',
    vSwitchID: opts.vSwitch ?? 'vsw-a',
    securityGroupIDs: ['sg-1'],
    primaryIPAddress: opts.ipv4?.find((entry) => entry.primary)?.ip ?? '',
    networkInterfaceTrafficMode: opts.mode ?? 'Standard',
    networkInterfaceType: opts.type ?? 'Secondary',
    ipv4: {},
    ipv6: {},
  };
  if (opts.unschedulable !== undefined) eni.unschedulable = opts.unschedulable;
  for (const entry of opts.ipv4 ?? []) (eni.ipv4 ??= {})[entry.ip] = entry;
  for (const entry of opts.ipv6 ?? []) (eni.ipv6 ??= {})[entry.ip] = entry;
  return eni;
}

export function enisOf(...list: NetworkInterface[]): NetworkInterfaces {
  return Object.fromEntries(list.map((eni) => [eni.id, eni]));
}

/** `count` IPv4 entries `prefix.start … prefix.start+count-1`, the first one primary unless told otherwise. */
export function v4Range(prefix: string, opts: { start?: number; count: number; primaryFirst?: boolean }): IpEntry[] {
  const start = opts.start ?? 10;
  return Array.from({ length: opts.count }, (_, i) =>
    anIp(`${prefix}.${start + i}`, { primary: (opts.primaryFirst ?? true) && i === 0 }),
  );
}

export function v6Range(prefix: string, opts: { start?: number; count: number }): IpEntry[] {
  const start = opts.start ?? 10;
  return Array.from({ length: opts.count }, (_, i) => anIp(`${prefix}::${(start + i).toString(16)}`));
}

export function aRequest(podId: string, overrides: Partial<PodIpRequest> = {}): PodIpRequest {
  return {
    podId,
    podUid: `uid-${podId}`,
    requireIpv4: true,
    requireIpv6: false,
    requireErdma: false,
    ...overrides,
  };
}

export function aPod(
  name: string,
  opts: {
    namespace?: string;
    hostNetwork?: boolean;
    phase?: string;
    podIP?: string;
    podIPs?: string[];
    erdma?: string;
    initErdma?: string;
    annotations?: Record<string, string>;
  } = {},
): PodSnapshot {
  const pod: PodSnapshot = {
    metadata: { namespace: opts.namespace ?? 'default', name, uid: `uid-${name}` },
    spec: {
      containers: [{ resources: { limits: opts.erdma === undefined ? {} : { 'aliyun/erdma': opts.erdma } } }],
    },
    status: {},
  };
  if (opts.annotations !== undefined) pod.metadata.annotations = opts.annotations;
  if (opts.hostNetwork !== undefined) pod.spec.hostNetwork = opts.hostNetwork;
  if (opts.initErdma !== undefined)
    pod.spec.initContainers = [{ resources: { limits: { 'aliyun/erdma': opts.initErdma } } }];
  if (opts.phase !== undefined) (pod.status ??= {}).phase = opts.phase;
  if (opts.podIP !== undefined) (pod.status ??= {}).podIP = opts.podIP;
  if (opts.podIPs !== undefined) (pod.status ??= {}).podIPs = opts.podIPs.map((ip) => ({ ip }));
  return pod;
}

/** One ENI as the cloud reports it (`DescribeNetworkInterfaces`), attached nowhere unless overridden. */
export function aCloudEni(eniId: string, overrides: Partial<CloudEni> = {}): CloudEni {
  return {
    eniId,
    status: 'InUse',
    type: 'Secondary',
    trafficMode: 'Standard',
    macAddress: '00:16:3e:aa:bb:cc',
    vSwitchId: 'vsw-a',
    securityGroupIds: ['sg-2', 'sg-1'],
    primaryIp: '10.0.0.1',
    ipv4: [
      { ip: '10.0.0.1', primary: true },
      { ip: '10.0.0.2', primary: false },
    ],
    ipv6: ['fd00::1'],
    ipv4Prefixes: [],
    ipv6Prefixes: [],
    ...overrides,
  };
}

export function aVSwitch(id: string, overrides: Partial<VSwitchInfo> = {}): VSwitchInfo {
  return { vSwitchId: id, zoneId: 'zone-a', availableIpCount: 200, ipv4Cidr: '192.168.0.0/24', ...overrides };
}

export function vSwitchesOf(...list: VSwitchInfo[]): Record<string, VSwitchInfo> {
  return Object.fromEntries(list.map((info) => [info.vSwitchId, info]));
}

/**
 * Carries out an allocation plan the way the cloud would: assigned addresses come from a per-test counter and
 * new ENIs are InUse at once. Used to check the pool invariants end to end without any cloud.
 */
export function carryOutAllocations(input: {
  enis: NetworkInterfaces;
  allocations: readonly EniAllocation[];
  vSwitches?: Record<string, VSwitchInfo>;
}): NetworkInterfaces {
  let enis = input.enis;
  // Addresses and ENI ids already on the node are skipped, so plans carried out one after the other never collide.
  const used = new Set(
    Object.values(enis).flatMap((eni) => [...Object.keys(eni.ipv4 ?? {}), ...Object.keys(eni.ipv6 ?? {})]),
  );
  let counter = 0;
  let eniCounter = 0;
  const fresh = (make: () => string): string => {
    let candidate = make();
    while (used.has(candidate)) candidate = make();
    used.add(candidate);
    return candidate;
  };
  const nextV4 = (): string =>
    fresh(() => {
      counter += 1;
      return `172.16.${Math.floor(counter / 250)}.${(counter % 250) + 1}`;
    });
  const nextV6 = (): string =>
    fresh(() => {
      counter += 1;
      return `2408:4000::${counter.toString(16)}`;
    });
  const assign = (eniId: string, counts: { ipv4Count: number; ipv6Count: number }): void => {
    enis = recordAssignedIps({ enis, eniId, family: 'ipv4', ips: Array.from({ length: counts.ipv4Count }, nextV4) });
    enis = recordAssignedIps({ enis, eniId, family: 'ipv6', ips: Array.from({ length: counts.ipv6Count }, nextV6) });
  };
  for (const allocation of input.allocations) {
    if (allocation.kind === 'assignIps') {
      assign(allocation.eniId, allocation);
      continue;
    }
    eniCounter += 1;
    while (enis[`eni-new-${eniCounter}`] !== undefined) eniCounter += 1;
    const shape = ENI_KIND_SHAPE[allocation.eniKind];
    const ipv4 = Array.from({ length: Math.max(1, allocation.ipv4Count) }, (_, i) => ({
      ip: nextV4(),
      primary: i === 0,
    }));
    const cloud: CloudEni = {
      eniId: `eni-new-${eniCounter}`,
      status: 'InUse',
      type: shape.type,
      trafficMode: shape.trafficMode,
      macAddress: '00:16:3e:ff:ff:ff',
      vSwitchId: allocation.vSwitchId,
      securityGroupIds: ['sg-1'],
      primaryIp: ipv4[0]?.ip ?? '',
      ipv4,
      ipv6: Array.from({ length: allocation.ipv6Count }, nextV6),
      ipv4Prefixes: [],
      ipv6Prefixes: [],
    };
    const ipv4Cidr = input.vSwitches?.[allocation.vSwitchId]?.ipv4Cidr;
    enis = recordCreatedEni({ enis, cloud, cidrs: ipv4Cidr === undefined ? {} : { ipv4Cidr } });
    // Once attached, the saga assigns what the create could not carry.
    assign(cloud.eniId, fillAfterAttach(allocation, { ipv4: cloud.ipv4.length, ipv6: cloud.ipv6.length }));
  }
  return enis;
}
