import type { IpFamily } from './node-model.js';

/** A parsed IP address: its family and its value as an unsigned integer (32 or 128 bits). */
export interface ParsedIp {
  family: IpFamily;
  value: bigint;
}

const IPV4_OCTET = /^(0|[1-9][0-9]{0,2})$/;
const IPV6_GROUP = /^[0-9a-fA-F]{1,4}$/;

function parseIpv4Value(text: string): bigint | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  let value = 0n;
  for (const part of parts) {
    if (!IPV4_OCTET.test(part)) return undefined;
    const octet = Number(part);
    if (octet > 255) return undefined;
    value = (value << 8n) | BigInt(octet);
  }
  return value;
}

function parseIpv6Groups(text: string): bigint[] | undefined {
  if (text === '') return [];
  const groups: bigint[] = [];
  const parts = text.split(':');
  for (const [index, part] of parts.entries()) {
    // An embedded IPv4 tail (::ffff:1.2.3.4) stands for the last two groups.
    if (index === parts.length - 1 && part.includes('.')) {
      const v4 = parseIpv4Value(part);
      if (v4 === undefined) return undefined;
      groups.push(v4 >> 16n, v4 & 0xffffn);
      continue;
    }
    if (!IPV6_GROUP.test(part)) return undefined;
    groups.push(BigInt(parseInt(part, 16)));
  }
  return groups;
}

function parseIpv6Value(text: string): bigint | undefined {
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const head = parseIpv6Groups(halves[0] ?? '');
  const tail = halves.length === 2 ? parseIpv6Groups(halves[1] ?? '') : [];
  if (head === undefined || tail === undefined) return undefined;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined;
  const groups = [...head, ...Array<bigint>(missing).fill(0n), ...tail];
  return groups.reduce((value, group) => (value << 16n) | group, 0n);
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
  const pa = parseIp(a);
  const pb = parseIp(b);
  if (pa === undefined || pb === undefined) {
    if (pa !== undefined) return -1;
    if (pb !== undefined) return 1;
    return a < b ? -1 : a > b ? 1 : 0;
  }
  if (pa.family !== pb.family) return pa.family === 'ipv4' ? -1 : 1;
  return pa.value < pb.value ? -1 : pa.value > pb.value ? 1 : 0;
}
