import ipaddr from 'ipaddr.js';

/** Outcome of claiming one specific address (or prefix) in a pool. */
export type ClaimResult = 'claimed' | 'outside' | 'taken';

/** Prefix length of the IPv4 prefixes ECS assigns to ENIs (16 addresses each). */
export const IPV4_PREFIX_LENGTH = 28;
/** Prefix length of the IPv6 prefixes ECS assigns to ENIs. */
export const IPV6_PREFIX_LENGTH = 80;

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

  /** Addresses in one /28 prefix. */
  static readonly PREFIX_SIZE = 2 ** (32 - IPV4_PREFIX_LENGTH);

  /**
   * The first offset of the /28 `prefix` names, when it is a /28 on its boundary whose 16 addresses are all
   * allocatable here (a block holding the network address or the last three reserved ones is not).
   */
  private prefixOffsetOf(prefix: string): number | undefined {
    const [address, length] = prefix.split('/');
    if (length !== String(IPV4_PREFIX_LENGTH) || address === undefined) return undefined;
    const value = parseIpv4(address);
    if (value === undefined) return undefined;
    const offset = value - this.base;
    const size = Ipv4AddressPool.PREFIX_SIZE;
    if (offset % size !== 0 || !this.isAllocatableOffset(offset) || !this.isAllocatableOffset(offset + size - 1)) {
      return undefined;
    }
    return offset;
  }

  private blockIsFree(offset: number): boolean {
    for (let i = 0; i < Ipv4AddressPool.PREFIX_SIZE; i++) if (this.used[offset + i] === 1) return false;
    return true;
  }

  /** Marks a free block used: its 16 addresses leave the available count together. */
  private takeBlock(offset: number): void {
    this.used.fill(1, offset, offset + Ipv4AddressPool.PREFIX_SIZE);
    this.usedTotal += Ipv4AddressPool.PREFIX_SIZE;
  }

  /** Whether `prefix` is a /28 that could be a prefix of this vSwitch (aligned, no reserved address in it). */
  containsPrefix(prefix: string): boolean {
    return this.prefixOffsetOf(prefix) !== undefined;
  }

  /**
   * Takes the lowest /28 whose 16 addresses are all free (they leave the available count together), or undefined
   * when no such block is left: single addresses scattered over the CIDR can exhaust prefixes long before addresses.
   */
  allocatePrefix(): string | undefined {
    const size = Ipv4AddressPool.PREFIX_SIZE;
    for (let offset = size; offset + size <= this.size - 3; offset += size) {
      if (this.blockIsFree(offset)) {
        this.takeBlock(offset);
        return `${formatIpv4(this.base + offset)}/${IPV4_PREFIX_LENGTH}`;
      }
    }
    return undefined;
  }

  /** Marks one specific /28 as used: `outside` when it is no prefix of this CIDR, `taken` when any address is. */
  claimPrefix(prefix: string): ClaimResult {
    const offset = this.prefixOffsetOf(prefix);
    if (offset === undefined) return 'outside';
    if (!this.blockIsFree(offset)) return 'taken';
    this.takeBlock(offset);
    return 'claimed';
  }

  /** Frees a /28 taken by {@link allocatePrefix} or {@link claimPrefix}. */
  releasePrefix(prefix: string): void {
    const offset = this.prefixOffsetOf(prefix);
    if (offset === undefined) return;
    for (let i = 0; i < Ipv4AddressPool.PREFIX_SIZE; i++) {
      if (this.used[offset + i] === 1) {
        this.used[offset + i] = 0;
        this.usedTotal--;
      }
    }
    if (offset < this.lowestFreeHint) this.lowestFreeHint = offset;
  }

  /** The canonical text of an IPv4 /28 prefix (`10.0.0.16/28`), or undefined when it is not one. */
  static normalizePrefix(prefix: string): string | undefined {
    const [address, length] = prefix.split('/');
    if (length !== String(IPV4_PREFIX_LENGTH) || address === undefined) return undefined;
    const value = parseIpv4(address);
    if (value === undefined || value % Ipv4AddressPool.PREFIX_SIZE !== 0) return undefined;
    return `${formatIpv4(value)}/${IPV4_PREFIX_LENGTH}`;
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
  /** The /80 prefixes handed out, as block numbers (offset >> PREFIX_SHIFT); none of their addresses is free. */
  private readonly prefixBlocks = new Set<bigint>();
  private lowestFreeHint = 1n;
  /** Host bits of one /80 prefix. */
  private static readonly PREFIX_SHIFT = BigInt(128 - IPV6_PREFIX_LENGTH);

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

  /** /80 prefixes in use. */
  get prefixCount(): number {
    return this.prefixBlocks.size;
  }

  private offsetOf(ip: string): bigint | undefined {
    const value = parseIpv6(ip);
    if (value === undefined || (value & ~this.hostMask) !== this.base) return undefined;
    const offset = value & this.hostMask;
    return offset === 0n ? undefined : offset;
  }

  private inPrefix(offset: bigint): boolean {
    return this.prefixBlocks.size > 0 && this.prefixBlocks.has(offset >> Ipv6AddressPool.PREFIX_SHIFT);
  }

  contains(ip: string): boolean {
    return this.offsetOf(ip) !== undefined;
  }

  allocateLowest(): string | undefined {
    for (let offset = this.lowestFreeHint; offset <= this.hostMask; offset++) {
      if (this.inPrefix(offset)) {
        // Skip the whole prefix: the loop's increment lands on the next block's first offset.
        offset = (((offset >> Ipv6AddressPool.PREFIX_SHIFT) + 1n) << Ipv6AddressPool.PREFIX_SHIFT) - 1n;
        continue;
      }
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
    if (this.used.has(offset) || this.inPrefix(offset)) return 'taken';
    this.used.add(offset);
    return 'claimed';
  }

  /** The block number of the /80 `prefix` names inside this CIDR (block 0 holds the reserved offset 0: never). */
  private prefixBlockOf(prefix: string): bigint | undefined {
    const [address, length] = prefix.split('/');
    if (length !== String(IPV6_PREFIX_LENGTH) || address === undefined) return undefined;
    const value = parseIpv6(address);
    const shift = Ipv6AddressPool.PREFIX_SHIFT;
    if (value === undefined || (value & ~this.hostMask) !== this.base || (value & ((1n << shift) - 1n)) !== 0n) {
      return undefined;
    }
    // A CIDR narrower than /80 holds no prefix at all.
    if (this.hostMask < (1n << shift) - 1n) return undefined;
    const block = (value & this.hostMask) >> shift;
    return block === 0n ? undefined : block;
  }

  private blockIsFree(block: bigint): boolean {
    if (this.prefixBlocks.has(block)) return false;
    for (const offset of this.used) if (offset >> Ipv6AddressPool.PREFIX_SHIFT === block) return false;
    return true;
  }

  private prefixText(block: bigint): string {
    return `${formatIpv6(this.base | (block << Ipv6AddressPool.PREFIX_SHIFT))}/${IPV6_PREFIX_LENGTH}`;
  }

  /** Takes the lowest /80 (after block 0) holding no used address, or undefined when the CIDR has none left. */
  allocatePrefix(): string | undefined {
    const shift = Ipv6AddressPool.PREFIX_SHIFT;
    if (this.hostMask < (1n << shift) - 1n) return undefined;
    const lastBlock = this.hostMask >> shift;
    const addressBlocks = new Set([...this.used].map((offset) => offset >> shift));
    for (let block = 1n; block <= lastBlock; block++) {
      if (!this.prefixBlocks.has(block) && !addressBlocks.has(block)) {
        this.prefixBlocks.add(block);
        return this.prefixText(block);
      }
    }
    return undefined;
  }

  /** Marks one specific /80 as used. */
  claimPrefix(prefix: string): ClaimResult {
    const block = this.prefixBlockOf(prefix);
    if (block === undefined) return 'outside';
    if (!this.blockIsFree(block)) return 'taken';
    this.prefixBlocks.add(block);
    return 'claimed';
  }

  releasePrefix(prefix: string): void {
    const block = this.prefixBlockOf(prefix);
    if (block !== undefined) this.prefixBlocks.delete(block);
  }

  /** The canonical text of an IPv6 /80 prefix, so prefixes given by callers compare equal to allocated ones. */
  static normalizePrefix(prefix: string): string | undefined {
    const [address, length] = prefix.split('/');
    if (length !== String(IPV6_PREFIX_LENGTH) || address === undefined) return undefined;
    const value = parseIpv6(address);
    if (value === undefined || (value & ((1n << Ipv6AddressPool.PREFIX_SHIFT) - 1n)) !== 0n) return undefined;
    return `${formatIpv6(value)}/${IPV6_PREFIX_LENGTH}`;
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
