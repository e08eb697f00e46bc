import { takeIpv4, takeIpv6 } from './address-allocation.js';
import { Ipv4AddressPool, Ipv6AddressPool } from './address-pool.js';
import { apiError } from './api-error.js';
import type { EmulatorFixture, FixtureInstance } from './fixture.js';
import type {
  EniRecord,
  EniTrafficMode,
  EniType,
  InstanceRecord,
  Inventory,
  PendingTransition,
  ResourceTag,
  StateSnapshot,
  VSwitchRecord,
} from './model-types.js';
import { inventoryOf, snapshotOf } from './model-views.js';
import type { EmulatorLimits, TransitionDelays } from './settings.js';

/** Input of {@link CloudModel.createEni}; counts and explicit addresses are mutually exclusive per family. */
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
  tags?: ResourceTag[];
  name?: string;
  description?: string;
  deleteOnRelease?: boolean;
}

/** Input of the Assign calls: either a count or explicit addresses. */
export interface AssignInput {
  eniId: string;
  count?: number;
  addresses?: string[];
}

/** Most secondary IPv4 addresses CreateNetworkInterface accepts (ecs-openapi.md §7.1). */
const MAX_SECONDARY_AT_CREATE = 49;
/** Most IPv6 addresses CreateNetworkInterface accepts (ecs-openapi.md §7.1). */
const MAX_IPV6_AT_CREATE = 10;

interface ModelOptions {
  regionId: string;
  ownerId: string;
  clock: () => number;
  limits: EmulatorLimits;
  transitionDelays: TransitionDelays;
}

function tagsFromMap(map: Record<string, string> | undefined): ResourceTag[] {
  return Object.entries(map ?? {}).map(([key, value]) => ({ key, value }));
}

/**
 * The cloud state and every rule that changes it: vSwitch address accounting, ENI quotas and the asynchronous ENI
 * state machine. Methods throw {@link EmulatorApiError} exactly where the real API refuses. Time-based transitions
 * are settled lazily against the injected clock at the start of every call, so there are no timers to leak and a
 * test can drive the model with a fake clock.
 */
export class CloudModel {
  readonly regionId: string;
  readonly ownerId: string;
  limits: EmulatorLimits;
  transitionDelays: TransitionDelays;
  private readonly clock: () => number;
  private readonly vSwitches = new Map<string, VSwitchRecord>();
  private readonly securityGroups = new Map<string, string>();
  private readonly instanceTypes = new Map<string, EmulatorFixture['instanceTypes'][number]>();
  private readonly instances = new Map<string, InstanceRecord>();
  /** Insertion order is creation order, which Describe pages by. */
  private readonly enis = new Map<string, EniRecord>();
  private readonly pending = new Set<EniRecord>();
  private nextEniNumber = 1;
  private nextSequence = 1;

  private constructor(options: ModelOptions) {
    this.regionId = options.regionId;
    this.ownerId = options.ownerId;
    this.clock = options.clock;
    this.limits = options.limits;
    this.transitionDelays = options.transitionDelays;
  }

  /** Builds the state a fixture describes: its topology, a Primary ENI per instance and the initial ENIs. */
  static fromFixture(
    fixture: EmulatorFixture,
    options: { clock: () => number; limits: EmulatorLimits; transitionDelays: TransitionDelays },
  ): CloudModel {
    const model = new CloudModel({ regionId: fixture.regionId, ownerId: fixture.ownerId ?? '1234567890', ...options });
    model.loadTopology(fixture);
    for (const instance of fixture.instances) model.addInstance(instance, null);
    for (const initial of fixture.networkInterfaces ?? []) {
      const eni = model.createEni({
        vSwitchId: initial.vSwitchId,
        securityGroupIds: initial.securityGroupIds,
        type: initial.type ?? 'Secondary',
        trafficMode: initial.trafficMode ?? 'Standard',
        ...(initial.secondaryIpCount ? { secondaryCount: initial.secondaryIpCount } : {}),
        ...(initial.ipv6Count ? { ipv6Count: initial.ipv6Count } : {}),
        tags: tagsFromMap(initial.tags),
        ...(initial.networkInterfaceName === undefined ? {} : { name: initial.networkInterfaceName }),
        ...(initial.description === undefined ? {} : { description: initial.description }),
      });
      if (initial.networkInterfaceId !== undefined) model.renameEni(eni, initial.networkInterfaceId);
      if (initial.instanceId !== undefined) {
        model.checkAttachable(eni, model.requireInstance(initial.instanceId));
        eni.instanceId = initial.instanceId;
        eni.deviceIndex = model.lowestFreeDeviceIndex(initial.instanceId);
        eni.status = 'InUse';
      }
    }
    return model;
  }

