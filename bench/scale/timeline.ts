/**
 * One node's burst, event by event: its pods' creation and service next to every event of its workflow history, in
 * seconds from the burst's start. Reading it shows where a pod's wait goes: the watcher's signal, the workflow task
 * that takes it, the read, the ENI create and attach with their polls, the status write.
 */
import type { Client } from '@temporalio/client';

import { nodeWorkflowId } from '../../src/shared/workflow-ids.js';
import { LOCAL_ACTIVITY_MARKER, workflowEvents } from './history-events.js';
import type { BenchEvent } from './history-events.js';

/** A pod of the node, times in epoch milliseconds. */
export interface TimelinePod {
  name: string;
  createdMs: number;
  servedMs?: number;
}

export interface TimelineEntry {
  /** From the burst's start (the first pod's creation). */
  offsetMs: number;
  what: string;
  detail: string;
}

export interface NodeTimeline {
  node: string;
  /** Epoch milliseconds of the burst's start, the zero of the offsets. */
  originMs: number;
  entries: TimelineEntry[];
}

/** What a history event adds to its type: the activity, marker, timer or signal, and the attempt of a retry. */
function eventDetail(event: BenchEvent, replicaOf: (identity: string) => string | undefined): string {
  const parts: string[] = [];
  if (event.marker !== undefined) {
    parts.push(event.marker === LOCAL_ACTIVITY_MARKER ? `local activity ${event.activityType ?? '?'}` : event.marker);
  } else if (event.activityType !== undefined) {
    parts.push(event.activityType);
  }
  if (event.attempt !== undefined && (event.type === 'ActivityTaskStarted' || event.attempt > 1)) {
    parts.push(`attempt ${event.attempt}`);
  }
  if (event.timer !== undefined) parts.push(`timer ${event.timer}`);
  if (event.signal !== undefined) parts.push(event.signal);
  if (event.searchAttributes !== undefined) parts.push(event.searchAttributes.join(', '));
  if (event.cause !== undefined) parts.push(event.cause);
  if (event.identity !== undefined) {
    const replica = replicaOf(event.identity);
    if (replica !== undefined) parts.push(replica);
  }
  return parts.join(', ');
}

/**
 * The node's pods and every history event in [originMs, endMs], by time (pods first on a tie: a pod's creation
 * precedes whatever it causes). Pod names lose their `<node>-` prefix.
 */
export function nodeTimeline(input: {
  node: string;
  originMs: number;
  endMs: number;
  pods: readonly TimelinePod[];
  events: readonly BenchEvent[];
  /** Names the worker replica behind an identity, when there are several. */
  replicaOf?: (identity: string) => string | undefined;
}): NodeTimeline {
  const { node, originMs, endMs } = input;
  const replicaOf = input.replicaOf ?? (() => undefined);
  const short = (pod: string): string => (pod.startsWith(`${node}-`) ? pod.slice(node.length + 1) : pod);
  const inWindow = (atMs: number): boolean => atMs >= originMs && atMs <= endMs;
  const podEntries: TimelineEntry[] = input.pods.flatMap((pod) => [
    ...(inWindow(pod.createdMs)
      ? [{ offsetMs: pod.createdMs - originMs, what: 'pod created', detail: short(pod.name) }]
      : []),
    ...(pod.servedMs !== undefined && inWindow(pod.servedMs)
      ? [
          {
            offsetMs: pod.servedMs - originMs,
            what: 'pod served',
            detail: `${short(pod.name)} (waited ${((pod.servedMs - pod.createdMs) / 1000).toFixed(2)} s)`,
          },
        ]
      : []),
  ]);
  const eventEntries: TimelineEntry[] = input.events
    .filter((event) => inWindow(event.atMs))
    .map((event) => ({ offsetMs: event.atMs - originMs, what: event.type, detail: eventDetail(event, replicaOf) }));
  const entries = [...podEntries, ...eventEntries]
    .map((entry, order) => ({ entry, order }))
    .sort((a, b) => a.entry.offsetMs - b.entry.offsetMs || a.order - b.order)
    .map(({ entry }) => entry);
  return { node, originMs, entries };
}

/** The timeline as aligned text lines: `+seconds  what  detail`. */
export function formatTimeline(timeline: NodeTimeline): string[] {
  const offsets = timeline.entries.map((entry) => `+${(entry.offsetMs / 1000).toFixed(3)}`);
  const offsetWidth = Math.max(0, ...offsets.map((offset) => offset.length));
  const whatWidth = Math.max(0, ...timeline.entries.map((entry) => entry.what.length));
  return [
    `${timeline.node}: seconds from the burst's first pod creation; its pods and its workflow's history events`,
    ...timeline.entries.map((entry, index) =>
      `${(offsets[index] ?? '').padStart(offsetWidth)}  ${entry.what.padEnd(whatWidth)}  ${entry.detail}`.trimEnd(),
    ),
  ];
}

/** Fetches the node workflow's history (every run) and builds its timeline of the window. */
export async function fetchNodeTimeline(input: {
  client: Client;
  node: string;
  originMs: number;
  endMs: number;
  pods: readonly TimelinePod[];
  replicaOf?: (identity: string) => string | undefined;
}): Promise<NodeTimeline> {
  const runs = await workflowEvents(input.client, nodeWorkflowId(input.node));
  return nodeTimeline({ ...input, events: runs.flat() });
}
