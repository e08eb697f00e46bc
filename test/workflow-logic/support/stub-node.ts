/**
 * One node in memory, behind stub activities: the Node CR (raw, as the apiserver would hold it), the pods bound to
 * the node, the core Node, and the node's ENIs and vSwitches as the cloud knows them. The stubs implement every
 * activity by NAME with the real input and output types (`Activities`), so the real workflow code runs against them
 * on the Temporal dev server with no emulator and no kube-apiserver. Every call is recorded with its input, the
 * workflow run it came from and its attempt; tests script failures, delays and gates through {@link StubNode.script}.
 */
import { activityInfo } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';

import {
  applyJsonDelta,
  adoptionTags,
  ENIFLOW_CLUSTER_TAG_KEY,
  jsonDelta,
  ENIFLOW_CREATOR_TAG,
  ENIFLOW_NODE_TAG,
  NODE_CR_API_VERSION,
  NODE_CR_KIND,
  POOL_STATUS_FIELDS,
  sortedKeys,
} from '../../../src/ipam/index.js';
import type {
  CloudEni,
  IpEntry,
  NetworkInterface,
  NetworkInterfaces,
  NodeCr,
  NodeSpec,
  PodSnapshot,
  VSwitchInfo,
} from '../../../src/ipam/index.js';
import type { Activities, NodeSnapshot } from '../../../src/activities/index.js';
import { ecsApplicationFailure } from '../../../src/activities/ecs/ecs-application-failure.js';
import type { EcsFailureType } from '../../../src/activities/ecs/ecs-errors.js';
import type { EcsOperation } from '../../../src/activities/ecs/ecs-operations.js';
import { crSnapshotOf, fullViewPage, nodeViewDigest, nodeViewOf } from '../../../src/activities/kube-activities.js';
import type { RawObject } from '../../../src/activities/kube-activities.js';
import { NodeViewBases } from '../../../src/activities/kube/node-view.js';

export type ActivityName = keyof Activities;
export type InputOf<K extends ActivityName> = Parameters<Activities[K]>[0];
export type OutputOf<K extends ActivityName> = Awaited<ReturnType<Activities[K]>>;

/** One activity call as the stub saw it. */
export interface RecordedCall<K extends ActivityName = ActivityName> {
  /** Order in which calls started (0-based, over every activity). */
  seq: number;
  name: K;
  input: InputOf<K>;
  runId: string;
  attempt: number;
  isLocal: boolean;
  /** Set when the call returned or threw: its place in completion order over every activity. */
  doneSeq?: number;
  failed?: string;
}

/**
 * A scripted behaviour of one activity: runs before the model acts. It may wait (a gate), throw (a failure the real
 * activity would throw), or return `{ result }` to answer instead of the model.
 */
export type Script<K extends ActivityName> = (
  input: InputOf<K>,
  call: RecordedCall<K>,
) => Promise<{ result: OutputOf<K> } | undefined> | { result: OutputOf<K> } | undefined;

/** The ApplicationFailure the real ECS activities throw for a classified cloud failure. */
export function ecsFailure(input: {
  type: EcsFailureType;
  operation: EcsOperation;
  code: string;
  retryable: boolean;
  /** The server's retry hint: with a retryable failure, Temporal retries after this instead of the policy's interval. */
  retryAfterMs?: number;
}): ApplicationFailure {
  return ecsApplicationFailure({
    type: input.type,
    operation: input.operation,
    code: input.code,
    message: `${input.code} (scripted by the test)`,
    retryable: input.retryable,
    requestId: 'req-stub',
    ...(input.retryAfterMs === undefined ? {} : { retryAfterMs: input.retryAfterMs }),
  });
}

/** A promise to resolve from outside: the way tests hold an activity until they have looked at the workflow. */
export interface Gate {
  readonly opened: Promise<void>;
  open(): void;
}