  /** Rebuilds a model from {@link CloudModel.snapshot} output; pending transitions resume with their time left. */
  static fromSnapshot(
    snapshot: StateSnapshot,
    options: { clock: () => number; limits: EmulatorLimits; transitionDelays: TransitionDelays },
  ): CloudModel {
    if ((snapshot as { format?: unknown }).format !== 'eniflow-ecs-emulator-state/1') {
      throw new Error('unknown state snapshot format');
    }
    const model = new CloudModel({ regionId: snapshot.regionId, ownerId: snapshot.ownerId, ...options });
    model.loadTopology({ ...snapshot.topology });
    const now = model.clock();
    for (const saved of snapshot.networkInterfaces) {
      const eni: EniRecord = structuredClone(saved);
      const vSwitch = model.requireVSwitch(eni.vSwitchId);
      for (const ip of [eni.primaryIp, ...eni.secondaryIps]) {
        if (vSwitch.ipv4.claim(ip) !== 'claimed') throw new Error(`snapshot: ${ip} of ${eni.eniId} is not free`);
      }
      for (const ip of eni.ipv6s) {
        if (vSwitch.ipv6?.claim(ip) !== 'claimed') throw new Error(`snapshot: ${ip} of ${eni.eniId} is not free`);
      }
      if (eni.pending !== null) {
        eni.pending.dueAtMs = now + eni.pending.dueAtMs;
        model.pending.add(eni);
      }
      model.enis.set(eni.eniId, eni);
      model.nextSequence = Math.max(model.nextSequence, eni.sequence + 1);
    }
    for (const instance of snapshot.topology.instances) model.addInstance(instance, instance.primaryEniId);
    model.nextEniNumber = snapshot.nextEniNumber;
    return model;
  }

  private loadTopology(topology: Pick<EmulatorFixture, 'vSwitches' | 'securityGroups' | 'instanceTypes'>): void {
    for (const v of topology.vSwitches) {
      this.vSwitches.set(v.vSwitchId, {
        vSwitchId: v.vSwitchId,
        vpcId: v.vpcId,
        zoneId: v.zoneId,
        cidrBlock: v.cidrBlock,
        ipv6CidrBlock: v.ipv6CidrBlock ?? null,
        name: v.vSwitchName ?? '',
        tags: tagsFromMap(v.tags),
        ipv4: new Ipv4AddressPool(v.cidrBlock),
        ipv6: v.ipv6CidrBlock === undefined ? null : new Ipv6AddressPool(v.ipv6CidrBlock),
      });
    }
    for (const group of topology.securityGroups) this.securityGroups.set(group.securityGroupId, group.vpcId);
    for (const type of topology.instanceTypes) this.instanceTypes.set(type.instanceTypeId, type);
  }

