import type { ActionContext, ActionDefinition } from './action-types.js';
import { ECS_VERSION } from './action-types.js';

function assignPrivateIpAddresses({ params, model }: ActionContext): Record<string, unknown> {
  const eniId = params.requiredString('NetworkInterfaceId');
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
  model.unassignIpv4({
    eniId: params.requiredString('NetworkInterfaceId'),
    addresses: params.list('PrivateIpAddress'),
  });
  return {};
}

function assignIpv6Addresses({ params, model }: ActionContext): Record<string, unknown> {
  const eniId = params.requiredString('NetworkInterfaceId');
  const count = params.integer('Ipv6AddressCount');
  const addresses = model.assignIpv6({
    eniId,
    addresses: params.list('Ipv6Address'),
    ...(count === undefined ? {} : { count }),
  });
  return { NetworkInterfaceId: eniId, Ipv6Sets: { Ipv6Address: addresses }, Ipv6PrefixSets: { Ipv6Prefix: [] } };
}

function unassignIpv6Addresses({ params, model }: ActionContext): Record<string, unknown> {
  model.unassignIpv6({ eniId: params.requiredString('NetworkInterfaceId'), addresses: params.list('Ipv6Address') });
  return {};
}

const ipAction = (handle: ActionDefinition['handle'], idempotent = false): ActionDefinition => ({
  product: 'Ecs',
  version: ECS_VERSION,
  requiresRegion: true,
  idempotent,
  handle,
});

/** Secondary address actions of the ECS API (all synchronous). */
export const IP_ACTIONS: Record<string, ActionDefinition> = {
  AssignPrivateIpAddresses: ipAction(assignPrivateIpAddresses, true),
  UnassignPrivateIpAddresses: ipAction(unassignPrivateIpAddresses),
  AssignIpv6Addresses: ipAction(assignIpv6Addresses, true),
  UnassignIpv6Addresses: ipAction(unassignIpv6Addresses),
};
