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
  /** IPv4 addresses of the new ENI, the primary included (ECS is asked for `count − 1` secondaries). */
  ipv4Count: number;
  ipv6Count: number;
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
  /** One vSwitch, or undefined when the cloud does not know it. */
  describeVSwitch(request: { vSwitchId: string }): Promise<VSwitchInfo | undefined>;
}
