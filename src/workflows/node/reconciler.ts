import { failureRepeatsSince, failureTypesSince, hasFailingCalls } from '../../ipam/index.js';
import type { DegradationSetting, NetworkInterfaces, NextPassReason, NodeCr, ReadyNodeCr } from '../../ipam/index.js';
import type { NodeSnapshot } from '../../activities/index.js';
import type { IpamState, NodeIpamSettings, NodeWorkflowState, ReconcileReason } from '../messages.js';
import { carryState, noteSeenVersions } from './memory/carried-state.js';
import type { CarriedState } from './memory/carried-state.js';
import type { GcRequests } from './memory/gc-requests.js';
import type { DegradationChange, NodeDegradation } from './memory/degradation.js';
import { NodeDeparture } from './pass/departure.js';
import type { Departure } from './pass/departure.js';
import { buildNodeView } from './tell/state-view.js';
import { PassContext } from './pass/context.js';
import type { PassEnd } from './memory/pass-record.js';
import { settlePrefixMode, withPrefixMode } from './pass/prefix-mode.js';
import { readyPass } from './pass/ready-pass.js';
import { SeenSignals } from './memory/seen-signals.js';
import { failureOf } from './memory/step-failure.js';

/**
 * One node's reconcile passes, and the gate in front of them. A pass reads the node, stops at the gate unless the node
 * is valid, ready and its daemon has written its spec, and otherwise runs the {@link readyPass}. Everything a pass
 * works with is its {@link PassContext}; what outlives a run is the {@link CarriedState}.
 */
export class NodeReconciler {
  private readonly ctx: PassContext;
  /** True once the node's CR is gone and what eniflow made for the node released: the workflow then ends. */
  finished = false;
  /** Set by signals and updates; cleared when a pass starts. */
  dirty = true;
  private readonly seenSignals = new SeenSignals();
  private readonly departure: NodeDeparture;
  passesThisRun = 0;

  constructor(input: {
    nodeName: string;
    settings: NodeIpamSettings;
    carried?: CarriedState;
    degradation?: DegradationSetting;
  }) {
    this.ctx = new PassContext(input);
    this.departure = new NodeDeparture(this.ctx);
  }

  get nodeName(): string {
    return this.ctx.nodeName;
  }

  get settings(): NodeIpamSettings {
    return this.ctx.settings;
  }

  get gc(): GcRequests {
    return this.ctx.gc;
  }

  get degradation(): NodeDegradation {
    return this.ctx.degradation;
  }

  carry(): CarriedState {
    return carryState(this.ctx.state);
  }

  /** Called when a cloud operation of a pass fails, as soon as the workflow learns it. */
  onCallFailed(listener: () => void): void {
    this.ctx.tracker.onFailure(listener);
  }

  /** Whether a signal or an update asked for a pass since the current one started. */
  changedSincePassStart(): boolean {
    return this.dirty;
  }

  noteSignal(reason?: ReconcileReason): void {
    const { state } = this.ctx;
    if (reason?.seen !== undefined) noteSeenVersions(state, reason.seen);
    // The worker saw a vSwitch gain addresses; this worker's cache may still hold the block, so ask the cloud.
    if ((reason?.vSwitchesGained?.length ?? 0) > 0) this.ctx.vSwitchRefreshRequested = true;
    if (reason?.degradation !== undefined) this.setDegradation(reason.degradation);
    state.signalsReceived += 1;
    if (this.seenSignals.asksForPass({ reason, readSeen: this.ctx.reader.seen, leftWork: this.leftWork() })) {
      this.dirty = true;
    }
  }

  /**
   * The cluster's degradation setting: a change of level wakes a pass (its Event, and what it opened: GC held back
   * is asked for now); the same level again, or an older setting, changes nothing and wakes nothing.
   */
  setDegradation(setting: DegradationSetting): DegradationChange {
    const { degradation } = this.ctx;
    const change = degradation.offer(setting);
    // Tightening wakes nothing (the next pass that has work meets the gate); a lift wakes a node only if it held
    // something back, with the GC it held back asked for.
    if (!change.changed || change.opened.length === 0 || !degradation.heldBackSinceLift) return change;
    if (change.opened.includes('release')) this.requestGc();
    this.dirty = true;
    return change;
  }

  requestResync(): void {
    this.ctx.askResync('signal');
    this.dirty = true;
  }

  requestGc(): number {
    this.dirty = true;
    return this.ctx.gc.request();
  }

  /** When the next pass is due without any signal, and why. */
  nextPass(): { atMs: number; reason: NextPassReason } {
    const { nodeName, settings, state, summary } = this.ctx;
    return this.ctx.schedule.next({ nodeName, settings, state, lastPassEndMs: summary.lastPassEndMs ?? 0 });
  }

