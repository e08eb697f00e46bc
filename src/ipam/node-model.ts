/**
 * The Terway `Node` custom resource (`network.alibabacloud.com/v1beta1`) as plain JSON types.
 *
 * Field names are exactly those of Terway's CRD (see deploy/crd/), because Terway's per-node daemon reads
 * and writes the same objects. Every type here is plain JSON (no Map, Date or class) so it can cross a
 * Temporal boundary and be written back to Kubernetes unchanged.
 */

export const NODE_CR_API_VERSION = 'network.alibabacloud.com/v1beta1';
export const NODE_CR_KIND = 'Node';
export const NODE_CR_PLURAL = 'nodes';
export const NODE_CR_GROUP = 'network.alibabacloud.com';
export const NODE_CR_VERSION = 'v1beta1';
/** Finalizer the control-plane node controller adds; the IPAM controller removes it on deletion. */
export const NODE_CR_FINALIZER = 'network.alibabacloud.com/node-controller';
/** Label on the CR and the core Node selecting exclusive-ENI mode, in which this controller does nothing. */
export const EXCLUSIVE_ENI_MODE_LABEL = 'k8s.aliyun.com/exclusive-mode-eni-type';

export const ENI_TYPES = ['Secondary', 'Trunk', 'Primary', 'Member'] as const;
/** ECS network interface type (`Type` in the OpenAPI, `networkInterfaceType` in the CR). */
export type EniType = (typeof ENI_TYPES)[number];

export const ENI_TRAFFIC_MODES = ['Standard', 'HighPerformance'] as const;
/** `HighPerformance` ENIs carry ERDMA traffic; only ERDMA pods get their IPs. */
export type EniTrafficMode = (typeof ENI_TRAFFIC_MODES)[number];

export const ENI_STATUSES = ['Available', 'Attaching', 'InUse', 'Detaching', 'Deleting'] as const;
/**
 * ECS ENI status. The controller also writes `Deleting` itself, meaning "detach and delete this ENI".
 * Kept as a string in the CR because the cloud may report statuses this list does not know.
 */
export type EniStatus = (typeof ENI_STATUSES)[number];

export const IP_STATUSES = ['Valid', 'Deleting', 'Invalid'] as const;
/** `Deleting` marks an IP the next GC unassigns; `Invalid` is written by newer Terway versions only. */
export type IpStatus = (typeof IP_STATUSES)[number];

export const IP_PREFIX_STATUSES = ['Valid', 'Frozen', 'Invalid', 'Deleting'] as const;
/**
 * Status of an IP prefix in prefix mode. `Valid` and `Frozen` prefixes hold an ENI slot and are the daemon's to use
 * (`Frozen` only until `frozenExpireAt`); `Invalid` is one the cloud no longer has; `Deleting` is one the GC unassigns.
 */
export type IpPrefixStatus = (typeof IP_PREFIX_STATUSES)[number];

export const VSWITCH_SELECT_POLICIES = ['ordered', 'random', 'most'] as const;
export type VSwitchSelectPolicy = (typeof VSWITCH_SELECT_POLICIES)[number];

export const ENI_CONDITION_TYPES = ['InsufficientIP', 'OperationErr'] as const;
export type EniConditionType = (typeof ENI_CONDITION_TYPES)[number];

/** `spec.nodeMetadata`, written by the control plane from the core Node. */
export interface NodeMetadata {
  regionID?: string;
  instanceType?: string;
  instanceID?: string;
  zoneID?: string;
}

/** `spec.nodeCap`, written by the control plane from ECS `DescribeInstanceTypes`. */
export interface NodeCap {
  /** `EniQuantity`, including the primary ENI. */
  adapters?: number;
  eriQuantity?: number;
  totalAdapters?: number;
  /** `EniPrivateIpAddressQuantity`: IPv4 addresses per ENI, the primary IP included. */
  ipv4PerAdapter?: number;
  ipv6PerAdapter?: number;
  memberAdapterLimit?: number;
  maxMemberAdapterLimit?: number;
  instanceBandwidthRx?: number;
  instanceBandwidthTx?: number;
}

/** `spec.eni`, written by the per-node daemon; absent until the daemon is ready. */
export interface EniSpec {
  tag?: Record<string, string>;
  tagFilter?: Record<string, string>;
  vSwitchOptions?: string[];
  securityGroupIDs?: string[];
  resourceGroupID?: string;
  enableIPv4?: boolean;
  enableIPv6?: boolean;
  enableERDMA?: boolean;
  enableTrunk?: boolean;
  vSwitchSelectPolicy?: VSwitchSelectPolicy;
  /** Tags marking ENIs this controller must never use or touch (Terway's newer `tagBlockList`), beside the defaults. */
  tagBlockList?: EniTag[];
  /** Prefix mode (Terway v1.17): the controller keeps prefixes on the ENIs, the daemon binds pods. Fixed at creation. */
  enableIPPrefix?: boolean;
  /** The node's total of IPv4 /28 prefixes, spread over its InUse ENIs. */
  ipv4PrefixCount?: number;
  /** IPv6 /80 prefixes on an IPv6-only node: 0 or 1 (dual-stack nodes get one per ENI holding IPv4 prefixes). */
  ipv6PrefixCount?: number;
}

/** One ECS tag, as `spec.eni.tagBlockList` lists them. */
export interface EniTag {
  key: string;
  value: string;
}