export function gate(): Gate {
  let open = (): void => undefined;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

/** Resolves the first time `predicate` holds for a call the stub records (checked at every start and end). */
interface CallWaiter {
  predicate: (calls: readonly RecordedCall[]) => boolean;
  resolve: () => void;
}

export const STUB_VSWITCH: VSwitchInfo = {
  vSwitchId: 'vsw-stub-a',
  zoneId: 'zone-stub-a',
  availableIpCount: 200,
  ipv4Cidr: '10.0.0.0/16',
};

/** A ready node's spec: ordered policy on one vSwitch, `ipv4PerAdapter` addresses per ENI, IPv4 only. */
export function stubNodeSpec(
  input: {
    adapters?: number;
    ipv4PerAdapter?: number;
    secondaryEnis?: number;
    pool?: { minPoolSize: number; maxPoolSize: number };
  } = {},
): NodeSpec {
  const adapters = input.adapters ?? 4;
  return {
    nodeMetadata: {
      regionID: 'cn-stub',
      instanceType: 'ecs.stub.large',
      instanceID: 'i-stub',
      zoneID: STUB_VSWITCH.zoneId,
    },
    nodeCap: {
      adapters,
      totalAdapters: adapters,
      ipv4PerAdapter: input.ipv4PerAdapter ?? 4,
      ipv6PerAdapter: input.ipv4PerAdapter ?? 4,
      eriQuantity: 0,
    },
    eni: {
      enableIPv4: true,
      enableIPv6: false,
      enableERDMA: false,
      enableTrunk: false,
      vSwitchOptions: [STUB_VSWITCH.vSwitchId],
      securityGroupIDs: ['sg-stub'],
      vSwitchSelectPolicy: 'ordered',
      tag: { 'k8s.aliyun.com': 'true' },
    },
    pool: input.pool ?? { minPoolSize: 0, maxPoolSize: 10 },
    flavor: [
      {
        networkInterfaceType: 'Secondary',
        networkInterfaceTrafficMode: 'Standard',
        count: input.secondaryEnis ?? adapters - 1,
      },
    ],
  };
}

export function stubPod(name: string): PodSnapshot {
  return {
    metadata: { namespace: 'default', name, uid: `uid-${name}` },
    spec: { containers: [{ resources: { limits: {} } }], initContainers: [] },
    status: { phase: 'Running' },
  };
}

/** An ENI of the cloud model, attached to the node's instance, with its addresses bound to the named pods. */
export interface SeedEni {
  eniId: string;
  /** Pod names bound to its addresses, the first to the primary address; `null` leaves an address idle. */
  pods: readonly (string | null)[];
}

/** The status of an existing ENI as Terway's CR holds it (what `eniFromCloud` and a bound pod make of it). */
function crEntryOf(cloud: CloudEni, pods: readonly (string | null)[]): NetworkInterface {
  const ipv4: Record<string, IpEntry> = {};
  cloud.ipv4.forEach((address, index) => {
    const pod = pods[index] ?? null;
    const entry: IpEntry = { ip: address.ip, primary: address.primary, status: 'Valid' };
    if (pod !== null) {
      entry.podID = `default/${pod}`;
      entry.podUID = `uid-${pod}`;
    }
    ipv4[address.ip] = entry;
  });
  return {
    id: cloud.eniId,
    status: cloud.status,
    macAddress: cloud.macAddress,
    vSwitchID: cloud.vSwitchId,
    securityGroupIDs: [...cloud.securityGroupIds],
    primaryIPAddress: cloud.primaryIp,
    networkInterfaceTrafficMode: cloud.trafficMode,
    networkInterfaceType: cloud.type,
    ipv4,
    ipv6: {},
    ...(STUB_VSWITCH.ipv4Cidr === undefined ? {} : { ipv4CIDR: STUB_VSWITCH.ipv4Cidr }),
  };
}

const clone = <T>(value: T): T => structuredClone(value);

/** The core Node conditions the snapshot carries, by condition type. */
const CONDITION_FIELDS: Partial<Record<string, 'sufficientIp' | 'ipamConfigValid' | 'eniOperationsFailing'>> = {
  SufficientIP: 'sufficientIp',
  IPAMConfigValid: 'ipamConfigValid',
  ENIOperationsFailing: 'eniOperationsFailing',
};

export class StubNode {
  readonly nodeName: string;
  readonly instanceId: string;
  /** The Node CR as the apiserver holds it; status writes land here. */
  cr: RawObject & { metadata: Record<string, unknown>; spec: NodeSpec; status: Record<string, unknown> };
  pods: PodSnapshot[];
  coreNode: NonNullable<NodeSnapshot['coreNode']> = { uid: 'core-uid', isReady: true, exclusiveEniMode: 'default' };
  /** The cloud's ENIs, by id. */
  readonly cloud = new Map<string, CloudEni>();
  /** ClientToken → the ENI the cloud created under it (idempotent create, as ECS does). */
  readonly createdByToken = new Map<string, string>();
  readonly calls: RecordedCall[] = [];
  /** Every pass the workflow ended, in order, as its metrics sink reports it (not on replay). */
  readonly passes: { ok: boolean; ipamState: string; runId: string }[] = [];
  private readonly passWaiters: { count: number; resolve: () => void }[] = [];
  private readonly scripts: { [K in ActivityName]?: Script<K> } = {};
  private readonly waiters: CallWaiter[] = [];
  private resourceVersion = 1;
  private eniCounter = 0;
  private doneCounter = 0;
  /** Next host number per ENI, so an ENI's addresses depend only on how many it was given, never on timing. */
  private readonly nextHost = new Map<string, number>();
  private readonly viewBases = new NodeViewBases();
  /**
   * The vSwitches the worker's cache holds fresh, as a read asked for them brings them (`VSwitchCache.peek`);
   * undefined: the cache holds none, so every pass calls `describeVSwitches`.
   */
  cachedVSwitches: Record<string, VSwitchInfo> | undefined;
  /** The informer versions a read reports it has seen (the worker's read cache); undefined: none (a live read). */
  readSeen: Record<string, string> | undefined;
  private readonly subnetOf = new Map<string, number>();

  constructor(input: { nodeName: string; spec: NodeSpec; pods?: readonly string[]; enis?: readonly SeedEni[] }) {
    this.nodeName = input.nodeName;
    this.instanceId = input.spec.nodeMetadata?.instanceID ?? 'i-stub';
    this.pods = (input.pods ?? []).map(stubPod);
    const networkInterfaces: NetworkInterfaces = {};
    for (const seed of input.enis ?? []) {
      const cloud = this.newCloudEni({ eniId: seed.eniId, count: seed.pods.length, type: 'Secondary' });
      cloud.status = 'InUse';
      cloud.instanceId = this.instanceId;
      networkInterfaces[seed.eniId] = crEntryOf(cloud, seed.pods);
    }
    this.cr = {
      apiVersion: NODE_CR_API_VERSION,
      kind: NODE_CR_KIND,
      metadata: { name: input.nodeName, uid: 'cr-uid', resourceVersion: '1' },
      spec: clone(input.spec),
      status: { networkInterfaces },
    };
  }

  /** Scripts one activity (replacing an earlier script of it). */
  script<K extends ActivityName>(name: K, behaviour: Script<K>): void {
    (this.scripts as Record<string, unknown>)[name] = behaviour;
  }

  callsOf<K extends ActivityName>(name: K): RecordedCall<K>[] {
    return this.calls.filter((call): call is RecordedCall<K> => call.name === name);
  }

  /** Resolves once the recorded calls satisfy `predicate` (at once if they already do). */
  waitForCalls(predicate: (calls: readonly RecordedCall[]) => boolean): Promise<void> {
    if (predicate(this.calls)) return Promise.resolve();
    return new Promise((resolve) => {
      this.waiters.push({ predicate, resolve });
    });
  }

  /** Called by the worker's sink when a pass of this node's workflow ended. */
  passEnded(pass: { ok: boolean; ipamState: string; runId: string }): void {
    this.passes.push(pass);
    for (const waiter of [...this.passWaiters]) {
      if (this.passes.length >= waiter.count) {
        this.passWaiters.splice(this.passWaiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
  }

  /** Resolves once `count` passes have ended (counting every run of the workflow). */
  waitForPasses(count: number): Promise<void> {
    if (this.passes.length >= count) return Promise.resolve();
    return new Promise((resolve) => {
      this.passWaiters.push({ count, resolve });
    });
  }

  /** The CR's ENIs as the last status write left them. */
  crEnis(): NetworkInterfaces {
    return clone((this.cr.status['networkInterfaces'] ?? {}) as NetworkInterfaces);
  }

  private notify(): void {
    for (const waiter of [...this.waiters]) {
      if (waiter.predicate(this.calls)) {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
  }

  private newCloudEni(input: { eniId: string; count: number; type: string; tags?: Record<string, string> }): CloudEni {
    this.eniCounter += 1;
    const subnet = this.eniCounter;
    this.subnetOf.set(input.eniId, subnet);
    this.nextHost.set(input.eniId, 10);
    const ipv4 = this.takeAddresses(input.eniId, Math.max(1, input.count)).map((ip, index) => ({
      ip,
      primary: index === 0,
    }));
    const eni: CloudEni = {
      eniId: input.eniId,
      status: 'Available',
      type: input.type,
      trafficMode: 'Standard',
      macAddress: `00:16:3e:00:00:${subnet.toString(16).padStart(2, '0')}`,
      vSwitchId: STUB_VSWITCH.vSwitchId,
      securityGroupIds: ['sg-stub'],
      primaryIp: ipv4[0]?.ip ?? '',
      ipv4,
      ipv6: [],
      ipv4Prefixes: [],
      ipv6Prefixes: [],
      instanceId: '',
      ...(input.tags === undefined ? {} : { tags: input.tags }),
    };
    this.cloud.set(input.eniId, eni);
    return eni;
  }

  private takeAddresses(eniId: string, count: number): string[] {
    const subnet = this.subnetOf.get(eniId) ?? 0;
    const first = this.nextHost.get(eniId) ?? 10;
    this.nextHost.set(eniId, first + count);
    return Array.from({ length: count }, (_, i) => `10.0.${subnet}.${first + i}`);
  }

  private view() {
    const snapshot: NodeSnapshot = {
      nodeName: this.nodeName,
      cr: crSnapshotOf(clone(this.cr)),
      pods: clone(this.pods),
      coreNode: clone(this.coreNode),
    };
    const full = nodeViewOf(snapshot);
    return { snapshot, full, digest: nodeViewDigest(full) };
  }

  /** The cloud's ENIs in id order, as a tag-filtered list returns them. */
  private cloudEnisInOrder(): CloudEni[] {
    return sortedKeys(Object.fromEntries(this.cloud)).flatMap((id) => this.cloud.get(id) ?? []);
  }

  private cloudEni(eniId: string): CloudEni {
    const eni = this.cloud.get(eniId);
    if (eni === undefined) {
      throw ApplicationFailure.nonRetryable(`ENI ${eniId} does not exist`, 'EcsNotFound', {
        code: 'InvalidEniId.NotFound',
      });
    }
    return eni;
  }

  /** Runs one activity: records it, applies its script, else the model's behaviour. */
  private async run<K extends ActivityName>(
    name: K,
    input: InputOf<K>,
    model: () => OutputOf<K> | Promise<OutputOf<K>>,
  ): Promise<OutputOf<K>> {
    const info = activityInfo();
    const call: RecordedCall<K> = {
      seq: this.calls.length,
      name,
      input: clone(input),
      runId: info.workflowExecution?.runId ?? '',
      attempt: info.attempt,
      isLocal: info.isLocal,
    };
    this.calls.push(call);
    this.notify();
    try {
      const scripted = await this.scripts[name]?.(input, call);
      const result = scripted === undefined ? await model() : scripted.result;
      return clone(result);
    } catch (error) {
      call.failed = error instanceof Error ? error.message : String(error);
      throw error;
    } finally {
      call.doneSeq = this.doneCounter;
      this.doneCounter += 1;
      this.notify();
    }
  }

  /** The stub activities, one per activity name of the worker. */
  activities(): Activities {
    const unused = (name: string) => () => {
      throw ApplicationFailure.nonRetryable(`${name} is not expected in these tests`, 'StubNotImplemented');
    };
    return {
      // As the real activity: the changes since the base the workflow holds, when this stub still has it.
      readNodeView: (input) =>
        this.run('readNodeView', input, () => {
          const paged = input.page === undefined ? undefined : this.viewBases.get(this.nodeName, input.page.digest);
          if (input.page !== undefined && paged !== undefined) {
            return fullViewPage({ view: paged, digest: input.page.digest, after: input.page.after });
          }
          const { digest, full } = this.view();
          const base = input.base === undefined ? undefined : this.viewBases.get(this.nodeName, input.base);
          this.viewBases.remember(this.nodeName, digest, full);
          const cached = this.cachedVSwitches;
          const ids = input.vSwitchIds ?? [];
          const vSwitches =
            cached !== undefined && ids.length > 0 && ids.every((id) => cached[id] !== undefined)
              ? {
                  vSwitches: Object.fromEntries(
                    ids.flatMap((id) => (cached[id] === undefined ? [] : [[id, { ...cached[id] }]])),
                  ),
                }
              : {};
          const extra = { ...vSwitches, ...(this.readSeen === undefined ? {} : { seen: { ...this.readSeen } }) };
          if (input.base === undefined || base === undefined)
            return { ...fullViewPage({ view: full, digest }), ...extra };
          return { digest, base: input.base, changes: jsonDelta(base, full), ...extra };
        }),
      readNodeSnapshot: (input) => this.run('readNodeSnapshot', input, () => this.view().snapshot),
      writeNodeStatusChanges: (input) =>
        this.run('writeNodeStatusChanges', input, () => {
          const current = (this.cr.status['networkInterfaces'] ?? {}) as NetworkInterfaces;
          this.cr.status['networkInterfaces'] = applyJsonDelta(clone(current), input.eniChanges);
          if (input.lastSyncOpenAPITime !== undefined)
            this.cr.status['lastSyncOpenAPITime'] = input.lastSyncOpenAPITime;
          if (input.nextSyncOpenAPITime !== undefined)
            this.cr.status['nextSyncOpenAPITime'] = input.nextSyncOpenAPITime;
          // As the real write: each pool field set, or removed when the pass leaves it out.
          const pool = input.pool;
          if (pool !== undefined) {
            for (const key of POOL_STATUS_FIELDS) {
              if (pool[key] === undefined) delete this.cr.status[key];
              else this.cr.status[key] = pool[key];
            }
          }
          return this.written();
        }),
      writeNodeStatus: (input) =>
        this.run('writeNodeStatus', input, () => {
          this.cr.status = clone(input.status) as Record<string, unknown>;
          return this.written();
        }),
      patchNodeCondition: (input) =>
        this.run('patchNodeCondition', input, () => {
          // What the next read of the core Node shows (a strategic merge keyed by type, as the apiserver does).
          const field = CONDITION_FIELDS[input.condition.type];
          if (field !== undefined) this.coreNode[field] = { ...input.condition };
        }),
      recordEvent: (input) => this.run('recordEvent', input, () => undefined),
      recordEvents: (input) => this.run('recordEvents', input, () => ({ failed: [] })),
      removeNodeFinalizer: (input) => this.run('removeNodeFinalizer', input, () => ({ removed: false })),
      listKnownEniIds: unused('listKnownEniIds'),
      // The ENIs tagged as eniflow's for the cluster and the node (the vanished node's release lists them).
      listEniflowEnis: (input) =>
        this.run('listEniflowEnis', input, () =>
          this.cloudEnisInOrder().filter(
            (eni) =>
              eni.tags?.[ENIFLOW_CREATOR_TAG.key] === ENIFLOW_CREATOR_TAG.value &&
              (input?.clusterId === undefined || eni.tags[ENIFLOW_CLUSTER_TAG_KEY] === input.clusterId) &&
              (input?.nodeName === undefined || eni.tags[ENIFLOW_NODE_TAG] === input.nodeName),
          ),
        ),
      describeVSwitches: (input) =>
        this.run('describeVSwitches', input, () => {
          const found: Record<string, VSwitchInfo> = {};
          for (const id of input.vSwitchIds) if (id === STUB_VSWITCH.vSwitchId) found[id] = { ...STUB_VSWITCH };
          return found;
        }),
      describeNodeEnis: (input) =>
        this.run('describeNodeEnis', input, () =>
          sortedKeys(Object.fromEntries(this.cloud))
            .flatMap((id) => this.cloud.get(id) ?? [])
            .filter((eni) => eni.instanceId === input.instanceId),
        ),
      describeEnisById: (input) =>
        this.run('describeEnisById', input, () => [...input.eniIds].sort().flatMap((id) => this.cloud.get(id) ?? [])),
      adoptEnis: (input) =>
        this.run('adoptEnis', input, () => {
          for (const id of input.eniIds) {
            const eni = this.cloud.get(id);
            if (eni !== undefined) {
              eni.tags = { ...eni.tags, ...adoptionTags({ clusterId: input.clusterId, nodeName: input.nodeName }) };
            }
          }
        }),
      findEnisByIntent: (input) =>
        this.run('findEnisByIntent', input, () =>
          Object.fromEntries(
            input.clientTokens.map((token) => [
              token,
              this.cloudEnisInOrder().filter((eni) => eni.tags?.['eniflow.io/intent'] === token),
            ]),
          ),
        ),
      createEni: (input) => this.run('createEni', input, () => this.cloudCreate(input)),
      attachEni: (input) =>
        this.run('attachEni', input, () => {
          const eni = this.cloudEni(input.eniId);
          eni.instanceId = input.instanceId;
          eni.status = 'InUse';
        }),
      waitEniStatus: (input) =>
        this.run('waitEniStatus', input, () => {
          const eni = this.cloud.get(input.eniId);
          if (eni === undefined) {
            if (input.goneIsDone === true) return 'Gone';
            throw ApplicationFailure.nonRetryable(`ENI ${input.eniId} does not exist`, 'EcsNotFound');
          }
          if (eni.status !== input.status) {
            throw ApplicationFailure.nonRetryable(`ENI ${input.eniId} is ${eni.status}`, 'EniAttachFailed');
          }
          return eni.status;
        }),
      detachEni: (input) =>
        this.run('detachEni', input, () => {
          const eni = this.cloud.get(input.eniId);
          if (eni === undefined) return;
          eni.instanceId = '';
          eni.status = 'Available';
        }),
      deleteEni: (input) =>
        this.run('deleteEni', input, () => {
          this.cloud.delete(input.eniId);
        }),
      assignIpv4: (input) =>
        this.run('assignIpv4', input, () => {
          const eni = this.cloudEni(input.eniId);
          const ips = this.takeAddresses(input.eniId, input.count);
          eni.ipv4 = [...eni.ipv4, ...ips.map((ip) => ({ ip, primary: false }))];
          return { ips };
        }),
      assignIpv6: unused('assignIpv6'),
      unassignIpv4: (input) =>
        this.run('unassignIpv4', input, () => {
          const eni = this.cloud.get(input.eniId);
          if (eni !== undefined) eni.ipv4 = eni.ipv4.filter((entry) => !input.ips.includes(entry.ip));
        }),
      unassignIpv6: unused('unassignIpv6'),
      assignIpv4Prefixes: unused('assignIpv4Prefixes'),
      assignIpv6Prefixes: unused('assignIpv6Prefixes'),
      unassignIpv4Prefixes: unused('unassignIpv4Prefixes'),
      unassignIpv6Prefixes: unused('unassignIpv6Prefixes'),
    };
  }

  /** What ECS does on CreateNetworkInterface: a new ENI, or the one created earlier under the same ClientToken. */
  cloudCreate(input: InputOf<'createEni'>): OutputOf<'createEni'> {
    const known = this.createdByToken.get(input.clientToken);
    const eniId = known ?? `eni-new-${this.eniCounter + 1}`;
    const eni =
      known === undefined
        ? // The creator tag is the activity's to add, as createEni does.
          this.newCloudEni({
            eniId,
            count: input.ipv4Count,
            type: 'Secondary',
            tags: { ...input.tags, creator: 'eniflow' },
          })
        : this.cloudEni(eniId);
    this.createdByToken.set(input.clientToken, eniId);
    return { eni: clone(eni), requestId: `req-create-${eniId}` };
  }

  private written() {
    this.resourceVersion += 1;
    this.cr.metadata['resourceVersion'] = String(this.resourceVersion);
    return { outcome: 'written' as const, conflicts: 0, resourceVersion: String(this.resourceVersion) };
  }

  /** Raw Node CR typed, for assertions. */
  crObject(): NodeCr {
    return clone(this.cr) as unknown as NodeCr;
  }
}
