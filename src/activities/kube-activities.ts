import { createHash, randomBytes } from 'node:crypto';

import { activityInfo, cancellationSignal } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { ApiException, CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type {
  ConfigurationOptions,
  CoreV1Event,
  KubeConfig,
  V1Container,
  V1Node,
  V1NodeCondition,
  V1Pod,
} from '@kubernetes/client-node';

import {
  EXCLUSIVE_ENI_MODE_LABEL,
  NODE_CR_FINALIZER,
  NODE_CR_GROUP,
  NODE_CR_PLURAL,
  NODE_CR_VERSION,
  POD_ENI_ANNOTATION,
  applyJsonDelta,
  canonicalJson,
  deltaFitsBase,
  finalCniStatus,
  jsonDelta,
  mergeNetworkInterfacesOverRaw,
  validateNodeCr,
} from '../ipam/index.js';
import type {
  CniStatus,
  JsonChange,
  NetworkInterfaces,
  NodeConditionSnapshot,
  NodeCrValidation,
  NodeRuntimeView,
  NodeStatus,
  PodSnapshot,
} from '../ipam/index.js';
import { deadlineOptions, KUBE_REQUEST_TIMEOUT_MS } from '../kube-request.js';
import type { NodeReadCache } from './node-read-cache.js';
import type { Logger } from '../logger.js';
import { activityLogger } from './activity-log.js';
import type { CallAttributes, CallTracer } from './call-tracer.js';

/** Failure types of the Kubernetes activities. */
export const KUBE_FAILURE_TYPES = [
  'KubeConflict',
  'KubeNotFound',
  'KubeTransient',
  'KubeInvalidRequest',
  'KubeStaleBase',
] as const;
export type KubeFailureType = (typeof KUBE_FAILURE_TYPES)[number];
export const NON_RETRYABLE_KUBE_FAILURES: readonly KubeFailureType[] = ['KubeNotFound', 'KubeInvalidRequest'];

export interface KubeActivityDeps {
  kubeConfig: KubeConfig;
  logger: Logger;
  /** Name of the component in Events (`source.component`, `reportingController`). */
  component?: string;
  /**
   * Called before each status replace with the attempt number: the seam through which tests let a concurrent
   * writer (Terway's daemon, an operator) change the CR between our read and our write.
   */
  beforeStatusReplace?: (attempt: number) => Promise<void>;
  /** Deadline of each request (default {@link KUBE_REQUEST_TIMEOUT_MS}); a cancelled activity aborts it sooner. */
  requestTimeoutMs?: number;
  /** One span per Kubernetes request when tracing is on. */
  tracer?: CallTracer;
  /** Base URL of the Temporal Web UI (`TEMPORAL_UI_URL`): events then link to the workflow that wrote them. */
  temporalUiUrl?: string;
  /** The worker's informers; `readNodeView` answers from them once synced (else, and when behind, reads live). */
  readCache?: NodeReadCache;
  /** How long a read waits for the cache to catch up with what the workflow saw before reading live (2 s). */
  cacheWaitMs?: number;
}

/** The Web UI page of the workflow running this activity, when a UI URL is configured. */
export function workflowUiLink(uiUrl: string | undefined): string | undefined {
  if (uiUrl === undefined || uiUrl === '') return undefined;
  const info = activityInfo();
  const workflowId = info.workflowExecution?.workflowId;
  if (workflowId === undefined) return undefined;
  return `${uiUrl.replace(/\/+$/, '')}/namespaces/${encodeURIComponent(info.namespace)}/workflows/${encodeURIComponent(workflowId)}`;
}

/** What the workflow reads about its node at the start of each pass: plain JSON, small. */
export interface NodeSnapshot {
  nodeName: string;
  /** The Node CR, validated; absent when the CR does not exist. */
  cr?: {
    validation: NodeCrValidation;
    resourceVersion: string;
    uid: string;
    isDeleting: boolean;
    hasFinalizer: boolean;
  };
  /** Pods bound to the node (only the fields the core reads). */
  pods: PodSnapshot[];
  /**
   * Terway's daemon's `NodeRuntime` for the node, reduced to the pod UIDs the CR binds; absent when the daemon
   * writes none (older Terway, or the CRD is not installed).
   */
  nodeRuntime?: NodeRuntimeView;
  /** The core Kubernetes Node; absent when it does not exist. */
  coreNode?: {
    uid: string;
    isReady: boolean;
    exclusiveEniMode: string;
    sufficientIp?: NodeConditionSnapshot;
    /** eniflow's own `IPAMConfigValid` condition, as the Node shows it. */
    ipamConfigValid?: NodeConditionSnapshot;
    /** eniflow's own `ENIOperationsFailing` condition, as the Node shows it. */
    eniOperationsFailing?: NodeConditionSnapshot;
  };
}

/**
 * {@link NodeSnapshot} as the read activity sends it: pods keyed by `namespace/name`, so that a change between two
 * reads is a short {@link JsonChange} list (see {@link NodeViewReply}).
 */
export interface NodeView {
  nodeName: string;
  cr?: NonNullable<NodeSnapshot['cr']>;
  pods: Record<string, PodSnapshot>;
  nodeRuntime?: NodeRuntimeView;
  coreNode?: NonNullable<NodeSnapshot['coreNode']>;
}

/**
 * What `readNodeView` returns: the view in full, or the changes since the view whose digest the workflow sent
 * (empty when nothing changed). `digest` names the resulting view, for the next read.
 */
export type NodeViewReply =
  { digest: string; full: NodeView } | { digest: string; base: string; changes: JsonChange[] };

/** Depth of the status write's changes: an ENI field, or one entry of its IP or condition maps, replaced whole. */
export const STATUS_CHANGE_DEPTH = 3;

/** The compact view of a snapshot (pods keyed by `namespace/name`, in key order). */
export function nodeViewOf(snapshot: NodeSnapshot): NodeView {
  const pods: Record<string, PodSnapshot> = {};
  const keyed = snapshot.pods.map((pod) => [`${pod.metadata.namespace}/${pod.metadata.name}`, pod] as const);
  for (const [key, pod] of keyed.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) pods[key] = pod;
  const view: NodeView = { nodeName: snapshot.nodeName, pods };
  if (snapshot.cr !== undefined) {
    // Resource versions move with every write and the workflow never reads them: left out, a write costs the
    // next read only the entries it changed.
    const { validation } = snapshot.cr;
    view.cr = { ...snapshot.cr, resourceVersion: '' };
    if (validation.ok && validation.node.metadata.resourceVersion !== undefined) {
      const metadata = { ...validation.node.metadata };
      delete metadata.resourceVersion;
      view.cr.validation = { ...validation, node: { ...validation.node, metadata } };
    }
  }
  if (snapshot.nodeRuntime !== undefined) view.nodeRuntime = snapshot.nodeRuntime;
  if (snapshot.coreNode !== undefined) view.coreNode = snapshot.coreNode;
  return view;
}

/** Names a view by its content (canonical JSON), so the workflow and any worker agree on what a base is. */
export function nodeViewDigest(view: NodeView): string {
  return createHash('sha256').update(canonicalJson(view)).digest('hex').slice(0, 24);
}

/** The last views each node was sent, by digest: the bases the next read may answer with a delta against. */
class NodeViewBases {
  private readonly byNode = new Map<string, Map<string, NodeView>>();
  /**
   * Two: the view the workflow holds and the one just sent, so a read retried after its answer was lost still finds
   * its base. Pods are shared with the informers; what a view adds is mostly the validated CR.
   */
  private readonly perNode = 2;

  get(nodeName: string, digest: string): NodeView | undefined {
    return this.byNode.get(nodeName)?.get(digest);
  }

  remember(nodeName: string, digest: string, view: NodeView): void {
    // Map order is recency: the node moves to the end, its oldest base goes first.
    const views = this.byNode.get(nodeName) ?? new Map<string, NodeView>();
    this.byNode.delete(nodeName);
    views.delete(digest);
    views.set(digest, view);
    while (views.size > this.perNode) views.delete(views.keys().next().value ?? '');
    this.byNode.set(nodeName, views);
    // Nodes come and go: the least recently read ones are dropped beyond a bound.
    while (this.byNode.size > 20_000) this.byNode.delete(this.byNode.keys().next().value ?? '');
  }
}

function statusOf(error: unknown): number | undefined {
  if (error instanceof ApiException) return error.code;
  return undefined;
}

/** Converts a client-node failure into a Temporal failure: 404/409 named, 5xx and transport retryable. */
function kubeFailure(error: unknown, what: string): ApplicationFailure {
  const code = statusOf(error);
  const message = `${what}: ${code === undefined ? String(error) : `HTTP ${code}`}`;
  if (code === 409) return ApplicationFailure.retryable(message, 'KubeConflict');
  if (code === 404) return ApplicationFailure.nonRetryable(message, 'KubeNotFound');
  if (code === undefined || code >= 500 || code === 429) return ApplicationFailure.retryable(message, 'KubeTransient');
  return ApplicationFailure.nonRetryable(message, 'KubeInvalidRequest');
}

function timeText(value: Date | string | undefined): string | undefined {
  if (value === undefined) return undefined;
  return typeof value === 'string' ? value : value.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function conditionSnapshot(condition: V1NodeCondition): NodeConditionSnapshot {
  const snapshot: NodeConditionSnapshot = { type: condition.type, status: condition.status };
  if (condition.reason !== undefined) snapshot.reason = condition.reason;
  if (condition.message !== undefined) snapshot.message = condition.message;
  const heartbeat = timeText(condition.lastHeartbeatTime);
  const transition = timeText(condition.lastTransitionTime);
  if (heartbeat !== undefined) snapshot.lastHeartbeatTime = heartbeat;
  if (transition !== undefined) snapshot.lastTransitionTime = transition;
  return snapshot;
}

function containerSnapshot(container: V1Container): NonNullable<PodSnapshot['spec']['containers']>[number] {
  const limits = container.resources?.limits;
  return limits === undefined ? {} : { resources: { limits: { ...limits } } };
}

/** Only the fields the core reads, so the activity result stays small whatever the pods carry. */
export function podSnapshotOf(pod: V1Pod): PodSnapshot {
  const snapshot: PodSnapshot = {
    metadata: { namespace: pod.metadata?.namespace ?? '', name: pod.metadata?.name ?? '' },
    spec: {
      containers: (pod.spec?.containers ?? []).map(containerSnapshot),
      initContainers: (pod.spec?.initContainers ?? []).map(containerSnapshot),
    },
    status: {},
  };
  if (pod.metadata?.uid !== undefined) snapshot.metadata.uid = pod.metadata.uid;
  // Only the one annotation the core reads: pods may carry kilobytes of others, and this lands in workflow history.
  const podEni = pod.metadata?.annotations?.[POD_ENI_ANNOTATION];
  if (podEni !== undefined) snapshot.metadata.annotations = { [POD_ENI_ANNOTATION]: podEni };
  if (pod.spec?.hostNetwork === true) snapshot.spec.hostNetwork = true;
  const status: NonNullable<PodSnapshot['status']> = {};
  if (pod.status?.phase !== undefined) status.phase = pod.status.phase;
  if (pod.status?.podIP !== undefined) status.podIP = pod.status.podIP;
  if (pod.status?.podIPs !== undefined) status.podIPs = pod.status.podIPs.map((entry) => ({ ip: entry.ip }));
  snapshot.status = status;
  return snapshot;
}

export function coreNodeSnapshot(node: V1Node): NonNullable<NodeSnapshot['coreNode']> {
  const conditions = node.status?.conditions ?? [];
  const sufficient = conditions.find((condition) => condition.type === 'SufficientIP');
  const snapshot: NonNullable<NodeSnapshot['coreNode']> = {
    uid: node.metadata?.uid ?? '',
    isReady: conditions.some((condition) => condition.type === 'Ready' && condition.status === 'True'),
    exclusiveEniMode: (node.metadata?.labels?.[EXCLUSIVE_ENI_MODE_LABEL] ?? 'default').toLowerCase(),
  };
  if (sufficient !== undefined) snapshot.sufficientIp = conditionSnapshot(sufficient);
  const configValid = conditions.find((condition) => condition.type === 'IPAMConfigValid');
  if (configValid !== undefined) snapshot.ipamConfigValid = conditionSnapshot(configValid);
  const operations = conditions.find((condition) => condition.type === 'ENIOperationsFailing');
  if (operations !== undefined) snapshot.eniOperationsFailing = conditionSnapshot(operations);
  return snapshot;
}

/** The Node CR as the snapshot holds it: validated, with the metadata the workflow decides on. */
export function crSnapshotOf(raw: RawObject): NonNullable<NodeSnapshot['cr']> {
  const metadata = raw.metadata ?? {};
  const finalizers = Array.isArray(metadata['finalizers']) ? (metadata['finalizers'] as unknown[]) : [];
  return {
    validation: validateNodeCr(raw),
    resourceVersion: typeof metadata['resourceVersion'] === 'string' ? metadata['resourceVersion'] : '',
    uid: typeof metadata['uid'] === 'string' ? metadata['uid'] : '',
    isDeleting: metadata['deletionTimestamp'] !== undefined && metadata['deletionTimestamp'] !== null,
    hasFinalizer: finalizers.includes(NODE_CR_FINALIZER),
  };
}

/** A core Node condition as written: all fields present, times in RFC 3339. */
export interface NodeConditionPatch {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  lastHeartbeatTime: string;
  lastTransitionTime: string;
}

export type RawObject = Record<string, unknown> & {
  metadata?: Record<string, unknown>;
  status?: Record<string, unknown>;
};

/** Terway's per-node runtime CR (cluster-scoped, named after the node), written by its daemon since v1.11.3. */
const NODE_RUNTIME_PLURAL = 'noderuntimes';

function asRecord(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** The pod UIDs the CR's IP entries are bound to: the only ones whose CNI state a pass may need. */
export function boundPodUids(cr: RawObject | undefined): Set<string> {
  const uids = new Set<string>();
  for (const eni of Object.values(asRecord(cr?.status?.['networkInterfaces']))) {
    for (const family of ['ipv4', 'ipv6']) {
      for (const entry of Object.values(asRecord(asRecord(eni)[family]))) {
        const uid = asRecord(entry)['podUID'];
        if (typeof uid === 'string' && uid !== '') uids.add(uid);
      }
    }
  }
  return uids;
}

/** The final CNI status of each bound pod UID the NodeRuntime knows, in UID order (small, deterministic). */
export function nodeRuntimeViewOf(runtime: RawObject, uids: ReadonlySet<string>): NodeRuntimeView {
  const pods = asRecord(runtime.status?.['pods']);
  const view: Record<string, CniStatus> = {};
  for (const uid of [...uids].sort()) {
    const status = finalCniStatus(asRecord(pods[uid])['status']);
    if (status !== undefined) view[uid] = status;
  }
  return { cniStatusByPodUid: view };
}

/** What a span of a client-node call names: the method, and the resource and object its first argument gives. */
function kubeCallAttributes(method: string, params: unknown): CallAttributes {
  const { plural, name, namespace } = asRecord(params);
  return {
    'k8s.method': method,
    ...(typeof plural === 'string' ? { 'k8s.resource': plural } : {}),
    ...(typeof name === 'string' ? { 'k8s.object.name': name } : {}),
    ...(typeof namespace === 'string' ? { 'k8s.namespace.name': namespace } : {}),
  };
}

/**
 * The client-node API object with each method call in a span (`Kubernetes <method>`), so every request is traced
 * wherever it is made, without touching the call sites.
 */
function tracedApi<T extends object>(api: T, tracer: CallTracer | undefined): T {
  if (tracer === undefined) return api;
  return new Proxy(api, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function' || typeof property !== 'string') return value;
      const method = value as (...args: unknown[]) => Promise<unknown>;
      return (...args: unknown[]) =>
        tracer(
          { name: `Kubernetes ${property}`, attributes: kubeCallAttributes(property, args[0]) },
          async (annotate) => {
            try {
              return await method.apply(target, args);
            } catch (error) {
              const code = statusOf(error);
              if (code !== undefined) annotate({ 'http.response.status_code': code });
              throw error;
            }
          },
        );
    },
  });
}

/** The Kubernetes activities: one read of the node's world, and the writes the reconcile makes. */
export function createKubeActivities(deps: KubeActivityDeps) {
  const core = tracedApi(deps.kubeConfig.makeApiClient(CoreV1Api), deps.tracer);
  const custom = tracedApi(deps.kubeConfig.makeApiClient(CustomObjectsApi), deps.tracer);
  const component = deps.component ?? 'eniflow';
  const timeoutMs = deps.requestTimeoutMs ?? KUBE_REQUEST_TIMEOUT_MS;
  /** Every request ends at its deadline, or earlier when the activity is cancelled (or the worker shuts down). */
  const call = (options?: ConfigurationOptions): ConfigurationOptions =>
    deadlineOptions({ timeoutMs, signal: cancellationSignal() }, options);
  const logFor = (nodeName: string): Logger => activityLogger(deps.logger, { nodeName });
  const crRef = (name: string) => ({ group: NODE_CR_GROUP, version: NODE_CR_VERSION, plural: NODE_CR_PLURAL, name });

  async function getCr(name: string): Promise<RawObject | undefined> {
    try {
      return (await custom.getClusterCustomObject(crRef(name), call())) as RawObject;
    } catch (error) {
      if (statusOf(error) === 404) return undefined;
      throw kubeFailure(error, `get Node CR ${name}`);
    }
  }

  async function recordOneEvent(input: {
    involved: { kind: 'Node' | 'Pod'; apiVersion: string; name: string; namespace?: string; uid?: string };
    type: 'Normal' | 'Warning';
    reason: string;
    message: string;
    series?: string;
  }): Promise<void> {
    const namespace = input.involved.namespace ?? 'default';
    const now = new Date();
    const seriesName =
      input.series === undefined
        ? undefined
        : `${input.involved.name}.${createHash('sha256')
            .update(
              [
                input.involved.apiVersion,
                input.involved.kind,
                namespace,
                input.involved.name,
                input.involved.uid ?? '',
                input.reason,
                input.series,
              ].join('\n'),
            )
            .digest('hex')
            .slice(0, 16)}`;
    const body = {
      metadata: { name: seriesName ?? `${input.involved.name}.${randomBytes(8).toString('hex')}`, namespace },
      involvedObject: {
        kind: input.involved.kind,
        apiVersion: input.involved.apiVersion,
        name: input.involved.name,
        ...(input.involved.namespace === undefined ? {} : { namespace: input.involved.namespace }),
        ...(input.involved.uid === undefined ? {} : { uid: input.involved.uid }),
      },
      type: input.type,
      reason: input.reason,
      message: input.message,
      source: { component },
      reportingComponent: component,
      reportingInstance: component,
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
    };
    // A repeat of a series: at most a few tries, since a concurrent update (another attempt) bumps the version.
    for (let attempt = 0; ; attempt += 1) {
      if (seriesName !== undefined) {
        let existing: CoreV1Event | undefined;
        try {
          existing = await core.readNamespacedEvent({ name: seriesName, namespace }, call());
        } catch (error) {
          if (statusOf(error) !== 404) throw kubeFailure(error, `read event ${input.reason}`);
        }
        if (existing !== undefined) {
          try {
            existing.type = input.type;
            existing.message = input.message;
            existing.count = (existing.count ?? 1) + 1;
            existing.lastTimestamp = now;
            await core.replaceNamespacedEvent({ name: seriesName, namespace, body: existing }, call());
            return;
          } catch (error) {
            if ((statusOf(error) === 409 || statusOf(error) === 404) && attempt < 3) continue;
            throw kubeFailure(error, `update event ${input.reason}`);
          }
        }
      }
      try {
        await core.createNamespacedEvent({ namespace, body }, call());
        return;
      } catch (error) {
        // Created meanwhile under the series name: count this one on it.
        if (statusOf(error) === 409 && seriesName !== undefined && attempt < 3) continue;
        throw kubeFailure(error, `record event ${input.reason}`);
      }
    }
  }

  /** Reads the Node CR (validated), the pods bound to the node, its NodeRuntime and the core Node. */
  /**
   * Reads the node live: the pods from the apiserver's watch cache (`resourceVersion: "0"`), or from etcd when
   * `consistent` (the worker's own cache was found behind what the watcher saw, so the watch cache may be too).
   */
  async function readLive(input: { nodeName: string }, options: { consistent?: boolean } = {}): Promise<NodeSnapshot> {
    const snapshot: NodeSnapshot = { nodeName: input.nodeName, pods: [] };
    const raw = await getCr(input.nodeName);
    if (raw !== undefined) snapshot.cr = crSnapshotOf(raw);
    try {
      const pods = await core.listPodForAllNamespaces(
        {
          fieldSelector: `spec.nodeName=${input.nodeName}`,
          ...(options.consistent === true ? {} : { resourceVersion: '0' }),
        },
        call(),
      );
      snapshot.pods = pods.items.map(podSnapshotOf);
    } catch (error) {
      throw kubeFailure(error, `list pods of ${input.nodeName}`);
    }
    await readRuntimeInto(snapshot, raw);
    try {
      snapshot.coreNode = coreNodeSnapshot(await core.readNode({ name: input.nodeName }, call()));
    } catch (error) {
      if (statusOf(error) !== 404) throw kubeFailure(error, `read Node ${input.nodeName}`);
    }
    return snapshot;
  }

  /** Terway's NodeRuntime, read live (written by the daemon, often absent: one GET, no informer). */
  async function readRuntimeInto(snapshot: NodeSnapshot, raw: RawObject | undefined): Promise<void> {
    try {
      const runtime = (await custom.getClusterCustomObject(
        {
          group: NODE_CR_GROUP,
          version: NODE_CR_VERSION,
          plural: NODE_RUNTIME_PLURAL,
          name: snapshot.nodeName,
        },
        call(),
      )) as RawObject;
      snapshot.nodeRuntime = nodeRuntimeViewOf(runtime, boundPodUids(raw));
    } catch (error) {
      if (statusOf(error) !== 404) throw kubeFailure(error, `get NodeRuntime ${snapshot.nodeName}`);
    }
  }

  /**
   * The node from the worker's read cache once it has seen at least `after` (what the watcher saw, what the
   * workflow last wrote), waiting up to `cacheWaitMs`; live otherwise (no cache, not synced, or still behind).
   */
  async function readNode(input: { nodeName: string; after?: Record<string, string> }): Promise<NodeSnapshot> {
    const cache = deps.readCache;
    if (cache?.hasSynced() !== true) return readLive(input);
    const caughtUp = await cache.waitFor(input.after ?? {}, deps.cacheWaitMs ?? 2_000, cancellationSignal());
    const cached = caughtUp ? cache.read(input.nodeName) : undefined;
    if (cached === undefined) {
      logFor(input.nodeName).info({ after: input.after }, 'Read cache behind what the workflow saw; reading live');
      return readLive(input, { consistent: true });
    }
    const snapshot: NodeSnapshot = { nodeName: input.nodeName, pods: cached.pods };
    if (cached.cr !== undefined) snapshot.cr = crSnapshotOf(cached.cr);
    if (cached.coreNode !== undefined) snapshot.coreNode = cached.coreNode;
    await readRuntimeInto(snapshot, cached.cr);
    return snapshot;
  }

  const bases = new NodeViewBases();

  /** Writes the status `build` makes of the CR as it is now, retrying on conflicts (see `writeNodeStatus`). */
  async function replaceStatus(input: {
    nodeName: string;
    maxConflicts?: number;
    build: (raw: RawObject) => NodeStatus;
  }) {
    const log = logFor(input.nodeName);
    const maxConflicts = input.maxConflicts ?? 5;
    for (let attempt = 0; ; attempt += 1) {
      const raw = await getCr(input.nodeName);
      if (raw === undefined) return { outcome: 'gone' as const, conflicts: attempt };
      const next = input.build(raw);
      const status: Record<string, unknown> = { ...(raw.status ?? {}) };
      for (const key of ['nextSyncOpenAPITime', 'lastSyncOpenAPITime'] as const) {
        const value = next[key];
        if (value === undefined) delete status[key];
        else status[key] = value;
      }
      // Laid over the CR as it is now, so fields of ENIs and IPs the model does not know survive the write.
      status['networkInterfaces'] = mergeNetworkInterfacesOverRaw({
        raw: status['networkInterfaces'],
        enis: next.networkInterfaces ?? {},
      });
      await deps.beforeStatusReplace?.(attempt);
      try {
        const written = (await custom.replaceClusterCustomObjectStatus(
          {
            ...crRef(input.nodeName),
            body: { ...raw, status },
          },
          call(),
        )) as RawObject;
        const resourceVersion = written.metadata?.['resourceVersion'];
        log.info({ conflicts: attempt }, 'Wrote Node CR status');
        return {
          outcome: 'written' as const,
          conflicts: attempt,
          resourceVersion: typeof resourceVersion === 'string' ? resourceVersion : '',
        };
      } catch (error) {
        if (statusOf(error) === 409 && attempt < maxConflicts) {
          log.info({ attempt }, 'Node CR changed meanwhile; re-reading');
          continue;
        }
        if (statusOf(error) === 404) return { outcome: 'gone' as const, conflicts: attempt };
        throw kubeFailure(error, `write status of Node CR ${input.nodeName}`);
      }
    }
  }

  return {
    /** Reads the Node CR (validated), the pods bound to the node and the core Node, in one activity. */
    async readNodeSnapshot(input: { nodeName: string }): Promise<NodeSnapshot> {
      return readLive(input);
    },

    /**
     * The node's {@link NodeView}: only the changes since `base` (the digest of the view the workflow holds) when
     * this worker still has that view, else in full. An unchanged node costs a digest and an empty list.
     */
    async readNodeView(input: {
      nodeName: string;
      base?: string;
      after?: Record<string, string>;
    }): Promise<NodeViewReply> {
      const view = nodeViewOf(await readNode(input));
      const digest = nodeViewDigest(view);
      const base = input.base === undefined ? undefined : bases.get(input.nodeName, input.base);
      bases.remember(input.nodeName, digest, view);
      if (input.base === undefined || base === undefined) return { digest, full: view };
      return { digest, base: input.base, changes: jsonDelta(base, view) };
    },

    /** The ids of every ENI any Node CR lists (the janitor never touches those). */
    async listKnownEniIds(): Promise<string[]> {
      try {
        const list = (await custom.listClusterCustomObject(
          // From the watch cache: the janitor runs rarely and needs no quorum read.
          { group: NODE_CR_GROUP, version: NODE_CR_VERSION, plural: NODE_CR_PLURAL, resourceVersion: '0' },
          call(),
        )) as { items?: RawObject[] };
        const ids = new Set<string>();
        for (const cr of list.items ?? []) {
          for (const id of Object.keys(asRecord(cr.status?.['networkInterfaces']))) ids.add(id);
        }
        return [...ids].sort();
      } catch (error) {
        throw kubeFailure(error, 'list Node CRs');
      }
    },

    /**
     * Writes the fields of `status` the controller owns (every other status field, and every field of an ENI or IP
     * entry the model does not know, is kept as it is) through the status subresource with optimistic concurrency: a 409 re-reads the CR and re-applies, so neither the
     * daemon's concurrent writes nor ours are lost. Returns the new resourceVersion, or `gone` when the CR was
     * deleted meanwhile.
     */
    async writeNodeStatus(input: { nodeName: string; status: NodeStatus; maxConflicts?: number }) {
      return replaceStatus({
        nodeName: input.nodeName,
        ...(input.maxConflicts === undefined ? {} : { maxConflicts: input.maxConflicts }),
        build: () => input.status,
      });
    },

    /**
     * Like `writeNodeStatus`, but carries only what the pass changed: `eniChanges` (from `jsonDelta` of the
     * ENIs as the pass read them and as it leaves them, {@link STATUS_CHANGE_DEPTH} deep) is applied to the ENIs of
     * the CR as it is now, so the history holds the few entries that changed, not the node's whole status. A
     * change to an entry of an ENI the CR no longer has fails for good (`KubeStaleBase`): the workflow keeps its
     * ENIs and writes them in full on its next pass.
     */
    async writeNodeStatusChanges(input: {
      nodeName: string;
      eniChanges: JsonChange[];
      lastSyncOpenAPITime?: string;
      nextSyncOpenAPITime?: string;
      maxConflicts?: number;
    }) {
      return replaceStatus({
        nodeName: input.nodeName,
        ...(input.maxConflicts === undefined ? {} : { maxConflicts: input.maxConflicts }),
        build: (raw) => {
          const validation = validateNodeCr(raw);
          const current: NetworkInterfaces = validation.ok ? (validation.node.status?.networkInterfaces ?? {}) : {};
          if (!deltaFitsBase(current, input.eniChanges)) {
            throw ApplicationFailure.nonRetryable(
              `status of Node CR ${input.nodeName} changed under the write: an ENI it updates is gone`,
              'KubeStaleBase',
            );
          }
          const status: NodeStatus = { networkInterfaces: applyJsonDelta(current, input.eniChanges) };
          if (input.lastSyncOpenAPITime !== undefined) status.lastSyncOpenAPITime = input.lastSyncOpenAPITime;
          if (input.nextSyncOpenAPITime !== undefined) status.nextSyncOpenAPITime = input.nextSyncOpenAPITime;
          return status;
        },
      });
    },

    /**
     * Sets one condition of the core Node (`SufficientIP`, `IPAMConfigValid`) with a strategic merge keyed by type,
     * so every other condition is kept.
     */
    async patchNodeCondition(input: { nodeName: string; condition: NodeConditionPatch }): Promise<void> {
      try {
        await core.patchNodeStatus(
          { name: input.nodeName, body: { status: { conditions: [input.condition] } } },
          call(setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch)),
        );
        logFor(input.nodeName).info(
          { type: input.condition.type, status: input.condition.status },
          'Patched Node condition',
        );
      } catch (error) {
        if (statusOf(error) === 404) return;
        throw kubeFailure(error, `patch condition ${input.condition.type} of Node ${input.nodeName}`);
      }
    },

    /**
     * Records a Kubernetes Event on the Node CR, a core Node or a Pod (and, with `coreNode`, the same one on the core
     * Node too, where `kubectl describe node` shows it). With a `series` key, the Event is named after the object,
     * reason and key, so a repeat of one cause updates that Event (count, message, lastTimestamp) instead of adding
     * another; without one, each call is a new Event.
     */
    async recordEvent(input: {
      nodeName: string;
      involved: { kind: 'Node' | 'Pod'; apiVersion: string; name: string; namespace?: string; uid?: string };
      type: 'Normal' | 'Warning';
      reason: string;
      message: string;
      series?: string;
      coreNode?: { uid?: string };
    }): Promise<void> {
      const link = workflowUiLink(deps.temporalUiUrl);
      const message = `${input.message}${link === undefined ? '' : ` ${link}`}`.slice(0, 1024);
      const targets = [input.involved];
      if (input.coreNode !== undefined) {
        targets.push({
          kind: 'Node',
          apiVersion: 'v1',
          name: input.nodeName,
          ...(input.coreNode.uid === undefined ? {} : { uid: input.coreNode.uid }),
        });
      }
      for (const involved of targets) {
        await recordOneEvent({ ...input, involved, message });
      }
    },

    /** Removes this controller's finalizer from a Node CR being deleted (precondition on resourceVersion). */
    async removeNodeFinalizer(input: { nodeName: string }): Promise<{ removed: boolean }> {
      for (let attempt = 0; attempt < 5; attempt += 1) {
        const raw = await getCr(input.nodeName);
        const metadata = raw?.metadata ?? {};
        const finalizers = Array.isArray(metadata['finalizers']) ? (metadata['finalizers'] as string[]) : [];
        if (raw === undefined || !finalizers.includes(NODE_CR_FINALIZER)) return { removed: false };
        try {
          await custom.patchClusterCustomObject(
            {
              ...crRef(input.nodeName),
              body: {
                metadata: {
                  resourceVersion: metadata['resourceVersion'],
                  finalizers: finalizers.filter((finalizer) => finalizer !== NODE_CR_FINALIZER),
                },
              },
            },
            call(setHeaderOptions('Content-Type', PatchStrategy.MergePatch)),
          );
          logFor(input.nodeName).info('Removed Node CR finalizer');
          return { removed: true };
        } catch (error) {
          if (statusOf(error) === 409) continue;
          if (statusOf(error) === 404) return { removed: false };
          throw kubeFailure(error, `remove finalizer of Node CR ${input.nodeName}`);
        }
      }
      throw ApplicationFailure.retryable(`finalizer of ${input.nodeName} kept conflicting`, 'KubeConflict');
    },
  };
}

export type KubeActivities = ReturnType<typeof createKubeActivities>;