  /** Registers an instance; with `primaryEniId` null it also creates its Primary ENI (InUse, device 0). */
  private addInstance(instance: FixtureInstance, primaryEniId: string | null): void {
    const type = this.instanceTypes.get(instance.instanceType);
    if (type === undefined) throw new Error(`instance ${instance.instanceId}: unknown type ${instance.instanceType}`);
    const vSwitch = this.requireVSwitch(instance.vSwitchId);
    let eniId = primaryEniId;
    if (eniId === null) {
      const primary = this.buildEni({
        vSwitch,
        type: 'Primary',
        input: {
          vSwitchId: vSwitch.vSwitchId,
          securityGroupIds: instance.securityGroupIds,
          ...(instance.primaryIpAddress === undefined ? {} : { primaryIp: instance.primaryIpAddress }),
        },
      });
      primary.instanceId = instance.instanceId;
      primary.deviceIndex = 0;
      primary.status = 'InUse';
      eniId = primary.eniId;
    }
    this.instances.set(instance.instanceId, {
      instanceId: instance.instanceId,
      instanceType: type,
      zoneId: vSwitch.zoneId,
      vpcId: vSwitch.vpcId,
      vSwitchId: vSwitch.vSwitchId,
      securityGroupIds: [...instance.securityGroupIds],
      status: instance.status ?? 'Running',
      name: instance.instanceName ?? instance.instanceId,
      primaryEniId: eniId,
    });
  }

  now(): number {
    return this.clock();
  }

  /** Completes every transition that is due. Called at the start of each operation and read. */
  settle(): void {
    if (this.pending.size === 0) return;
    const now = this.clock();
    for (const eni of this.pending) {
      if (eni.pending !== null && eni.pending.dueAtMs <= now) this.completeTransition(eni);
    }
  }

  private completeTransition(eni: EniRecord): void {
    const transition = eni.pending;
    this.pending.delete(eni);
    eni.pending = null;
    if (transition === null) return;
    switch (transition.kind) {
      case 'attach':
        if (transition.failAttach) {
          eni.status = 'Available';
          eni.instanceId = null;
          eni.deviceIndex = null;
        } else {
          eni.status = 'InUse';
        }
        break;
      case 'detach':
        eni.status = 'Available';
        eni.instanceId = null;
        eni.deviceIndex = null;
        break;
      case 'delete':
        this.removeEni(eni);
        break;
    }
  }

  private startTransition(eni: EniRecord, transition: Omit<PendingTransition, 'dueAtMs'> & { delayMs: number }): void {
    eni.pending = {
      kind: transition.kind,
      failAttach: transition.failAttach,
      dueAtMs: this.clock() + transition.delayMs,
    };
    if (transition.delayMs <= 0) this.completeTransition(eni);
    else this.pending.add(eni);
  }

  private removeEni(eni: EniRecord): void {
    const vSwitch = this.requireVSwitch(eni.vSwitchId);
    vSwitch.ipv4.release(eni.primaryIp);
    for (const ip of eni.secondaryIps) vSwitch.ipv4.release(ip);
    for (const ip of eni.ipv6s) vSwitch.ipv6?.release(ip);
    this.enis.delete(eni.eniId);
  }

  requireVSwitch(vSwitchId: string): VSwitchRecord {
    const vSwitch = this.vSwitches.get(vSwitchId);
    if (vSwitch === undefined) {
      throw apiError('InvalidVSwitchId.NotFound', `The specified VSwitchId ${vSwitchId} does not exist.`);
    }
    return vSwitch;
  }

  requireInstance(instanceId: string): InstanceRecord {
    const instance = this.instances.get(instanceId);
    if (instance === undefined) {
      throw apiError('InvalidEcsId.NotFound', `The specified InstanceId ${instanceId} does not exist.`);
    }
    return instance;
  }

  requireEni(eniId: string): EniRecord {
    this.settle();
    const eni = this.enis.get(eniId);
    if (eni === undefined) {
      throw apiError('InvalidEniId.NotFound', `The specified NetworkInterfaceId ${eniId} does not exist.`);
    }
    return eni;
  }

  private renameEni(eni: EniRecord, eniId: string): void {
    this.enis.delete(eni.eniId);
    eni.eniId = eniId;
    this.enis.set(eniId, eni);
  }

