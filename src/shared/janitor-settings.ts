/** Settings of the orphan-ENI janitor: recorded input, passed in full when it starts, handed on at continue-as-new. */
export interface JanitorSettings {
  /** A janitor pass runs this often, and on request. */
  intervalMs: number;
  /** An `Available` ENI younger than this is never an orphan (a create whose attach may still be in flight). */
  graceMs: number;
  /** Report only, delete nothing. */
  dryRun: boolean;
  /** Continue-as-new after this many passes. */
  maxPassesPerRun: number;
}

export const DEFAULT_JANITOR_SETTINGS: JanitorSettings = {
  intervalMs: 30 * 60_000,
  graceMs: 15 * 60_000,
  dryRun: false,
  maxPassesPerRun: 200,
};
