/** Outcome of claiming one specific address in a pool. */
export type ClaimResult = 'claimed' | 'outside' | 'taken';

/** Parses dotted IPv4 into an unsigned 32-bit number, or undefined when malformed. */
export function parseIpv4(text: string): number | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  let value = 0;
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part)) return undefined;
    const octet = Number(part);
    if (octet > 255) return undefined;
    value = value * 256 + octet;
  }
  return value;
}

function formatIpv4(value: number): string {
  return `${(value >>> 24) & 255}.${(value >>> 16) & 255}.${(value >>> 8) & 255}.${value & 255}`;
}

function splitCidr(cidr: string): { address: string; prefixLength: number } {
  const [address, prefixText] = cidr.split('/');
  const prefixLength = Number(prefixText);
  if (address === undefined || prefixText === undefined || !Number.isInteger(prefixLength)) {
    throw new Error(`invalid CIDR ${cidr}`);
  }
  return { address, prefixLength };
}

/**
 * IPv4 addresses of one vSwitch CIDR. The first address and the last three are reserved, as on a real vSwitch
 * (ecs-openapi.md §7.12), so an empty /24 has 252 available. Allocation takes the lowest free address, so the
 * same call sequence always yields the same addresses.
 */
export class Ipv4AddressPool {
  readonly cidr: string;
  readonly size: number;
  static readonly RESERVED_COUNT = 4;
  private readonly base: number;
  private readonly used: Uint8Array;
  private usedTotal = 0;
  /** No free address exists below this offset; it only moves down when an address is released. */
  private lowestFreeHint = 1;

  constructor(cidr: string) {
    const { address, prefixLength } = splitCidr(cidr);
    const base = parseIpv4(address);
    if (base === undefined || prefixLength < 12 || prefixLength > 29) {
      throw new Error(`unsupported IPv4 CIDR ${cidr} (prefix /12 to /29)`);
    }
    this.size = 2 ** (32 - prefixLength);
    if (base % this.size !== 0) throw new Error(`CIDR ${cidr} has host bits set`);
    this.cidr = cidr;
    this.base = base;
    this.used = new Uint8Array(this.size);
  }

  /** Addresses still free: CIDR size minus the reserved ones minus those in use. */
  get availableCount(): number {
    return this.size - Ipv4AddressPool.RESERVED_COUNT - this.usedTotal;
  }

  get usedCount(): number {
    return this.usedTotal;
  }

  private isAllocatableOffset(offset: number): boolean {
    return offset >= 1 && offset < this.size - 3;
  }

  private offsetOf(ip: string): number | undefined {
    const value = parseIpv4(ip);
    if (value === undefined) return undefined;
    const offset = value - this.base;
    return this.isAllocatableOffset(offset) ? offset : undefined;
  }

  /** Whether `ip` is an allocatable address of this CIDR (reserved addresses are not). */
  contains(ip: string): boolean {
    return this.offsetOf(ip) !== undefined;
  }

  /** Takes the lowest free address, or returns undefined when the pool is exhausted. */
  allocateLowest(): string | undefined {
    for (let offset = this.lowestFreeHint; offset < this.size - 3; offset++) {
      if (this.used[offset] === 0) {
        this.used[offset] = 1;
        this.usedTotal++;
        this.lowestFreeHint = offset + 1;
        return formatIpv4(this.base + offset);
      }
    }
    this.lowestFreeHint = this.size - 3;
    return undefined;
  }

  /** Marks one specific address as used. */
  claim(ip: string): ClaimResult {
    const offset = this.offsetOf(ip);
    if (offset === undefined) return 'outside';
    if (this.used[offset] === 1) return 'taken';
    this.used[offset] = 1;
    this.usedTotal++;
    return 'claimed';
  }

  isUsed(ip: string): boolean {
    const offset = this.offsetOf(ip);
    return offset !== undefined && this.used[offset] === 1;
  }