  private newEniId(): { eniId: string; macAddress: string } {
    const number = this.nextEniNumber++;
    const hex = number.toString(16).padStart(6, '0');
    return {
      eniId: `eni-emu${number.toString(36).padStart(15, '0')}`,
      macAddress: `00:16:3e:${hex.slice(-6, -4)}:${hex.slice(-4, -2)}:${hex.slice(-2)}`,
    };
  }

  private buildEni(request: { vSwitch: VSwitchRecord; type: EniType; input: CreateEniInput }): EniRecord {
    const { vSwitch, input } = request;
    const explicitSecondaries = input.secondaryIps ?? [];
    const explicitPrimary = input.primaryIp === undefined ? [] : [input.primaryIp];
    const ipv4 = takeIpv4(vSwitch, {
      explicit: [...explicitPrimary, ...explicitSecondaries],
      count: (input.primaryIp === undefined ? 1 : 0) + (input.secondaryCount ?? 0),
      exhaustedCode: 'InvalidVSwitchId.IpNotEnough',
    });
    let ipv6s: string[] = [];
    try {
      if ((input.ipv6s?.length ?? 0) + (input.ipv6Count ?? 0) > 0) {
        ipv6s = takeIpv6(vSwitch, { explicit: input.ipv6s ?? [], count: input.ipv6Count ?? 0 });
      }
    } catch (error) {
      for (const ip of ipv4) vSwitch.ipv4.release(ip);
      throw error;
    }
    // Explicit primary first, then explicit secondaries, then counted ones; without an explicit primary the
    // first counted address (the lowest) becomes the primary.
    const primaryIp = input.primaryIp ?? ipv4[explicitSecondaries.length];
    if (primaryIp === undefined) throw new Error('primary IP missing');
    const secondaryIps = ipv4.filter((ip) => ip !== primaryIp);
    const { eniId, macAddress } = this.newEniId();
    const eni: EniRecord = {
      eniId,
      sequence: this.nextSequence++,
      type: request.type,
      trafficMode: input.trafficMode ?? 'Standard',
      status: 'Available',
      vpcId: vSwitch.vpcId,
      vSwitchId: vSwitch.vSwitchId,
      zoneId: vSwitch.zoneId,
      macAddress,
      primaryIp,
      secondaryIps,
      ipv6s,
      securityGroupIds: [...input.securityGroupIds],
      tags: input.tags ?? [],
      instanceId: null,
      deviceIndex: null,
      name: input.name ?? '',
      description: input.description ?? '',
      deleteOnRelease: input.deleteOnRelease ?? false,
      creationTime: new Date(this.clock()).toISOString().replace(/\.\d{3}Z$/, 'Z'),
      pending: null,
    };
    this.enis.set(eniId, eni);
    return eni;
  }

  /** CreateNetworkInterface: synchronous, the ENI is Available at once. */
  createEni(input: CreateEniInput): EniRecord {
    this.settle();
    const vSwitch = this.requireVSwitch(input.vSwitchId);
    if (input.securityGroupIds.length === 0) {
      throw apiError('MissingParameter', 'The input parameter "SecurityGroupIds" that is mandatory is not supplied.');
    }
    for (const groupId of input.securityGroupIds) {
      const vpcId = this.securityGroups.get(groupId);
      if (vpcId === undefined) {
        throw apiError('InvalidSecurityGroupId.NotFound', `The security group ${groupId} does not exist.`);
      }
      if (vpcId !== vSwitch.vpcId) {
        throw apiError('InvalidOperation.VpcMismatch', `The security group ${groupId} is in another VPC.`);
      }
    }
    const secondaryTotal = (input.secondaryIps?.length ?? 0) + (input.secondaryCount ?? 0);
    if (secondaryTotal > MAX_SECONDARY_AT_CREATE || 1 + secondaryTotal > this.limits.maxIpv4OnDetachedEni) {
      throw apiError('InvalidOperation.Ipv4CountExceeded');
    }
    const ipv6Total = (input.ipv6s?.length ?? 0) + (input.ipv6Count ?? 0);
    if (ipv6Total > Math.min(MAX_IPV6_AT_CREATE, this.limits.maxIpv6OnDetachedEni)) {
      throw apiError('InvalidOperation.Ipv6CountExceeded');
    }
    return this.buildEni({ vSwitch, type: input.type ?? 'Secondary', input });
  }

