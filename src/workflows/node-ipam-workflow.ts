import {
  allHandlersFinished,
  condition,
  continueAsNew,
  setDefaultSignalHandler,
  setHandler,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';

import { gcSignal, gcUpdate, reconcileSignal, resyncSignal, stateQuery } from './messages.js';
import type { NodeIpamSettings, NodeWorkflowState } from './messages.js';
import { metricsSink } from './metrics-sinks.js';
import type { CarriedState } from './node/carried-state.js';
import { NodeReconciler } from './node/node-reconciler.js';
import { NodeStory } from './node/node-story.js';
import { gcDeferral } from './node/node-view.js';

/** Input of {@link nodeIpamWorkflow}; `carried` is set only by continue-as-new. */
export interface NodeIpamWorkflowInput {
  nodeName: string;
  settings?: Partial<NodeIpamSettings>;
  carried?: CarriedState;
}

/**
 * The per-node entity workflow: one long-lived run per node (id from `nodeWorkflowId`), woken by the watcher's
 * `reconcile` signals and by its own timers, doing one reconcile pass at a time (at most one per minimum interval,
 * signals in between coalesced). It ends when the node's CR is gone, and continues as new when its history grows,
 * after `maxPassesPerRun` passes, or when the run is `maxRunAgeMs` old.
 */
export async function nodeIpamWorkflow(input: NodeIpamWorkflowInput): Promise<NodeWorkflowState> {
  const reconciler = new NodeReconciler(input);
  const story: NodeStory = new NodeStory({
    nodeName: input.nodeName,
    view: () => reconciler.view(story.ignoredSignals),
  });
  const view = (): NodeWorkflowState => reconciler.view(story.ignoredSignals);
  setHandler(reconcileSignal, (reason) => {
    reconciler.noteSignal(reason);
  });
  setHandler(gcSignal, () => {
    reconciler.requestGc();
  });
  setHandler(resyncSignal, () => {
    reconciler.requestResync();
  });
  setDefaultSignalHandler((signalName) => {
    story.noteIgnoredSignal(signalName);
  });
  setHandler(gcUpdate, async () => {
    const seq = reconciler.requestGc();
    const deferred = gcDeferral(view());
    if (deferred !== undefined) return deferred;
    await condition(() => reconciler.gc.isDone(seq));
    return reconciler.gc.lastResult;
  });
  setHandler(stateQuery, view);

  // IpamState is known before the first cloud call (Starting), not only after a first pass that may take a minute.
  story.atStart();
  const runDeadlineMs = workflowInfo().runStartTime.getTime() + reconciler.settings.maxRunAgeMs;

  for (;;) {
    const wakeInMs = Math.max(1, reconciler.nextPass().atMs - Date.now());
    const failed = reconciler.failedPasses();
    // Only the backoff timer says why it waits: a summary is stored with the timer, on every idle wait otherwise.
    await (failed > 0
      ? condition(() => reconciler.dirty, wakeInMs, { summary: `backoff after ${failed} failed pass(es)` })
      : condition(() => reconciler.dirty, wakeInMs));
    const sinceLastMs = Date.now() - reconciler.lastPassEndMs();
    if (sinceLastMs < reconciler.settings.minReconcileIntervalMs) {
      await sleep(reconciler.settings.minReconcileIntervalMs - sinceLastMs);
    }
    reconciler.dirty = false;
    story.passStarting();
    await reconciler.pass();

    // A sink: the worker's pass-time gauges, at no history cost.
    metricsSink.nodePass({
      nodeName: input.nodeName,
      ok: reconciler.failedPasses() === 0,
      ipamState: reconciler.currentIpamState(),
      atMs: Date.now(),
    });
    // Search attributes change only when the value does, so history does not grow on quiet passes.
    story.passEnded();
    if (reconciler.finished) {
      metricsSink.nodeGone({ nodeName: input.nodeName });
      await condition(allHandlersFinished);
      return view();
    }
    if (
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