  lastPassEndMs(): number {
    return this.ctx.summary.lastPassEndMs ?? 0;
  }

  /** Whether the last pass failed or left pods waiting: a signal with nothing new then still asks for a pass. */
  private leftWork(): boolean {
    return this.ctx.state.failureStreak > 0 || this.ctx.summary.pods.pending > 0;
  }

  /** Passes failed in a row: while above 0 the node waits out its failure backoff between passes. */
  failedPasses(): number {
    return this.ctx.state.failureStreak;
  }

  currentIpamState(): IpamState {
    return this.ctx.summary.ipamState;
  }

  view(ignoredSignals: readonly { name: string; at: string }[] = []): NodeWorkflowState {
    const { ctx } = this;
    const view = buildNodeView({
      nodeName: ctx.nodeName,
      summary: ctx.summary,
      state: ctx.state,
      pendingOperations: ctx.tracker.list(),
      nextPass: ctx.summary.lastPassEndMs === undefined ? undefined : this.nextPass(),
      ignoredSignals,
    });
    if (ctx.passRunning) view.passRunning = true;
    const degradation = ctx.degradation.view();
    if (degradation !== undefined) view.degradation = degradation;
    return view;
  }

  /** One reconcile pass: the gate, then the ready pass; the ledger settled once, the streak and schedule after. */
  async pass(): Promise<void> {
    const { ctx } = this;
    const { state, record, notices } = ctx;
    state.reconcileCount += 1;
    this.passesThisRun += 1;
    record.begin();
    ctx.schedule.passStarting();
    const callsFailedBefore = hasFailingCalls(state.failures ?? {}) || notices.showsCallsFailing();
    notices.passStarting({ callsFailing: callsFailedBefore });
    ctx.gc.passStarting();
    this.seenSignals.passStarting();
    ctx.passStarting();
    let end: PassEnd | undefined;
    try {
      end = await this.reconcile();
    } catch (error) {
      ctx.summary.ipamState = 'Error';
      record.record({ operation: 'reconcile', failure: failureOf(error) }, { ledger: true });
    }
    ctx.passEnded();
    const failed = end?.failed ?? true;
    // A ready pass settled the ledger in its ending (a later settle would change nothing).
    if (!record.settled) record.settle(end?.scope ?? 'threw');
    // The condition follows the ledger after every completed pass (a no-op unless it changes or is due a heartbeat).
    if (end?.scope === 'completed' && !this.finished) {
      const ledger = state.failures ?? {};
      await notices.operationHealth({
        ledger,
        recovered: callsFailedBefore && !hasFailingCalls(ledger) && record.succeededCalls > 0,
        pods: { ...ctx.summary.pods, served: ctx.summary.podsServed ?? 0 },
      });
    }
    state.failureStreak = failed ? state.failureStreak + 1 : 0;
    ctx.schedule.passEnded({
      failed,
      failureTypes: failed ? failureTypesSince(state.failures ?? {}, record.startMs) : [],
      failureRepeats: failed ? failureRepeatsSince(state.failures ?? {}, record.startMs) : 0,
      failureStreak: state.failureStreak,
    });
    ctx.summary.stuck = ctx.schedule.stuck;
    ctx.summary.lastPassEndMs = Date.now();
    // An update asking for GC is answered when the pass ends, after the status write (or when it was skipped).
    if (ctx.gc.passEnded()) this.dirty = true;
    if (this.seenSignals.passEnded(this.leftWork())) this.dirty = true;
    if (failed) record.logFailed({ nodeName: ctx.nodeName, ipamState: ctx.summary.ipamState });
  }

