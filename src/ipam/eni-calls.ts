import { MAX_IPS_PER_CALL } from './eni-plan.js';
import type { EniAllocation } from './eni-plan.js';
import type { IpFamily } from './node-model.js';

/**
 * The assign calls for an ENI's counts, each of at most {@link MAX_IPS_PER_CALL} addresses, IPv4 and IPv6 in turn so
 * that a failure part-way leaves pairs rather than addresses of one family. Made one after the other on the ENI.
 */
export function assignCalls(counts: { ipv4Count: number; ipv6Count: number }): { family: IpFamily; count: number }[] {
  const calls: { family: IpFamily; count: number }[] = [];
  const left: Record<IpFamily, number> = { ipv4: Math.max(0, counts.ipv4Count), ipv6: Math.max(0, counts.ipv6Count) };
  while (left.ipv4 + left.ipv6 > 0) {
    for (const family of ['ipv4', 'ipv6'] as const) {
      const count = Math.min(left[family], MAX_IPS_PER_CALL);
      if (count > 0) calls.push({ family, count });
      left[family] -= count;
    }
  }
  return calls;
}

/**
 * What to assign to a new ENI once attached so that it holds what its planned create asked for (`fillTo`, else the
 * create's counts): the planned count minus the addresses the cloud ENI has. The ENI may be one the plan's create
 * made, or one it stands for (an open intent re-issued, an ENI awaiting attach): never less than nothing.
 */
export function fillAfterAttach(
  planned: Extract<EniAllocation, { kind: 'createEni' }>,
  has: { ipv4: number; ipv6: number },
): { ipv4Count: number; ipv6Count: number } {
  const wanted = planned.fillTo ?? { ipv4Count: planned.ipv4Count, ipv6Count: planned.ipv6Count };
  return {
    ipv4Count: Math.max(0, wanted.ipv4Count - has.ipv4),
    ipv6Count: Math.max(0, wanted.ipv6Count - has.ipv6),
  };
}