  release(ip: string): void {
    const offset = this.offsetOf(ip);
    if (offset === undefined || this.used[offset] === 0) return;
    this.used[offset] = 0;
    this.usedTotal--;
    if (offset < this.lowestFreeHint) this.lowestFreeHint = offset;
  }
}

/** Parses IPv6 text (with `::` compression) into a 128-bit bigint, or undefined when malformed. */
export function parseIpv6(text: string): bigint | undefined {
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const head = halves[0] === '' || halves[0] === undefined ? [] : halves[0].split(':');
  const tail = halves.length === 2 && halves[1] !== '' && halves[1] !== undefined ? halves[1].split(':') : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...tail];
  let value = 0n;
  for (const group of groups) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(group)) return undefined;
    value = (value << 16n) | BigInt(parseInt(group, 16));
  }
  return value;
}

/** Formats a 128-bit value the way RFC 5952 prescribes (lower case, longest zero run compressed). */
export function formatIpv6(value: bigint): string {
  const groups: number[] = [];
  for (let shift = 112n; shift >= 0n; shift -= 16n) groups.push(Number((value >> shift) & 0xffffn));
  let bestStart = -1;
  let bestLength = 1;
  for (let start = 0; start < 8;) {
    if (groups[start] !== 0) {
      start++;
      continue;
    }
    let end = start;
    while (end < 8 && groups[end] === 0) end++;
    if (end - start > bestLength) {
      bestStart = start;
      bestLength = end - start;
    }
    start = end;
  }
  const hex = groups.map((group) => group.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLength).join(':')}`;
}

/**
 * IPv6 addresses of one vSwitch /64 (or any prefix ≤ /120). Offset 0 (the subnet-router anycast address) is
 * never handed out; otherwise the lowest free offset is taken. A /64 never runs out in practice, so IPv6 has
 * no available count on the wire.
 */
export class Ipv6AddressPool {
  readonly cidr: string;
  private readonly base: bigint;
  private readonly hostMask: bigint;
  private readonly used = new Set<bigint>();
  private lowestFreeHint = 1n;

  constructor(cidr: string) {
    const { address, prefixLength } = splitCidr(cidr);
    const base = parseIpv6(address);
    if (base === undefined || prefixLength < 8 || prefixLength > 120) throw new Error(`invalid IPv6 CIDR ${cidr}`);
    this.hostMask = (1n << BigInt(128 - prefixLength)) - 1n;
    if ((base & this.hostMask) !== 0n) throw new Error(`IPv6 CIDR ${cidr} has host bits set`);
    this.cidr = cidr;
    this.base = base;
  }

  get usedCount(): number {
    return this.used.size;
  }

  private offsetOf(ip: string): bigint | undefined {
    const value = parseIpv6(ip);
    if (value === undefined || (value & ~this.hostMask) !== this.base) return undefined;
    const offset = value & this.hostMask;
    return offset === 0n ? undefined : offset;
  }

  contains(ip: string): boolean {
    return this.offsetOf(ip) !== undefined;
  }

  allocateLowest(): string | undefined {
    for (let offset = this.lowestFreeHint; offset <= this.hostMask; offset++) {
      if (!this.used.has(offset)) {
        this.used.add(offset);
        this.lowestFreeHint = offset + 1n;
        return formatIpv6(this.base | offset);
      }
    }
    return undefined;
  }

  claim(ip: string): ClaimResult {
    const offset = this.offsetOf(ip);
    if (offset === undefined) return 'outside';
    if (this.used.has(offset)) return 'taken';
    this.used.add(offset);
    return 'claimed';
  }

  release(ip: string): void {
    const offset = this.offsetOf(ip);
    if (offset === undefined || !this.used.delete(offset)) return;
    if (offset < this.lowestFreeHint) this.lowestFreeHint = offset;
  }

  /** The canonical text form of `ip`, so addresses given by callers compare equal to allocated ones. */
  static normalize(ip: string): string | undefined {
    const value = parseIpv6(ip);
    return value === undefined ? undefined : formatIpv6(value);
  }
}
