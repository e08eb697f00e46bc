/** Settings of the orphan-ENI janitor: recorded input, passed in full when it starts, handed on at continue-as-new. */
export interface JanitorSettings {
  /** A janitor pass runs this often, and on request. */
  intervalMs: number;
  /** An `Available` ENI younger than this is never an orphan (a create whose attach may still be in flight). */
  graceMs: number;
  /**
   * Report only, delete nothing. Only this recorded setting enables deletes: a `runJanitor` request may make a pass
   * drier, never wetter, so no Temporal client can turn a dry-run janitor into a deleting one.
   */
  dryRun: boolean;
  /** Continue-as-new after this many passes. */
  maxPassesPerRun: number;
  /** This cluster's id (`ENIFLOW_CLUSTER_ID`): only ENIs tagged with it are ever deleted. No default. */
  clusterId: string;
  /** The cluster's VPC (`ENIFLOW_VPC_ID`): when set, the janitor lists only ENIs in it. */
  vpcId?: string;
}

/** The janitor settings that have defaults: all but the cluster identity, which only the configuration gives. */
export type JanitorTunables = Omit<JanitorSettings, 'clusterId' | 'vpcId'>;

export const DEFAULT_JANITOR_SETTINGS: JanitorTunables = {
  intervalMs: 30 * 60_000,
  graceMs: 15 * 60_000,
  dryRun: false,
  maxPassesPerRun: 200,
};
