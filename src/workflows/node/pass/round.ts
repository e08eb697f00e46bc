import type { FailureLedger, NetworkInterfaces, NodeStatus, PassWants, PoolStatusFields } from '../../../ipam/index.js';
import type { Allocated } from './allocate.js';
import type { NodeNotices } from '../tell/notices.js';
import type { PassSummary } from '../tell/state-view.js';
import type { PassSchedule } from '../memory/pass-schedule.js';

/** How a pass's acting went, as {@link RoundResult}'s callbacks get it once the status is written. */
export interface RoundOutcome {
  failed: boolean;
  /** The types of the allocation steps' failures, in plan order. */
  failureTypes: string[];
  ledger: FailureLedger;
}

/** What a ready pass shows in the `state` query (the gate's fields aside). */
export type RoundSummary = Omit<PassSummary, 'lastPassEndMs' | 'skipReason' | 'instanceId' | 'stuck'>;

/**
 * What a mode's round hands the pass's one ending (`finish`): the allocate step's result, the status to write, the
 * facts for the schedule, the summary, and the round's own notices. A new mode is a new round returning this.
 */
export interface RoundResult extends Allocated {
  /** The status as the CR holds it now (the read, or a write earlier in this pass). */
  current: NodeStatus;
  /** Warm-up and idle reclaim fields to write (the single-IP pool's); undefined: left as they are. */
  pool?: PoolStatusFields | undefined;
  /** What the schedule needs to decide the next pass and whether waiting pods are stuck. */
  found: Omit<Parameters<PassSchedule['found']>[0], 'spec' | 'enis' | 'openIntents'>;
  /** The round's own timers (the pool's period and reclaim batch, a frozen prefix's expiry). */
  timers: (schedule: PassSchedule) => void;
  summary: (outcome: Omit<RoundOutcome, 'ledger'>) => RoundSummary;
  /** What the pass wanted to do, when its held-back work is to be told (degradation). */
  wants?: PassWants | undefined;
  /** The round's own notices, told after the common ones and before the allocation failures. */
  tell?: (notices: NodeNotices, outcome: RoundOutcome & { enis: NetworkInterfaces }) => Promise<void>;
}