  /** The gate: a pass acts on the cloud only for a valid, ready node whose daemon has written its spec. */
  private async reconcile(): Promise<PassEnd> {
    const snapshot = await this.ctx.reader.read(this.ctx.state.seenVersions);
    this.ctx.notices.readObjects(snapshot);
    delete this.ctx.summary.skipReason;
    delete this.ctx.summary.podsServed;
    const cr = snapshot.cr;
    if (cr === undefined) return this.cleanUpVanishedNode();
    // The first pass after a lift says so (a held-back pass says it at its end, naming what it held back).
    const lifted = this.ctx.degradation.owedLiftNotice();
    if (lifted !== undefined) await this.ctx.notices.degradationChanged(lifted);
    const validation = cr.validation;
    if (!validation.ok) {
      await this.ctx.notices.invalidSpec(validation.problems);
      return this.stop('InvalidSpec', validation.problems.map((problem) => problem.message).join('; '));
    }
    if (cr.isDeleting) return this.cleanUpDeletedNode(validation.node);
    if (validation.readiness === 'daemonNotReady') {
      await this.ctx.notices.daemonNotReady();
      return this.stop('WaitingForDaemon', 'Terway daemon has not written spec.eni and spec.pool yet');
    }
    this.ctx.notices.daemonReady();
    if (validation.isBlocked) {
      await this.ctx.notices.invalidSpec(validation.problems);
      const blocking = validation.problems.filter((problem) => problem.severity === 'blocking');
      return this.stop('InvalidSpec', blocking.map((problem) => problem.message).join('; '));
    }
    await this.ctx.notices.validSpec(validation.problems);
    const node = validation.node;
    const crMode = (node.metadata.labels?.['k8s.aliyun.com/exclusive-mode-eni-type'] ?? 'default').toLowerCase();
    if (crMode === 'enionly' || snapshot.coreNode?.exclusiveEniMode === 'enionly') {
      return this.stop('ExclusiveEniMode', 'the node uses exclusive ENI mode');
    }
    if (snapshot.coreNode?.isReady !== true) {
      await this.ctx.notices.podsOfUnreadyNode({
        pods: snapshot.pods,
        enis: this.startingEnis(node),
        eniSpec: node.spec.eni,
        ledger: this.ctx.state.failures ?? {},
      });
      return this.stop('NodeNotReady', 'the core Node is missing or not Ready');
    }
    return this.reconcileReadyNode({ node, snapshot });
  }

  private stop(state: IpamState, reason: string): PassEnd {
    this.ctx.summary.ipamState = state;
    this.ctx.summary.skipReason = reason;
    return { failed: false, scope: 'stoppedBeforeCloud' };
  }

  /**
   * A ready node: its mode settled (fixed at the first pass, see `settlePrefixMode`), then `readyPass` in that mode:
   * read the cloud side → the mode's round → finish (fold → write → settle the ledger → tell).
   */
  private async reconcileReadyNode(input: { node: ReadyNodeCr; snapshot: NodeSnapshot }): Promise<PassEnd> {
    const { ctx } = this;
    const { node, snapshot } = input;
    const mode = settlePrefixMode({ state: ctx.state, spec: node.spec });
    if (mode.ignoredChange !== undefined) {
      await ctx.notices.prefixModeChangeIgnored({ prefixMode: mode.prefixMode, asked: mode.ignoredChange });
    }
    const spec = withPrefixMode(node.spec, mode.prefixMode);
    const nowMs = Date.now();
    const instanceId = spec.nodeMetadata?.instanceID ?? '';
    ctx.summary.instanceId = instanceId;
    if (instanceId !== '') ctx.state.instanceId = instanceId;
    const enis = this.startingEnis(node);
    const failed = await readyPass(ctx, { node, snapshot, spec, prefixMode: mode.prefixMode, instanceId, enis, nowMs });
    // The CR went while the pass acted: what the pass made would be listed nowhere, so it is released now.
    if (ctx.crVanished) return this.cleanUpVanishedNode();
    return { failed, scope: 'completed' };
  }

  /** The CR is being deleted: once its ENIs are released the finalizer lets it go (see {@link NodeDeparture}). */
  private async cleanUpDeletedNode(node: NodeCr): Promise<PassEnd> {
    this.ctx.summary.ipamState = 'Deleting';
    const departure = await this.departure.deleted({
      node,
      enis: this.startingEnis(node),
      writeStatus: (write) => this.ctx.writeStatus(write),
      isGone: () => this.ctx.crVanished,
    });
    return departure === 'gone' ? this.cleanUpVanishedNode() : this.departed(departure);
  }

  /** The CR is gone without the deletion path: what eniflow made for the node is released, then the workflow ends. */
  private async cleanUpVanishedNode(): Promise<PassEnd> {
    this.ctx.crVanished = false;
    this.ctx.summary.ipamState = 'Deleting';
    return this.departed(await this.departure.vanished());
  }

  /** What a departure shows; once the node's ENIs are released, the workflow ends. */
  private departed(departure: Departure): PassEnd {
    if (departure.released) this.finished = true;
    this.ctx.summary.ipamState = departure.ipamState;
    if (departure.skipReason !== undefined) this.ctx.summary.skipReason = departure.skipReason;
    return departure.end;
  }

  /** ENIs to start from: the CR's, unless the workflow knows better because its last status write did not land. */
  private startingEnis(node: NodeCr): NetworkInterfaces {
    return this.ctx.state.unwrittenEnis ?? node.status?.networkInterfaces ?? {};
  }
}
