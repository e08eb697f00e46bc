import {
  callsFailingRetryably,
  failureRepeatsSince,
  failureTypesSince,
  hasFailingCalls,
  mergeSeenVersions,
} from '../../ipam/index.js';
import type { DegradationSetting, NetworkInterfaces, NextPassReason, NodeCr, ReadyNodeCr } from '../../ipam/index.js';
import type { NodeSnapshot } from '../../activities/index.js';
import type { IpamState, NodeIpamSettings, NodeWorkflowState, ReconcileReason } from '../messages.js';
import { carryState, newCarriedState } from './carried-state.js';
import type { CarriedState } from './carried-state.js';
import { EniOperator } from './eni-operator.js';
import { GcRequests } from './gc-requests.js';
import { NodeDegradation } from './node-degradation.js';
import type { DegradationChange } from './node-degradation.js';
import { NodeNotices } from './node-notices.js';
import { NodeReader, writeStatusKeepingEnis } from './node-io.js';
import type { StatusWrite } from './node-io.js';
import { NodeDeparture } from './node-deletion.js';
import type { Departure } from './node-deletion.js';
import { buildNodeView, initialPassSummary } from './node-view.js';
import type { PassSummary } from './node-view.js';
import { OperationTracker } from './operation-tracker.js';
import { PassRecord } from './pass-record.js';
import type { PassEnd } from './pass-record.js';
import { PassSchedule } from './pass-schedule.js';
import { settlePrefixMode, withPrefixMode } from './prefix-pass.js';
import { readyPass } from './ready-pass.js';
import { SeenSignals } from './seen-signals.js';
import { stepFailure } from './step-failure.js';

/**
 * One node's reconcile passes. A pass reads the node, plans with the pure core, acts through the {@link EniOperator},
 * folds the outcomes in plan order, writes the status, then settles the failure ledger and tells what it found
 * ({@link NodeNotices}). What outlives a run is the {@link CarriedState}.
 */
export class NodeReconciler {
  readonly nodeName: string;
  readonly settings: NodeIpamSettings;
  private readonly state: CarriedState;
  private readonly reader: NodeReader;
  private readonly notices: NodeNotices;
  private readonly tracker = new OperationTracker();
  private summary: PassSummary = initialPassSummary();
  /** Scheduling facts of the last pass: GC work left, the due OpenAPI sync, its failure types, a stuck wait. */
  private readonly schedule = new PassSchedule();
  /** Set by a `resync` signal: the next vSwitch read asks the cloud again, lifting blocks it no longer backs. */
  private vSwitchRefreshRequested = false;
  private readonly passRecord: PassRecord;
  readonly gc = new GcRequests();
  /** The cluster's degradation switch as this node was last told (carried). */
  readonly degradation: NodeDegradation;
  /** True once the node's CR is gone and what eniflow made for the node released: the workflow then ends. */
  finished = false;
  /** Set when a status write found the CR gone (404): the pass ends by releasing the node's ENIs. */
  private crVanished = false;
  /** Set by signals and updates; cleared when a pass starts. */
  dirty = true;
  private readonly seenSignals = new SeenSignals();
  private readonly departure: NodeDeparture;
  passesThisRun = 0;
  private passRunning = false;

  constructor(input: {
    nodeName: string;
    settings: NodeIpamSettings;
    carried?: CarriedState;
    degradation?: DegradationSetting;
  }) {
    this.nodeName = input.nodeName;
    this.settings = input.settings;
    this.state = input.carried === undefined ? newCarriedState() : { ...input.carried };
    this.degradation = new NodeDegradation(this.state);
    // A start's setting counts only if newer than the carried one (a continue-as-new hands on its own).
    if (input.degradation !== undefined) this.degradation.offer(input.degradation);
    this.reader = new NodeReader(input.nodeName);
    this.passRecord = new PassRecord(this.state);
    this.notices = new NodeNotices({
      nodeName: input.nodeName,
      settings: this.settings,
      memory: this.state,
      onFailure: (failed) => {
        this.passRecord.record(failed, { ledger: false });
      },
    });
    const { nodeName, settings, state, tracker, passRecord: record, degradation, notices } = this;
    this.departure = new NodeDeparture({ nodeName, settings, state, tracker, record, degradation, notices });
  }

