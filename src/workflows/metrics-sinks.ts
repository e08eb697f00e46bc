import { proxySinks } from '@temporalio/workflow';
import type { Sinks } from '@temporalio/workflow';

import type { AttachResult } from '../ipam/index.js';
import type { IpamState } from './messages.js';

/**
 * What workflows report to the worker's Prometheus registry. Sink calls add nothing to history (unlike activities),
 * so they are free on every pass and change no command sequence; the worker registers them in `src/worker/metrics.ts`.
 * Times are workflow time (`Date.now()` in the sandbox), so a replay reports the same values again.
 */
export interface EniflowMetricsSinks extends Sinks {
  eniflowMetrics: {
    /** A node workflow finished a reconcile pass; `ok` is false when the pass failed (it will back off and retry). */
    nodePass(pass: { nodeName: string; ok: boolean; ipamState: IpamState; atMs: number }): void;
    /**
     * One ENI attach this workflow started, from the attach call to InUse (`success`), to a failure of the attach or
     * of the wait (`failed`), or to a Temporal timeout of either (`timeout`), in workflow time.
     */
    eniAttach(attach: { nodeName: string; eniType: string; result: AttachResult; seconds: number }): void;
    /** The node's workflow ended (its Node CR is gone): its per-node series go. */
    nodeGone(node: { nodeName: string }): void;
    /**
     * One janitor pass: orphans found, ENIs deleted and deletes that failed, and `unowned` detached eniflow ENIs
     * without a cluster tag that no CR lists (reported, never deleted; attached ones are in use, not counted).
     */
    janitorPass(pass: { dryRun: boolean; orphans: number; deleted: number; failed: number; unowned: number }): void;
  };
}

/** The sink functions, for workflow code. */
export const metricsSink = proxySinks<EniflowMetricsSinks>().eniflowMetrics;
