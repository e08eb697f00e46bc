/**
 * The benchmark's cluster: an emulator fixture with one ECS instance per node, core Nodes and Node CRs as
 * Terway's control plane and daemon write them, pods created in bursts, and a watch on the Node CRs that
 * notes when each pod's IP appears.
 */
import { CoreV1Api, CustomObjectsApi, PatchStrategy, Watch, setHeaderOptions } from '@kubernetes/client-node';
import type { KubeConfig } from '@kubernetes/client-node';

import { loadFixtureFile, DEMO_FIXTURE_PATH } from '../../src/ecs-emulator/index.js';
import type { EmulatorFixture } from '../../src/ecs-emulator/index.js';
import {
  NODE_CR_API_VERSION,
  NODE_CR_FINALIZER,
  NODE_CR_GROUP,
  NODE_CR_KIND,
  NODE_CR_PLURAL,
  NODE_CR_VERSION,
} from '../../src/ipam/index.js';
import type { NodeCr, NodeSpec } from '../../src/ipam/index.js';
import { addCounts } from './probes.js';
import type { Counts } from './probes.js';

export const BENCH_NAMESPACE = 'bench';
const ZONE_ID = 'cn-hangzhou-h';
const VSWITCH_ID = 'vsw-bp1benchpods000000';
const SECURITY_GROUP_ID = 'sg-bp1emu00000000000001';
/** 4 ENIs × 15 IPv4 each: 3 secondary ENIs hold up to 45 pod IPs, room for 25 pods and the warm pool. */
const INSTANCE_TYPE = { id: 'ecs.g7.2xlarge', adapters: 4, ipsPerAdapter: 15 } as const;
const CR = { group: NODE_CR_GROUP, version: NODE_CR_VERSION, plural: NODE_CR_PLURAL } as const;

export function benchNodeName(index: number): string {
  return `bench-node-${String(index + 1).padStart(4, '0')}`;
}

function instanceId(index: number): string {
  return `i-bp1bench${String(index + 1).padStart(12, '0')}`;
}

/**
 * The demo fixture's account, region, security groups and instance types, with one /14 pod vSwitch (room for
 * thousands of nodes) and `nodeCount` instances of one type in it.
 */
export async function scaleFixture(nodeCount: number): Promise<EmulatorFixture> {
  const demo = await loadFixtureFile(DEMO_FIXTURE_PATH);
  const vpcId = demo.vSwitches[0]?.vpcId ?? 'vpc-bp1emu0000000000000';
  return {
    ...demo,
    vSwitches: [
      { vSwitchId: VSWITCH_ID, vpcId, zoneId: ZONE_ID, cidrBlock: '10.64.0.0/14', vSwitchName: 'bench-pods' },
    ],
    instances: Array.from({ length: nodeCount }, (_, index) => ({
      instanceId: instanceId(index),
      instanceType: INSTANCE_TYPE.id,
      vSwitchId: VSWITCH_ID,
      securityGroupIds: [SECURITY_GROUP_ID],
      instanceName: benchNodeName(index),
    })),
    networkInterfaces: [],
  };
}

function nodeSpec(index: number, regionId: string, pool: PoolSize): NodeSpec {
  return {
    nodeMetadata: {
      regionID: regionId,
      instanceType: INSTANCE_TYPE.id,
      instanceID: instanceId(index),
      zoneID: ZONE_ID,
    },
    nodeCap: {
      adapters: INSTANCE_TYPE.adapters,
      totalAdapters: INSTANCE_TYPE.adapters,
      ipv4PerAdapter: INSTANCE_TYPE.ipsPerAdapter,
      ipv6PerAdapter: INSTANCE_TYPE.ipsPerAdapter,
    },
    eni: {
      enableIPv4: true,
      enableIPv6: false,
      enableERDMA: false,
      enableTrunk: false,
      vSwitchOptions: [VSWITCH_ID],
      securityGroupIDs: [SECURITY_GROUP_ID],
      vSwitchSelectPolicy: 'most',
      tag: { 'k8s.aliyun.com': 'true' },
    },
    pool: { minPoolSize: pool.min, maxPoolSize: pool.max },
    flavor: [
      {
        networkInterfaceType: 'Secondary',
        networkInterfaceTrafficMode: 'Standard',
        count: INSTANCE_TYPE.adapters - 1,
      },
    ],
  };
}

/** The warm pool every bench node's CR asks for. */
export interface PoolSize {
  readonly min: number;
  readonly max: number;
}

