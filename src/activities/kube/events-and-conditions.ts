import { createHash, randomBytes } from 'node:crypto';

import { activityInfo } from '@temporalio/activity';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { CoreV1Event } from '@kubernetes/client-node';

import type { EventType } from '../../ipam/index.js';
import { mapLimited } from '../../shared/map-limited.js';
import type { KubeContext } from './kube-context.js';
import { kubeFailure, statusOf } from './kube-failures.js';

/** The Web UI page of the workflow running this activity, when a UI URL is configured. */
export function workflowUiLink(uiUrl: string | undefined): string | undefined {
  if (uiUrl === undefined || uiUrl === '') return undefined;
  const info = activityInfo();
  const workflowId = info.workflowExecution?.workflowId;
  if (workflowId === undefined) return undefined;
  return `${uiUrl.replace(/\/+$/, '')}/namespaces/${encodeURIComponent(info.namespace)}/workflows/${encodeURIComponent(workflowId)}`;
}

/** Events of one batch written at once: a few, so a node's burst of Events does not flood the apiserver. */
export const RECORD_EVENTS_CONCURRENCY = 4;

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A core Node condition as written: all fields present, times in RFC 3339. */
export interface NodeConditionPatch {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  lastHeartbeatTime: string;
  lastTransitionTime: string;
}

/** What the reconcile tells people: Kubernetes Events, and the conditions it sets on the core Node. */
export function createEventsAndConditions(ctx: KubeContext) {
  const { deps, core, call, logFor } = ctx;
  const component = deps.component ?? 'eniflow';

  async function recordOneEvent(input: {
    involved: { kind: 'Node' | 'Pod'; apiVersion: string; name: string; namespace?: string; uid?: string };
    type: EventType;
    reason: string;
    message: string;
    series?: string;
  }): Promise<void> {
    const namespace = input.involved.namespace ?? 'default';
    const now = new Date();
    const seriesName =
      input.series === undefined
        ? undefined
        : `${input.involved.name}.${createHash('sha256')
            .update(
              [
                input.involved.apiVersion,
                input.involved.kind,
                namespace,
                input.involved.name,
                input.involved.uid ?? '',
                input.reason,
                input.series,
              ].join('\n'),
            )
            .digest('hex')
            .slice(0, 16)}`;
    const body = {
      metadata: { name: seriesName ?? `${input.involved.name}.${randomBytes(8).toString('hex')}`, namespace },
      involvedObject: {
        kind: input.involved.kind,
        apiVersion: input.involved.apiVersion,
        name: input.involved.name,
        ...(input.involved.namespace === undefined ? {} : { namespace: input.involved.namespace }),
        ...(input.involved.uid === undefined ? {} : { uid: input.involved.uid }),
      },
      type: input.type,
      reason: input.reason,
      message: input.message,
      source: { component },
      reportingComponent: component,
      reportingInstance: component,
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
    };
    // A repeat of a series: at most a few tries, since a concurrent update (another attempt) bumps the version.
    for (let attempt = 0; ; attempt += 1) {
      if (seriesName !== undefined) {
        let existing: CoreV1Event | undefined;
        try {
          existing = await core.readNamespacedEvent({ name: seriesName, namespace }, call());
        } catch (error) {
          if (statusOf(error) !== 404) throw kubeFailure(error, `read event ${input.reason}`);
        }
        if (existing !== undefined) {
          try {
            existing.type = input.type;
            existing.message = input.message;
            existing.count = (existing.count ?? 1) + 1;
            existing.lastTimestamp = now;
            await core.replaceNamespacedEvent({ name: seriesName, namespace, body: existing }, call());
            return;
          } catch (error) {
            if ((statusOf(error) === 409 || statusOf(error) === 404) && attempt < 3) continue;
            throw kubeFailure(error, `update event ${input.reason}`);
          }
        }
      }
      try {
        await core.createNamespacedEvent({ namespace, body }, call());
        return;
      } catch (error) {
        // Created meanwhile under the series name: count this one on it.
        if (statusOf(error) === 409 && seriesName !== undefined && attempt < 3) continue;
        throw kubeFailure(error, `record event ${input.reason}`);
      }
    }
  }

  /** One Event as the workflow asks for it (see `recordEvent`). */
  interface EventRequest {
    nodeName: string;
    involved: { kind: 'Node' | 'Pod'; apiVersion: string; name: string; namespace?: string; uid?: string };
    type: EventType;
    reason: string;
    message: string;
    series?: string;
    coreNode?: { uid?: string };
  }

  async function recordRequested(input: EventRequest): Promise<void> {
    const link = workflowUiLink(deps.temporalUiUrl);
    const message = `${input.message}${link === undefined ? '' : ` ${link}`}`.slice(0, 1024);
    const targets = [input.involved];
    if (input.coreNode !== undefined) {
      targets.push({
        kind: 'Node',
        apiVersion: 'v1',
        name: input.nodeName,
        ...(input.coreNode.uid === undefined ? {} : { uid: input.coreNode.uid }),
      });
    }
    for (const involved of targets) {
      await recordOneEvent({ ...input, involved, message });
    }
  }

  return {
    /**
     * Sets one condition of the core Node (`SufficientIP`, `IPAMConfigValid`) with a strategic merge keyed by type,
     * so every other condition is kept.
     */
    async patchNodeCondition(input: { nodeName: string; condition: NodeConditionPatch }): Promise<void> {
      try {
        await core.patchNodeStatus(
          { name: input.nodeName, body: { status: { conditions: [input.condition] } } },
          call(setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch)),
        );
        logFor(input.nodeName).info(
          { type: input.condition.type, status: input.condition.status },
          'Patched Node condition',
        );
      } catch (error) {
        if (statusOf(error) === 404) return;
        throw kubeFailure(error, `patch condition ${input.condition.type} of Node ${input.nodeName}`);
      }
    },

    /**
     * Records a Kubernetes Event on the Node CR, a core Node or a Pod (and, with `coreNode`, the same one on the core
     * Node too, where `kubectl describe node` shows it). With a `series` key, the Event is named after the object,
     * reason and key, so a repeat of one cause updates that Event (count, message, lastTimestamp) instead of adding
     * another; without one, each call is a new Event.
     */
    async recordEvent(input: EventRequest): Promise<void> {
      await recordRequested(input);
    },

    /**
     * The Events of one pass in one activity (a node with 30 waiting pods pays one activity, not 30), written
     * `RECORD_EVENTS_CONCURRENCY` at a time so a large batch stays well inside the activity's timeout. One Event
     * that cannot be written does not stop the others: the failures are returned, not thrown, because a retry of
     * the whole batch would count the Events already written a second time. Only a batch of which nothing was
     * written throws (with the first error), so the activity's retry policy still covers an apiserver that is down.
     */
    async recordEvents(input: {
      events: EventRequest[];
    }): Promise<{ failed: { index: number; reason: string; message: string }[] }> {
      const outcomes = await mapLimited(input.events, RECORD_EVENTS_CONCURRENCY, async (event, index) => {
        try {
          await recordRequested(event);
          return undefined;
        } catch (error) {
          return { index, reason: event.reason, message: errorMessage(error), error };
        }
      });
      const failed = outcomes.filter((outcome) => outcome !== undefined);
      const first = failed[0];
      if (first !== undefined && failed.length === input.events.length) throw first.error;
      return { failed: failed.map(({ index, reason, message }) => ({ index, reason, message })) };
    },
  };
}
