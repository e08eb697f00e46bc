import { takeIpv4, takeIpv4Prefixes, takeIpv6, takeIpv6Prefixes } from './address-allocation.js';
import { Ipv4AddressPool, Ipv6AddressPool } from './address-pool.js';
import { apiError } from './api-error.js';
import { CloudState, tagsFromMap } from './cloud-state.js';
import type { ModelOptions } from './cloud-state.js';
import type { EmulatorFixture } from './fixture.js';
import type {
  CreateEniInput,
  EniRecord,
  InstanceRecord,
  Inventory,
  ResourceTag,
  StateSnapshot,
} from './model-types.js';
import { inventoryOf, snapshotOf } from './model-views.js';
import { ipv4SlotsOf, ipv6SlotsOf, prefixTotal, requestedPrefixes } from './prefix-rules.js';
import type { AssignPrefixInput } from './prefix-rules.js';
import type { EmulatorLimits, TransitionDelays } from './settings.js';

export type { CreateEniInput } from './model-types.js';
export type { AssignPrefixInput } from './prefix-rules.js';

/** Input of the Assign calls: either a count or explicit addresses. */
export interface AssignInput {
  eniId: string;
  count?: number;
  addresses?: string[];
}

/** Most secondary IPv4 addresses CreateNetworkInterface accepts, whatever the instance type allows. */
const MAX_SECONDARY_AT_CREATE = 49;
/** Most IPv6 addresses CreateNetworkInterface accepts, whatever the instance type allows. */
const MAX_IPV6_AT_CREATE = 10;

/**
 * The cloud and every rule that changes it: ENI quotas, attach checks, per-call address limits and the ENI state
 * machine's entry points, over the records {@link CloudState} keeps. Methods throw {@link EmulatorApiError} exactly
 * where the real API refuses.
 */
