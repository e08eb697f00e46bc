/**
 * The activities that add addresses to an ENI or take them away, for both families (IPv4, IPv6) and both units
 * (single addresses, prefixes): two factories, one for assign and one for unassign, so the eight activities differ
 * only in the row of {@link CALLS} they use. Each assign carries a ClientToken (a retried call returns the same
 * addresses) and tells the vSwitch rule its answer; each unassign counts addresses already gone as done.
 */
import { IPV4_PREFIX_SIZE } from '../../ipam/index.js';
import type { EcsApi, EcsCallResult } from './ecs-api.js';
import type { EcsContext } from './ecs-context.js';
import { ALREADY_DONE_CODES } from './ecs-operations.js';
import type { EcsOperation } from './ecs-operations.js';

export type IpFamily = 'ipv4' | 'ipv6';
/** Single addresses, or prefixes (IPv4 /28, IPv6 /80). */
export type IpUnit = 'address' | 'prefix';

/** The field carrying the units in an assign's reply and in an unassign's input, as recorded histories name it. */
type UnitField<U extends IpUnit> = U extends 'address' ? 'ips' : 'prefixes';
export type Units<U extends IpUnit> = Record<UnitField<U>, string[]>;

/** An assign: `count` units (1–10) with a ClientToken; `vSwitchId`, when known, is the one the ENI draws from. */
export interface AssignInput {
  eniId: string;
  vSwitchId?: string;
  count: number;
  clientToken: string;
}

/** An unassign: the units to take from the ENI (prefixes: at most 10). */
export type UnassignInput<U extends IpUnit> = { eniId: string } & Units<U>;

/** One (family, unit)'s cloud calls, and the action whose "already done" codes its unassign accepts. */
interface UnitCalls<U extends IpUnit> {
  assign(ecs: EcsApi, input: AssignInput): Promise<EcsCallResult & Units<U>>;
  unassign(ecs: EcsApi, input: UnassignInput<U>): Promise<EcsCallResult>;
  unassignAction: EcsOperation;
}

/**
 * Prefixes use the address actions (`AssignPrivateIpAddresses` with `Ipv4PrefixCount`, `AssignIpv6Addresses` with
 * `Ipv6PrefixCount`, and their unassigns with `Ipv4Prefix.N` / `Ipv6Prefix.N`), so they share the actions' codes.
 */
const CALLS: Readonly<Record<IpFamily, { readonly [U in IpUnit]: UnitCalls<U> }>> = {
  ipv4: {
    address: {
      assign: (ecs, input) => ecs.assignIpv4(input),
      unassign: (ecs, input) => ecs.unassignIpv4(input),
      unassignAction: 'UnassignPrivateIpAddresses',
    },
    prefix: {
      assign: (ecs, input) => ecs.assignIpv4Prefixes(input),
      unassign: (ecs, input) => ecs.unassignIpv4Prefixes(input),
      unassignAction: 'UnassignPrivateIpAddresses',
    },
  },
  ipv6: {
    address: {
      assign: (ecs, input) => ecs.assignIpv6(input),
      unassign: (ecs, input) => ecs.unassignIpv6(input),
      unassignAction: 'UnassignIpv6Addresses',
    },
    prefix: {
      assign: (ecs, input) => ecs.assignIpv6Prefixes(input),
      unassign: (ecs, input) => ecs.unassignIpv6Prefixes(input),
      unassignAction: 'UnassignIpv6Addresses',
    },
  },
};

const UNIT_FIELD: { readonly [U in IpUnit]: UnitField<U> } = { address: 'ips', prefix: 'prefixes' };

/** What one unit takes from the free IPv4 count the cloud reports for its vSwitch (IPv6 is not counted there). */
const IPV4_PER_UNIT: Readonly<Record<IpFamily, Readonly<Record<IpUnit, number>>>> = {
  ipv4: { address: 1, prefix: IPV4_PREFIX_SIZE },
  ipv6: { address: 0, prefix: 0 },
};

/** The units' name in log lines: "IPv4 addresses", "IPv6 prefixes". */
function unitsName(family: IpFamily, unit: IpUnit): string {
  return `${family === 'ipv4' ? 'IPv4' : 'IPv6'} ${unit === 'address' ? 'addresses' : 'prefixes'}`;
}

/**
 * The assign activity of one family and unit. Only IPv4 address asks are sized by the vSwitch's free count, so only
 * their refusal revises that count; the others block an exhausted vSwitch for a TTL (see vswitch-rule.ts).
 */
export function assignActivity<U extends IpUnit>(ctx: EcsContext, family: IpFamily, unit: U) {
  const calls: UnitCalls<U> = CALLS[family][unit];
  const field: UnitField<U> = UNIT_FIELD[unit];
  const perUnit = IPV4_PER_UNIT[family][unit];
  const sizedByCount = family === 'ipv4' && unit === 'address';
  const name = unitsName(family, unit);
  return async (input: AssignInput): Promise<Units<U>> => {
    const log = ctx.logFor({ eniId: input.eniId });
    const result = await ctx.run(log, () => calls.assign(ctx.ecs, input), {
      onFailure: (failure) =>
        ctx.vSwitchRule.refused(log, failure, {
          vSwitchId: input.vSwitchId,
          ...(sizedByCount ? { sizedIpv4: input.count } : {}),
        }),
    });
    const units: string[] = result === undefined ? [] : (result as Units<U>)[field];
    if (units.length > 0) ctx.vSwitchRule.granted(input.vSwitchId, perUnit * units.length);
    log.info({ requestId: result?.requestId, count: units.length }, `Assigned ${name}`);
    return { [field]: units } as Units<U>;
  };
}

/** The unassign activity of one family and unit: nothing to take is no call; units or ENIs already gone are done. */
export function unassignActivity<U extends IpUnit>(ctx: EcsContext, family: IpFamily, unit: U) {
  const calls: UnitCalls<U> = CALLS[family][unit];
  const field: UnitField<U> = UNIT_FIELD[unit];
  const accept = ALREADY_DONE_CODES[calls.unassignAction] ?? [];
  const name = unitsName(family, unit);
  return async (input: UnassignInput<U>): Promise<void> => {
    const log = ctx.logFor({ eniId: input.eniId });
    const units: string[] = (input as Units<U>)[field];
    if (units.length === 0) return;
    await ctx.run(log, () => calls.unassign(ctx.ecs, input), { accept });
    log.info({ count: units.length }, `Unassigned ${name}`);
  };
}

/** The eight address activities; their names are the keys recorded in workflow histories. */
export function createAddressActivities(ctx: EcsContext) {
  return {
    assignIpv4: assignActivity(ctx, 'ipv4', 'address'),
    assignIpv6: assignActivity(ctx, 'ipv6', 'address'),
    unassignIpv4: unassignActivity(ctx, 'ipv4', 'address'),
    unassignIpv6: unassignActivity(ctx, 'ipv6', 'address'),
    assignIpv4Prefixes: assignActivity(ctx, 'ipv4', 'prefix'),
    assignIpv6Prefixes: assignActivity(ctx, 'ipv6', 'prefix'),
    unassignIpv4Prefixes: unassignActivity(ctx, 'ipv4', 'prefix'),
    unassignIpv6Prefixes: unassignActivity(ctx, 'ipv6', 'prefix'),
  };
}
