import type { Ipv4AddressPool, Ipv6AddressPool } from './address-pool.js';
import type {
  FixtureInstance,
  FixtureInstanceType,
  FixtureSecurityGroup,
  FixtureVSwitch,
  InstanceStatus,
} from './fixture.js';

export type EniStatus = 'Available' | 'Attaching' | 'InUse' | 'Detaching' | 'Deleting';
export type EniType = 'Primary' | 'Secondary' | 'Trunk';
export type EniTrafficMode = 'Standard' | 'HighPerformance';

export interface ResourceTag {
  key: string;
  value: string;
}

/** An asynchronous state change in flight; `dueAtMs` is on the model's clock. */
export interface PendingTransition {
  kind: 'attach' | 'detach' | 'delete';
  dueAtMs: number;
  /** Attach only: end in Available instead of InUse (an injected attach failure). */
  failAttach: boolean;
}

/** One ENI as the emulator stores it: plain data, so a snapshot is a JSON copy. */
export interface EniRecord {
  eniId: string;
  /** Creation order; Describe lists and pages in this order. */
  sequence: number;
  type: EniType;
  trafficMode: EniTrafficMode;
  status: EniStatus;
  vpcId: string;
  vSwitchId: string;
  zoneId: string;
  macAddress: string;
  primaryIp: string;
  secondaryIps: string[];
  ipv6s: string[];
  /** IPv4 /28 prefixes, in assignment order; each takes one of the ENI's IPv4 slots and 16 vSwitch addresses. */
  ipv4Prefixes: string[];
  /** IPv6 /80 prefixes, in assignment order; each takes one of the ENI's IPv6 slots. */
  ipv6Prefixes: string[];
  securityGroupIds: string[];
  tags: ResourceTag[];
  instanceId: string | null;
  deviceIndex: number | null;
  name: string;
  description: string;
  deleteOnRelease: boolean;
  creationTime: string;
  pending: PendingTransition | null;
}

export interface VSwitchRecord {
  vSwitchId: string;
  vpcId: string;
  zoneId: string;
  cidrBlock: string;
  ipv6CidrBlock: string | null;
  name: string;
  tags: ResourceTag[];
  ipv4: Ipv4AddressPool;
  ipv6: Ipv6AddressPool | null;
}

export interface InstanceRecord {
  instanceId: string;
  instanceType: FixtureInstanceType;
  zoneId: string;
  vpcId: string;
  vSwitchId: string;
  securityGroupIds: string[];
  status: InstanceStatus;
  name: string;
  primaryEniId: string;
}

/** What leak audits and benchmarks read: every ENI and address with its owner, tags and status. */
export interface Inventory {
  regionId: string;
  vSwitches: {
    vSwitchId: string;
    vpcId: string;
    zoneId: string;
    cidrBlock: string;
    ipv6CidrBlock: string | null;
    availableIpAddressCount: number;
    usedIpv4Count: number;
    usedIpv6Count: number;
    /** IPv6 /80 prefixes handed out (their addresses are not in `usedIpv6Count`). */
    ipv6PrefixCount: number;
  }[];
  instances: {
    instanceId: string;
    instanceType: string;
    zoneId: string;
    status: InstanceStatus;
    eniIds: string[];
  }[];
  networkInterfaces: (Omit<EniRecord, 'tags'> & { tags: Record<string, string> })[];
  ipAddresses: {
    address: string;
    family: 'ipv4' | 'ipv6';
    primary: boolean;
    eniId: string;
    instanceId: string | null;
    vSwitchId: string;
  }[];
  /** Every IP prefix with its ENI; an IPv4 prefix's 16 addresses count in its vSwitch's `usedIpv4Count`. */
  ipPrefixes: {
    prefix: string;
    family: 'ipv4' | 'ipv6';
    eniId: string;
    instanceId: string | null;
    vSwitchId: string;
  }[];
}

/** JSON form of the whole cloud state, for save/load (`GET`/`PUT /__admin/state`, `--state`). */
export interface StateSnapshot {
  format: 'eniflow-ecs-emulator-state/1';
  savedAt: string;
  regionId: string;
  ownerId: string;
  topology: {
    vSwitches: FixtureVSwitch[];
    securityGroups: FixtureSecurityGroup[];
    instanceTypes: FixtureInstanceType[];
    instances: (FixtureInstance & { primaryEniId: string })[];
  };
  nextEniNumber: number;
  /** ENIs in creation order; `pending.dueAtMs` is stored as the time still left. */
  networkInterfaces: EniRecord[];
}

/** Input of `CloudModel.createEni`; counts and explicit addresses are mutually exclusive per family. */
export interface CreateEniInput {
  vSwitchId: string;
  securityGroupIds: string[];
  type?: Exclude<EniType, 'Primary'>;
  trafficMode?: EniTrafficMode;
  primaryIp?: string;
  secondaryIps?: string[];
  secondaryCount?: number;
  ipv6s?: string[];
  ipv6Count?: number;
  /** IPv4 /28 prefixes: explicit ones or a count, never both (and never with secondary addresses). */
  ipv4Prefixes?: string[];
  ipv4PrefixCount?: number;
  /** IPv6 /80 prefixes: explicit ones or a count, never both (and never with IPv6 addresses). */
  ipv6Prefixes?: string[];
  ipv6PrefixCount?: number;
  tags?: ResourceTag[];
  name?: string;
  description?: string;
  deleteOnRelease?: boolean;
}
