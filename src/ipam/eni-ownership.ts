import { holdsUsablePrefixes } from './prefix-records.js';
import { cloneNetworkInterfaces, ipEntries, isIdle, unorderedIpEntries } from './eni-records.js';
import type { CloudEni } from './cloud-eni.js';
import { sortedKeys } from './node-model.js';
import type { EniSpec, EniTag, NetworkInterface, NetworkInterfaces } from './node-model.js';

/**
 * Tags that mark an ENI as someone else's even when it is attached to the node (Terway's default block list): the
 * ERDMA controller's ENIs and ENIs an operator excluded by hand.
 */
export const DEFAULT_TAG_BLOCK_LIST: readonly EniTag[] = [
  { key: 'creator', value: 'alibabacloud-erdma-controller' },
  { key: 'terway.alibabacloud.com/excluded', value: 'true' },
];

/** The tag eniflow puts on every ENI it creates (the activities add it; the janitor lists by it). */
export const ENIFLOW_CREATOR_TAG = { key: 'creator', value: 'eniflow' } as const;

/**
 * Key of the tag naming the cluster an ENI was created for (value: the configured cluster id). `creator=eniflow`
 * alone is shared by every eniflow cluster of the account: this tag is what keeps one cluster's clean-ups off the
 * ENIs of another.
 */
export const ENIFLOW_CLUSTER_TAG_KEY = 'eniflow.io/cluster-id';

/** Tag the node workflow puts on every ENI it creates: which node asked for it. */
export const ENIFLOW_NODE_TAG = 'eniflow.io/node';

/**
 * Tag carrying the ClientToken of the create that made the ENI. ECS answers a re-used token ambiguously
 * (`IdempotentParameterMismatch`, `IdempotentFailed`, a forgotten token creating anew), so the ENI a create made is
 * found by this tag, never guessed from the answer.
 */
export const ENIFLOW_INTENT_TAG = 'eniflow.io/intent';

/** How an ENI relates to this cluster, from its tags: ours, another cluster's, or made before the cluster tag. */
export type EniClusterOwnership = 'thisCluster' | 'otherCluster' | 'legacy' | 'notEniflow';

/**
 * The cluster tag decides, whoever created the ENI: an ENI eniflow adopted (Terway's, or eniflow's from before the
 * cluster tag) keeps its `creator` tag and gets only the cluster tag (see {@link enisToAdopt}). Without a cluster tag,
 * `creator=eniflow` is a legacy ENI, anything else not eniflow's.
 */
export function clusterOwnershipOf(input: {
  tags: Readonly<Record<string, string>> | undefined;
  clusterId: string;
}): EniClusterOwnership {
  const tags = input.tags ?? {};
  const cluster = tags[ENIFLOW_CLUSTER_TAG_KEY];
  if (cluster !== undefined) return cluster === input.clusterId ? 'thisCluster' : 'otherCluster';
  return tags[ENIFLOW_CREATOR_TAG.key] === ENIFLOW_CREATOR_TAG.value ? 'legacy' : 'notEniflow';
}

/** ENI types this controller manages on a node, and so may adopt: the kinds it creates. */
const ADOPTABLE_TYPES: readonly string[] = ['Secondary', 'Trunk'];

/**
 * The ENIs of a node to tag with this cluster's id (adoption), so that the RAM policy, which lets a cluster's role
 * change only ENIs carrying its cluster tag, allows the calls the node makes on them. The CR (instance id and ENI
 * list) is written by the node's daemon, so it alone proves nothing: nothing is adopted unless the core Node's
 * `spec.providerID` (set by the kubelet / cloud controller manager, not the daemon) names the same instance. Then an
 * ENI is adopted only if the cloud's fresh listing shows it attached to that instance and the CR (as read, before the
 * listing is merged in) lists it. Never adopted: an ENI that
 * carries any cluster tag (this cluster's needs nothing; another cluster's is never claimed), the primary ENI and
 * kinds this controller does not create, and ENIs the block list or ERDMA rule keep unschedulable (eniflow never
 * changes those, so it needs no right on them). Sorted ids.
 */
