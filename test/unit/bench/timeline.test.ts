/** The scale benchmark's node timeline: a node's pods and its workflow's history events, by time from the burst. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import proto from '@temporalio/proto';

import { eventTypeName, toBenchEvents } from '../../../bench/scale/history-events.js';
import type { BenchEvent } from '../../../bench/scale/history-events.js';
import { formatTimeline, nodeTimeline } from '../../../bench/scale/timeline.js';

const EventType = proto.temporal.api.enums.v1.EventType;
const ORIGIN = 1_000_000;
const NODE = 'bench-node-0001';

describe('nodeTimeline', () => {
  const events: BenchEvent[] = [
    { id: 1, atMs: ORIGIN - 5_000, type: 'WorkflowExecutionStarted' },
    { id: 20, atMs: ORIGIN + 150, type: 'WorkflowExecutionSignaled', signal: 'reconcile' },
    { id: 21, atMs: ORIGIN + 160, type: 'WorkflowTaskStarted', identity: '111@host' },
    { id: 22, atMs: ORIGIN + 300, type: 'MarkerRecorded', marker: 'core_local_activity', activityType: 'readNode' },
    { id: 23, atMs: ORIGIN + 310, type: 'ActivityTaskScheduled', activityType: 'createNetworkInterface' },
    {
      id: 24,
      atMs: ORIGIN + 2_400,
      type: 'ActivityTaskStarted',
      activityType: 'createNetworkInterface',
      attempt: 3,
      identity: '222@host',
    },
    { id: 25, atMs: ORIGIN + 2_500, type: 'TimerStarted', timer: '7 (2.0 s)' },
    { id: 26, atMs: ORIGIN + 9_000, type: 'TimerFired', timer: '7' },
  ];
  const timeline = nodeTimeline({
    node: NODE,
    originMs: ORIGIN,
    endMs: ORIGIN + 5_000,
    pods: [
      { name: `${NODE}-p000`, createdMs: ORIGIN, servedMs: ORIGIN + 3_210 },
      { name: `${NODE}-p001`, createdMs: ORIGIN + 150 },
    ],
    events,
    replicaOf: (identity) => (identity === '222@host' ? 'worker-2' : undefined),
  });

  it('keeps the window only, ordered by time, pods before events on a tie', () => {
    assert.deepEqual(
      timeline.entries.map((entry) => [entry.offsetMs, entry.what]),
      [
        [0, 'pod created'],
        [150, 'pod created'],
        [150, 'WorkflowExecutionSignaled'],
        [160, 'WorkflowTaskStarted'],
        [300, 'MarkerRecorded'],
        [310, 'ActivityTaskScheduled'],
        [2_400, 'ActivityTaskStarted'],
        [2_500, 'TimerStarted'],
        [3_210, 'pod served'],
      ],
    );
  });

  it('names the pod, the signal, the local activity, the attempt, the replica and the timer', () => {
    const details = timeline.entries.map((entry) => entry.detail);
    assert.deepEqual(details, [
      'p000',
      'p001',
      'reconcile',
      '',
      'local activity readNode',
      'createNetworkInterface',
      'createNetworkInterface, attempt 3, worker-2',
      'timer 7 (2.0 s)',
      'p000 (waited 3.21 s)',
    ]);
  });

  it('formats aligned lines in seconds', () => {
    const lines = formatTimeline(timeline);
    assert.equal(lines.length, 1 + timeline.entries.length);
    assert.match(lines[0] ?? '', /^bench-node-0001: /);
    assert.equal(lines[1], '+0.000  pod created                p000');
    assert.equal(lines[7], '+2.400  ActivityTaskStarted        createNetworkInterface, attempt 3, worker-2');
    assert.equal(lines[4], '+0.160  WorkflowTaskStarted');
  });
});

describe('toBenchEvents', () => {
  it('resolves activity types through the scheduled event and reads local-activity markers', () => {
    const time = (ms: number): { seconds: number; nanos: number } => ({
      seconds: Math.floor(ms / 1000),
      nanos: (ms % 1000) * 1e6,
    });
    const marker = Buffer.from(JSON.stringify({ seq: 1, attempt: 2, activity_type: 'writeStatus' }));
    // fromObject turns the plain numbers into the Longs the client hands out.
    const fromObject = (object: Record<string, unknown>): proto.temporal.api.history.v1.IHistoryEvent =>
      proto.temporal.api.history.v1.HistoryEvent.fromObject(object);
    const events = toBenchEvents(
      [
        {
          eventId: 5,
          eventTime: time(1_500),
          eventType: EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED,
          activityTaskScheduledEventAttributes: { activityType: { name: 'attachNetworkInterface' } },
        },
        {
          eventId: 6,
          eventTime: time(1_750),
          eventType: EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED,
          activityTaskStartedEventAttributes: { scheduledEventId: 5, attempt: 4, identity: '9@h' },
        },
        {
          eventId: 9,
          eventTime: time(2_000),
          eventType: EventType.EVENT_TYPE_MARKER_RECORDED,
          markerRecordedEventAttributes: {
            markerName: 'core_local_activity',
            workflowTaskCompletedEventId: 8,
            details: { data: { payloads: [{ data: marker }] } },
          },
        },
      ].map(fromObject),
    );
    assert.ok(events.every((event) => (event.bytes ?? 0) > 0));
    assert.deepEqual(
      events.map((event) => {
        const copy = { ...event };
        delete copy.bytes;
        return copy;
      }),
      [
        { id: 5, atMs: 1_500, type: 'ActivityTaskScheduled', activityType: 'attachNetworkInterface' },
        {
          id: 6,
          atMs: 1_750,
          type: 'ActivityTaskStarted',
          activityType: 'attachNetworkInterface',
          attempt: 4,
          identity: '9@h',
        },
        {
          id: 9,
          atMs: 2_000,
          type: 'MarkerRecorded',
          marker: 'core_local_activity',
          workflowTaskCompletedId: 8,
          activityType: 'writeStatus',
          attempt: 2,
        },
      ],
    );
  });

  it('names event types in PascalCase', () => {
    assert.equal(eventTypeName(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED), 'WorkflowExecutionSignaled');
    assert.equal(
      eventTypeName(EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES),
      'UpsertWorkflowSearchAttributes',
    );
  });
});
