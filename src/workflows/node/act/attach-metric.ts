import { ActivityFailure, isCancellation, TimeoutFailure } from '@temporalio/workflow';

import { attachEniTypeOf } from '../../../ipam/index.js';
import type { AttachResult, CloudEni } from '../../../ipam/index.js';
import { metricsSink } from '../../metrics-sinks.js';

/**
 * How a failed attach step ended: `timeout` when an activity of it (the attach call, or the wait for InUse, bounded
 * by its schedule-to-close timeout) ran out of time, `failed` for any other failure, undefined when the workflow was
 * cancelled meanwhile (the attach's outcome is unknown, so it is not observed).
 */
export function attachResultOfFailure(error: unknown): Exclude<AttachResult, 'success'> | undefined {
  if (isCancellation(error)) return undefined;
  const cause = error instanceof ActivityFailure ? error.cause : error;
  return cause instanceof TimeoutFailure ? 'timeout' : 'failed';
}

/**
 * Reports one attach, from the workflow time the attach call was scheduled to now, to the worker's
 * `eniflow_eni_attach_duration_seconds` through the metrics sink: a sink call adds nothing to history and is not
 * made on replay, so each attach is observed once, by the worker that ran it.
 */
export function reportAttach(input: {
  nodeName: string;
  cloud: Pick<CloudEni, 'type' | 'trafficMode'>;
  startedMs: number;
  result: AttachResult | undefined;
}): void {
  if (input.result === undefined) return;
  metricsSink.eniAttach({
    nodeName: input.nodeName,
    eniType: attachEniTypeOf(input.cloud),
    result: input.result,
    seconds: Math.max(0, Date.now() - input.startedMs) / 1000,
  });
}