export function enisToAdopt(input: {
  /** The instance's ENIs as the cloud listed them just now. */
  remote: readonly CloudEni[];
  /** This node's CR, as read. */
  crEnis: Readonly<NetworkInterfaces>;
  instanceId: string;
  /** The core Node's `spec.providerID`; absent or naming another instance: nothing is adopted. */
  providerId: string | undefined;
  clusterId: string;
  eniSpec: Readonly<EniSpec>;
}): string[] {
  if (!providerIdNamesInstance({ providerId: input.providerId, instanceId: input.instanceId })) return [];
  const adopt = new Set<string>();
  for (const cloud of input.remote) {
    if ((cloud.instanceId ?? '') !== input.instanceId) continue;
    if (input.crEnis[cloud.eniId] === undefined) continue;
    if (!ADOPTABLE_TYPES.includes(cloud.type)) continue;
    const ownership = clusterOwnershipOf({ tags: cloud.tags, clusterId: input.clusterId });
    if (ownership !== 'legacy' && ownership !== 'notEniflow') continue;
    if (isUnschedulableInCloud({ cloud, eniSpec: input.eniSpec })) continue;
    adopt.add(cloud.eniId);
  }
  return [...adopt].sort();
}

/**
 * Whether a core Node's `spec.providerID` names the instance: Alibaba Cloud's form is `<region>.<instance id>`
 * (`cn-hangzhou.i-xxxx`); the part after the last `.` must equal the instance id (no suffix match).
 */
export function providerIdNamesInstance(input: { providerId: string | undefined; instanceId: string }): boolean {
  if (input.instanceId === '' || input.providerId === undefined) return false;
  const dot = input.providerId.lastIndexOf('.');
  return dot >= 0 && input.providerId.slice(dot + 1) === input.instanceId;
}

/** The tags adoption writes: this cluster's id and the node, nothing else (the ENI's `creator` stays as it is). */
export function adoptionTags(input: { clusterId: string; nodeName: string }): Record<string, string> {
  return { [ENIFLOW_CLUSTER_TAG_KEY]: input.clusterId, [ENIFLOW_NODE_TAG]: input.nodeName };
}

/** What GC may do with an ENI it was asked to remove, from the cloud's fresh view of it. */
export type GcRemovalVerdict =
  /** The cloud does not know it: forgotten without a call. */
  | 'gone'
  /** Attached to this node's instance, or Available and created by eniflow for this node of this cluster. */
  | 'remove'
  /** Attached to another instance: never detached. */
  | 'attachedElsewhere'
  /** Not attached here and not tagged for this node and cluster: not provably ours, kept untouched. */
  | 'notProvablyOurs';

/**
 * The last check before GC detaches or deletes an ENI. The CR (and a forged or stale workflow state) can name any
 * ENI id; only the cloud's own view says whether it is this node's: attached to this node's instance, or tagged as
 * created by eniflow for this node of this cluster. Anything else is left alone, whatever the CR says.
 */
export function gcRemovalVerdict(input: {
  cloud: Readonly<CloudEni> | undefined;
  instanceId: string;
  nodeName: string;
  clusterId: string;
}): GcRemovalVerdict {
  const { cloud } = input;
  if (cloud === undefined) return 'gone';
  const attachedTo = cloud.instanceId ?? '';
  if (attachedTo !== '' && attachedTo !== input.instanceId) return 'attachedElsewhere';
  if (attachedTo !== '' && input.instanceId !== '') return 'remove';
  const tags = cloud.tags ?? {};
  const ours =
    clusterOwnershipOf({ tags, clusterId: input.clusterId }) === 'thisCluster' &&
    tags[ENIFLOW_NODE_TAG] === input.nodeName;
  return ours ? 'remove' : 'notProvablyOurs';
}

/** ENI types this controller may ever detach or delete: the kinds it creates (and the saga's typeless record). */
const DELETABLE_TYPES: readonly (string | undefined)[] = ['Secondary', 'Trunk', undefined];

/** Whether any address of the ENI is bound to a pod. */
export function hasBoundIp(eni: Readonly<NetworkInterface>): boolean {
  return (['ipv4', 'ipv6'] as const).some((family) => unorderedIpEntries(eni, family).some((entry) => !isIdle(entry)));
}

