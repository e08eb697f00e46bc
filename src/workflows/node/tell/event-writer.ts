import { admitEvents, eventKey } from '../../../ipam/index.js';
import type { NodeEventReason, PodEventReason } from '../../../ipam/index.js';
import type { Activities, NodeSnapshot } from '../../../activities/index.js';
import { kubeNotice } from '../act/activities.js';
import type { CarriedState } from '../memory/carried-state.js';
import { failureOf } from '../memory/step-failure.js';
import type { StepFailure } from '../memory/step-failure.js';

/**
 * The most Events in one `recordEvents` activity: with the activity's 4 writes at a time this stays well inside its
 * 15 s timeout, and a node with more waiting pods pays one activity per this many, not one per pod.
 */
export const EVENTS_PER_BATCH = 50;

interface EventText {
  message: string;
  /** One Event per series: repeats update it (its count grows) instead of adding one. Defaults to the message. */
  series?: string;
}

/**
 * One Event: its reason's catalogue entry (event-reasons.ts) gives it its reason and type, and says what it may be
 * written on, so a node reason cannot go on a pod, nor a pod reason on the node.
 */
export type EventInput =
  | (EventText & { reason: NodeEventReason; pod?: undefined })
  | (EventText & { reason: PodEventReason; pod: { namespace: string; name: string; uid?: string } });

type EventRequest = Parameters<Activities['recordEvent']>[0];

/**
 * Writes a node's Events: each series at most once per `eventRepeatMs` (the times are carried, so a node stuck for
 * hours does not repeat itself on every pass), node Events on the CR and on the core Node. A list of Events (the
 * waiting pods of a pass) goes out as batches of one activity each. Best effort: what cannot be written is reported
 * through `onFailure` and the pass goes on.
 */
export class EventWriter {
  private readonly nodeName: string;
  private readonly repeatMs: number;
  private readonly memory: Pick<CarriedState, 'eventTimes'>;
  private readonly onFailure: (failed: StepFailure) => void;
  private coreNode: NodeSnapshot['coreNode'];
  private crUid: string | undefined;

  constructor(input: {
    nodeName: string;
    repeatMs: number;
    memory: Pick<CarriedState, 'eventTimes'>;
    onFailure: (failed: StepFailure) => void;
  }) {
    this.nodeName = input.nodeName;
    this.repeatMs = input.repeatMs;
    this.memory = input.memory;
    this.onFailure = input.onFailure;
  }

  /** What the pass read: node Events go on the CR (by uid) and on the core Node too. */
  readObjects(snapshot: Pick<NodeSnapshot, 'cr' | 'coreNode'>): void {
    this.coreNode = snapshot.coreNode;
    this.crUid = snapshot.cr?.uid;
  }

  /** One Event, in an activity of its own. */
  async event(input: EventInput): Promise<void> {
    const [request] = this.admit([input]);
    if (request === undefined) return;
    try {
      await kubeNotice.recordEvent(request);
    } catch (error) {
      this.onFailure({ operation: 'recordEvent', failure: failureOf(error) });
    }
  }

  /** Several Events: those admitted, in batches of {@link EVENTS_PER_BATCH}, one activity per batch. */
  async events(inputs: readonly EventInput[]): Promise<void> {
    const requests = this.admit(inputs);
    for (let start = 0; start < requests.length; start += EVENTS_PER_BATCH) {
      const batch = requests.slice(start, start + EVENTS_PER_BATCH);
      try {
        const { failed } = await kubeNotice.recordEvents({ events: batch });
        // One line for the batch: 30 pods failing alike would otherwise push every other error out of `lastErrors`.
        const first = failed[0];
        if (first !== undefined) {
          const others = failed.length > 1 ? ` (and ${failed.length - 1} more of ${batch.length})` : '';
          this.onFailure({
            operation: 'recordEvents',
            failure: { type: 'KubeEventNotWritten', message: `${first.reason}: ${first.message}${others}` },
          });
        }
      } catch (error) {
        this.onFailure({ operation: 'recordEvents', failure: failureOf(error) });
      }
    }
  }

  /**
   * The requests for the Events whose series may be written now, in input order, noted as written: one admission
   * for the whole list (a pass's waiting pods), so the carried record is copied and sorted once, not per Event.
   */
  private admit(inputs: readonly EventInput[]): EventRequest[] {
    if (inputs.length === 0) return [];
    const keyed = inputs.map((input) => {
      const series = input.series ?? input.message;
      const podId = input.pod === undefined ? undefined : `${input.pod.namespace}/${input.pod.name}`;
      return { input, series, key: eventKey({ podId, reason: input.reason.reason, series }) };
    });
    const admission = admitEvents({
      recent: this.memory.eventTimes,
      keys: keyed.map((entry) => entry.key),
      nowMs: Date.now(),
      repeatMs: this.repeatMs,
    });
    this.memory.eventTimes = admission.recent;
    return keyed.flatMap((entry, index) =>
      admission.admitted[index] === true ? [this.request(entry.input, entry.series)] : [],
    );
  }

  private request(input: EventInput, series: string): EventRequest {
    const uid = this.crUid === undefined || this.crUid === '' ? undefined : this.crUid;
    const core = this.coreNode;
    return {
      nodeName: this.nodeName,
      involved:
        input.pod === undefined
          ? {
              kind: 'Node',
              apiVersion: 'network.alibabacloud.com/v1beta1',
              name: this.nodeName,
              ...(uid === undefined ? {} : { uid }),
            }
          : {
              kind: 'Pod',
              apiVersion: 'v1',
              name: input.pod.name,
              namespace: input.pod.namespace,
              ...(input.pod.uid === undefined ? {} : { uid: input.pod.uid }),
            },
      type: input.reason.type,
      reason: input.reason.reason,
      message: input.message,
      series,
      ...(input.pod !== undefined || core === undefined ? {} : { coreNode: core.uid === '' ? {} : { uid: core.uid } }),
    };
  }
}
