/**
 * What the workflow reads about its node, and the projections that make it from Kubernetes objects: only the
 * fields the core reads, so activity results (and so workflow history) stay small whatever the objects carry.
 * Both the live reads and the worker's read cache build snapshots with these.
 */

import type { V1Container, V1Node, V1NodeCondition, V1Pod } from '@kubernetes/client-node';

import {
  EXCLUSIVE_ENI_MODE_LABEL,
  NODE_CR_FINALIZER,
  POD_ENI_ANNOTATION,
  finalCniStatus,
  validateNodeCr,
} from '../../ipam/index.js';
import type {
  CniStatus,
  NodeConditionSnapshot,
  NodeCrValidation,
  NodeRuntimeView,
  PodSnapshot,
} from '../../ipam/index.js';

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
    /** `spec.providerID` (kubelet / cloud controller manager, not the daemon): adoption's evidence of the instance. */
    providerId?: string;
    sufficientIp?: NodeConditionSnapshot;
    /** eniflow's own `IPAMConfigValid` condition, as the Node shows it. */
    ipamConfigValid?: NodeConditionSnapshot;
    /** eniflow's own `ENIOperationsFailing` condition, as the Node shows it. */
    eniOperationsFailing?: NodeConditionSnapshot;
  };
}

export type RawObject = Record<string, unknown> & {
  metadata?: Record<string, unknown>;
  status?: Record<string, unknown>;
};

export function asRecord(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
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
  const providerId = node.spec?.providerID;
  if (providerId !== undefined && providerId !== '') snapshot.providerId = providerId;
  if (sufficient !== undefined) snapshot.sufficientIp = conditionSnapshot(sufficient);
  const configValid = conditions.find((condition) => condition.type === 'IPAMConfigValid');
  if (configValid !== undefined) snapshot.ipamConfigValid = conditionSnapshot(configValid);
  const operations = conditions.find((condition) => condition.type === 'ENIOperationsFailing');
  if (operations !== undefined) snapshot.eniOperationsFailing = conditionSnapshot(operations);
  return snapshot;
}

/**
 * The Node CR as the snapshot holds it: validated (by `validate`, e.g. a {@link NodeCrValidations} that keeps the
 * result per resourceVersion), with the metadata the workflow decides on.
 */
export function crSnapshotOf(
  raw: RawObject,
  validate: (raw: RawObject) => NodeCrValidation = validateNodeCr,
): NonNullable<NodeSnapshot['cr']> {
  const metadata = raw.metadata ?? {};
  const finalizers = Array.isArray(metadata['finalizers']) ? (metadata['finalizers'] as unknown[]) : [];
  return {
    validation: validate(raw),
    resourceVersion: typeof metadata['resourceVersion'] === 'string' ? metadata['resourceVersion'] : '',
    uid: typeof metadata['uid'] === 'string' ? metadata['uid'] : '',
    isDeleting: metadata['deletionTimestamp'] !== undefined && metadata['deletionTimestamp'] !== null,
    hasFinalizer: finalizers.includes(NODE_CR_FINALIZER),
  };
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
