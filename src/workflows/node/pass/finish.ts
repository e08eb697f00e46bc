import type { ReadyNodeSpec } from '../../../ipam/index.js';
import type { CloudSide } from './cloud-side.js';
import { statusWithSyncTimes } from '../act/io.js';
import type { PassContext } from './context.js';
import type { RoundResult } from './round.js';

/**
 * The one ending of a ready pass, whatever the mode: fold the steps' reports into the pass record, a quota refusal
 * asks for a resync, write the status, hand the schedule its facts, show the summary, settle the failure ledger
 * (once per pass), then tell: the degradation's held-back work, blocked vSwitches and unlisted ENIs, the round's own
 * notices, and the allocation failures last. Returns whether the pass failed.
 */
export async function finish(
  ctx: PassContext,
  input: { spec: ReadyNodeSpec; cloud: CloudSide; round: RoundResult },
): Promise<boolean> {
  const { spec, cloud, round } = input;
  const { record, state, notices } = ctx;
  const { enis, gc } = round;
  ctx.gc.served(gc.result);
  record.foldReports([...round.allocated, ...gc.reports]);
  const allocationFailures = round.allocated.flatMap((report) => report.failed);
  // A quota answer may mean the CR misses ENIs the cloud has: the next pass lists them.
  if (allocationFailures.some((step) => step.failure.type === 'EcsQuotaExceeded')) ctx.askResync('quotaExceeded');

  const status = statusWithSyncTimes(enis, cloud.times);
  const written = await ctx.writeStatus({ status, current: round.current, enis, pool: round.pool });
  const failed = allocationFailures.length > 0 || gc.result.failed.length > 0 || !written;

  // What the pass found: in the query as soon as the CR has it, then told from the settled ledger.
  const failureTypes = allocationFailures.map((step) => step.failure.type);
  ctx.schedule.found({ spec, enis, openIntents: round.openIntents, ...round.found });
  round.timers(ctx.schedule);
  const summary = round.summary({ failed, failureTypes });
  ctx.showSummary(summary);
  record.settle('completed');
  const ledger = state.failures ?? {};
  if (round.wants !== undefined) await notices.degradationChanged(ctx.degradation.owedNoticeFor(round.wants));
  await notices.blockedVSwitches(summary.blockedVSwitches);
  await notices.unlistedEnis(cloud.synced ? (state.unlistedEnis ?? []) : []);
  await round.tell?.(notices, { failed, failureTypes, ledger, enis });
  await notices.allocationFailed({ failures: allocationFailures, ledger });
  return failed;
}