  private enisOn(instanceId: string): EniRecord[] {
    const result: EniRecord[] = [];
    for (const eni of this.enis.values()) if (eni.instanceId === instanceId) result.push(eni);
    return result;
  }

  private lowestFreeDeviceIndex(instanceId: string): number {
    const used = new Set(this.enisOn(instanceId).map((eni) => eni.deviceIndex));
    let index = 1;
    while (used.has(index)) index++;
    return index;
  }

  /** The checks an attach must pass besides the ENI state: instance state, zone, VPC, type and quotas. */
  private checkAttachable(eni: EniRecord, instance: InstanceRecord): void {
    if (instance.status !== 'Running' && instance.status !== 'Stopped') {
      throw apiError('InvalidOperation.InvalidEcsState');
    }
    if (eni.vpcId !== instance.vpcId) throw apiError('InvalidOperation.VpcMismatch');
    if (eni.zoneId !== instance.zoneId) throw apiError('InvalidOperation.AvailabilityZoneMismatch');
    const type = instance.instanceType;
    if (eni.type === 'Trunk' && type.eniTrunkSupported !== true) {
      throw apiError(
        'InvalidOperation.InvalidEniType',
        `Instance type ${type.instanceTypeId} does not support trunk ENIs.`,
      );
    }
    const attached = this.enisOn(instance.instanceId);
    if (attached.length >= type.eniQuantity) {
      throw apiError(
        'EniPerInstanceLimitExceeded',
        `Instance ${instance.instanceId} already has ${attached.length} ENIs.`,
      );
    }
    if (eni.trafficMode === 'HighPerformance') {
      const eris = attached.filter((other) => other.trafficMode === 'HighPerformance').length;
      if (eris >= (type.eriQuantity ?? 0)) {
        throw apiError('EniPerInstanceLimitExceeded', `Instance ${instance.instanceId} has no free eRDMA (ERI) slot.`);
      }
    }
    if (1 + eni.secondaryIps.length > type.eniPrivateIpAddressQuantity) {
      throw apiError('InvalidOperation.Ipv4CountExceeded');
    }
    if (eni.ipv6s.length > type.eniIpv6AddressQuantity) throw apiError('InvalidOperation.Ipv6CountExceeded');
  }

  /** AttachNetworkInterface: Available → Attaching → InUse (or back to Available when `failAttach`). */
  attachEni(request: { eniId: string; instanceId: string; failAttach?: boolean }): void {
    const eni = this.requireEni(request.eniId);
    const instance = this.requireInstance(request.instanceId);
    if (eni.status !== 'Available') throw apiError('InvalidOperation.InvalidEniState', `The ENI is ${eni.status}.`);
    this.checkAttachable(eni, instance);
    eni.deviceIndex = this.lowestFreeDeviceIndex(instance.instanceId);
    eni.instanceId = instance.instanceId;
    eni.status = 'Attaching';
    this.startTransition(eni, {
      kind: 'attach',
      failAttach: request.failAttach ?? false,
      delayMs: this.transitionDelays.attachMs,
    });
  }

