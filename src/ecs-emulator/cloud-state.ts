import { Ipv4AddressPool, Ipv6AddressPool } from './address-pool.js';
import { apiError } from './api-error.js';
import { claimRestoredAddresses, releaseEniAddresses, takeEniAddresses } from './eni-addresses.js';
import type { EmulatorFixture, FixtureInstance } from './fixture.js';
import type {
  CreateEniInput,
  EniRecord,
  EniType,
  InstanceRecord,
  PendingTransition,
  ResourceTag,
  StateSnapshot,
  VSwitchRecord,
} from './model-types.js';
import type { EmulatorLimits, TransitionDelays } from './settings.js';

/** What a model is built with; the rest of its state comes from a fixture or a snapshot. */
export interface ModelOptions {
  regionId: string;
  ownerId: string;
  clock: () => number;
  limits: EmulatorLimits;
  transitionDelays: TransitionDelays;
}

/** Fixtures and snapshots keep tags as a map; the API and the records keep them as a list. */
export function tagsFromMap(map: Record<string, string> | undefined): ResourceTag[] {
  return Object.entries(map ?? {}).map(([key, value]) => ({ key, value }));
}

/**
 * The cloud's records and their bookkeeping: topology, instances, ENIs with their vSwitch addresses, and the
 * asynchronous ENI transitions, settled lazily against the injected clock at the start of every call so there are
 * no timers to leak and a test can drive the state with a fake clock. The API's rules live in cloud-model.ts.
 */
export class CloudState {
  readonly regionId: string;
  readonly ownerId: string;
  limits: EmulatorLimits;
  transitionDelays: TransitionDelays;
  protected readonly clock: () => number;
  private readonly vSwitches = new Map<string, VSwitchRecord>();
  protected readonly securityGroups = new Map<string, string>();
  private readonly instanceTypes = new Map<string, EmulatorFixture['instanceTypes'][number]>();
  private readonly instances = new Map<string, InstanceRecord>();
  /** Insertion order is creation order, which Describe pages by. */
  private readonly enis = new Map<string, EniRecord>();
  private readonly pending = new Set<EniRecord>();
  private nextEniNumber = 1;
  private nextSequence = 1;

  protected constructor(options: ModelOptions) {
    this.regionId = options.regionId;
    this.ownerId = options.ownerId;
    this.clock = options.clock;
    this.limits = options.limits;
    this.transitionDelays = options.transitionDelays;
  }

  /** Loads {@link StateSnapshot} output into an empty state; pending transitions resume with their time left. */
  protected restore(snapshot: StateSnapshot): void {
    this.loadTopology({ ...snapshot.topology });
    const now = this.clock();
    for (const saved of snapshot.networkInterfaces) {
      const eni: EniRecord = structuredClone(saved);
      // Snapshots saved before prefixes existed have no prefix lists: none.
      const legacy = saved as Partial<Pick<EniRecord, 'ipv4Prefixes' | 'ipv6Prefixes'>>;
      eni.ipv4Prefixes = [...(legacy.ipv4Prefixes ?? [])];
      eni.ipv6Prefixes = [...(legacy.ipv6Prefixes ?? [])];
      claimRestoredAddresses(this.requireVSwitch(eni.vSwitchId), eni);
      if (eni.pending !== null) {
        eni.pending.dueAtMs = now + eni.pending.dueAtMs;
        this.pending.add(eni);
      }
      this.enis.set(eni.eniId, eni);
      this.nextSequence = Math.max(this.nextSequence, eni.sequence + 1);
    }
    for (const instance of snapshot.topology.instances) this.addInstance(instance, instance.primaryEniId);
    this.nextEniNumber = snapshot.nextEniNumber;
  }

  protected loadTopology(topology: Pick<EmulatorFixture, 'vSwitches' | 'securityGroups' | 'instanceTypes'>): void {
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
  protected addInstance(instance: FixtureInstance, primaryEniId: string | null): void {
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

  protected startTransition(
    eni: EniRecord,
    transition: Omit<PendingTransition, 'dueAtMs'> & { delayMs: number },
  ): void {
    eni.pending = {
      kind: transition.kind,
      failAttach: transition.failAttach,
      dueAtMs: this.clock() + transition.delayMs,
    };
    if (transition.delayMs <= 0) this.completeTransition(eni);
    else this.pending.add(eni);
  }

  private removeEni(eni: EniRecord): void {
    releaseEniAddresses(this.requireVSwitch(eni.vSwitchId), eni);
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

  protected renameEni(eni: EniRecord, eniId: string): void {
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

  protected buildEni(request: { vSwitch: VSwitchRecord; type: EniType; input: CreateEniInput }): EniRecord {
    const { vSwitch, input } = request;
    const { primaryIp, secondaryIps, ipv6s, ipv4Prefixes, ipv6Prefixes } = takeEniAddresses(vSwitch, input);
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
      ipv4Prefixes,
      ipv6Prefixes,
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

  protected enisOn(instanceId: string): EniRecord[] {
    const result: EniRecord[] = [];
    for (const eni of this.enis.values()) if (eni.instanceId === instanceId) result.push(eni);
    return result;
  }

  protected lowestFreeDeviceIndex(instanceId: string): number {
    const used = new Set(this.enisOn(instanceId).map((eni) => eni.deviceIndex));
    let index = 1;
    while (used.has(index)) index++;
    return index;
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

  /** The id counter, for snapshots. */
  get eniNumberCounter(): number {
    return this.nextEniNumber;
  }

  listSecurityGroups(): { securityGroupId: string; vpcId: string }[] {
    return [...this.securityGroups].map(([securityGroupId, vpcId]) => ({ securityGroupId, vpcId }));
  }
}
