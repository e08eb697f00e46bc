import type { CloudEni, EniTrafficMode, VSwitchInfo } from '../../ipam/index.js';

/** What the caller learns from every cloud call besides its result: the cloud's request id, for logs and errors. */
export interface EcsCallResult {
  requestId: string;
}

export interface CreateEniRequest {
  vSwitchId: string;
  securityGroupIds: readonly string[];
  resourceGroupId?: string;
  eniType: 'Secondary' | 'Trunk';
  trafficMode: EniTrafficMode;
  /**
   * IPv4 addresses of the new ENI, the primary included (ECS is asked for `count − 1` secondaries). With
   * `ipv4PrefixCount` set it must be 1: ECS takes secondary addresses or prefixes in one call, not both.
   */
  ipv4Count: number;
  ipv6Count: number;
  /** IPv4 /28 prefixes to create the ENI with (`Ipv4PrefixCount`, at most 10); omitted or 0: none. */
  ipv4PrefixCount?: number;
  /** IPv6 /80 prefixes to create the ENI with (`Ipv6PrefixCount`, at most 10); omitted or 0: none. */
  ipv6PrefixCount?: number;
  tags: Readonly<Record<string, string>>;
  /** Idempotency token: the same token returns the same ENI instead of creating another. */
  clientToken: string;
  description: string;
}

/**
 * The ECS/VPC calls eniflow makes, in the core's types. Every method rejects with an `EcsCallError` carrying the
 * classified failure; none retries by itself (Temporal does).
 */
export interface EcsApi {
  createEni(request: CreateEniRequest): Promise<EcsCallResult & { eni: CloudEni }>;
  attachEni(request: { eniId: string; instanceId: string }): Promise<EcsCallResult>;
  detachEni(request: { eniId: string; instanceId: string }): Promise<EcsCallResult>;
  deleteEni(request: { eniId: string }): Promise<EcsCallResult>;
  /** ENIs attached to an instance (paged to the end), or the given ENIs; `tags` filters by tag. */
  describeEnis(request: {
    instanceId?: string;
    eniIds?: readonly string[];
    tags?: Readonly<Record<string, string>>;
    vpcId?: string;
  }): Promise<CloudEni[]>;
  assignIpv4(request: {
    eniId: string;
    count: number;
    clientToken: string;
  }): Promise<EcsCallResult & { ips: string[] }>;
  assignIpv6(request: {
    eniId: string;
    count: number;
    clientToken: string;
  }): Promise<EcsCallResult & { ips: string[] }>;
  unassignIpv4(request: { eniId: string; ips: readonly string[] }): Promise<EcsCallResult>;
  unassignIpv6(request: { eniId: string; ips: readonly string[] }): Promise<EcsCallResult>;
  /** `AssignPrivateIpAddresses` with `Ipv4PrefixCount`: `count` (1–10) /28 prefixes, as `10.0.0.16/28`. */
  assignIpv4Prefixes(request: {
    eniId: string;
    count: number;
    clientToken: string;
  }): Promise<EcsCallResult & { prefixes: string[] }>;
  /** `AssignIpv6Addresses` with `Ipv6PrefixCount`: `count` (1–10) /80 prefixes. */
  assignIpv6Prefixes(request: {
    eniId: string;
    count: number;
    clientToken: string;
  }): Promise<EcsCallResult & { prefixes: string[] }>;
  /** `UnassignPrivateIpAddresses` with `Ipv4Prefix.N` (at most 10). */
  unassignIpv4Prefixes(request: { eniId: string; prefixes: readonly string[] }): Promise<EcsCallResult>;
  /** `UnassignIpv6Addresses` with `Ipv6Prefix.N` (at most 10). */
  unassignIpv6Prefixes(request: { eniId: string; prefixes: readonly string[] }): Promise<EcsCallResult>;
  /** `TagResources` on ENIs (`ResourceType=eni`, at most 50): adds or overwrites the given tags, others stay. */
  tagEnis(request: { eniIds: readonly string[]; tags: Readonly<Record<string, string>> }): Promise<EcsCallResult>;
  /** One vSwitch, or undefined when the cloud does not know it. */
  describeVSwitch(request: { vSwitchId: string }): Promise<VSwitchInfo | undefined>;
}