export function isUnschedulable(eni: Readonly<NetworkInterface>): boolean {
  return eni.unschedulable === true;
}

/**
 * The one rule every cloud clean-up obeys: an ENI is detached or deleted only when no pod holds any of its
 * addresses, it is not unschedulable, and it is of a kind this controller creates.
 */
export function mayRemoveEni(eni: Readonly<NetworkInterface>): boolean {
  // In prefix mode the CR shows no pod bindings: a Valid or Frozen prefix may be serving pods the daemon placed.
  return (
    !isUnschedulable(eni) &&
    !hasBoundIp(eni) &&
    !holdsUsablePrefixes(eni) &&
    DELETABLE_TYPES.includes(eni.networkInterfaceType)
  );
}

/**
 * Terway's newer unschedulable rule, decided from the cloud's view of an ENI: a tag of the block list (defaults plus
 * `spec.eni.tagBlockList`), or a HighPerformance ENI on a node that does not manage ERDMA.
 */
export function isUnschedulableInCloud(input: { cloud: Readonly<CloudEni>; eniSpec: Readonly<EniSpec> }): boolean {
  const tags = input.cloud.tags ?? {};
  const blockList = [...DEFAULT_TAG_BLOCK_LIST, ...(input.eniSpec.tagBlockList ?? [])];
  if (blockList.some((tag) => tags[tag.key] === tag.value)) return true;
  return input.cloud.trafficMode === 'HighPerformance' && input.eniSpec.enableERDMA !== true;
}

/** What the controller decided about an ENI the CR holds but the instance's ENI listing did not return. */
export type UnlistedEniOutcome =
  /** Attached to this instance and created by eniflow (a `tagFilter` that misses eniflow's tags): managed as usual. */
  | 'keptOwn'
  /** Attached to this instance (hidden by `tagFilter`, say) and holding pod IPs: kept, unschedulable, untouched. */
  | 'keptServing'
  /** Attached to this instance, no pod IP: not ours to manage; dropped from the CR, left attached, no call. */
  | 'forgottenAttached'
  /** Attached to another instance: never detached; kept (addresses Invalid) while pods hold it, else dropped. */
  | 'keptAttachedElsewhere'
  | 'forgottenAttachedElsewhere'
  /** The cloud does not know it: kept (addresses Invalid) while pods hold it, else dropped without any call. */
  | 'keptMissing'
  | 'forgottenMissing'
  /** Available, idle, and of a kind the controller creates: marked `Deleting`, so GC deletes it (Terway's rule). */
  | 'released'
  /** Available but not deletable (blocked, bound or of another kind): kept or dropped without a call. */
  | 'keptAvailable'
  | 'forgottenAvailable'
  /** In a transition (Attaching, Detaching…): kept as the cloud reports it, looked at again next sync. */
  | 'keptInTransition';

export interface UnlistedEniReport {
  eniId: string;
  outcome: UnlistedEniOutcome;
  /** One sentence for an Event and the workflow's state. */
  message: string;
}

function keepUntouched(eni: NetworkInterface, input: { reason: string; nowRfc3339: string; invalidate: boolean }) {
  eni.unschedulable = true;
  eni.conditions = { ...eni.conditions, OperationErr: { observedTime: input.nowRfc3339, message: input.reason } };
  if (!input.invalidate) return;
  for (const family of ['ipv4', 'ipv6'] as const) {
    for (const entry of ipEntries(eni, family)) entry.status = 'Invalid';
  }
}

/**
 * Decides about ENIs the CR holds that the instance's listing left out, from a lookup of each by id (`cloud`
 * holds the ENIs the lookup found; the others do not exist). Unlike the seed, which deletes every such ENI, a
 * sync never detaches or deletes an ENI that holds a pod IP or is attached anywhere: it is kept unschedulable and
 * reported, or dropped from the CR without any cloud call. Only an `Available`, idle ENI of a kind the controller
 * creates is marked `Deleting` (Terway's newer rule).
 */
