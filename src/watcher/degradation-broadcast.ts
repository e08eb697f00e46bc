import type { Logger } from '../logger.js';
import type { DegradationWatch } from './degradation-watch.js';
import type { WorkflowGateway } from './workflow-gateway.js';

/** Broadcasts tried per change; the workflows that missed the last also get the level with their next signal. */
const BROADCAST_ATTEMPTS = 5;

export interface DegradationBroadcastDeps {
  gateway: WorkflowGateway;
  degradation: Pick<DegradationWatch, 'current' | 'counters'>;
  isLeader: () => boolean;
  nodeNames: () => Set<string>;
  logger: Logger;
  /** The wait before attempt `attempt + 1` (default 1 s, 2 s, 4 s, 8 s). */
  backoffMs?: (attempt: number) => number;
}

/**
 * Hands the current degradation setting to every running workflow (leader only), one broadcast after another: a
 * change while one is under way is sent after it, with the setting current then.
 */
export class DegradationBroadcast {
  private broadcasting: Promise<void> = Promise.resolve();
  private readonly deps: DegradationBroadcastDeps;

  constructor(deps: DegradationBroadcastDeps) {
    this.deps = deps;
  }

  /** Queues a broadcast after the one under way; resolves when it has ended (sent, given up, or not leader). */
  broadcast(): Promise<void> {
    this.broadcasting = this.broadcasting.then(() => this.send());
    return this.broadcasting;
  }

  /** Resolves once no broadcast is under way or queued (a stopping watcher waits for it). */
  settled(): Promise<void> {
    return this.broadcasting;
  }

  private async send(): Promise<void> {
    const { gateway, degradation, logger } = this.deps;
    const broadcast = gateway.broadcastDegradation?.bind(gateway);
    if (broadcast === undefined) return;
    const startedMs = Date.now();
    for (let attempt = 1; this.deps.isLeader(); attempt += 1) {
      const setting = degradation.current();
      try {
        const result = await broadcast(setting, [...this.deps.nodeNames()]);
        degradation.counters.signalsSent += result.signalled;
        degradation.counters.lastBroadcastMs = Date.now() - startedMs;
        logger.info(
          { level: setting.level, ...result, failed: result.failed.length, ms: Date.now() - startedMs },
          'Degradation level sent to the workflows',
        );
        if (result.failed.length === 0) return;
        degradation.counters.signalFailures += result.failed.length;
      } catch (error) {
        degradation.counters.signalFailures += 1;
        logger.warn({ err: error, attempt }, 'Could not send the degradation level; retrying');
      }
      if (attempt >= BROADCAST_ATTEMPTS) return;
      const waitMs = this.deps.backoffMs?.(attempt) ?? 500 * 2 ** attempt;
      await new Promise((resolve) => setTimeout(resolve, waitMs));
    }
  }
}
