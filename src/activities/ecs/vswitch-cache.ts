import type { VSwitchInfo } from '../../ipam/index.js';

/**
 * The worker's vSwitch cache (Terway's `SwitchPool`): lookups are served for `ttlMs` after a fetch, concurrent
 * lookups of one vSwitch share a single cloud call, and a vSwitch that ran out of addresses is *blocked*, reported
 * with 0 free addresses for a full TTL, so no node of this worker picks it again until the cloud has caught up.
 */
export class VSwitchCache {
  private readonly entries = new Map<string, { info: VSwitchInfo; expiresMs: number }>();
  private readonly inFlight = new Map<string, Promise<VSwitchInfo | undefined>>();
  /** Blocked vSwitches and when their block ends, for metrics (an evicted entry may outlive its cache entry here). */
  private readonly blockedUntil = new Map<string, number>();
  private readonly ttlMs: number;
  private readonly maxEntries: number;
  private readonly nowMs: () => number;

  constructor(options: { ttlMs?: number; maxEntries?: number; nowMs?: () => number } = {}) {
    this.ttlMs = options.ttlMs ?? 20 * 60_000;
    this.maxEntries = options.maxEntries ?? 1000;
    this.nowMs = options.nowMs ?? (() => performance.now());
  }

  /** The cached vSwitch, or what `fetch` finds (cached on success; `undefined` is not cached). */
  async get(vSwitchId: string, fetch: () => Promise<VSwitchInfo | undefined>): Promise<VSwitchInfo | undefined> {
    const cached = this.entries.get(vSwitchId);
    if (cached !== undefined && cached.expiresMs > this.nowMs()) return { ...cached.info };
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

  /** Marks a vSwitch exhausted for one TTL (after `InvalidVSwitchId.IpNotEnough`); unknown ids are remembered too. */
  block(vSwitchId: string, known?: VSwitchInfo): void {
    const base = this.entries.get(vSwitchId)?.info ?? known ?? { vSwitchId, zoneId: '', availableIpCount: 0 };
    this.put({ ...base, availableIpCount: 0 });
    this.blockedUntil.set(vSwitchId, this.nowMs() + this.ttlMs);
  }

  /** The vSwitches blocked now, sorted (this worker's view: each worker process has its own cache). */
  blocked(): string[] {
    const now = this.nowMs();
    for (const [vSwitchId, untilMs] of this.blockedUntil) if (untilMs <= now) this.blockedUntil.delete(vSwitchId);
    return [...this.blockedUntil.keys()].sort();
  }

  private put(info: VSwitchInfo): void {
    this.entries.delete(info.vSwitchId);
    this.entries.set(info.vSwitchId, { info: { ...info }, expiresMs: this.nowMs() + this.ttlMs });
    // Oldest first: Map keeps insertion order, and a refreshed entry was re-inserted above.
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
  }
}