export class CloudModel extends CloudState {
  private constructor(options: ModelOptions) {
    super(options);
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
        ...(initial.ipv4PrefixCount ? { ipv4PrefixCount: initial.ipv4PrefixCount } : {}),
        ...(initial.ipv6PrefixCount ? { ipv6PrefixCount: initial.ipv6PrefixCount } : {}),
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
    model.restore(snapshot);
    return model;
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
    const ipv4PrefixTotal = prefixTotal(input.ipv4Prefixes, input.ipv4PrefixCount, 'Ipv4Prefix');
    if (secondaryTotal > 0 && ipv4PrefixTotal > 0) {
      throw apiError('InvalidParameter.Conflict', 'Secondary private IP addresses and IPv4 prefixes are exclusive.');
    }
    if (
      secondaryTotal > MAX_SECONDARY_AT_CREATE ||
      1 + secondaryTotal + ipv4PrefixTotal > this.limits.maxIpv4OnDetachedEni
    ) {
      throw apiError('InvalidOperation.Ipv4CountExceeded');
    }
    const ipv6Total = (input.ipv6s?.length ?? 0) + (input.ipv6Count ?? 0);
    const ipv6PrefixTotal = prefixTotal(input.ipv6Prefixes, input.ipv6PrefixCount, 'Ipv6Prefix');
    if (ipv6Total > 0 && ipv6PrefixTotal > 0) {
      throw apiError('InvalidParameter.Conflict', 'IPv6 addresses and IPv6 prefixes are exclusive.');
    }
    if (
      ipv6Total > Math.min(MAX_IPV6_AT_CREATE, this.limits.maxIpv6OnDetachedEni) ||
      ipv6Total + ipv6PrefixTotal > this.limits.maxIpv6OnDetachedEni
    ) {
      throw apiError('InvalidOperation.Ipv6CountExceeded');
    }
    return this.buildEni({ vSwitch, type: input.type ?? 'Secondary', input });
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
    if (ipv4SlotsOf(eni) > type.eniPrivateIpAddressQuantity) throw apiError('InvalidOperation.Ipv4CountExceeded');
    if (ipv6SlotsOf(eni) > type.eniIpv6AddressQuantity) throw apiError('InvalidOperation.Ipv6CountExceeded');
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

  /**
   * TagResources on ENIs: every id must exist (else nothing is tagged); each tag is added, or overwrites the value
   * of the same key, and the ENI's other tags stay.
   */
  tagEnis(request: { eniIds: readonly string[]; tags: readonly ResourceTag[] }): void {
    const enis = request.eniIds.map((eniId) => {
      try {
        return this.requireEni(eniId);
      } catch {
        throw apiError('InvalidResourceId.NotFound', `The specified resource ${eniId} does not exist.`);
      }
    });
    for (const eni of enis) {
      for (const tag of request.tags) {
        eni.tags = [...eni.tags.filter((existing) => existing.key !== tag.key), { key: tag.key, value: tag.value }];
      }
    }
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
    if (ipv4SlotsOf(eni) + request.explicit.length + request.count > this.ipv4Cap(eni)) {
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
    if (ipv6SlotsOf(eni) + request.explicit.length + request.count > this.ipv6Cap(eni)) {
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

  /**
   * AssignPrivateIpAddresses with `Ipv4PrefixCount` / `Ipv4Prefix.N`: each /28 takes one of the ENI's IPv4 slots
   * (shared with the primary and secondary addresses) and 16 of the vSwitch's available addresses.
   */
  assignIpv4Prefixes(input: AssignPrefixInput): string[] {
    const eni = this.requireIpWritableEni(input.eniId);
    const request = requestedPrefixes(input, 'Ipv4PrefixCount');
    if (ipv4SlotsOf(eni) + request.explicit.length + request.count > this.ipv4Cap(eni)) {
      throw apiError('InvalidOperation.Ipv4CountExceeded');
    }
    const taken = takeIpv4Prefixes(this.requireVSwitch(eni.vSwitchId), {
      ...request,
      exhaustedCode: 'InvalidVSwitchId.IpNotEnough',
    });
    eni.ipv4Prefixes.push(...taken);
    return taken;
  }

  /** UnassignPrivateIpAddresses with `Ipv4Prefix.N`: all must be prefixes of the ENI, else nothing changes. */
  unassignIpv4Prefixes(request: { eniId: string; prefixes: string[] }): void {
    const eni = this.requireIpWritableEni(request.eniId);
    requestedPrefixes({ eniId: eni.eniId, prefixes: request.prefixes }, 'Ipv4Prefix.N');
    const canonical = request.prefixes.map((prefix) => Ipv4AddressPool.normalizePrefix(prefix) ?? prefix);
    for (const prefix of canonical) {
      if (!eni.ipv4Prefixes.includes(prefix)) {
        throw apiError('InvalidIp.IpUnassigned', `The prefix ${prefix} is not assigned to ${eni.eniId}.`);
      }
    }
    const vSwitch = this.requireVSwitch(eni.vSwitchId);
    const removing = new Set(canonical);
    eni.ipv4Prefixes = eni.ipv4Prefixes.filter((prefix) => !removing.has(prefix));
    for (const prefix of removing) vSwitch.ipv4.releasePrefix(prefix);
  }

  /** AssignIpv6Addresses with `Ipv6PrefixCount` / `Ipv6Prefix.N`: each /80 takes one of the ENI's IPv6 slots. */
  assignIpv6Prefixes(input: AssignPrefixInput): string[] {
    const eni = this.requireIpWritableEni(input.eniId);
    const request = requestedPrefixes(input, 'Ipv6PrefixCount');
    const vSwitch = this.requireVSwitch(eni.vSwitchId);
    if (vSwitch.ipv6 === null) throw apiError('InvalidVSwitch.Ipv6NotTurnOn');
    if (ipv6SlotsOf(eni) + request.explicit.length + request.count > this.ipv6Cap(eni)) {
      throw apiError('InvalidOperation.Ipv6CountExceeded');
    }
    const taken = takeIpv6Prefixes(vSwitch, request);
    eni.ipv6Prefixes.push(...taken);
    return taken;
  }

  /** UnassignIpv6Addresses with `Ipv6Prefix.N`: all must be prefixes of the ENI, else nothing changes. */
  unassignIpv6Prefixes(request: { eniId: string; prefixes: string[] }): void {
    const eni = this.requireIpWritableEni(request.eniId);
    requestedPrefixes({ eniId: eni.eniId, prefixes: request.prefixes }, 'Ipv6Prefix.N');
    const canonical = request.prefixes.map((prefix) => Ipv6AddressPool.normalizePrefix(prefix) ?? prefix);
    for (const prefix of canonical) {
      if (!eni.ipv6Prefixes.includes(prefix)) {
        throw apiError('InvalidIp.IpUnassigned', `The prefix ${prefix} is not assigned to ${eni.eniId}.`);
      }
    }
    const vSwitch = this.requireVSwitch(eni.vSwitchId);
    const removing = new Set(canonical);
    eni.ipv6Prefixes = eni.ipv6Prefixes.filter((prefix) => !removing.has(prefix));
    for (const prefix of removing) vSwitch.ipv6?.releasePrefix(prefix);
  }

  /** Every ENI and address with owner, tags and status. */
  inventory(): Inventory {
    return inventoryOf(this);
  }

  /** The whole state as JSON, for {@link CloudModel.fromSnapshot}. */
  snapshot(): StateSnapshot {
    return snapshotOf(this);
  }
}
