import type { CloudEni } from './cloud-eni.js';
import { parseRfc3339 } from './rfc3339.js';

/** Why the janitor leaves an eniflow-created ENI alone. */
export type OrphanKeepReason =
  /** A Node CR lists it: a node workflow owns it (and removes it through GC if it must go). */
  | 'knownToCr'
  /** Attached to an instance (or attaching): possibly serving pods; never touched here. */
  | 'attached'
  /** Younger than the grace period: a create whose attach or status write may still be in flight. */
  | 'young'
  /** The cloud gave no creation time, so its age cannot be told: kept rather than guessed. */
  | 'ageUnknown';

export interface OrphanEniPlan {
  /** ENIs to delete: `Available`, known to no CR, older than the grace period. Sorted by id. */
  orphans: { eniId: string; node?: string; createdAt: string }[];
  /** Every other ENI looked at, with the reason it stays. Sorted by id. */
  kept: { eniId: string; reason: OrphanKeepReason }[];
}

/** Tag the node workflow puts on every ENI it creates: which node asked for it. */
export const ENIFLOW_NODE_TAG = 'eniflow.io/node';

/**
 * Tag carrying the ClientToken of the create that made the ENI. ECS answers a re-used token ambiguously
 * (`IdempotentParameterMismatch`, `IdempotentFailed`, a forgotten token creating anew), so the ENI a create made is
 * found by this tag, never guessed from the answer.
 */
export const ENIFLOW_INTENT_TAG = 'eniflow.io/intent';

/**
 * Decides which ENIs carrying eniflow's creator tag are orphans: `Available` (attached nowhere), listed in no Node
 * CR, and created more than `graceMs` ago. Anything else stays: an ENI a CR knows is its workflow's to manage, one
 * attached may serve pods, a young one may be a create whose attach is still running.
 */
export function planOrphanEnis(input: {
  cloud: readonly CloudEni[];
  knownEniIds: readonly string[];
  nowMs: number;
  graceMs: number;
}): OrphanEniPlan {
  const known = new Set(input.knownEniIds);
  const plan: OrphanEniPlan = { orphans: [], kept: [] };
  const sorted = [...input.cloud].sort((a, b) => (a.eniId < b.eniId ? -1 : a.eniId > b.eniId ? 1 : 0));
  for (const eni of sorted) {
    const keep = (reason: OrphanKeepReason): void => {
      plan.kept.push({ eniId: eni.eniId, reason });
    };
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
  return plan;
}
