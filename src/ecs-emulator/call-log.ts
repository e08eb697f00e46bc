/** One API call as the emulator saw it. */
export interface CallLogEntry {
  /** Increases by one per call, across clears and resizes. */
  seq: number;
  /** Wall-clock time the call arrived (ISO 8601). */
  time: string;
  action: string;
  /** Decoded query parameters (signature fields included on the v2 path). */
  params: Record<string, string>;
  httpStatus: number;
  /** `Success` or the error code answered. */
  code: string;
  requestId: string;
  latencyMs: number;
  /** Whether the call changed state (true also for lost responses). */
  applied: boolean;
  /** The injected fault, e.g. `fault-3:lostResponse`, or `rateLimit`. */
  fault: string | null;
}

/** A bounded ring buffer of calls, so long benchmarks do not grow memory. */
export class CallLog {
  private entries: (CallLogEntry | undefined)[];
  private head = 0;
  private size = 0;
  private nextSeq = 1;

  constructor(capacity: number) {
    this.entries = new Array<CallLogEntry | undefined>(capacity);
  }

  get capacity(): number {
    return this.entries.length;
  }

  /** Calls recorded since start (or since `clear`), including those already overwritten. */
  get totalRecorded(): number {
    return this.nextSeq - 1;
  }

  append(entry: Omit<CallLogEntry, 'seq'>): CallLogEntry {
    const full = { seq: this.nextSeq++, ...entry };
    this.entries[this.head] = full;
    this.head = (this.head + 1) % this.entries.length;
    if (this.size < this.entries.length) this.size++;
    return full;
  }

  /** Entries oldest first, optionally only those after `sinceSeq` and of one action, at most `limit` (newest kept). */
  list(filter: { sinceSeq?: number; action?: string; limit?: number } = {}): CallLogEntry[] {
    const result: CallLogEntry[] = [];
    const start = (this.head - this.size + this.entries.length) % this.entries.length;
    for (let i = 0; i < this.size; i++) {
      const entry = this.entries[(start + i) % this.entries.length];
      if (entry === undefined) continue;
      if (filter.sinceSeq !== undefined && entry.seq <= filter.sinceSeq) continue;
      if (filter.action !== undefined && entry.action !== filter.action) continue;
      result.push(entry);
    }
    return filter.limit === undefined ? result : result.slice(-filter.limit);
  }

  clear(): void {
    this.entries = new Array<CallLogEntry | undefined>(this.entries.length);
    this.head = 0;
    this.size = 0;
  }

  /** Changes the capacity, keeping the newest entries that fit. */
  resize(capacity: number): void {
    const kept = this.list().slice(-capacity);
    this.entries = new Array<CallLogEntry | undefined>(capacity);
    this.head = 0;
    this.size = 0;
    for (const entry of kept) {
      this.entries[this.head] = entry;
      this.head = (this.head + 1) % capacity;
      this.size++;
    }
  }
}
