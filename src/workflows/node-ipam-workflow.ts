import {
  ApplicationFailure,
  allHandlersFinished,
  condition,
  continueAsNew,
  setDefaultSignalHandler,
  setHandler,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';

import { requireClusterId } from './cluster-id.js';
import { nextBusyStreak, passDelayMs } from '../ipam/index.js';
import type { BatchPacing, DegradationSetting } from '../ipam/index.js';
import {
  DEFAULT_NODE_SETTINGS,
  degradationSignal,
  gcSignal,
  gcUpdate,
  reconcileSignal,
  resyncSignal,
  stateQuery,
} from './messages.js';
import type { NodeIpamSettings, NodeWorkflowState } from './messages.js';
import { metricsSink } from './metrics-sinks.js';
import { carriedStateProblem } from './node/memory/carried-state.js';
import type { CarriedState } from './node/memory/carried-state.js';
import { NodeReconciler } from './node/reconciler.js';
import { NodeStory } from './node/tell/story.js';
import { WakeTimer } from './node/memory/wake-timer.js';
import { gcDeferral } from './node/tell/state-view.js';

/** Input of {@link nodeIpamWorkflow}; `carried` is accepted only from the workflow's own continue-as-new. */
export interface NodeIpamWorkflowInput {
  nodeName: string;
  settings?: Partial<NodeIpamSettings>;
  carried?: CarriedState;
  /** The cluster's degradation setting when the watcher started the workflow (a continue-as-new carries its own). */
  degradation?: DegradationSetting;
}

/**
 * The per-node entity workflow: one long-lived run per node (id from `nodeWorkflowId`), woken by the watcher's
 * `reconcile` signals and by its own timers, doing one reconcile pass at a time (at most one per minimum interval,
 * signals in between coalesced). It ends when the node's CR is gone, and continues as new when its history grows,
 * after `maxPassesPerRun` passes, or when the run is `maxRunAgeMs` old.
 */
export async function nodeIpamWorkflow(input: NodeIpamWorkflowInput): Promise<NodeWorkflowState> {
  const reconciler = new NodeReconciler({
    nodeName: input.nodeName,
    settings: checkedSettings(input),
    ...(input.carried === undefined ? {} : { carried: input.carried }),
    ...(input.degradation === undefined ? {} : { degradation: input.degradation }),
  });
  const story: NodeStory = new NodeStory({
    nodeName: input.nodeName,
    view: () => reconciler.view(story.ignoredSignals),
  });
  const view = (): NodeWorkflowState => reconciler.view(story.ignoredSignals);
  handleMessages({ reconciler, story, view });

  // IpamState is known before the first cloud call (Starting), not only after a first pass that may take a minute.
  story.atStart();
  const runDeadlineMs = workflowInfo().runStartTime.getTime() + reconciler.settings.maxRunAgeMs;
  const pacer = new PassPacer(reconciler.settings);
  const wake = new WakeTimer();
  for (;;) {
    if (!(await passDue(reconciler, wake))) continue;
    await pacer.wait(reconciler.dirty);
    reconciler.dirty = false;
    story.passStarting();
    const passStartMs = Date.now();
    await reconciler.pass();
    pacer.passed({ startMs: passStartMs, endMs: reconciler.lastPassEndMs() });

    // A sink: the worker's pass-time gauges, at no history cost.
    metricsSink.nodePass({
      nodeName: input.nodeName,
      ok: reconciler.failedPasses() === 0,
      ipamState: reconciler.currentIpamState(),
      atMs: Date.now(),
    });
    // Search attributes change only when the value does, so history does not grow on quiet passes.
    story.passEnded();
    if (reconciler.finished && !reconciler.changedSincePassStart()) {
      metricsSink.nodeGone({ nodeName: input.nodeName });
      await condition(allHandlersFinished);
      return view();
    }
    if (
      // A change that came while the node was released (its CR created again, or created late) is not lost with the
      // ended run: a new run starts with a pass and looks again.
      reconciler.finished ||
      workflowInfo().continueAsNewSuggested ||
      reconciler.passesThisRun >= reconciler.settings.maxPassesPerRun ||
      Date.now() >= runDeadlineMs
    ) {
      await condition(allHandlersFinished);
      // A signal that arrived while handlers drained is not lost: the new run starts with a pass anyway.
      // The effective settings, in full: the next run replays with exactly what this one used.
      await continueAsNew<typeof nodeIpamWorkflow>({
        nodeName: input.nodeName,
        settings: reconciler.settings,
        carried: reconciler.carry(),
      });
    }
  }
}

/** The workflow's signals, its `gc` update and its `state` query, each handed to the reconciler or the story. */
function handleMessages(input: { reconciler: NodeReconciler; story: NodeStory; view: () => NodeWorkflowState }): void {
  const { reconciler, story, view } = input;
  reconciler.onCallFailed(() => {
    story.callFailed();
  });
  setHandler(reconcileSignal, (reason) => {
    reconciler.noteSignal(reason);
  });
  setHandler(gcSignal, () => {
    reconciler.requestGc();
  });
  setHandler(degradationSignal, (setting) => {
    reconciler.setDegradation(setting);
  });
  setHandler(resyncSignal, () => {
    reconciler.requestResync();
  });
  setDefaultSignalHandler((signalName) => {
    story.noteIgnoredSignal(signalName);
  });
  setHandler(gcUpdate, async () => {
    const seq = reconciler.requestGc();
    const deferred = reconciler.degradation.gcDeferral() ?? gcDeferral(view());
    if (deferred !== undefined) return deferred;
    await condition(() => reconciler.gc.isDone(seq));
    return reconciler.gc.lastResult;
  });
  setHandler(stateQuery, view);
}

/**
 * Waits until a signal asks for a pass or the next one is due. Only the backoff timer says why it waits: a summary
 * is stored with the timer, on every idle wait otherwise. False when a kept timer fired before the pass it now waits
 * for is due: it is then armed again, and no pass runs.
 */
async function passDue(reconciler: NodeReconciler, wake: WakeTimer): Promise<boolean> {
  const failed = reconciler.failedPasses();
  if (!reconciler.dirty) {
    wake.armBy(reconciler.nextPass().atMs, failed > 0 ? `backoff after ${failed} failed pass(es)` : undefined);
    await condition(() => reconciler.dirty || wake.fired);
  }
  return reconciler.dirty || Date.now() >= reconciler.nextPass().atMs;
}

/** Pacing under load: not carried, so a new run starts unpaced (its first pass at once). */
class PassPacer {
  private readonly pacing: BatchPacing;
  private readonly minIntervalMs: number;
  private busyStreak = 0;
  private lastPass: { startMs: number; endMs: number } | undefined;

  constructor(settings: Pick<NodeIpamSettings, 'minReconcileIntervalMs' | 'maxBatchWindowMs'>) {
    this.minIntervalMs = settings.minReconcileIntervalMs;
    this.pacing = { baseMs: settings.minReconcileIntervalMs, maxMs: settings.maxBatchWindowMs };
  }

  /** A change soon after the last pass means a backlog: the pass waits for a batch (a timer's wake does not). */
  async wait(changed: boolean): Promise<void> {
    const { pacing, lastPass } = this;
    this.busyStreak = changed
      ? nextBusyStreak({ pacing, streak: this.busyStreak, lastEndMs: lastPass?.endMs, changeMs: Date.now() })
      : 0;
    const delayMs = passDelayMs({
      nowMs: Date.now(),
      minIntervalMs: this.minIntervalMs,
      pacing,
      streak: this.busyStreak,
      lastPass,
    });
    if (delayMs > 0) await sleep(delayMs);
  }

  passed(pass: { startMs: number; endMs: number }): void {
    this.lastPass = pass;
  }
}

/**
 * The run's settings, after three refusals that fail the start at once (non-retryable, so nothing is retried and the
 * failure is plain in the Web UI). `carried` state is preferred to the CR and decides what GC removes: only a run
 * continued from this workflow may bring it, never a client's fresh start, and only in the one version this release
 * takes (another release's state is refused, not guessed at: docs/patches.md). And without a cluster id the node
 * could neither tag what it creates nor tell its ENIs from a neighbour cluster's.
 */
function checkedSettings(input: NodeIpamWorkflowInput): NodeIpamSettings {
  if (input.carried !== undefined && workflowInfo().continuedFromExecutionRunId === undefined) {
    throw ApplicationFailure.nonRetryable(
      'carried state is accepted only from the workflow’s own continue-as-new, not in a fresh start',
      'ForgedCarriedState',
    );
  }
  const carriedProblem = input.carried === undefined ? undefined : carriedStateProblem(input.carried);
  if (carriedProblem !== undefined) throw ApplicationFailure.nonRetryable(carriedProblem, 'UnsupportedCarriedState');
  // The watcher sends the settings in full; the defaults fill in only for a partial start (tests, the CLI).
  return requireClusterId({ ...DEFAULT_NODE_SETTINGS, ...input.settings });
}
