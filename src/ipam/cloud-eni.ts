/** What ECS reports about ENIs and vSwitches, in the shape the pure core reads it. */

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
  /** IPv4 prefixes (`10.0.0.16/28`) on the ENI, sorted; empty when none. */
  ipv4Prefixes: string[];
  /** IPv6 prefixes (`2408:4000:1:2:3::/80`) on the ENI, sorted; empty when none. */
  ipv6Prefixes: string[];
  /** The instance the ENI is attached to, when the cloud says (absent or empty: not attached). */
  instanceId?: string;
  /** The ENI's tags, when the cloud says. */
  tags?: Record<string, string>;
  /** When the cloud created it (RFC 3339), when the cloud says. */
  creationTime?: string;
}

/** CIDRs of a vSwitch, copied into each ENI so the daemon can derive the gateway. */
export interface VSwitchCidrs {
  ipv4Cidr?: string;
  ipv6Cidr?: string;
}
