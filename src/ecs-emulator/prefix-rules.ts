import { apiError } from './api-error.js';
import type { EniRecord } from './model-types.js';

/** Input of the prefix Assign calls: either a count or explicit prefixes. */
export interface AssignPrefixInput {
  eniId: string;
  count?: number;
  prefixes?: string[];
}

/** Most prefixes of one family a call may add or remove (`Ipv4PrefixCount`, `Ipv4Prefix.N`, …: 1 to 10). */
export const MAX_PREFIXES_PER_CALL = 10;

/** Explicit prefixes or a count (never both), 1 to {@link MAX_PREFIXES_PER_CALL} of them. */
export function requestedPrefixes(input: AssignPrefixInput, countName: string): { explicit: string[]; count: number } {
  const explicit = input.prefixes ?? [];
  const count = input.count ?? 0;
  if (explicit.length > 0 && input.count !== undefined) {
    throw apiError('InvalidParameter.Conflict', `${countName} and a prefix list cannot both be given.`);
  }
  if (explicit.length + count === 0) throw apiError('MissingParameter', `${countName} or a prefix list is required.`);
  if (count < 0 || explicit.length + count > MAX_PREFIXES_PER_CALL) {
    throw apiError('InvalidParameter', `${countName}: 1 to ${MAX_PREFIXES_PER_CALL} prefixes per call.`);
  }
  return { explicit, count };
}

/** IPv4 slots an ENI takes of `EniPrivateIpAddressQuantity`: the primary, the secondaries and each /28 prefix. */
export function ipv4SlotsOf(eni: EniRecord): number {
  return 1 + eni.secondaryIps.length + eni.ipv4Prefixes.length;
}

/** IPv6 slots an ENI takes of `EniIpv6AddressQuantity`: each address and each /80 prefix. */
export function ipv6SlotsOf(eni: EniRecord): number {
  return eni.ipv6s.length + eni.ipv6Prefixes.length;
}

/** Prefixes a create asks for in one family: explicit ones or a count, never both, at most 10. */
export function prefixTotal(explicit: string[] | undefined, count: number | undefined, name: string): number {
  if ((explicit?.length ?? 0) > 0 && count !== undefined) {
    throw apiError('InvalidParameter.Conflict', `${name}.N and ${name}Count are exclusive.`);
  }
  const total = (explicit?.length ?? 0) + (count ?? 0);
  if ((count !== undefined && count < 0) || total > MAX_PREFIXES_PER_CALL) {
    throw apiError('InvalidParameter', `${name}Count: 1 to ${MAX_PREFIXES_PER_CALL} prefixes per call.`);
  }
  return total;
}
