import {
  degradationGates,
  degradationNotice,
  degradationSummary,
  isDegradationSetting,
  isNewerDegradation,
  openedGates,
} from '../../ipam/index.js';
import type { DegradationGates, DegradationLevel, DegradationSetting } from '../../ipam/index.js';
import type { GcResult, NodeWorkflowState } from '../messages.js';
import type { CarriedState } from './carried-state.js';

/** What taking a setting changed: nothing (older or the same level), or the level, with the gates it opened. */
export type DegradationChange =
  | { changed: false }
  | { changed: true; from: DegradationLevel; to: DegradationLevel; opened: (keyof DegradationGates)[] };

/**
 * A node's degradation setting, kept in the carried state (so continue-as-new keeps it): the newest the workflow was
 * told, by its start input, a `degradation` signal or a `reconcile` signal carrying it. The pass asks {@link gates}.
 */
export class NodeDegradation {
  private readonly state: Pick<CarriedState, 'degradation' | 'degradationTold'>;

  constructor(state: Pick<CarriedState, 'degradation' | 'degradationTold'>) {
    this.state = state;
  }

  get level(): DegradationLevel {
    return this.state.degradation?.level ?? 'off';
  }

  gates(): DegradationGates {
    return degradationGates(this.level);
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

  /** The Event owed for the level, once per change; marked told before it is written (best effort, never repeated). */
  owedNotice(): (NonNullable<ReturnType<typeof degradationNotice>> & { series: string }) | undefined {
    const notice = degradationNotice({ level: this.level, told: this.state.degradationTold });
    if (notice === undefined) return undefined;
    this.state.degradationTold = this.level;
    // One series per setting: a level set again after a lift is a change of its own, not a repeat to suppress.
    return { ...notice, series: `degradation:${this.state.degradation?.revision ?? '0'}:${this.level}` };
  }

  /** The `state` query's view; absent for a node never told of a degradation. */
  view(): NodeWorkflowState['degradation'] {
    const setting = this.state.degradation;
    if (setting === undefined) return undefined;
    const gates = degradationGates(setting.level);
    const heldBack = (Object.keys(gates) as (keyof DegradationGates)[]).filter((gate) => !gates[gate]).sort();
    return { level: setting.level, revision: setting.revision, heldBack, summary: degradationSummary(setting.level) };
  }

  /** The answer to a `gc` update while releasing is held back: at once, since no pass would release anything. */
  gcDeferral(): GcResult | undefined {
    if (this.gates().release) return undefined;
    return {
      releasedIps: [],
      removedEnis: [],
      failed: [],
      deferred: `GC held back: ${degradationSummary(this.level)}; it runs when the degradation is lifted`,
    };
  }
}