/** Runs `task` for every item with at most `limit` at once. */
export async function forEachLimited<T>(
  items: readonly T[],
  limit: number,
  task: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next++] as T;
      await task(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}

/**
 * The benchmark's own requests to the kube-apiserver, by the same `VERB resource` keys as
 * `apiserverRequestsByVerb`, so they can be subtracted from the server's counters.
 */
export class BenchKube {
  readonly ownRequests: Counts = {};
  readonly core: CoreV1Api;
  readonly custom: CustomObjectsApi;
  readonly kubeConfig: KubeConfig;

  constructor(kubeConfig: KubeConfig) {
    this.kubeConfig = kubeConfig;
    this.core = kubeConfig.makeApiClient(CoreV1Api);
    this.custom = kubeConfig.makeApiClient(CustomObjectsApi);
  }

  count(key: string): void {
    addCounts(this.ownRequests, key);
  }

  async createNamespace(name: string): Promise<void> {
    await this.core.createNamespace({ body: { metadata: { name } } });
  }

  /** A Ready core Node and its Node CR, as the kubelet, Terway's control plane and its daemon write them. */
  async createNode(index: number, regionId: string, pool: PoolSize): Promise<void> {
    const name = benchNodeName(index);
    this.count('POST nodes');
    await this.core.createNode({
      body: {
        metadata: {
          name,
          labels: {
            'topology.kubernetes.io/region': regionId,
            'topology.kubernetes.io/zone': ZONE_ID,
            'node.kubernetes.io/instance-type': INSTANCE_TYPE.id,
          },
        },
        spec: { providerID: `${regionId}.${instanceId(index)}` },
      },
    });
    const now = new Date();
    this.count('PATCH nodes/status');
    await this.core.patchNodeStatus(
      {
        name,
        body: {
          status: {
            conditions: [
              {
                type: 'Ready',
                status: 'True',
                reason: 'KubeletReady',
                message: 'bench node',
                lastHeartbeatTime: now,
                lastTransitionTime: now,
              },
            ],
          },
        },
      },
      setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
    );
    const body: NodeCr = {
      apiVersion: NODE_CR_API_VERSION,
      kind: NODE_CR_KIND,
      metadata: { name, labels: { name }, finalizers: [NODE_CR_FINALIZER] },
      spec: nodeSpec(index, regionId, pool),
    };
    this.count('POST nodecrs');
    await this.custom.createClusterCustomObject({ ...CR, body });
  }

  async createPod(nodeName: string, podName: string): Promise<void> {
    this.count('POST pods');
    await this.core.createNamespacedPod({
      namespace: BENCH_NAMESPACE,
      body: {
        metadata: { name: podName, labels: { app: 'bench' } },
        spec: { nodeName, containers: [{ name: 'app', image: 'registry.invalid/bench:none' }] },
      },
    });
  }
}

/** `ns/name` of every pod bound to an IP in the CR, and the number of idle valid IPs on InUse ENIs. */
export function crBindings(cr: NodeCr): { pods: Set<string>; idle: number } {
  const pods = new Set<string>();
  let idle = 0;
  for (const eni of Object.values(cr.status?.networkInterfaces ?? {})) {
    for (const entry of Object.values(eni.ipv4 ?? {})) {
      if (entry.podID !== undefined && entry.podID !== '') pods.add(entry.podID);
      else if (entry.status === 'Valid' && eni.status === 'InUse') idle += 1;
    }
  }
  return { pods, idle };
}

/** One node's ENIs and IPs against what its pods need, from its CR. */
export interface NodeShape {
  node: string;
  /** ENIs in the CR's status (eniflow's secondary ENIs; the primary is not there). */
  enis: number;
  /** IPv4 addresses on them, the ENIs' own primary addresses included. */
  ips: number;
  /** Pods bound to one of them. */
  pods: number;
  /** `spec.nodeCap.ipv4PerAdapter` and `spec.pool.minPoolSize`, the limits the CR sets. */
  ipv4PerAdapter: number;
  minPoolSize: number;
}

export function nodeShape(cr: NodeCr, pods: number): NodeShape {
  const enis = Object.values(cr.status?.networkInterfaces ?? {});
  return {
    node: cr.metadata.name,
    enis: enis.length,
    ips: enis.reduce((sum, eni) => sum + Object.keys(eni.ipv4 ?? {}).length, 0),
    pods,
    ipv4PerAdapter: cr.spec.nodeCap?.ipv4PerAdapter ?? Number.NaN,
    minPoolSize: cr.spec.pool?.minPoolSize ?? 0,
  };
}

