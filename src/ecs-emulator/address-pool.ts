import ipaddr from 'ipaddr.js';

/** Outcome of claiming one specific address in a pool. */
export type ClaimResult = 'claimed' | 'outside' | 'taken';

/** Parses dotted-decimal IPv4 (no octal, hex or short forms) into an unsigned 32-bit number, or undefined. */
export function parseIpv4(text: string): number | undefined {
  if (!ipaddr.IPv4.isValidFourPartDecimal(text)) return undefined;
  return ipaddr.IPv4.parse(text).octets.reduce((value, octet) => value * 256 + octet, 0);
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
 * IPv4 addresses of one vSwitch CIDR. The first address and the last three are reserved, as on a real vSwitch,
 * so an empty /24 has 252 available. Allocation takes the lowest free address, so the
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

/**
 * Parses IPv6 text (hex groups, `::` compression) into a 128-bit bigint; undefined for malformed text, a zone or
 * an embedded IPv4 tail.
 */
export function parseIpv6(text: string): bigint | undefined {
  if (text.includes('%') || text.includes('.') || !ipaddr.IPv6.isValid(text)) return undefined;
  return ipaddr.IPv6.parse(text).parts.reduce((value, part) => (value << 16n) | BigInt(part), 0n);
}

/** Formats a 128-bit value the way RFC 5952 prescribes (lower case, longest zero run compressed). */
export function formatIpv6(value: bigint): string {
  const parts = Array.from({ length: 8 }, (_, index) => Number((value >> BigInt(112 - 16 * index)) & 0xffffn));
  return new ipaddr.IPv6(parts).toRFC5952String();
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
