import {
  degradationGates,
  degradationNotice,
  heldBackWork,
  degradationSummary,
  isDegradationSetting,
  isNewerDegradation,
  openedGates,
} from '../../../ipam/index.js';
import type { DegradationGates, DegradationLevel, DegradationSetting, PassWants } from '../../../ipam/index.js';
import type { GcResult, NodeWorkflowState } from '../../messages.js';
import type { CarriedState } from './carried-state.js';
import type { RunningPass } from './running-pass.js';

/** What taking a setting changed: nothing (older or the same level), or the level, with the gates it opened. */
export type DegradationChange =
  | { changed: false }
  | { changed: true; from: DegradationLevel; to: DegradationLevel; opened: (keyof DegradationGates)[] };

export type { PassWants } from '../../../ipam/index.js';

/**
 * A node's degradation setting, kept in the carried state (so continue-as-new keeps it): the newest the workflow was
 * told, by its start input, a `degradation` signal or a `reconcile` signal carrying it. The pass asks {@link gates}.
 */
export class NodeDegradation {
  private readonly state: Pick<CarriedState, 'degradation' | 'degradationTold' | 'degradationHeldBack'>;

  /** The running pass, which records the levels it took gates at (started and ended by the pass context). */
  private readonly pass: RunningPass;

  constructor(state: Pick<CarriedState, 'degradation' | 'degradationTold' | 'degradationHeldBack'>, pass: RunningPass) {
    this.state = state;
    this.pass = pass;
  }

  get level(): DegradationLevel {
    return this.state.degradation?.level ?? 'off';
  }

  /** The gates a pass acts by; taken during a pass, their level is one the pass runs at until it ends. */
  gates(): DegradationGates {
    const level = this.level;
    this.pass.actsAt(level);
    return degradationGates(level);
  }

  /** Takes `offered` unless the held setting is newer (or `offered` is malformed: ignored, never trusted). */
  offer(offered: DegradationSetting): DegradationChange {
    if (!isDegradationSetting(offered)) return { changed: false };
    const held = this.state.degradation;
    if (!isNewerDegradation(held, offered)) return { changed: false };
    const from = this.level;
    this.state.degradation = { level: offered.level, revision: offered.revision };
    if (from === offered.level) return { changed: false };
    return { changed: true, from, to: offered.level, opened: openedGates(from, offered.level) };
  }

  /** Whether a pass of this workflow found work held back since the level was last lifted. */
  get heldBackSinceLift(): boolean {
    return this.state.degradationHeldBack === true;
  }

  /**
   * The Event a pass owes, once per change of level: `DegradationHoldsBack` when the pass found `heldBack` work (a
   * node with nothing to do is not held back), `DegradationLifted` on the first pass after a lift of one that was.
   * Marked told before it is written (best effort, never repeated).
   */
  owedNotice(
    heldBack: readonly string[],
  ): (NonNullable<ReturnType<typeof degradationNotice>> & { series: string }) | undefined {
    if (this.level === 'off') delete this.state.degradationHeldBack;
    else if (heldBack.length === 0) return undefined;
    else this.state.degradationHeldBack = true;
    const notice = degradationNotice({ level: this.level, told: this.state.degradationTold, heldBack });
    if (notice === undefined) return undefined;
    this.state.degradationTold = this.level;
    // One series per setting: a level set again after a lift is a change of its own, not a repeat to suppress.
    return { ...notice, series: `degradation:${this.state.degradation?.revision ?? '0'}:${this.level}` };
  }

  /** The notice a pass owes at its start while the level is off (a lift not yet told); undefined otherwise. */
  owedLiftNotice(): ReturnType<NodeDegradation['owedNotice']> {
    return this.level === 'off' ? this.owedNotice([]) : undefined;
  }

  /** {@link owedNotice} for what a ready pass wanted to do: the wants its gates refused are the held-back work. */
  owedNoticeFor(wants: PassWants): ReturnType<NodeDegradation['owedNotice']> {
    return this.owedNotice(heldBackWork(this.level, wants));
  }

  /** The `state` query's view; absent for a node never told of a degradation. */
  view(): NodeWorkflowState['degradation'] {
    const setting = this.state.degradation;
    if (setting === undefined) return undefined;
    const gates = degradationGates(setting.level);
    const heldBack = (Object.keys(gates) as (keyof DegradationGates)[]).filter((gate) => !gates[gate]).sort();
    const view: NonNullable<NodeWorkflowState['degradation']> = {
      level: setting.level,
      revision: setting.revision,
      heldBack,
      summary: degradationSummary(setting.level),
    };
    const passRunningAt = this.pass.levelOtherThan(setting.level);
    if (passRunningAt !== undefined) view.passRunningAt = passRunningAt;
    return view;
  }

  /** The answer to a `gc` update while releasing is held back: at once, since no pass would release anything. */
  gcDeferral(): GcResult | undefined {
    // Only words for an answer: asked by the `gc` update's handler too, it takes no gates for a pass.
    if (degradationGates(this.level).release) return undefined;
    return {
      releasedIps: [],
      removedEnis: [],
      failed: [],
      deferred: `GC held back: ${degradationSummary(this.level)}; it runs when the degradation is lifted`,
    };
  }
}
