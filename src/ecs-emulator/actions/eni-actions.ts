import { apiError } from '../api-error.js';
import type { EniRecord, EniTrafficMode } from '../model-types.js';
import type { ActionContext, ActionDefinition } from './action-types.js';
import { ECS_VERSION } from './action-types.js';
import { pageItems } from './paging.js';
import { eniToWire } from './response-shapes.js';

function createNetworkInterface({ params, model }: ActionContext): Record<string, unknown> {
  const single = params.string('SecurityGroupId');
  const listed = params.list('SecurityGroupIds');
  if (single !== undefined && listed.length > 0) {
    throw apiError('InvalidParameter.Conflict', 'SecurityGroupId and SecurityGroupIds.N cannot both be given.');
  }
  const secondaryIps = params.list('PrivateIpAddress');
  const secondaryCount = params.integer('SecondaryPrivateIpAddressCount');
  if (secondaryIps.length > 0 && secondaryCount !== undefined) {
    throw apiError('InvalidParameter.Conflict', 'PrivateIpAddress.N and SecondaryPrivateIpAddressCount are exclusive.');
  }
  const ipv6s = params.list('Ipv6Address');
  const ipv6Count = params.integer('Ipv6AddressCount');
  if (ipv6s.length > 0 && ipv6Count !== undefined) {
    throw apiError('InvalidParameter.Conflict', 'Ipv6Address.N and Ipv6AddressCount are exclusive.');
  }
  const ipv4PrefixCount = params.integer('Ipv4PrefixCount');
  const ipv6PrefixCount = params.integer('Ipv6PrefixCount');
  if ([secondaryCount, ipv6Count, ipv4PrefixCount, ipv6PrefixCount].some((count) => count !== undefined && count < 0)) {
    throw apiError('InvalidParameter', 'Address and prefix counts must not be negative.');
  }
  const eniType = params.string('InstanceType') ?? 'Secondary';
  if (eniType !== 'Secondary' && eniType !== 'Trunk') {
    throw apiError('InvalidParameter', 'The specified parameter "InstanceType" must be Secondary or Trunk.');
  }
  const trafficMode = params.string('NetworkInterfaceTrafficMode') ?? 'Standard';
  if (trafficMode !== 'Standard' && trafficMode !== 'HighPerformance') {
    throw apiError('InvalidParameter', 'NetworkInterfaceTrafficMode must be Standard or HighPerformance.');
  }
  const primaryIp = params.string('PrimaryIpAddress');
  const name = params.string('NetworkInterfaceName');
  const description = params.string('Description');
  const deleteOnRelease = params.boolean('DeleteOnRelease');
  const eni = model.createEni({
    vSwitchId: params.requiredString('VSwitchId'),
    securityGroupIds: single === undefined ? listed : [single],
    type: eniType,
    trafficMode: trafficMode satisfies EniTrafficMode,
    secondaryIps,
    ipv6s,
    ipv4Prefixes: params.list('Ipv4Prefix'),
    ipv6Prefixes: params.list('Ipv6Prefix'),
    tags: params.tags(),
    ...(primaryIp === undefined ? {} : { primaryIp }),
    ...(secondaryCount === undefined ? {} : { secondaryCount }),
    ...(ipv6Count === undefined ? {} : { ipv6Count }),
    ...(ipv4PrefixCount === undefined ? {} : { ipv4PrefixCount }),
    ...(ipv6PrefixCount === undefined ? {} : { ipv6PrefixCount }),
    ...(name === undefined ? {} : { name }),
    ...(description === undefined ? {} : { description }),
    ...(deleteOnRelease === undefined ? {} : { deleteOnRelease }),
  });
  return eniToWire(eni, model.ownerId);
}

function attachNetworkInterface({ params, model, failAttach }: ActionContext): Record<string, unknown> {
  model.attachEni({
    eniId: params.requiredString('NetworkInterfaceId'),
    instanceId: params.requiredString('InstanceId'),
    failAttach,
  });
  return {};
}

function detachNetworkInterface({ params, model }: ActionContext): Record<string, unknown> {
  model.detachEni({
    eniId: params.requiredString('NetworkInterfaceId'),
    instanceId: params.requiredString('InstanceId'),
  });
  return {};
}

function deleteNetworkInterface({ params, model }: ActionContext): Record<string, unknown> {
  model.deleteEni(params.requiredString('NetworkInterfaceId'));
  return {};
}

