import {
  allHandlersFinished,
  condition,
  continueAsNew,
  defineQuery,
  defineUpdate,
  log,
  proxyActivities,
  setDefaultSignalHandler,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';

import { planOrphanEnis } from '../ipam/index.js';
import type { OrphanEniPlan } from '../ipam/index.js';
import type { Activities } from '../activities/index.js';
import { ACTIVITY_POLICIES } from './activity-policies.js';
import { proxyActivitiesWithSummaries } from './activity-summaries.js';
import { DEFAULT_JANITOR_SETTINGS } from '../shared/janitor-settings.js';
import type { JanitorSettings } from '../shared/janitor-settings.js';
import { metricsSink } from './metrics-sinks.js';

const kubeRead = proxyActivities<Activities>(ACTIVITY_POLICIES.kubeRead);
const kubeNotice = proxyActivities<Activities>(ACTIVITY_POLICIES.kubeNotice);
// Cloud calls go through their actions' task queues, on the cluster's ECS budget like the node workflows'.
const ecsRead = proxyActivitiesWithSummaries(ACTIVITY_POLICIES.ecsRead);
const release = proxyActivitiesWithSummaries(ACTIVITY_POLICIES.releaseEni);

/** What one janitor pass found and did. */
export interface JanitorReport {
  at: string;
  dryRun: boolean;
  /** ENIs with eniflow's creator tag looked at. */
  checked: number;
  orphans: OrphanEniPlan['orphans'];
  /** Orphans deleted (empty on a dry run). */
  deleted: string[];
  /** Orphans whose delete failed; retried by the next pass. */
  failed: { eniId: string; error: string }[];
  kept: Record<string, number>;
}

/** Runs a janitor pass now; `dryRun` overrides the setting for this pass. Returns its report. */
export const runJanitorUpdate = defineUpdate<JanitorReport, [{ dryRun?: boolean }]>('runJanitor');
/** The last pass's report (undefined before the first). */
export const janitorReportQuery = defineQuery<JanitorReport | undefined>('lastReport');

/**
 * The orphan-ENI janitor, one per cluster (id `JANITOR_WORKFLOW_ID`): lists ENIs carrying
 * eniflow's creator tag, and deletes those `Available`, known to no Node CR and older than the grace period. It is
 * the backstop behind the node workflows' own guarantees (create intents, the saga's compensation): whatever path
 * leaves an ENI behind, it is found and removed, with an Event per deletion.
 */
export async function eniJanitorWorkflow(input: { settings?: Partial<JanitorSettings> } = {}): Promise<void> {
  // The watcher starts it with the settings in full; the defaults fill in only for a partial start (tests, the CLI).
  const settings: JanitorSettings = { ...DEFAULT_JANITOR_SETTINGS, ...input.settings };
  let requests: { dryRun: boolean; seq: number }[] = [];
  let requested = 0;
  let done = 0;
  let lastReport: JanitorReport | undefined;
  const reports = new Map<number, JanitorReport>();
  setHandler(janitorReportQuery, () => lastReport);
  // The janitor takes no signal (it is driven by the runJanitor update): a signal sent to it is a mistake to see.
  setDefaultSignalHandler((signalName) => {
    log.warn('signal with an unknown name ignored (the janitor takes the runJanitor update)', { signalName });
  });
  setHandler(runJanitorUpdate, async (options) => {
    requested += 1;
    const seq = requested;
    requests = [...requests, { dryRun: options.dryRun ?? settings.dryRun, seq }];
    await condition(() => done >= seq);
    const report = reports.get(seq) ?? lastReport;
    reports.delete(seq);
    if (report === undefined) throw new Error('janitor pass did not run');
    return report;
  });

  for (let passes = 0; ; passes += 1) {
    // Requests that arrived meanwhile are served before the run hands over to the next.
    if (passes >= settings.maxPassesPerRun && requests.length === 0) break;
    await condition(() => requests.length > 0, settings.intervalMs);
    const request = requests[0];
    requests = requests.slice(1);
    lastReport = await janitorPass({ settings, dryRun: request?.dryRun ?? settings.dryRun });
    if (request !== undefined) {
      reports.set(request.seq, lastReport);
      done = request.seq;
    }
  }
  await condition(allHandlersFinished);
  await continueAsNew<typeof eniJanitorWorkflow>({ settings });
}

async function janitorPass(input: { settings: JanitorSettings; dryRun: boolean }): Promise<JanitorReport> {
  const cloud = await ecsRead.listEniflowEnis();
  const known = await kubeRead.listKnownEniIds();
  const now = Date.now();
  const plan = planOrphanEnis({ cloud, knownEniIds: known, nowMs: now, graceMs: input.settings.graceMs });
  const report: JanitorReport = {
    at: new Date(now).toISOString(),
    dryRun: input.dryRun,
    checked: cloud.length,
    orphans: plan.orphans,
    deleted: [],
    failed: [],
    kept: {},
  };
  for (const kept of plan.kept) report.kept[kept.reason] = (report.kept[kept.reason] ?? 0) + 1;
  if (input.dryRun) {
    metricsSink.janitorPass({ dryRun: true, orphans: plan.orphans.length, deleted: 0, failed: 0 });
    return report;
  }
  for (const orphan of plan.orphans) {
    try {
      await release.deleteEni({ eniId: orphan.eniId });
      report.deleted.push(orphan.eniId);
    } catch (error) {
      report.failed.push({ eniId: orphan.eniId, error: error instanceof Error ? error.message : String(error) });
      continue;
    }
    try {
      await kubeNotice.recordEvent({
        nodeName: orphan.node ?? '',
        involved: {
          kind: 'Node',
          apiVersion: 'network.alibabacloud.com/v1beta1',
          name: orphan.node ?? workflowInfo().workflowId,
        },
        type: 'Warning',
        reason: 'OrphanEniDeleted',
        message:
          `ENI ${orphan.eniId} (created ${orphan.createdAt} by eniflow${orphan.node === undefined ? '' : ` for ${orphan.node}`}) ` +
          'was Available and known to no Node CR: deleted by the janitor',
      });
    } catch {
      // Best effort: the report and the logs still say it.
    }
  }
  metricsSink.janitorPass({
    dryRun: false,
    orphans: plan.orphans.length,
    deleted: report.deleted.length,
    failed: report.failed.length,
  });
  return report;
}
