/**
 * Node workflow histories as the benchmark reads them: every run of a workflow (continue-as-new included), each
 * event reduced to the few fields the timeline and the Temporal cost need, so the logic over them is pure and can be
 * tested with hand-made events.
 */
import proto from '@temporalio/proto';
import type { Client } from '@temporalio/client';

type ProtoEvent = proto.temporal.api.history.v1.IHistoryEvent;

/** One history event, flattened. */
export interface BenchEvent {
  id: number;
  /** Server time of the event, epoch milliseconds. */
  atMs: number;
  /** The event type without its prefix, in PascalCase: `ActivityTaskStarted`. */
  type: string;
  /** Protobuf-encoded size, what the event adds to the history's size. */
  bytes?: number;
  /** Activity tasks (resolved through the scheduled event) and local-activity markers. */
  activityType?: string;
  /** ActivityTaskStarted: the attempt that finished (retries before it write no event). Local activities too. */
  attempt?: number;
  /** WorkflowTaskStarted, ActivityTaskStarted: the worker that took the task (`pid@host` by default). */
  identity?: string;
  marker?: string;
  /** MarkerRecorded: the WorkflowTaskCompleted whose commands recorded it, to group the markers of one task. */
  workflowTaskCompletedId?: number;
  /** Timers: id, and the duration when started. */
  timer?: string;
  signal?: string;
  /** UpsertWorkflowSearchAttributes: the keys it set. */
  searchAttributes?: string[];
  /** Failures and timeouts: the cause or timeout type, when the event has one. */
  cause?: string;
}

export const LOCAL_ACTIVITY_MARKER = 'core_local_activity';
export const PATCH_MARKER = 'core_patch';

/** `EVENT_TYPE_ACTIVITY_TASK_STARTED` → `ActivityTaskStarted`. */
export function eventTypeName(eventType: number): string {
  const name = proto.temporal.api.enums.v1.EventType[eventType] ?? `EVENT_TYPE_${eventType}`;
  return name
    .replace(/^EVENT_TYPE_/, '')
    .toLowerCase()
    .replace(/(^|_)([a-z0-9])/g, (_, __: string, letter: string) => letter.toUpperCase());
}

function epochMs(time: { seconds?: unknown; nanos?: number | null } | null | undefined): number {
  return Number(time?.seconds ?? 0) * 1000 + Math.floor((time?.nanos ?? 0) / 1e6);
}

function durationSeconds(duration: { seconds?: unknown; nanos?: number | null } | null | undefined): number {
  return Number(duration?.seconds ?? 0) + (duration?.nanos ?? 0) / 1e9;
}

/**
 * The marker data sdk-core writes for a local activity: JSON in the `data` detail (field names as serde writes them,
 * snake_case; camelCase accepted too).
 */
function localActivityData(event: ProtoEvent): { activityType?: string; attempt?: number } {
  const bytes = event.markerRecordedEventAttributes?.details?.['data']?.payloads?.[0]?.data;
  if (bytes == null) return {};
  try {
    const data = JSON.parse(Buffer.from(bytes).toString('utf8')) as Record<string, unknown>;
    const type = data['activity_type'] ?? data['activityType'];
    const attempt = data['attempt'];
    return {
      ...(typeof type === 'string' ? { activityType: type } : {}),
      ...(typeof attempt === 'number' ? { attempt } : {}),
    };
  } catch {
    return {};
  }
}

/** Flattens one run's events; activity types of started/closed events come from their scheduled event. */
export function toBenchEvents(events: readonly ProtoEvent[]): BenchEvent[] {
  const activityTypes = new Map<number, string>();
  return events.map((event) => {
    const id = Number(event.eventId ?? 0);
    const out: BenchEvent = {
      id,
      atMs: epochMs(event.eventTime),
      type: eventTypeName(event.eventType ?? 0),
      bytes: proto.temporal.api.history.v1.HistoryEvent.encode(event).finish().length,
    };
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled != null) {
      const type = scheduled.activityType?.name ?? '';
      activityTypes.set(id, type);
      out.activityType = type;
    }
    const closedFrom =
      event.activityTaskStartedEventAttributes?.scheduledEventId ??
      event.activityTaskCompletedEventAttributes?.scheduledEventId ??
      event.activityTaskFailedEventAttributes?.scheduledEventId ??
      event.activityTaskTimedOutEventAttributes?.scheduledEventId ??
      event.activityTaskCanceledEventAttributes?.scheduledEventId;
    if (closedFrom != null) out.activityType = activityTypes.get(Number(closedFrom)) ?? '?';
    const started = event.activityTaskStartedEventAttributes;
    if (started != null) {
      out.attempt = started.attempt ?? 1;
      out.identity = started.identity ?? '';
    }
    const taskStarted = event.workflowTaskStartedEventAttributes;
    if (taskStarted != null) out.identity = taskStarted.identity ?? '';
    const marker = event.markerRecordedEventAttributes;
    if (marker != null) {
      out.marker = marker.markerName ?? '';
      out.workflowTaskCompletedId = Number(marker.workflowTaskCompletedEventId ?? 0);
      if (out.marker === LOCAL_ACTIVITY_MARKER) Object.assign(out, localActivityData(event));
    }
    const timerStarted = event.timerStartedEventAttributes;
    if (timerStarted != null) {
      out.timer = `${timerStarted.timerId ?? '?'} (${durationSeconds(timerStarted.startToFireTimeout).toFixed(1)} s)`;
    }
    const timerId = event.timerFiredEventAttributes?.timerId ?? event.timerCanceledEventAttributes?.timerId;
    if (timerId != null) out.timer = timerId;
    const signal = event.workflowExecutionSignaledEventAttributes?.signalName;
    if (signal != null) out.signal = signal;
    const upsert = event.upsertWorkflowSearchAttributesEventAttributes;
    if (upsert != null) out.searchAttributes = Object.keys(upsert.searchAttributes?.indexedFields ?? {});
    const timeout = event.workflowTaskTimedOutEventAttributes?.timeoutType;
    if (timeout != null) out.cause = proto.temporal.api.enums.v1.TimeoutType[timeout] ?? String(timeout);
    const failedCause = event.workflowTaskFailedEventAttributes?.cause;
    if (failedCause != null) {
      out.cause = proto.temporal.api.enums.v1.WorkflowTaskFailedCause[failedCause] ?? String(failedCause);
    }
    return out;
  });
}

/**
 * Every run of one workflow, oldest first, found by walking back from the current run through each run's
 * `continuedExecutionRunId` (visibility may lag behind the newest runs).
 */
export async function workflowEvents(client: Client, workflowId: string): Promise<BenchEvent[][]> {
  const runs: BenchEvent[][] = [];
  let runId: string | undefined = (await client.workflow.getHandle(workflowId).describe()).runId;
  for (const seen = new Set<string>(); runId !== undefined && runId !== '' && !seen.has(runId);) {
    seen.add(runId);
    const history: proto.temporal.api.history.v1.IHistory = await client.workflow
      .getHandle(workflowId, runId)
      .fetchHistory();
    const events: ProtoEvent[] = history.events ?? [];
    runs.unshift(toBenchEvents(events));
    runId = events[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId ?? undefined;
  }
  return runs;
}