  carry(): CarriedState {
    return carryState(this.state);
  }

  /** Called when a cloud operation of a pass fails, as soon as the workflow learns it. */
  onCallFailed(listener: () => void): void {
    this.tracker.onFailure(listener);
  }

  /** Whether a signal or an update asked for a pass since the current one started. */
  changedSincePassStart(): boolean {
    return this.dirty;
  }

  noteSignal(reason?: ReconcileReason): void {
    if (reason?.seen !== undefined) this.state.seenVersions = mergeSeenVersions(this.state.seenVersions, reason.seen);
    // The worker saw a vSwitch gain addresses; this worker's cache may still hold the block, so ask the cloud.
    if ((reason?.vSwitchesGained?.length ?? 0) > 0) this.vSwitchRefreshRequested = true;
    if (reason?.degradation !== undefined) this.setDegradation(reason.degradation);
    this.state.signalsReceived += 1;
    if (this.seenSignals.asksForPass({ reason, readSeen: this.reader.seen, leftWork: this.leftWork() })) {
      this.dirty = true;
    }
  }

  /**
   * The cluster's degradation setting: a change of level wakes a pass (its Event, and what it opened: GC held back
   * is asked for now); the same level again, or an older setting, changes nothing and wakes nothing.
   */
  setDegradation(setting: DegradationSetting): DegradationChange {
    const change = this.degradation.offer(setting);
    // Tightening wakes nothing (the next pass that has work meets the gate); a lift wakes a node only if it held
    // something back, with the GC it held back asked for.
    if (!change.changed || change.opened.length === 0 || !this.degradation.heldBackSinceLift) return change;
    if (change.opened.includes('release')) this.requestGc();
    this.dirty = true;
    return change;
  }

  requestResync(): void {
    this.state.needResync = true;
    this.vSwitchRefreshRequested = true;
    this.dirty = true;
  }

  requestGc(): number {
    this.dirty = true;
    return this.gc.request();
  }

  /** When the next pass is due without any signal, and why. */
  nextPass(): { atMs: number; reason: NextPassReason } {
    return this.schedule.next({
      nodeName: this.nodeName,
      settings: this.settings,
      state: this.state,
      lastPassEndMs: this.summary.lastPassEndMs ?? 0,
    });
  }

  lastPassEndMs(): number {
    return this.summary.lastPassEndMs ?? 0;
  }

  /** Whether the last pass failed or left pods waiting: a signal with nothing new then still asks for a pass. */
  private leftWork(): boolean {
    return this.state.failureStreak > 0 || this.summary.pods.pending > 0;
  }

  /** Passes failed in a row: while above 0 the node waits out its failure backoff between passes. */
  failedPasses(): number {
    return this.state.failureStreak;
  }

  currentIpamState(): IpamState {
    return this.summary.ipamState;
  }

  view(ignoredSignals: readonly { name: string; at: string }[] = []): NodeWorkflowState {
    const view = buildNodeView({
      nodeName: this.nodeName,
      summary: this.summary,
      state: this.state,
      pendingOperations: this.tracker.list(),
      nextPass: this.summary.lastPassEndMs === undefined ? undefined : this.nextPass(),
      ignoredSignals,
    });
    if (this.passRunning) view.passRunning = true;
    const degradation = this.degradation.view();
    if (degradation !== undefined) view.degradation = degradation;
    return view;
  }

