/** What the workflow's history says about its activities: the order in which their results reached it. */
import { defaultPayloadConverter } from '@temporalio/common';

import type { NodeWorkflowHandle } from './harness.js';

/**
 * The completed (non-local) activities of the current run, in the order their results were recorded: the order in
 * which the workflow folded them. Each as `name` or `name:eniId` when its input names an ENI.
 */
export async function completionOrder(workflow: NodeWorkflowHandle): Promise<string[]> {
  const history = await workflow.fetchHistory();
  const scheduled = new Map<string, string>();
  const order: string[] = [];
  for (const event of history.events ?? []) {
    const attributes = event.activityTaskScheduledEventAttributes;
    if (attributes !== undefined && attributes !== null) {
      const name = attributes.activityType?.name ?? '?';
      const payload = attributes.input?.payloads?.[0];
      const input =
        payload === undefined ? undefined : defaultPayloadConverter.fromPayload<{ eniId?: string }>(payload);
      scheduled.set(String(event.eventId), input?.eniId === undefined ? name : `${name}:${input.eniId}`);
      continue;
    }
    const completed = event.activityTaskCompletedEventAttributes;
    if (completed !== undefined && completed !== null) {
      order.push(scheduled.get(String(completed.scheduledEventId)) ?? '?');
    }
  }
  return order;
}
