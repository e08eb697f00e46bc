import type { VSwitchInfo } from '../../ipam/index.js';

/** A vSwitch the worker reports exhausted, as the `state` query, events and metrics show it. */
export interface VSwitchBlock {
  vSwitchId: string;
  /** Epoch ms of the `IpNotEnough` answer that blocked it. */
  blockedAtMs: number;
  /** How long the block still lasts unless lifted earlier (resync, a cloud answer with free addresses). */
  remainingMs: number;
}

/**
 * The worker's vSwitch cache (Terway's `SwitchPool`): lookups are served for `ttlMs` after a fetch, concurrent
 * lookups of one vSwitch share a single cloud call, and a vSwitch that ran out of addresses is *blocked*, reported
 * with 0 free addresses for a full TTL, so no node of this worker picks it again until the cloud has caught up.
 * A block is lifted early by {@link refresh} (a node's resync) when the cloud then shows free addresses, and by
 * {@link unblock} when a call on the vSwitch gets addresses: a block is a guess, the cloud's answer is the truth.
 */
export class VSwitchCache {
  private readonly entries = new Map<string, { info: VSwitchInfo; expiresMs: number }>();
  private readonly inFlight = new Map<string, Promise<VSwitchInfo | undefined>>();
  private readonly blocks = new Map<string, { blockedAtMs: number; untilMs: number }>();
  private readonly wallClockMs: () => number;
  private readonly ttlMs: number;
  private readonly maxEntries: number;
  private readonly nowMs: () => number;
  private readonly unblockListeners: ((vSwitchId: string) => void)[] = [];

  constructor(options: { ttlMs?: number; maxEntries?: number; nowMs?: () => number; wallClockMs?: () => number } = {}) {
    this.ttlMs = options.ttlMs ?? 20 * 60_000;
    this.maxEntries = options.maxEntries ?? 1000;
    this.nowMs = options.nowMs ?? (() => performance.now());
    this.wallClockMs = options.wallClockMs ?? (() => Date.now());
  }

  /** The cached vSwitch, or what `fetch` finds (cached on success; `undefined` is not cached). */
  async get(vSwitchId: string, fetch: () => Promise<VSwitchInfo | undefined>): Promise<VSwitchInfo | undefined> {
    const cached = this.entries.get(vSwitchId);
    if (cached !== undefined && cached.expiresMs > this.nowMs()) {
      const block = this.blocks.get(vSwitchId);
      return block === undefined ? { ...cached.info } : { ...cached.info, blockedForMs: block.untilMs - this.nowMs() };
    }
    this.blocks.delete(vSwitchId);
    const pending = this.inFlight.get(vSwitchId);
    if (pending !== undefined) return pending;
    const request = fetch()
      .then((info) => {
        if (info !== undefined) this.put(info);
        return info === undefined ? undefined : { ...info };
      })
      .finally(() => this.inFlight.delete(vSwitchId));
    this.inFlight.set(vSwitchId, request);
    return request;
  }

  /**
   * What {@link get} would answer for every one of `vSwitchIds` without asking the cloud: undefined unless each is
   * cached and fresh. A node's read carries this, so a pass skips its own vSwitch lookup when nothing is to fetch.
   */
  peek(vSwitchIds: readonly string[]): Record<string, VSwitchInfo> | undefined {
    const now = this.nowMs();
    const found: Record<string, VSwitchInfo> = {};
    for (const vSwitchId of [...new Set(vSwitchIds)].sort()) {
      const cached = this.entries.get(vSwitchId);
      if (cached === undefined || cached.expiresMs <= now || this.inFlight.has(vSwitchId)) return undefined;
      const block = this.blocks.get(vSwitchId);
      found[vSwitchId] =
        block === undefined ? { ...cached.info } : { ...cached.info, blockedForMs: block.untilMs - now };
    }
    return found;
  }

  /** Marks a vSwitch exhausted for one TTL (after `InvalidVSwitchId.IpNotEnough`); unknown ids are remembered too. */
  block(vSwitchId: string, known?: VSwitchInfo): void {
    const base = this.entries.get(vSwitchId)?.info ?? known ?? { vSwitchId, zoneId: '', availableIpCount: 0 };
    this.put({ ...base, availableIpCount: 0 });
    this.blocks.set(vSwitchId, { blockedAtMs: this.wallClockMs(), untilMs: this.nowMs() + this.ttlMs });
  }

  /**
   * After an `IpNotEnough` answer to an ask of `requested` IPv4 addresses, with what a describe then `found`: a
   * vSwitch that still has some, fewer than were asked for, is cached with that count (no block), so the next plan
   * asks for what is there; one with none left, or one whose count the refusal contradicts, is blocked. A planner that
   * sizes its asks by the cached count cannot loop here: each refused ask is smaller than the one before.
   */
  refused(vSwitchId: string, requested: number, found: VSwitchInfo | undefined): 'revised' | 'blocked' {
    if (found !== undefined && found.availableIpCount > 0 && found.availableIpCount < requested) {
      this.blocks.delete(vSwitchId);
      this.put(found);
      return 'revised';
    }
    this.block(vSwitchId, found);
    return 'blocked';
  }

  /**
   * A call took `count` addresses of the vSwitch: the cached free count drops by as many, as the cloud's does, so the
   * next plan does not ask for addresses that are gone (and get refused for them). Blocked or unknown: nothing to do.
   */
  took(vSwitchId: string, count: number): void {
    const cached = this.entries.get(vSwitchId);
    if (cached === undefined || this.blocks.has(vSwitchId) || count <= 0) return;
    cached.info = { ...cached.info, availableIpCount: Math.max(0, cached.info.availableIpCount - count) };
  }

  /** Lifts a block (a call on the vSwitch got addresses): the next lookup asks the cloud. Returns whether one was. */
  unblock(vSwitchId: string): boolean {
    if (!this.blocks.delete(vSwitchId)) return false;
    this.entries.delete(vSwitchId);
    for (const listener of this.unblockListeners) listener(vSwitchId);
    return true;
  }

  /** Calls `listener` whenever {@link unblock} lifts a block: nodes waiting on the vSwitch may now be served. */
  onUnblocked(listener: (vSwitchId: string) => void): void {
    this.unblockListeners.push(listener);
  }

  /** Forgets what is cached about these vSwitches, blocks included, so the next lookups ask the cloud. */
  refresh(vSwitchIds: readonly string[]): string[] {
    const lifted: string[] = [];
    for (const vSwitchId of vSwitchIds) {
      if (this.blocks.delete(vSwitchId)) lifted.push(vSwitchId);
      this.entries.delete(vSwitchId);
    }
    return lifted.sort();
  }

  /** The vSwitches blocked now, by id (for the `state` query, events and metrics). */
  blocked(): VSwitchBlock[] {
    const now = this.nowMs();
    const out: VSwitchBlock[] = [];
    for (const [vSwitchId, block] of this.blocks) {
      if (block.untilMs <= now || !this.entries.has(vSwitchId)) continue;
      out.push({ vSwitchId, blockedAtMs: block.blockedAtMs, remainingMs: block.untilMs - now });
    }
    return out.sort((a, b) => (a.vSwitchId < b.vSwitchId ? -1 : a.vSwitchId > b.vSwitchId ? 1 : 0));
  }

  private put(info: VSwitchInfo): void {
    this.entries.delete(info.vSwitchId);
    this.entries.set(info.vSwitchId, { info: { ...info }, expiresMs: this.nowMs() + this.ttlMs });
    // Oldest first: Map keeps insertion order, and a refreshed entry was re-inserted above.
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
      this.blocks.delete(oldest);
    }
  }
}
