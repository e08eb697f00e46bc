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
} from '@temporalio/workflow';

import {
  degradationGates,
  EVENT_REASONS,
  degradationSummary,
  isDegradationSetting,
  isNewerDegradation,
  planOrphanEnis,
  recheckOrphan,
} from '../ipam/index.js';
import type { DegradationSetting, OrphanEniPlan, OrphanRecheck } from '../ipam/index.js';
import type { Activities } from '../activities/index.js';
import { ACTIVITY_POLICIES } from './activity-policies.js';
import { requireClusterId } from './cluster-id.js';
import { proxyActivitiesWithSummaries } from './activity-summaries.js';
import { DEFAULT_JANITOR_SETTINGS } from '../shared/janitor-settings.js';
import type { JanitorSettings } from '../shared/janitor-settings.js';
import { degradationSignal } from './messages.js';
import { metricsSink } from './metrics-sinks.js';

const kubeRead = proxyActivities<Activities>(ACTIVITY_POLICIES.kubeRead);
const kubeNotice = proxyActivities<Activities>(ACTIVITY_POLICIES.kubeNotice);
// Cloud calls go through their actions' task queues, on the cluster's ECS budget like the node workflows'.
const ecsRead = proxyActivitiesWithSummaries(ACTIVITY_POLICIES.ecsRead);
const release = proxyActivitiesWithSummaries(ACTIVITY_POLICIES.releaseEni);

/** What one janitor pass found and did. */
export interface JanitorReport {
  at: string;
  /** The cluster whose ENIs this janitor may delete. */
  clusterId: string;
  dryRun: boolean;
  /** ENIs with eniflow's creator tag and this cluster's tag looked at. */
  checked: number;
  orphans: OrphanEniPlan['orphans'];
  /** Orphans deleted (empty on a dry run). */
  deleted: string[];
  /** Orphans the re-check right before the delete spared, and why (a CR lists it now, it is in use…). */
  spared: { eniId: string; reason: Exclude<OrphanRecheck, 'delete'> }[];
  /** Orphans whose delete failed; retried by the next pass. */
  failed: { eniId: string; error: string }[];
  kept: Record<string, number>;
  /** eniflow ENIs without a cluster tag that a Node CR of this cluster lists: adopted by that node. */
  adopted: number;
  /**
   * eniflow ENIs without a cluster tag that no Node CR of this cluster lists: reported, never deleted. Only the
   * `detached` ones count in `eniflow_janitor_unowned_enis` and the warning (see {@link OrphanEniPlan}).
   */
  unowned: OrphanEniPlan['unowned'];
  /** Set when the cluster's degradation switch held the pass back: l1 deletes nothing, l0 does not even list. */
  heldBack?: string;
}

/**
 * Runs a janitor pass now. `dryRun: true` makes this pass report only; a pass deletes only when the janitor's
 * recorded settings say `dryRun: false` (a request for deletes on a dry-run janitor is rejected). Returns its report.
 */
export const runJanitorUpdate = defineUpdate<JanitorReport, [{ dryRun?: boolean }]>('runJanitor');
/** The last pass's report (undefined before the first). */
export const janitorReportQuery = defineQuery<JanitorReport | undefined>('lastReport');

/**
 * The orphan-ENI janitor, one per cluster (id `JANITOR_WORKFLOW_ID`): lists ENIs carrying eniflow's creator tag and
 * this cluster's tag, and deletes those `Available`, known to no Node CR and older than the grace period, each
 * re-checked right before its delete. It is the backstop behind the node workflows' own guarantees (create intents,
 * the saga's compensation): whatever path leaves an ENI behind, it is found and removed, with an Event per deletion.
 * ENIs of other clusters are never looked at twice; ENIs made before the cluster tag are reported, never deleted.
 */
export async function eniJanitorWorkflow(
  input: { settings?: Partial<JanitorSettings>; degradation?: DegradationSetting } = {},
): Promise<void> {
  const settings = checkedSettings(input.settings);
  // The cluster's degradation switch, from the start input and the watcher's `degradation` signals (newest wins).
  let degradation: DegradationSetting | undefined = isDegradationSetting(input.degradation)
    ? input.degradation
    : undefined;
  setHandler(degradationSignal, (offered) => {
    if (isDegradationSetting(offered) && isNewerDegradation(degradation, offered)) degradation = offered;
  });
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
  setHandler(
    runJanitorUpdate,
    async (options) => {
      requested += 1;
      const seq = requested;
      // Drier, never wetter: only the recorded settings enable deletes.
      requests = [...requests, { dryRun: settings.dryRun || options.dryRun === true, seq }];
      await condition(() => done >= seq);
      const report = reports.get(seq) ?? lastReport;
      reports.delete(seq);
      if (report === undefined) throw new Error('janitor pass did not run');
      return report;
    },
    {
      // Rejected before it is recorded: the caller learns at once that this janitor does not delete.
      validator: (options: { dryRun?: boolean }) => {
        if (settings.dryRun && options.dryRun === false) {
          throw new Error(
            'this janitor was started with dryRun: true and never deletes; deletes are enabled only by its ' +
              'recorded settings (JANITOR_DRY_RUN=false, then restart the janitor workflow)',
          );
        }
      },
    },
  );

  for (let passes = 0; ; passes += 1) {
    // Requests that arrived meanwhile are served before the run hands over to the next.
    if (passes >= settings.maxPassesPerRun && requests.length === 0) break;
    await condition(() => requests.length > 0, settings.intervalMs);
    const request = requests[0];
    requests = requests.slice(1);
    lastReport = await janitorPass({
      settings,
      dryRun: request?.dryRun ?? settings.dryRun,
      level: degradation?.level ?? 'off',
    });
    if (request !== undefined) {
      reports.set(request.seq, lastReport);
      done = request.seq;
    }
  }
  await condition(allHandlersFinished);
  await continueAsNew<typeof eniJanitorWorkflow>({
    settings,
    ...(degradation === undefined ? {} : { degradation }),
  });
}

