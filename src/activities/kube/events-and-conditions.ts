import { createHash, randomBytes } from 'node:crypto';

import { activityInfo } from '@temporalio/activity';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { CoreV1Event } from '@kubernetes/client-node';

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
    type: 'Normal' | 'Warning';
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
    async recordEvent(input: {
      nodeName: string;
      involved: { kind: 'Node' | 'Pod'; apiVersion: string; name: string; namespace?: string; uid?: string };
      type: 'Normal' | 'Warning';
      reason: string;
      message: string;
      series?: string;
      coreNode?: { uid?: string };
    }): Promise<void> {
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
    },
  };
}
