import ipaddr from 'ipaddr.js';

import type { IpFamily } from './node-model.js';

/** A parsed IP address: its family and its value as an unsigned integer (32 or 128 bits). */
export interface ParsedIp {
  family: IpFamily;
  value: bigint;
}

/** Strict dotted decimal: ipaddr.js's `IPv4.parse` also takes octal, hex and short forms (`010.1`, `0xa.0.0.1`). */
const DOTTED_DECIMAL = /^(0|[1-9]\d{0,2})\.(0|[1-9]\d{0,2})\.(0|[1-9]\d{0,2})\.(0|[1-9]\d{0,2})$/;

function parseIpv4Value(text: string): bigint | undefined {
  // Parsed by hand: the pass sorts every ENI's addresses, and ipaddr.js's general parser was most of its CPU.
  const octets = DOTTED_DECIMAL.exec(text);
  if (octets === null) return undefined;
  let value = 0;
  for (let i = 1; i <= 4; i++) {
    const octet = Number(octets[i]);
    if (octet > 255) return undefined;
    value = value * 256 + octet;
  }
  return BigInt(value);
}

function parseIpv6Value(text: string): bigint | undefined {
  // Refused beyond ipaddr.js: zones (`%eth0`) and an embedded IPv4 tail that is not strict dotted decimal.
  if (text.includes('%') || !ipaddr.IPv6.isValid(text)) return undefined;
  const tail = text.slice(text.lastIndexOf(':') + 1);
  if (tail.includes('.') && !ipaddr.IPv4.isValidFourPartDecimal(tail)) return undefined;
  return ipaddr.IPv6.parse(text).parts.reduce((value, part) => (value << 16n) | BigInt(part), 0n);
}

/** Parses an IPv4 or IPv6 address in text form; `undefined` when it is not one (zones and prefixes are refused). */
export function parseIp(text: string): ParsedIp | undefined {
  if (text.includes(':')) {
    const value = parseIpv6Value(text);
    return value === undefined ? undefined : { family: 'ipv6', value };
  }
  const value = parseIpv4Value(text);
  return value === undefined ? undefined : { family: 'ipv4', value };
}

/** Parses `address/prefixLength`; the address part need not be the network address. */
export function parseCidr(text: string): { ip: ParsedIp; prefixLength: number } | undefined {
  const [address, prefix, extra] = text.split('/');
  if (address === undefined || prefix === undefined || extra !== undefined) return undefined;
  if (!/^(0|[1-9][0-9]{0,2})$/.test(prefix)) return undefined;
  const ip = parseIp(address);
  if (ip === undefined) return undefined;
  const prefixLength = Number(prefix);
  if (prefixLength > (ip.family === 'ipv4' ? 32 : 128)) return undefined;
  return { ip, prefixLength };
}

/** Whether `ip` lies inside `cidr` (same family, same network bits); false when either does not parse. */
export function isIpInCidr(ip: string, cidr: string): boolean {
  const address = parseIp(ip);
  const network = parseCidr(cidr);
  if (address === undefined || address.family !== network?.ip.family) return false;
  const hostBits = BigInt((address.family === 'ipv4' ? 32 : 128) - network.prefixLength);
  return address.value >> hostBits === network.ip.value >> hostBits;
}

/**
 * Orders IP addresses numerically (IPv4 before IPv6, unparsable text last and by text), so that "the first
 * free IP" means the same address on every run and every replay.
 */
export function compareIps(a: string, b: string): number {
  return compareParsedIps({ text: a, ip: parseIp(a) }, { text: b, ip: parseIp(b) });
}

/**
 * How {@link sortIps} orders one address: IPv4 (rank 0, a plain number), IPv6 (rank 1), unparsable text (rank 2,
 * by text). The same order as {@link compareIps}, without a BigInt per IPv4 address.
 */
interface SortKey {
  rank: 0 | 1 | 2;
  value: number | bigint;
}

/**
 * Sort keys by address text, shared across calls: a pass sorts the same few dozen addresses of each ENI many times
 * (the local pool, the planner, the GC), and parsing them was most of that sorting's cost. A pure function of the
 * text, so replay is unaffected; bounded, since addresses come and go over a worker's life.
 */
const sortKeys = new Map<string, SortKey>();
const SORT_KEYS_KEPT = 20_000;

function sortKeyOf(text: string): SortKey {
  let key = sortKeys.get(text);
  if (key !== undefined) return key;
  const ip = parseIp(text);
  if (ip === undefined) key = { rank: 2, value: 0 };
  else key = ip.family === 'ipv4' ? { rank: 0, value: Number(ip.value) } : { rank: 1, value: ip.value };
  if (sortKeys.size >= SORT_KEYS_KEPT) sortKeys.clear();
  sortKeys.set(text, key);
  return key;
}

/** The addresses in {@link compareIps} order, each parsed at most once (not once per comparison). */
export function sortIps(texts: readonly string[]): string[] {
  return texts
    .map((text) => ({ text, key: sortKeyOf(text) }))
    .sort(compareSortKeys)
    .map((entry) => entry.text);
}

function compareSortKeys(
  { text: a, key: ka }: { text: string; key: SortKey },
  { text: b, key: kb }: { text: string; key: SortKey },
): number {
  if (ka.rank !== kb.rank) return ka.rank - kb.rank;
  if (ka.rank === 2) return a < b ? -1 : a > b ? 1 : 0;
  return ka.value < kb.value ? -1 : ka.value > kb.value ? 1 : 0;
}

function compareParsedIps(
  { text: a, ip: pa }: { text: string; ip: ParsedIp | undefined },
  { text: b, ip: pb }: { text: string; ip: ParsedIp | undefined },
): number {
  if (pa === undefined || pb === undefined) {
    if (pa !== undefined) return -1;
    if (pb !== undefined) return 1;
    return a < b ? -1 : a > b ? 1 : 0;
  }
  if (pa.family !== pb.family) return pa.family === 'ipv4' ? -1 : 1;
  return pa.value < pb.value ? -1 : pa.value > pb.value ? 1 : 0;
}
