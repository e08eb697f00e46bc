import type { InformerCounters } from '../kube/resource-informer.js';
import type { DegradationCounters } from './degradation-watch.js';
import type { LeaderCounters } from './leader-elector.js';
import type { SignalCounters } from './signal-dispatcher.js';

/**
 * What a running watcher reports, for tests and the health server's Prometheus metrics. It lives apart from
 * main.ts because the health server reads it and main.ts starts the health server.
 */
export interface WatcherMetrics extends SignalCounters {
  /** Nodes the start sweep still owes a signal. */
  sweepPending: number;
  isLeader: boolean;
  leader: LeaderCounters;
  informers: { pods: InformerCounters; nodeCrs: InformerCounters; coreNodes: InformerCounters };
  /** The degradation switch as this replica reads it, and its broadcasts (absent in older fakes). */
  degradation?: DegradationCounters;
}
