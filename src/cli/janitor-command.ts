/** `eniflow janitor`: the orphan-ENI janitor's last report, or a pass run now (dry or deleting). */
import { WorkflowUpdateFailedError } from '@temporalio/client';

import { JANITOR_WORKFLOW_ID } from '../shared/workflow-ids.js';
import { janitorReportQuery, runJanitorUpdate } from '../workflows/janitor-workflow.js';
import type { JanitorReport } from '../workflows/janitor-workflow.js';
import { CliError } from './cli-context.js';
import type { CliContext, Parsed } from './cli-context.js';

/** A janitor report, for people. */
export function formatJanitorReport(report: JanitorReport): string[] {
  const lines = [
    `janitor pass at ${report.at}${report.dryRun ? ' (dry run: nothing deleted)' : ''}: ` +
      `${report.checked} ENI(s) of cluster ${report.clusterId} checked, ${report.orphans.length} orphan(s)`,
  ];
  for (const orphan of report.orphans) {
    const deleted = report.deleted.includes(orphan.eniId) ? ' — deleted' : '';
    lines.push(
      `  ${orphan.eniId} created ${orphan.createdAt}${orphan.node === undefined ? '' : ` for ${orphan.node}`}${deleted}`,
    );
  }
  for (const spared of report.spared) lines.push(`  ${spared.eniId}: spared by the last check (${spared.reason})`);
  for (const failure of report.failed) lines.push(`  ${failure.eniId}: delete failed: ${failure.error}`);
  if (report.unowned.length > 0) {
    lines.push(
      `${report.unowned.length} eniflow ENI(s) without a cluster tag and in no Node CR (never deleted; check by hand):`,
    );
    for (const eni of report.unowned) {
      lines.push(`  ${eni.eniId} ${eni.status}${eni.node === undefined ? '' : ` for ${eni.node}`}`);
    }
  }
  if (report.adopted > 0) lines.push(`adopted: ${report.adopted} eniflow ENI(s) without a cluster tag, listed in a CR`);
  const kept = Object.entries(report.kept).map(([reason, count]) => `${reason} ${count}`);
  if (kept.length > 0) lines.push(`kept: ${kept.join(', ')}`);
  return lines;
}

export async function janitor(context: CliContext, parsed: Parsed): Promise<void> {
  if (parsed.args.length > 0) throw new CliError('janitor takes no argument', 2);
  if (parsed.flags.has('--dry-run') && parsed.flags.has('--delete')) {
    throw new CliError('janitor: --dry-run or --delete, not both', 2);
  }
  const handle = context.client.workflow.getHandle(context.janitorWorkflowId ?? JANITOR_WORKFLOW_ID);
  let report: JanitorReport | undefined;
  if (parsed.flags.has('--dry-run') || parsed.flags.has('--delete')) {
    try {
      report = await handle.executeUpdate(runJanitorUpdate, { args: [{ dryRun: parsed.flags.has('--dry-run') }] });
    } catch (error) {
      // The janitor refuses deletes its recorded settings do not allow: say why, not a stack trace.
      if (error instanceof WorkflowUpdateFailedError) {
        throw new CliError(`janitor: ${error.cause instanceof Error ? error.cause.message : error.message}`, 1);
      }
      throw error;
    }
  } else {
    report = await handle.query(janitorReportQuery);
  }
  if (parsed.flags.has('--json')) {
    context.out(JSON.stringify(report ?? null, null, 2));
    return;
  }
  if (report === undefined) {
    context.out('the janitor has not run a pass yet (eniflow janitor --dry-run runs one)');
    return;
  }
  for (const line of formatJanitorReport(report)) context.out(line);
}
