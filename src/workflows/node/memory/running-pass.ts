import type { DegradationLevel } from '../../../ipam/index.js';

/**
 * Whether a pass is running, and the degradation levels it has acted at. The pass context starts and ends it; the
 * node's degradation records each level it hands gates at, and reads the levels back for the `state` query. Not
 * carried: a run continues as new only between passes.
 */
export class RunningPass {
  /** Undefined between passes; the levels in the order the pass first acted at each. */
  private levels: DegradationLevel[] | undefined;

  get running(): boolean {
    return this.levels !== undefined;
  }

  /** A pass begins: it acts at the level of now, and at any it takes gates at later. */
  start(level: DegradationLevel): void {
    this.levels = [level];
  }

  end(): void {
    this.levels = undefined;
  }

  /** The running pass took gates at `level`; between passes nothing is recorded. */
  actsAt(level: DegradationLevel): void {
    if (this.levels !== undefined && !this.levels.includes(level)) this.levels.push(level);
  }

  /** A level the running pass acted at other than `level`, the first such; undefined when none or between passes. */
  levelOtherThan(level: DegradationLevel): DegradationLevel | undefined {
    return this.levels?.find((taken) => taken !== level);
  }
}