/** `spec.pool`, written by the per-node daemon; absent until the daemon is ready. */
export interface PoolSpec {
  maxPoolSize: number;
  minPoolSize: number;
  /** Go duration (`"30s"`): this node's pool period instead of the controller's `gcPeriodMs` (floored at 1 s). */
  poolSyncPeriod?: string;
  /** Addresses to allocate once, when the node is first seen (Terway's `ip_warm_up_size`); 0 or absent: none. */
  warmUpSize?: number;
  /** Idle IP reclaim (Terway's `idle_ip_reclaim_*`): off unless `after` is set and `batchSize` > 0. */
  reclaim?: IdleIpReclaimPolicy;
}

/** `spec.pool.reclaim`: after `after` without allocation, every jittered `interval` release `batchSize` idle IPs more. */
export interface IdleIpReclaimPolicy {
  /** Go duration: how long the pool must go without allocation before reclaim starts. */
  after?: string;
  /** Go duration between two reclaim batches (Terway's daemon default: 10m). */
  interval?: string;
  batchSize?: number;
  /** Decimal text in [0, 1] (Terway's type): each interval is stretched by up to this fraction; default 0.1. */
  jitterFactor?: string;
}

/** One entry of `spec.flavor`: how many ENIs of one kind the node should have. */
export interface FlavorEntry {
  networkInterfaceType: EniType;
  networkInterfaceTrafficMode: EniTrafficMode;
  count: number;
}

export interface NodeSpec {
  nodeMetadata?: NodeMetadata;
  nodeCap?: NodeCap;
  eni?: EniSpec;
  pool?: PoolSpec;
  flavor?: FlavorEntry[];
}

/**
 * The spec of a node the controller acts on: the Terway daemon has written `spec.eni` and `spec.pool`. Only
 * `validateNodeCr` hands one out (a ready, unblocked node), so no caller has to assume it.
 */
export type ReadyNodeSpec = NodeSpec & Required<Pick<NodeSpec, 'eni' | 'pool'>>;

/** One IP of an ENI in `status.networkInterfaces.<eni>.ipv4|ipv6.<ip>`. */
export interface IpEntry {
  ip: string;
  primary: boolean;
  status: IpStatus;
  /** `<namespace>/<name>` of the pod the IP is bound to; absent or empty when idle. */
  podID?: string;
  podUID?: string;
}

/** One entry of `status.networkInterfaces.<eni>.ipv4Prefix[]` / `ipv6Prefix[]`. */
export interface IpPrefixEntry {
  /** CIDR: an IPv4 /28 or an IPv6 /80. */
  prefix: string;
  status: IpPrefixStatus;
  /** RFC 3339 time a `Frozen` prefix returns to `Valid`. */
  frozenExpireAt?: string;
}

/** A condition on one ENI, keyed by {@link EniConditionType}. */
export interface EniCondition {
  /** RFC 3339 time the condition was last written. */
  observedTime: string;
  message: string;
}

/** One managed ENI in `status.networkInterfaces`, keyed by its id. The primary ENI never appears. */
export interface NetworkInterface {
  id: string;
  status: string;
  macAddress?: string;
  vSwitchID?: string;
  securityGroupIDs?: string[];
  primaryIPAddress?: string;
  networkInterfaceTrafficMode?: string;
  networkInterfaceType?: string;
  ipv4?: Record<string, IpEntry>;
  ipv6?: Record<string, IpEntry>;
  ipv4CIDR?: string;
  ipv6CIDR?: string;
  ipv4Prefix?: IpPrefixEntry[];
  ipv6Prefix?: IpPrefixEntry[];
  conditions?: Partial<Record<EniConditionType, EniCondition>>;
  /**
   * Terway's newer flag: the ENI stays in the CR but is never assigned, grown, reclaimed, detached or deleted
   * (blocked by tag, an unmanaged HighPerformance ENI, or one the sync could not account for).
   */
  unschedulable?: boolean;
}

/** ENIs of one node keyed by ENI id. Always iterate with {@link sortedKeys}, never in insertion order. */
export type NetworkInterfaces = Record<string, NetworkInterface>;

export interface NodeStatus {
  /** RFC 3339 time after which the next full OpenAPI sync is due. */
  nextSyncOpenAPITime?: string;
  lastSyncOpenAPITime?: string;
  /** RFC 3339: when a pod last took a pool IP or an allocation last started (idle reclaim counts from here). */
  lastModifiedTime?: string;
  /** RFC 3339: when the next idle reclaim batch is due; absent when none is planned. */
  nextIdleIPReclaimTime?: string;
  /** Warm-up of the node, set once at first sight from `spec.pool.warmUpSize` (never re-read). */
  warmUpTarget?: number;
  /** Addresses the cloud returned (assign and create results) since warm-up began. */
  warmUpAllocatedCount?: number;
  /** Once true, warm-up never runs again for this node. */
  warmUpCompleted?: boolean;
  networkInterfaces?: NetworkInterfaces;
}

export interface ObjectMeta {
  name: string;
  uid?: string;
  resourceVersion?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  deletionTimestamp?: string;
}

/** The whole `Node` custom resource. */
export interface NodeCr {
  apiVersion: typeof NODE_CR_API_VERSION;
  kind: typeof NODE_CR_KIND;
  metadata: ObjectMeta;
  spec: NodeSpec;
  status?: NodeStatus;
}

/** A `Node` resource whose spec is ready (see {@link ReadyNodeSpec}). */
export type ReadyNodeCr = NodeCr & { spec: ReadyNodeSpec };

/** IP family of an address; the CR keeps the two families in separate maps. */
export type IpFamily = 'ipv4' | 'ipv6';

/** Keys of a record in a fixed order, so results never depend on insertion order. */
export function sortedKeys(record: Readonly<Record<string, unknown>> | undefined): string[] {
  return record === undefined ? [] : Object.keys(record).sort();
}
