import { isIdle, unorderedIpEntries } from './eni-records.js';
import { sortIps } from './ip-address.js';
import { mayRemoveEni } from './eni-ownership.js';
import { MAX_IPS_PER_CALL } from './eni-plan.js';
import { sortedKeys } from './node-model.js';
import type { IpFamily, NetworkInterfaces } from './node-model.js';
import type { PrefixGcAction } from './prefix-plan.js';

/** A cloud clean-up the GC asks for. */
export type GcAction =
  /** Detach (if attached), wait until Available, then delete; the ENI then leaves the CR. */
  | { kind: 'removeEni'; eniId: string }
  /** Unassign at most {@link MAX_IPS_PER_CALL} addresses of one family from one InUse ENI. */
  | { kind: 'unassignIps'; eniId: string; family: IpFamily; ips: string[] }
  /** Prefix mode: unassign at most ten `Deleting` prefixes of one family from one InUse ENI (see `planPrefixGc`). */
  | PrefixGcAction;

/**
 * Turns the `Deleting` marks of the CR into cloud calls (the reference's `handleStatus`): ENIs marked
 * `Deleting` (or stuck `Detaching`) are removed; on InUse ENIs, `Deleting` IPs are unassigned in batches of ten,
 * IPv4 before IPv6. Unlike the seed, an IP a pod still holds is never unassigned, an ENI with a bound IP or an
 * unschedulable one is never removed (see `mayRemoveEni`), and every batch is planned (not only the first ten),
 * in ENI id then address order.
 */
export function planGc(input: { enis: Readonly<NetworkInterfaces> }): GcAction[] {
  const actions: GcAction[] = [];
  for (const eniId of sortedKeys(input.enis)) {
    const eni = input.enis[eniId];
    if (eni === undefined) continue;
    // Whatever the marks say, an ENI a pod still uses, an unschedulable one, or a kind this controller never
    // creates is not touched: the mark stays until the pods are gone (or the sync drops the entry).
    if (eni.status === 'Deleting' || eni.status === 'Detaching') {
      if (mayRemoveEni(eni)) actions.push({ kind: 'removeEni', eniId });
      continue;
    }
    if (eni.status !== 'InUse' || eni.unschedulable === true) continue;
    for (const family of ['ipv4', 'ipv6'] as const) {
      // Filtered before sorting: most ENIs have nothing marked, and every pass asks.
      const ips = sortIps(
        unorderedIpEntries(eni, family)
          .filter((entry) => entry.status === 'Deleting' && !entry.primary && isIdle(entry))
          .map((entry) => entry.ip),
      );
      for (let start = 0; start < ips.length; start += MAX_IPS_PER_CALL) {
        actions.push({ kind: 'unassignIps', eniId, family, ips: ips.slice(start, start + MAX_IPS_PER_CALL) });
      }
    }
  }
  return actions;
}