/** The DescribeNetworkInterfaces filters; every given filter must match. */
function buildEniFilter(context: ActionContext): (eni: EniRecord) => boolean {
  const { params } = context;
  const ids = params.list('NetworkInterfaceId');
  const idSet = ids.length > 0 ? new Set(ids) : null;
  const instanceId = params.string('InstanceId');
  const type = params.string('Type');
  const status = params.string('Status');
  const vpcId = params.string('VpcId');
  const vSwitchId = params.string('VSwitchId');
  const name = params.string('NetworkInterfaceName');
  const primaryIp = params.string('PrimaryIpAddress');
  const securityGroupId = params.string('SecurityGroupId');
  const privateIps = params.list('PrivateIpAddress');
  const ipv6s = params.list('Ipv6Address');
  const tags = params.tags();
  return (eni) =>
    (idSet === null || idSet.has(eni.eniId)) &&
    (instanceId === undefined || eni.instanceId === instanceId) &&
    (type === undefined || eni.type === type) &&
    (status === undefined || eni.status === status) &&
    (vpcId === undefined || eni.vpcId === vpcId) &&
    (vSwitchId === undefined || eni.vSwitchId === vSwitchId) &&
    (name === undefined || eni.name === name) &&
    (primaryIp === undefined || eni.primaryIp === primaryIp) &&
    (securityGroupId === undefined || (eni.type !== 'Primary' && eni.securityGroupIds.includes(securityGroupId))) &&
    (privateIps.length === 0 || privateIps.some((ip) => eni.secondaryIps.includes(ip) || eni.primaryIp === ip)) &&
    (ipv6s.length === 0 || ipv6s.some((ip) => eni.ipv6s.includes(ip))) &&
    tags.every((wanted) =>
      eni.tags.some((tag) => tag.key === wanted.key && (wanted.value === '' || tag.value === wanted.value)),
    );
}

function describeNetworkInterfaces(context: ActionContext): Record<string, unknown> {
  const { params, model } = context;
  if (params.list('NetworkInterfaceId').length > 100) {
    throw apiError('InvalidParameter', 'At most 100 NetworkInterfaceId.N values are allowed.');
  }
  const matches = buildEniFilter(context);
  const selected: EniRecord[] = [];
  for (const eni of model.listEnis()) if (matches(eni)) selected.push(eni);
  const page = pageItems({
    items: selected,
    keyOf: (eni) => eni.sequence,
    params,
    limits: { minResults: 10, maxResults: 500, defaultPageSize: 10, maxPageSize: 100 },
  });
  return {
    NextToken: page.nextToken,
    TotalCount: page.totalCount,
    PageNumber: page.pageNumber,
    PageSize: page.pageSize,
    NetworkInterfaceSets: { NetworkInterfaceSet: page.items.map((eni) => eniToWire(eni, model.ownerId)) },
  };
}

/** TagResources for ENIs (the emulator models no other taggable resource): 1–50 ids, 1–20 tags. */
function tagResources({ params, model }: ActionContext): Record<string, unknown> {
  const resourceType = params.requiredString('ResourceType');
  if (resourceType !== 'eni') throw apiError('InvalidResourceType.NotFound');
  const eniIds = params.list('ResourceId');
  if (eniIds.length === 0) throw apiError('MissingParameter', 'The input parameter "ResourceId" is not supplied.');
  if (eniIds.length > 50) throw apiError('InvalidParameter', 'At most 50 ResourceId.N values are allowed.');
  const tags = params.tags();
  if (tags.length === 0) throw apiError('MissingParameter', 'The input parameter "Tag" is not supplied.');
  if (tags.length > 20) throw apiError('InvalidParameter', 'At most 20 Tag.N values are allowed.');
  model.tagEnis({ eniIds, tags });
  return {};
}

const eniAction = (handle: ActionDefinition['handle'], idempotent = false): ActionDefinition => ({
  product: 'Ecs',
  version: ECS_VERSION,
  requiresRegion: true,
  idempotent,
  handle,
});

/** ENI lifecycle actions of the ECS API. */
export const ENI_ACTIONS: Record<string, ActionDefinition> = {
  CreateNetworkInterface: eniAction(createNetworkInterface, true),
  AttachNetworkInterface: eniAction(attachNetworkInterface),
  DetachNetworkInterface: eniAction(detachNetworkInterface),
  DeleteNetworkInterface: eniAction(deleteNetworkInterface),
  DescribeNetworkInterfaces: eniAction(describeNetworkInterfaces),
  TagResources: eniAction(tagResources),
};