  /** One reconcile pass: read, plan with the core, act through activities, fold, write, then tell. */
  async pass(): Promise<void> {
    this.state.reconcileCount += 1;
    this.passesThisRun += 1;
    const record = this.passRecord;
    record.begin();
    this.schedule.passStarting();
    const callsFailedBefore = hasFailingCalls(this.state.failures ?? {}) || this.notices.showsCallsFailing();
    this.notices.passStarting({ callsFailing: callsFailedBefore });
    this.gc.passStarting();
    this.seenSignals.passStarting();
    this.degradation.passStarting();
    this.passRunning = true;
    let end: PassEnd | undefined;
    try {
      end = await this.reconcile();
    } catch (error) {
      this.summary.ipamState = 'Error';
      record.record({ operation: 'reconcile', failure: stepFailure(error) }, { ledger: true });
    }
    this.degradation.passEnded();
    this.passRunning = false;
    const failed = end?.failed ?? true;
    record.settle(end?.scope ?? 'threw');
    // The condition follows the ledger after every completed pass (a no-op unless it changes or is due a heartbeat).
    if (end?.scope === 'completed' && !this.finished) {
      const ledger = this.state.failures ?? {};
      await this.notices.operationHealth({
        ledger,
        recovered: callsFailedBefore && !hasFailingCalls(ledger) && record.succeededCalls > 0,
        pods: { ...this.summary.pods, served: this.summary.podsServed ?? 0 },
      });
    }
    this.state.failureStreak = failed ? this.state.failureStreak + 1 : 0;
    this.schedule.passEnded({
      failed,
      failureTypes: failed ? failureTypesSince(this.state.failures ?? {}, record.startMs) : [],
      failureRepeats: failed ? failureRepeatsSince(this.state.failures ?? {}, record.startMs) : 0,
      failureStreak: this.state.failureStreak,
    });
    this.summary.stuck = this.schedule.stuck;
    this.summary.lastPassEndMs = Date.now();
    // An update asking for GC is answered when the pass ends, after the status write (or when it was skipped).
    if (this.gc.passEnded()) this.dirty = true;
    if (this.seenSignals.passEnded(this.leftWork())) this.dirty = true;
    if (failed) record.logFailed({ nodeName: this.nodeName, ipamState: this.summary.ipamState });
  }

  /** The gate: a pass acts on the cloud only for a valid, ready node whose daemon has written its spec. */
  private async reconcile(): Promise<PassEnd> {
    const snapshot = await this.reader.read(this.state.seenVersions);
    this.notices.readObjects(snapshot);
    delete this.summary.skipReason;
    delete this.summary.podsServed;
    const cr = snapshot.cr;
    if (cr === undefined) return this.cleanUpVanishedNode();
    // The first pass after a lift says so (a held-back pass says it at its end, naming what it held back).
    if (this.degradation.level === 'off') await this.notices.degradationChanged(this.degradation.owedNotice([]));
    const validation = cr.validation;
    if (!validation.ok) {
      await this.notices.invalidSpec(validation.problems);
      return this.stop('InvalidSpec', validation.problems.map((problem) => problem.message).join('; '));
    }
    if (cr.isDeleting) return this.cleanUpDeletedNode(validation.node);
    if (validation.readiness === 'daemonNotReady') {
      await this.notices.daemonNotReady();
      return this.stop('WaitingForDaemon', 'Terway daemon has not written spec.eni and spec.pool yet');
    }
    this.notices.daemonReady();
    if (validation.isBlocked) {
      await this.notices.invalidSpec(validation.problems);
      const blocking = validation.problems.filter((problem) => problem.severity === 'blocking');
      return this.stop('InvalidSpec', blocking.map((problem) => problem.message).join('; '));
    }
    await this.notices.validSpec(validation.problems);
    const node = validation.node;
    const crMode = (node.metadata.labels?.['k8s.aliyun.com/exclusive-mode-eni-type'] ?? 'default').toLowerCase();
    if (crMode === 'enionly' || snapshot.coreNode?.exclusiveEniMode === 'enionly') {
      return this.stop('ExclusiveEniMode', 'the node uses exclusive ENI mode');
    }
    if (snapshot.coreNode?.isReady !== true) {
      await this.notices.podsOfUnreadyNode({
        pods: snapshot.pods,
        enis: this.startingEnis(node),
        eniSpec: node.spec.eni,
        ledger: this.state.failures ?? {},
      });
      return this.stop('NodeNotReady', 'the core Node is missing or not Ready');
    }
    return this.reconcileReadyNode({ node, snapshot });
  }

  private stop(state: IpamState, reason: string): PassEnd {
    this.summary.ipamState = state;
    this.summary.skipReason = reason;
    return { failed: false, scope: 'stoppedBeforeCloud' };
  }

