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
  /** The poll under way, if any: stop() waits for it. */
  private inFlight: Promise<void> | undefined;
  private inFlightTerm = 0;
  /** Bumped by start() and stop(): a poll begun in an earlier term does not report into this one. */
  private term = 0;
  private readonly deps: NodeStatePollDeps;

  constructor(deps: NodeStatePollDeps) {
    this.deps = deps;
  }

  /** Polls now and every interval (a new term restarts the schedule). */
  start(): void {
    clearInterval(this.timer);
    this.term += 1;
    this.pollNow();
    this.timer = setInterval(() => {
      this.pollNow();
    }, this.deps.intervalMs);
  }

  /**
   * Stops polling and forgets the last count: a replica that no longer leads reports none. Resolves once a poll under
   * way has ended, so a count the server throttled and the client retries cannot outlive the client's connection
   * (the watcher closes it after stopping).
   */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    this.term += 1;
    this.counts = undefined;
    await this.inFlight;
  }

  current(): Record<string, number> | undefined {
    return this.deps.isLeader() ? this.counts : undefined;
  }

  /**
   * One poll at a time: with a slow or throttled server, an interval that comes during a poll is skipped. A new
   * term's first poll waits for the last term's.
   */
  private pollNow(): void {
    if (this.inFlight !== undefined && this.inFlightTerm === this.term) return;
    const term = this.term;
    const polling = (this.inFlight ?? Promise.resolve()).then(() => this.poll(term));
    this.inFlight = polling;
    this.inFlightTerm = term;
    void polling.finally(() => {
      if (this.inFlight === polling) this.inFlight = undefined;
    });
  }

  private async poll(term: number): Promise<void> {
    const count = this.deps.gateway.countNodesByState?.bind(this.deps.gateway);
    if (count === undefined || term !== this.term) return;
    try {
      const counts = await count();
      if (term === this.term && this.deps.isLeader()) this.counts = counts;
    } catch (error) {
      if (term !== this.term) return;
      this.deps.logger.warn({ err: error }, 'Could not count node workflows by IPAM state; the next poll tries again');
    }
  }
}
