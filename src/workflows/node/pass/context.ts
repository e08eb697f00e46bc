import { callsFailingRetryably } from '../../../ipam/index.js';
import type { DegradationSetting } from '../../../ipam/index.js';
import type { NodeIpamSettings } from '../../messages.js';
import { newCarriedState } from '../memory/carried-state.js';
import type { CarriedState } from '../memory/carried-state.js';
import { EniOperator } from '../act/eni-operator.js';
import { GcRequests } from '../memory/gc-requests.js';
import { NodeDegradation } from '../memory/degradation.js';
import { NodeNotices } from '../tell/notices.js';
import { NodeReader, writeStatusKeepingEnis } from '../act/io.js';
import type { StatusWrite } from '../act/io.js';
import { initialPassSummary } from '../tell/state-view.js';
import type { PassSummary } from '../tell/state-view.js';
import { OperationTracker } from '../act/operation-tracker.js';
import { PassRecord } from '../memory/pass-record.js';
import { PassSchedule } from '../memory/pass-schedule.js';
import { RunningPass } from '../memory/running-pass.js';

/** Why a pass asks the next one for an OpenAPI resync. */
export type ResyncReason = 'signal' | 'quotaExceeded' | 'statusWriteFailed';

/**
 * What every step of a node's pass works with: the node, its settings, the carried state and the run-local parts
 * (the pass record, notices, schedule, GC requests, degradation, operation tracker). Steps take the context and the
 * few values of their own; each carried field a step changes is changed through the part that owns it, and
 * `needResync` only here ({@link askResync}, {@link resyncServed}).
 */
export class PassContext {
  readonly nodeName: string;
  readonly settings: NodeIpamSettings;
  readonly state: CarriedState;
  readonly reader: NodeReader;
  readonly record: PassRecord;
  readonly notices: NodeNotices;
  /** Scheduling facts of the last pass: GC work left, the due OpenAPI sync, its failure types, a stuck wait. */
  readonly schedule = new PassSchedule();
  readonly gc = new GcRequests();
  /** The cluster's degradation switch as this node was last told (carried). */
  readonly degradation: NodeDegradation;
  readonly tracker = new OperationTracker();
  /** What the last pass found, for the `state` query. */
  summary: PassSummary = initialPassSummary();
  /** The one record of "a pass is running" (the `state` query's `passRunning` and `degradation.passRunningAt`). */
  private readonly running = new RunningPass();
  /** Set when a status write found the CR gone (404): the pass ends by releasing the node's ENIs. */
  crVanished = false;
  /** Set by a `resync` signal: the next vSwitch read asks the cloud again, lifting blocks it no longer backs. */
  vSwitchRefreshRequested = false;

  constructor(input: {
    nodeName: string;
    settings: NodeIpamSettings;
    carried?: CarriedState;
    degradation?: DegradationSetting;
  }) {
    this.nodeName = input.nodeName;
    this.settings = input.settings;
    this.state = input.carried === undefined ? newCarriedState() : { ...input.carried };
    this.degradation = new NodeDegradation(this.state, this.running);
    // A start's setting counts only if newer than the carried one (a continue-as-new hands on its own).
    if (input.degradation !== undefined) this.degradation.offer(input.degradation);
    this.reader = new NodeReader(input.nodeName);
    this.record = new PassRecord(this.state);
    this.notices = new NodeNotices({
      nodeName: input.nodeName,
      settings: this.settings,
      memory: this.state,
      onFailure: (failed) => {
        this.record.record(failed, { ledger: false });
      },
    });
  }

  get passRunning(): boolean {
    return this.running.running;
  }

  /** A pass begins: it acts at the degradation level of now, and at any it takes gates at later. */
  passStarting(): void {
    this.running.start(this.degradation.level);
  }

  passEnded(): void {
    this.running.end();
  }

  /** The next pass lists the instance's ENIs (OpenAPI sync) whatever the CR's sync times say. */
  askResync(why: ResyncReason): void {
    this.state.needResync = true;
    // A signal also says the worker's vSwitch cache may be stale; a refusal or a failed write says nothing of it.
    if (why === 'signal') this.vSwitchRefreshRequested = true;
  }

  /** The OpenAPI sync ran: the resync asked for is done. */
  resyncServed(): void {
    this.state.needResync = false;
  }

  /** Shows what the pass found in the `state` query at once, while its notices are still being written. */
  showSummary(summary: Partial<PassSummary>): void {
    this.summary = { ...this.summary, ...summary };
  }

  /** The operator a ready pass acts through: it holds releases back as the degradation is when it is made. */
  operator(instanceId: string): EniOperator {
    return new EniOperator({
      nodeName: this.nodeName,
      instanceId,
      clusterId: this.settings.clusterId,
      tracker: this.tracker,
      holdReleases: !this.degradation.gates().release,
      failingCalls: callsFailingRetryably(this.state.failures ?? {}),
    });
  }

  /** Writes the status when it changed; false when the write failed (a resync is then asked for). */
  async writeStatus(write: StatusWrite): Promise<boolean> {
    const result = await writeStatusKeepingEnis({
      ...write,
      nodeName: this.nodeName,
      state: this.state,
      record: this.record,
    });
    if (result === 'failed') this.askResync('statusWriteFailed');
    if (result === 'gone') this.crVanished = true;
    return result !== 'failed';
  }
}
