import type { CloudEni } from './cloud-eni.js';
import { clusterOwnershipOf, ENIFLOW_NODE_TAG } from './eni-ownership.js';
import { parseRfc3339 } from './rfc3339.js';

/** Why the janitor leaves an eniflow-created ENI of this cluster alone. */
export type OrphanKeepReason =
  /** A Node CR lists it: a node workflow owns it (and removes it through GC if it must go). */
  | 'knownToCr'
  /** Attached to an instance (or attaching): possibly serving pods; never touched here. */
  | 'attached'
  /** Younger than the grace period: a create whose attach or status write may still be in flight. */
  | 'young'
  /** The cloud gave no creation time, so its age cannot be told: kept rather than guessed. */
  | 'ageUnknown'
  /** Listed as this cluster's but tagged for another (or untagged): the list filter is not trusted alone. */
  | 'notThisCluster';

/** An ENI eniflow created before the cluster tag existed, known to no Node CR of this cluster. */
export interface UnownedEni {
  eniId: string;
  status: string;
  /**
   * `Available` and attached nowhere: serving no one, so possibly this cluster's leak. An attached one is in use by
   * whoever runs its instance: if that is a node of this cluster, the node's OpenAPI sync records it in its CR and
   * adopts it; if not, it is a neighbour's healthy ENI and stays unowned here forever, which is nothing to act on.
   */
  detached: boolean;
  node?: string;
  createdAt?: string;
}

export interface OrphanEniPlan {
  /** ENIs to delete: this cluster's, `Available`, known to no CR, older than the grace period. Sorted by id. */
  orphans: { eniId: string; node?: string; createdAt: string }[];
  /** Every other ENI of this cluster looked at, with the reason it stays. Sorted by id. */
  kept: { eniId: string; reason: OrphanKeepReason }[];
  /**
   * `creator=eniflow` ENIs without a cluster tag that a Node CR of this cluster lists: adopted, they stay that
   * node's to manage (nothing is done to them here). Sorted.
   */
  adopted: string[];
  /**
   * `creator=eniflow` ENIs without a cluster tag that no Node CR of this cluster lists: they may be another
   * cluster's, so they are reported and never deleted. Sorted by id.
   */
  unowned: UnownedEni[];
}

function byEniId(a: CloudEni, b: CloudEni): number {
  return a.eniId < b.eniId ? -1 : a.eniId > b.eniId ? 1 : 0;
}

/**
 * Decides which ENIs are orphans of this cluster. `owned` is the list by eniflow's creator tag and this cluster's
 * tag; `unscoped` the list by the creator tag alone, looked at only for ENIs without any cluster tag (created
 * before it existed). An orphan is tagged for this cluster, `Available` (attached nowhere), listed in no Node CR,
 * and created more than `graceMs` ago. Anything else stays: an ENI a CR knows is its workflow's to manage, one
 * attached may serve pods, a young one may be a create whose attach is still running, and an ENI whose cluster
 * cannot be told may belong to a neighbour.
 */
export function planOrphanEnis(input: {
  owned: readonly CloudEni[];
  unscoped?: readonly CloudEni[];
  clusterId: string;
  knownEniIds: readonly string[];
  nowMs: number;
  graceMs: number;
}): OrphanEniPlan {
  const known = new Set(input.knownEniIds);
  const plan: OrphanEniPlan = { orphans: [], kept: [], adopted: [], unowned: [] };
  const seen = new Set<string>();
  for (const eni of [...input.owned].sort(byEniId)) {
    if (seen.has(eni.eniId)) continue;
    seen.add(eni.eniId);
    const keep = (reason: OrphanKeepReason): void => {
      plan.kept.push({ eniId: eni.eniId, reason });
    };
    if (clusterOwnershipOf({ tags: eni.tags, clusterId: input.clusterId }) !== 'thisCluster') {
      keep('notThisCluster');
      continue;
    }
    if (known.has(eni.eniId)) {
      keep('knownToCr');
      continue;
    }
    if (eni.status !== 'Available' || (eni.instanceId ?? '') !== '') {
      keep('attached');
      continue;
    }
    const createdMs = eni.creationTime === undefined ? undefined : parseRfc3339(eni.creationTime);
    if (createdMs === undefined || eni.creationTime === undefined) {
      keep('ageUnknown');
      continue;
    }
    if (input.nowMs - createdMs < input.graceMs) {
      keep('young');
      continue;
    }
    const node = eni.tags?.[ENIFLOW_NODE_TAG];
    plan.orphans.push({ eniId: eni.eniId, createdAt: eni.creationTime, ...(node === undefined ? {} : { node }) });
  }
  for (const eni of [...(input.unscoped ?? [])].sort(byEniId)) {
    if (seen.has(eni.eniId)) continue;
    seen.add(eni.eniId);
    // Tagged ENIs are either this cluster's (judged above) or a neighbour's (none of this janitor's business).
    if (clusterOwnershipOf({ tags: eni.tags, clusterId: input.clusterId }) !== 'legacy') continue;
    if (known.has(eni.eniId)) {
      plan.adopted.push(eni.eniId);
      continue;
    }
    const node = eni.tags?.[ENIFLOW_NODE_TAG];
    plan.unowned.push({
      eniId: eni.eniId,
      status: eni.status,
      detached: eni.status === 'Available' && (eni.instanceId ?? '') === '',
      ...(node === undefined ? {} : { node }),
      ...(eni.creationTime === undefined ? {} : { createdAt: eni.creationTime }),
    });
  }
  return plan;
}

/** The janitor's verdict on an orphan, from a fresh look right before its delete. */
export type OrphanRecheck =
  | 'delete'
  /** Already gone: nothing to do. */
  | 'gone'
  /** A Node CR lists it now (a status write landed since the plan). */
  | 'nowKnown'
  /** No longer `Available`, or attached: a node is using it. */
  | 'inUse'
  /** Its tags no longer say it is this cluster's. */
  | 'notThisCluster';

/**
 * The last check before the janitor deletes an orphan: the ENI described again by id and the Node CRs read again
 * (live). The plan may be minutes old by then (one delete after another, each retried): delete only what is still
 * this cluster's, still `Available` and attached nowhere, and still listed in no CR.
 */
export function recheckOrphan(input: {
  fresh: Readonly<CloudEni> | undefined;
  knownEniIds: readonly string[];
  clusterId: string;
}): OrphanRecheck {
  const { fresh } = input;
  if (fresh === undefined) return 'gone';
  if (clusterOwnershipOf({ tags: fresh.tags, clusterId: input.clusterId }) !== 'thisCluster') return 'notThisCluster';
  if (input.knownEniIds.includes(fresh.eniId)) return 'nowKnown';
  if (fresh.status !== 'Available' || (fresh.instanceId ?? '') !== '') return 'inUse';
  return 'delete';
}
