import { apiError } from '../api-error.js';
import type { RequestParams } from '../request-params.js';
import type { ActionContext, ActionDefinition } from './action-types.js';
import { ECS_VERSION } from './action-types.js';

/**
 * Whether a call asks for prefixes rather than addresses. One call does one or the other: asking for both (in any
 * form, count or list) is refused as ECS refuses it.
 */
function asksForPrefixes(
  params: RequestParams,
  names: { addressList: string; addressCount?: string; prefixList: string; prefixCount?: string },
): boolean {
  const addresses =
    params.list(names.addressList).length > 0 ||
    (names.addressCount !== undefined && params.string(names.addressCount) !== undefined);
  const prefixes =
    params.list(names.prefixList).length > 0 ||
    (names.prefixCount !== undefined && params.string(names.prefixCount) !== undefined);
  if (addresses && prefixes) {
    throw apiError('InvalidParameter.Conflict', 'IP addresses and IP prefixes cannot be given in one call.');
  }
  return prefixes;
}

function assignPrivateIpAddresses({ params, model }: ActionContext): Record<string, unknown> {
  const eniId = params.requiredString('NetworkInterfaceId');
  const names = {
    addressList: 'PrivateIpAddress',
    addressCount: 'SecondaryPrivateIpAddressCount',
    prefixList: 'Ipv4Prefix',
    prefixCount: 'Ipv4PrefixCount',
  };
  if (asksForPrefixes(params, names)) {
    const count = params.integer('Ipv4PrefixCount');
    const prefixes = model.assignIpv4Prefixes({
      eniId,
      prefixes: params.list('Ipv4Prefix'),
      ...(count === undefined ? {} : { count }),
    });
    return {
      AssignedPrivateIpAddressesSet: {
        NetworkInterfaceId: eniId,
        PrivateIpSet: { PrivateIpAddress: [] },
        Ipv4PrefixSet: { Ipv4Prefixes: prefixes },
      },
    };
  }
  const count = params.integer('SecondaryPrivateIpAddressCount');
  const addresses = model.assignIpv4({
    eniId,
    addresses: params.list('PrivateIpAddress'),
    ...(count === undefined ? {} : { count }),
  });
  return {
    AssignedPrivateIpAddressesSet: {
      NetworkInterfaceId: eniId,
      PrivateIpSet: { PrivateIpAddress: addresses },
      Ipv4PrefixSet: { Ipv4Prefixes: [] },
    },
  };
}

function unassignPrivateIpAddresses({ params, model }: ActionContext): Record<string, unknown> {
  const eniId = params.requiredString('NetworkInterfaceId');
  if (asksForPrefixes(params, { addressList: 'PrivateIpAddress', prefixList: 'Ipv4Prefix' })) {
    model.unassignIpv4Prefixes({ eniId, prefixes: params.list('Ipv4Prefix') });
  } else {
    model.unassignIpv4({ eniId, addresses: params.list('PrivateIpAddress') });
  }
  return {};
}

function assignIpv6Addresses({ params, model }: ActionContext): Record<string, unknown> {
  const eniId = params.requiredString('NetworkInterfaceId');
  const names = {
    addressList: 'Ipv6Address',
    addressCount: 'Ipv6AddressCount',
    prefixList: 'Ipv6Prefix',
    prefixCount: 'Ipv6PrefixCount',
  };
  if (asksForPrefixes(params, names)) {
    const count = params.integer('Ipv6PrefixCount');
    const prefixes = model.assignIpv6Prefixes({
      eniId,
      prefixes: params.list('Ipv6Prefix'),
      ...(count === undefined ? {} : { count }),
    });
    return { NetworkInterfaceId: eniId, Ipv6Sets: { Ipv6Address: [] }, Ipv6PrefixSets: { Ipv6Prefix: prefixes } };
  }
  const count = params.integer('Ipv6AddressCount');
  const addresses = model.assignIpv6({
    eniId,
    addresses: params.list('Ipv6Address'),
    ...(count === undefined ? {} : { count }),
  });
  return { NetworkInterfaceId: eniId, Ipv6Sets: { Ipv6Address: addresses }, Ipv6PrefixSets: { Ipv6Prefix: [] } };
}

function unassignIpv6Addresses({ params, model }: ActionContext): Record<string, unknown> {
  const eniId = params.requiredString('NetworkInterfaceId');
  if (asksForPrefixes(params, { addressList: 'Ipv6Address', prefixList: 'Ipv6Prefix' })) {
    model.unassignIpv6Prefixes({ eniId, prefixes: params.list('Ipv6Prefix') });
  } else {
    model.unassignIpv6({ eniId, addresses: params.list('Ipv6Address') });
  }
  return {};
}

const ipAction = (handle: ActionDefinition['handle'], idempotent = false): ActionDefinition => ({
  product: 'Ecs',
  version: ECS_VERSION,
  requiresRegion: true,
  idempotent,
  handle,
});

/** Secondary address and IP prefix actions of the ECS API (all synchronous). */
export const IP_ACTIONS: Record<string, ActionDefinition> = {
  AssignPrivateIpAddresses: ipAction(assignPrivateIpAddresses, true),
  UnassignPrivateIpAddresses: ipAction(unassignPrivateIpAddresses),
  AssignIpv6Addresses: ipAction(assignIpv6Addresses, true),
  UnassignIpv6Addresses: ipAction(unassignIpv6Addresses),
};