  /**
   * A ready node: its mode settled (fixed at the first pass, see `settlePrefixMode`), then `readyPass` in that mode:
   * read the cloud side → plan → act → fold → write → settle the ledger → tell.
   */
  private async reconcileReadyNode(input: { node: ReadyNodeCr; snapshot: NodeSnapshot }): Promise<PassEnd> {
    const { node, snapshot } = input;
    const mode = settlePrefixMode({ state: this.state, spec: node.spec });
    if (mode.ignoredChange !== undefined) {
      await this.notices.prefixModeChangeIgnored({ prefixMode: mode.prefixMode, asked: mode.ignoredChange });
    }
    const spec = withPrefixMode(node.spec, mode.prefixMode);
    const now = Date.now();
    const instanceId = spec.nodeMetadata?.instanceID ?? '';
    this.summary.instanceId = instanceId;
    if (instanceId !== '') this.state.instanceId = instanceId;
    const result = await readyPass({
      nodeName: this.nodeName,
      node,
      snapshot,
      spec,
      prefixMode: mode.prefixMode,
      instanceId,
      enis: this.startingEnis(node),
      nowMs: now,
      vSwitchRefresh: {
        requested: this.vSwitchRefreshRequested || this.state.needResync,
        served: () => (this.vSwitchRefreshRequested = false),
      },
      vSwitchPeek: this.reader.vSwitchPeek,
      settings: this.settings,
      state: this.state,
      newOperator: () => this.newOperator(instanceId),
      tools: {
        record: this.passRecord,
        gc: this.gc,
        schedule: this.schedule,
        notices: this.notices,
        degradation: this.degradation,
        writeStatus: (write) => this.writeStatus(write),
        showSummary: (summary) => {
          this.summary = { ...this.summary, ...summary };
        },
      },
    });
    this.summary = { ...this.summary, ...result.summary };
    // The CR went while the pass acted: what the pass made would be listed nowhere, so it is released now.
    if (this.crVanished) return this.cleanUpVanishedNode();
    return { failed: result.failed, scope: 'completed' };
  }

  private newOperator(instanceId: string): EniOperator {
    return new EniOperator({
      nodeName: this.nodeName,
      instanceId,
      clusterId: this.settings.clusterId,
      tracker: this.tracker,
      holdReleases: !this.degradation.gates().release,
      failingCalls: callsFailingRetryably(this.state.failures ?? {}),
    });
  }

  private async writeStatus(input: StatusWrite) {
    const result = await writeStatusKeepingEnis({
      ...input,
      nodeName: this.nodeName,
      state: this.state,
      record: this.passRecord,
    });
    if (result === 'gone') this.crVanished = true;
    return result !== 'failed';
  }

  /** The CR is being deleted: once its ENIs are released the finalizer lets it go (see {@link NodeDeparture}). */
  private async cleanUpDeletedNode(node: NodeCr): Promise<PassEnd> {
    this.summary.ipamState = 'Deleting';
    const departure = await this.departure.deleted({
      node,
      enis: this.startingEnis(node),
      writeStatus: (input) => this.writeStatus(input),
      isGone: () => this.crVanished,
    });
    return departure === 'gone' ? this.cleanUpVanishedNode() : this.departed(departure);
  }

  /** The CR is gone without the deletion path: what eniflow made for the node is released, then the workflow ends. */
  private async cleanUpVanishedNode(): Promise<PassEnd> {
    this.crVanished = false;
    this.summary.ipamState = 'Deleting';
    return this.departed(await this.departure.vanished());
  }

  /** What a departure shows; once the node's ENIs are released, the workflow ends. */
  private departed(departure: Departure): PassEnd {
    if (departure.released) this.finished = true;
    this.summary.ipamState = departure.ipamState;
    if (departure.skipReason !== undefined) this.summary.skipReason = departure.skipReason;
    return departure.end;
  }

  /** ENIs to start from: the CR's, unless the workflow knows better because its last status write did not land. */
  private startingEnis(node: NodeCr): NetworkInterfaces {
    return this.state.unwrittenEnis ?? node.status?.networkInterfaces ?? {};
  }
}
