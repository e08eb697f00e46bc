import type { Logger } from '../logger.js';
import type { WorkflowGateway } from './workflow-gateway.js';

export interface NodeStatePollDeps {
  gateway: Pick<WorkflowGateway, 'countNodesByState'>;
  isLeader: () => boolean;
  logger: Logger;
  intervalMs: number;
}

/**
 * The node workflows by IPAM state, counted in Temporal every `intervalMs` while this replica leads (only the
 * leader exports cluster facts, so summing over replicas never counts a node twice).
 */
export class NodeStatePoll {
  private counts: Record<string, number> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly deps: NodeStatePollDeps;

  constructor(deps: NodeStatePollDeps) {
    this.deps = deps;
  }

  /** Polls now and every interval (a new term restarts the schedule). */
  start(): void {
    clearInterval(this.timer);
    void this.poll();
    this.timer = setInterval(() => void this.poll(), this.deps.intervalMs);
  }

  /** Stops polling and forgets the last count: a replica that no longer leads reports none. */
  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.counts = undefined;
  }

  current(): Record<string, number> | undefined {
    return this.deps.isLeader() ? this.counts : undefined;
  }

  private async poll(): Promise<void> {
    const count = this.deps.gateway.countNodesByState?.bind(this.deps.gateway);
    if (count === undefined) return;
    try {
      const counts = await count();
      if (this.deps.isLeader()) this.counts = counts;
    } catch (error) {
      this.deps.logger.warn({ err: error }, 'Could not count node workflows by IPAM state; the next poll tries again');
    }
  }
}