  /** DetachNetworkInterface: InUse → Detaching → Available; re-issuing while Detaching is accepted. */
  detachEni(request: { eniId: string; instanceId: string }): void {
    const eni = this.requireEni(request.eniId);
    this.requireInstance(request.instanceId);
    if (eni.type === 'Primary') throw apiError('InvalidOperation.DetachPrimaryEniNotAllowed');
    if (eni.instanceId !== request.instanceId && (eni.status === 'InUse' || eni.status === 'Detaching')) {
      throw apiError('InvalidParameter', `The ENI ${eni.eniId} is not attached to ${request.instanceId}.`);
    }
    if (eni.status === 'Detaching') return;
    if (eni.status !== 'InUse') throw apiError('InvalidOperation.InvalidEniState', `The ENI is ${eni.status}.`);
    eni.status = 'Detaching';
    this.startTransition(eni, { kind: 'detach', failAttach: false, delayMs: this.transitionDelays.detachMs });
  }

  /** DeleteNetworkInterface: Available → Deleting → gone; its addresses return to the vSwitch when it is gone. */
  deleteEni(eniId: string): void {
    const eni = this.requireEni(eniId);
    if (eni.status === 'Deleting') return;
    if (eni.status !== 'Available') throw apiError('InvalidOperation.InvalidEniState', `The ENI is ${eni.status}.`);
    eni.status = 'Deleting';
    this.startTransition(eni, { kind: 'delete', failAttach: false, delayMs: this.transitionDelays.deleteMs });
  }

  private requireIpWritableEni(eniId: string): EniRecord {
    const eni = this.requireEni(eniId);
    if (eni.status !== 'Available' && eni.status !== 'InUse') {
      throw apiError('InvalidOperation.InvalidEniState', `The ENI is ${eni.status}.`);
    }
    return eni;
  }

  private requestedCount(input: AssignInput, countName: string): { explicit: string[]; count: number } {
    const explicit = input.addresses ?? [];
    const count = input.count ?? 0;
    if (explicit.length > 0 && input.count !== undefined) {
      throw apiError('InvalidParameter.Conflict', `${countName} and an address list cannot both be given.`);
    }
    if (explicit.length + count === 0) {
      throw apiError('MissingParameter', `${countName} or an address list is required.`);
    }
    if (explicit.length + count > this.limits.maxIpsPerCall || count < 0) {
      throw apiError('InvalidParameter', `At most ${this.limits.maxIpsPerCall} addresses per call.`);
    }
    return { explicit, count };
  }

  /** The IPv4 cap (primary included): the instance type's while attached, the detached-ENI cap otherwise. */
  private ipv4Cap(eni: EniRecord): number {
    if (eni.instanceId === null) return this.limits.maxIpv4OnDetachedEni;
    return this.requireInstance(eni.instanceId).instanceType.eniPrivateIpAddressQuantity;
  }

  private ipv6Cap(eni: EniRecord): number {
    if (eni.instanceId === null) return this.limits.maxIpv6OnDetachedEni;
    return this.requireInstance(eni.instanceId).instanceType.eniIpv6AddressQuantity;
  }

  /** AssignPrivateIpAddresses: synchronous; vSwitch exhaustion answers `QuotaExceeded.PrivateIpAddress`. */
  assignIpv4(input: AssignInput): string[] {
    const eni = this.requireIpWritableEni(input.eniId);
    const request = this.requestedCount(input, 'SecondaryPrivateIpAddressCount');
    if (1 + eni.secondaryIps.length + request.explicit.length + request.count > this.ipv4Cap(eni)) {
      throw apiError('InvalidOperation.Ipv4CountExceeded');
    }
    const taken = takeIpv4(this.requireVSwitch(eni.vSwitchId), {
      ...request,
      exhaustedCode: 'QuotaExceeded.PrivateIpAddress',
    });
    eni.secondaryIps.push(...taken);
    return taken;
  }