/**
 * Watches every Node CR and records, for each awaited pod, when its IP first appears in its node's CR (the
 * moment the watch event arrives here). A watch that ends is resumed from a fresh list.
 */
export class ServedTracker {
  /** When each awaited pod was created (performance.now()) and, once bound, served. */
  private readonly pods = new Map<string, { createdMs: number; servedMs?: number }>();
  private readonly nodes = new Map<string, { idle: number; synced: boolean; shape: NodeShape }>();
  private readonly waiters = new Set<() => void>();
  private abort: AbortController | undefined;
  private stopped = false;
  /** performance.now() of the last CR event, to tell when things have settled. */
  lastEventMs = 0;

  private readonly kube: BenchKube;

  constructor(kube: BenchKube) {
    this.kube = kube;
  }

  async start(): Promise<void> {
    const list = (await this.kube.custom.listClusterCustomObject(CR)) as {
      metadata?: { resourceVersion?: string };
      items: NodeCr[];
    };
    this.kube.count('LIST nodecrs');
    for (const item of list.items) this.observe(item);
    const watch = new Watch(this.kube.kubeConfig);
    this.kube.count('WATCH nodecrs');
    this.abort = await watch.watch(
      `/apis/${CR.group}/${CR.version}/${CR.plural}`,
      { resourceVersion: list.metadata?.resourceVersion, allowWatchBookmarks: true },
      (phase, object: NodeCr) => {
        if (phase === 'ADDED' || phase === 'MODIFIED') this.observe(object);
      },
      () => {
        this.resume();
      },
    );
  }

  private resume(): void {
    if (this.stopped) return;
    setTimeout(() => {
      this.start().catch(() => {
        this.resume();
      });
    }, 200);
  }

  stop(): void {
    this.stopped = true;
    this.abort?.abort();
  }

  /** Registers a pod about to be created; call just before the create request. */
  expect(podId: string, createdMs: number): void {
    this.pods.set(podId, { createdMs });
  }

  private observe(cr: NodeCr): void {
    this.lastEventMs = performance.now();
    const { pods, idle } = crBindings(cr);
    this.nodes.set(cr.metadata.name, {
      idle,
      synced: cr.status?.lastSyncOpenAPITime !== undefined,
      shape: nodeShape(cr, pods.size),
    });
    for (const podId of pods) {
      const entry = this.pods.get(podId);
      if (entry !== undefined && entry.servedMs === undefined) entry.servedMs = performance.now();
    }
    for (const waiter of this.waiters) waiter();
  }

  /** Nodes whose CR eniflow has synced with the cloud and that show at least `minIdle` idle IPs (pool filled). */
  warmNodes(minIdle: number): number {
    return [...this.nodes.values()].filter((node) => node.synced && node.idle >= minIdle).length;
  }

  /** Every node's ENIs, IPs and pods as its CR showed them last. */
  nodeShapes(): NodeShape[] {
    return [...this.nodes.values()].map((node) => ({ ...node.shape }));
  }

  servedMs(podId: string): number | undefined {
    return this.pods.get(podId)?.servedMs;
  }

  /** When an awaited pod was created and served (performance.now()), or undefined if it was never expected. */
  podTimes(podId: string): { createdMs: number; servedMs?: number } | undefined {
    const entry = this.pods.get(podId);
    return entry === undefined ? undefined : { ...entry };
  }

  /** Latency (ms) from creation to IP in the CR of each of `podIds` served so far. */
  latencies(podIds: readonly string[]): number[] {
    return podIds.flatMap((id) => {
      const entry = this.pods.get(id);
      return entry?.servedMs === undefined ? [] : [entry.servedMs - entry.createdMs];
    });
  }

  /** Resolves when `done()` holds (checked on every CR event), rejects after `timeoutMs`. */
  async until(done: () => boolean, timeoutMs: number, what: string): Promise<void> {
    if (done()) return;
    let check: (() => void) | undefined;
    let timer: NodeJS.Timeout | undefined;
    try {
      await new Promise<void>((resolve, reject) => {
        check = () => {
          if (done()) resolve();
        };
        this.waiters.add(check);
        timer = setTimeout(() => {
          reject(new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`));
        }, timeoutMs);
      });
    } finally {
      if (check !== undefined) this.waiters.delete(check);
      clearTimeout(timer);
    }
  }
}
