/**
 * A small seeded PRNG (mulberry32) so random fault rates and latency ranges reproduce run to run.
 * Its whole state is one 32-bit integer, which keeps it cheap to snapshot.
 */
export class SeededRandom {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [min, max] (both inclusive). */
  integer(range: { min: number; max: number }): number {
    return range.min + Math.floor(this.next() * (range.max - range.min + 1));
  }
}
