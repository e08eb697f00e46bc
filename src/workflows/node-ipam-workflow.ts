import {
  allHandlersFinished,
  condition,
  continueAsNew,
  setHandler,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';

import { gcSignal, gcUpdate, reconcileSignal, resyncSignal, stateQuery } from './messages.js';
import type { IpamState, NodeWorkflowState } from './messages.js';
import { NodeReconciler } from './node-reconciler.js';
import type { CarriedState, NodeIpamSettings } from './node-reconciler.js';
import {
  INSTANCE_ID_SEARCH_ATTRIBUTE,
  IPAM_STATE_SEARCH_ATTRIBUTE,
  NODE_NAME_SEARCH_ATTRIBUTE,
} from './workflow-ids.js';

/** Input of {@link nodeIpamWorkflow}; `carried` is set only by continue-as-new. */
export interface NodeIpamWorkflowInput {
  nodeName: string;
  settings?: Partial<NodeIpamSettings>;
  carried?: CarriedState;
}

/**
 * The per-node entity workflow: one long-lived run per node (id from `nodeWorkflowId`), woken by the watcher's
 * `reconcile` signals and by its own timers, doing one reconcile pass at a time (at most one per minimum interval,
 * signals in between coalesced). It ends when the node's CR is gone, and continues as new when its history grows.
 */
export async function nodeIpamWorkflow(input: NodeIpamWorkflowInput): Promise<NodeWorkflowState> {
  const reconciler = new NodeReconciler(input);
  setHandler(reconcileSignal, (reason) => {
    reconciler.noteSignal(reason);
  });
  setHandler(gcSignal, () => {
    reconciler.requestGc();
  });
  setHandler(resyncSignal, () => {
    reconciler.requestResync();
  });
  setHandler(gcUpdate, async () => {
    const seq = reconciler.requestGc();
    await condition(() => reconciler.gcDoneSeq >= seq);
    return reconciler.lastGcResult;
  });
  setHandler(stateQuery, () => reconciler.view());

  let publishedState: IpamState | undefined = workflowInfo().typedSearchAttributes.get(IPAM_STATE_SEARCH_ATTRIBUTE) as
    IpamState | undefined;
  let publishedInstance: string | undefined = workflowInfo().typedSearchAttributes.get(INSTANCE_ID_SEARCH_ATTRIBUTE);
  if (workflowInfo().typedSearchAttributes.get(NODE_NAME_SEARCH_ATTRIBUTE) !== input.nodeName) {
    upsertSearchAttributes([{ key: NODE_NAME_SEARCH_ATTRIBUTE, value: input.nodeName }]);
  }

  for (;;) {
    const wakeInMs = Math.max(1, reconciler.nextWakeMs() - Date.now());
    await condition(() => reconciler.dirty, wakeInMs);
    const sinceLastMs = Date.now() - reconciler.lastPassEndMs();
    if (sinceLastMs < reconciler.settings.minReconcileIntervalMs) {
      await sleep(reconciler.settings.minReconcileIntervalMs - sinceLastMs);
    }
    reconciler.dirty = false;
    await reconciler.pass();

    // Search attributes change only when the value does, so history does not grow on quiet passes.
    const state = reconciler.currentIpamState();
    const instanceId = reconciler.currentInstanceId();
    if (state !== publishedState) {
      upsertSearchAttributes([{ key: IPAM_STATE_SEARCH_ATTRIBUTE, value: state }]);
      publishedState = state;
    }
    if (instanceId !== undefined && instanceId !== '' && instanceId !== publishedInstance) {
      upsertSearchAttributes([{ key: INSTANCE_ID_SEARCH_ATTRIBUTE, value: instanceId }]);
      publishedInstance = instanceId;
    }
    if (reconciler.finished) {
      await condition(allHandlersFinished);
      return reconciler.view();
    }
    if (workflowInfo().continueAsNewSuggested || reconciler.passesThisRun >= reconciler.settings.maxPassesPerRun) {
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