/** The settings in full; a start without a cluster id fails at once (it could not tell its ENIs from others'). */
function checkedSettings(given: Partial<JanitorSettings> | undefined): JanitorSettings {
  // The watcher starts it with the settings in full; the defaults fill in only for a partial start (tests).
  return requireClusterId({ ...DEFAULT_JANITOR_SETTINGS, ...given });
}

async function janitorPass(input: {
  settings: JanitorSettings;
  dryRun: boolean;
  level: DegradationSetting['level'];
}): Promise<JanitorReport> {
  const { clusterId, vpcId } = input.settings;
  const gates = degradationGates(input.level);
  const heldBack = gates.release ? {} : { heldBack: degradationSummary(input.level) };
  if (!gates.cloud) {
    return {
      at: new Date().toISOString(),
      clusterId,
      dryRun: true,
      checked: 0,
      orphans: [],
      deleted: [],
      spared: [],
      failed: [],
      kept: {},
      adopted: 0,
      unowned: [],
      ...heldBack,
    };
  }
  // Under l1 the pass lists and reports, as a dry run: deleting is a releasing call.
  const dryRun = input.dryRun || !gates.release;
  const vpc = vpcId === undefined ? {} : { vpcId };
  const owned = await ecsRead.listEniflowEnis({ clusterId, ...vpc });
  // Only for the ENIs made before the cluster tag: a list by tag cannot ask for a tag that is absent.
  const unscoped = await ecsRead.listEniflowEnis(vpc);
  const known = await kubeRead.listKnownEniIds({});
  const now = Date.now();
  const plan = planOrphanEnis({
    owned,
    unscoped,
    clusterId,
    knownEniIds: known,
    nowMs: now,
    graceMs: input.settings.graceMs,
  });
  const report: JanitorReport = {
    at: new Date(now).toISOString(),
    clusterId,
    dryRun,
    checked: owned.length,
    orphans: plan.orphans,
    deleted: [],
    spared: [],
    failed: [],
    kept: {},
    adopted: plan.adopted.length,
    unowned: plan.unowned,
    ...heldBack,
  };
  for (const kept of plan.kept) report.kept[kept.reason] = (report.kept[kept.reason] ?? 0) + 1;
  // Only detached ones are this cluster's business: an attached legacy ENI is in use on its instance (a node of
  // this cluster adopts it at its next OpenAPI sync; a neighbour's stays unowned here forever, healthy).
  const detachedUnowned = plan.unowned.filter((eni) => eni.detached);
  if (detachedUnowned.length > 0) {
    log.warn(
      'detached eniflow ENIs without a cluster tag that no Node CR of this cluster lists: reported, never deleted',
      {
        clusterId,
        eniIds: detachedUnowned.map((eni) => eni.eniId),
      },
    );
  }
  if (!dryRun) {
    for (const orphan of plan.orphans) await deleteOrphan({ orphan, clusterId, report });
  }
  metricsSink.janitorPass({
    dryRun,
    orphans: plan.orphans.length,
    deleted: report.deleted.length,
    failed: report.failed.length,
    unowned: detachedUnowned.length,
  });
  return report;
}

/**
 * Deletes one orphan after a last look: the ENI described again by id and the Node CRs read again live, since the
 * plan may be minutes old by now. Then an Event on the Node CR the ENI was created for (a node of this cluster:
 * only ENIs tagged with this cluster's id get this far).
 */
async function deleteOrphan(input: {
  orphan: OrphanEniPlan['orphans'][number];
  clusterId: string;
  report: JanitorReport;
}): Promise<void> {
  const { orphan, report } = input;
  try {
    const [fresh] = await ecsRead.describeEnisById({ eniIds: [orphan.eniId] });
    const knownNow = await kubeRead.listKnownEniIds({ live: true });
    const verdict = recheckOrphan({ fresh, knownEniIds: knownNow, clusterId: input.clusterId });
    if (verdict !== 'delete') {
      report.spared.push({ eniId: orphan.eniId, reason: verdict });
      return;
    }
    await release.deleteEni({ eniId: orphan.eniId });
    report.deleted.push(orphan.eniId);
  } catch (error) {
    report.failed.push({ eniId: orphan.eniId, error: error instanceof Error ? error.message : String(error) });
    return;
  }
  // No node tag, no Node CR known to be this cluster's: the report and the logs say it instead.
  if (orphan.node === undefined) return;
  try {
    await kubeNotice.recordEvent({
      nodeName: orphan.node,
      involved: { kind: 'Node', apiVersion: 'network.alibabacloud.com/v1beta1', name: orphan.node },
      type: EVENT_REASONS.OrphanEniDeleted.type,
      reason: EVENT_REASONS.OrphanEniDeleted.reason,
      message:
        `ENI ${orphan.eniId} (created ${orphan.createdAt} by eniflow for cluster ${input.clusterId}` +
        `, node ${orphan.node}) ` +
        'was Available and known to no Node CR: deleted by the janitor',
    });
  } catch {
    // Best effort: the report and the logs still say it.
  }
}