  /** UnassignPrivateIpAddresses: all listed addresses must be secondary addresses of the ENI, else nothing changes. */
  unassignIpv4(request: { eniId: string; addresses: string[] }): void {
    const eni = this.requireIpWritableEni(request.eniId);
    this.requestedCount({ eniId: eni.eniId, addresses: request.addresses }, 'PrivateIpAddress.N');
    for (const ip of request.addresses) {
      if (!eni.secondaryIps.includes(ip)) {
        throw apiError('InvalidIp.IpUnassigned', `The IP ${ip} is not a secondary address of ${eni.eniId}.`);
      }
    }
    const vSwitch = this.requireVSwitch(eni.vSwitchId);
    const removing = new Set(request.addresses);
    eni.secondaryIps = eni.secondaryIps.filter((ip) => !removing.has(ip));
    for (const ip of removing) vSwitch.ipv4.release(ip);
  }

  /** AssignIpv6Addresses: synchronous; needs an IPv6-enabled vSwitch. */
  assignIpv6(input: AssignInput): string[] {
    const eni = this.requireIpWritableEni(input.eniId);
    const request = this.requestedCount(input, 'Ipv6AddressCount');
    const vSwitch = this.requireVSwitch(eni.vSwitchId);
    if (vSwitch.ipv6 === null) throw apiError('InvalidVSwitch.Ipv6NotTurnOn');
    if (eni.ipv6s.length + request.explicit.length + request.count > this.ipv6Cap(eni)) {
      throw apiError('InvalidOperation.Ipv6CountExceeded');
    }
    const taken = takeIpv6(vSwitch, request);
    eni.ipv6s.push(...taken);
    return taken;
  }

  unassignIpv6(request: { eniId: string; addresses: string[] }): void {
    const eni = this.requireIpWritableEni(request.eniId);
    this.requestedCount({ eniId: eni.eniId, addresses: request.addresses }, 'Ipv6Address.N');
    const canonical = request.addresses.map((ip) => Ipv6AddressPool.normalize(ip) ?? ip);
    for (const ip of canonical) {
      if (!eni.ipv6s.includes(ip)) {
        throw apiError('InvalidIp.IpUnassigned', `The IPv6 address ${ip} is not on ${eni.eniId}.`);
      }
    }
    const vSwitch = this.requireVSwitch(eni.vSwitchId);
    const removing = new Set(canonical);
    eni.ipv6s = eni.ipv6s.filter((ip) => !removing.has(ip));
    for (const ip of removing) vSwitch.ipv6?.release(ip);
  }

  /** All ENIs in creation order, transitions settled. */
  listEnis(): IterableIterator<EniRecord> {
    this.settle();
    return this.enis.values();
  }

  findEni(eniId: string): EniRecord | undefined {
    this.settle();
    return this.enis.get(eniId);
  }

  listVSwitches(): IterableIterator<VSwitchRecord> {
    return this.vSwitches.values();
  }

  findVSwitch(vSwitchId: string): VSwitchRecord | undefined {
    return this.vSwitches.get(vSwitchId);
  }

  listInstanceTypes(): IterableIterator<EmulatorFixture['instanceTypes'][number]> {
    return this.instanceTypes.values();
  }

  listInstances(): IterableIterator<InstanceRecord> {
    this.settle();
    return this.instances.values();
  }

  /** ENIs attached (or attaching/detaching) to the instance, the primary first. */
  enisOfInstance(instanceId: string): EniRecord[] {
    this.settle();
    return this.enisOn(instanceId).sort((a, b) => (a.deviceIndex ?? 0) - (b.deviceIndex ?? 0));
  }

  /** Every ENI and address with owner, tags and status. */
  inventory(): Inventory {
    return inventoryOf(this);
  }

  /** The whole state as JSON, for {@link CloudModel.fromSnapshot}. */
  snapshot(): StateSnapshot {
    return snapshotOf(this);
  }

  /** The id counter, for snapshots. */
  get eniNumberCounter(): number {
    return this.nextEniNumber;
  }

  listSecurityGroups(): { securityGroupId: string; vpcId: string }[] {
    return [...this.securityGroups].map(([securityGroupId, vpcId]) => ({ securityGroupId, vpcId }));
  }
}