export function resolveUnlistedEnis(input: {
  enis: Readonly<NetworkInterfaces>;
  unlisted: readonly string[];
  cloud: readonly CloudEni[];
  instanceId: string;
  eniSpec: Readonly<EniSpec>;
  nowRfc3339: string;
  /** This cluster's id: an ENI tagged for another cluster is never "ours". */
  clusterId: string;
}): { enis: NetworkInterfaces; reports: UnlistedEniReport[] } {
  const enis = cloneNetworkInterfaces(input.enis);
  const byId = new Map(input.cloud.map((cloud) => [cloud.eniId, cloud]));
  const reports: UnlistedEniReport[] = [];
  for (const eniId of [...new Set(input.unlisted)].sort()) {
    const eni = enis[eniId];
    if (eni === undefined) continue;
    const cloud = byId.get(eniId);
    const bound = hasBoundIp(eni);
    const report = (outcome: UnlistedEniOutcome, message: string): void => {
      reports.push({ eniId, outcome, message: `ENI ${eniId} ${message}` });
    };
    const keepOrForget = (
      kept: UnlistedEniOutcome,
      forgotten: UnlistedEniOutcome,
      how: { what: string; invalidate: boolean },
    ): void => {
      if (bound) {
        const reason = `${how.what}; kept while pods hold its addresses, never detached or deleted`;
        keepUntouched(eni, { reason, nowRfc3339: input.nowRfc3339, invalidate: how.invalidate });
        report(kept, reason);
      } else {
        delete enis[eniId];
        report(forgotten, `${how.what}; no pod holds it, dropped from the CR without any cloud call`);
      }
    };
    if (cloud === undefined) {
      keepOrForget('keptMissing', 'forgottenMissing', { what: 'does not exist in the cloud', invalidate: true });
      continue;
    }
    const attachedTo = cloud.instanceId ?? '';
    if (attachedTo !== '' && attachedTo !== input.instanceId) {
      keepOrForget('keptAttachedElsewhere', 'forgottenAttachedElsewhere', {
        what: `is attached to another instance (${attachedTo})`,
        invalidate: true,
      });
      continue;
    }
    if (attachedTo === input.instanceId && cloud.status !== 'Available') {
      if (eni.status !== 'Deleting') eni.status = cloud.status;
      const ownership = clusterOwnershipOf({ tags: cloud.tags, clusterId: input.clusterId });
      // A legacy ENI (no cluster tag) the CR of this node lists is adopted: it stays managed by this node.
      if (ownership === 'thisCluster' || ownership === 'legacy') {
        // Ours, only filtered out by a tagFilter that misses eniflow's own tags: dropping it would leave it
        // attached and unmanaged (the janitor never touches attached ENIs), so it stays managed.
        report(
          'keptOwn',
          'is attached here and created by eniflow, but the OpenAPI sync (spec.eni.tagFilter) does not list it; still managed',
        );
        continue;
      }
      keepOrForget('keptServing', 'forgottenAttached', {
        what: `is attached to instance ${input.instanceId} but not listed by the OpenAPI sync (spec.eni.tagFilter?)`,
        invalidate: false,
      });
      continue;
    }
    if (cloud.status === 'Available' && eni.status === 'Available' && !bound) {
      // Recorded Available by this controller: created, its attach failing. Not news (no report): the next pass
      // that needs it attaches it, and one with no demand left is released through the GC.
      continue;
    }
    if (cloud.status === 'Available') {
      const blocked = isUnschedulableInCloud({ cloud, eniSpec: input.eniSpec });
      if (!blocked && mayRemoveEni({ ...eni, networkInterfaceType: cloud.type })) {
        eni.status = 'Deleting';
        report('released', 'is Available and no longer on the instance; marked Deleting for GC');
      } else {
        keepOrForget('keptAvailable', 'forgottenAvailable', {
          what: 'is Available but not one this controller may delete',
          invalidate: true,
        });
      }
      continue;
    }
    if (eni.status !== 'Deleting') eni.status = cloud.status;
    report('keptInTransition', `is ${cloud.status} and not on the instance list; looked at again next sync`);
  }
  return { enis, reports };
}

/** ENI ids of the map in order, for callers that list the unschedulable ones (state query, events). */
export function unschedulableEniIds(enis: Readonly<NetworkInterfaces>): string[] {
  return sortedKeys(enis).filter((id) => enis[id]?.unschedulable === true);
}
