import { apiError } from '../api-error.js';
import type { ActionContext, ActionDefinition } from './action-types.js';
import { ECS_VERSION } from './action-types.js';
import { pageItems } from './paging.js';
import { instanceToWire, instanceTypeToWire } from './response-shapes.js';

function describeInstanceTypes({ params, model }: ActionContext): Record<string, unknown> {
  const wanted = params.list('InstanceTypes');
  if (wanted.length > 10) throw apiError('InvalidParameter', 'At most 10 InstanceTypes.N values are allowed.');
  const family = params.string('InstanceTypeFamily');
  const families = params.list('InstanceTypeFamilies');
  const types = [...model.listInstanceTypes()].filter(
    (type) =>
      (wanted.length === 0 || wanted.includes(type.instanceTypeId)) &&
      (family === undefined || type.instanceTypeFamily === family) &&
      (families.length === 0 || families.includes(type.instanceTypeFamily)),
  );
  const indexed = types.map((type, index) => ({ type, index }));
  // Since 2023-11-15 the real API returns at most 100 per page.
  const page = pageItems({
    items: indexed,
    keyOf: (item) => item.index,
    params,
    limits: { minResults: 1, maxResults: 100, defaultPageSize: 100, maxPageSize: 100 },
  });
  return {
    NextToken: page.nextToken,
    InstanceTypes: { InstanceType: page.items.map((item) => instanceTypeToWire(item.type)) },
  };
}

function describeInstances({ params, model }: ActionContext): Record<string, unknown> {
  const ids = params.jsonList('InstanceIds');
  if (ids !== undefined && ids.length > 100) throw apiError('InvalidParameter', 'At most 100 InstanceIds are allowed.');
  const vpcId = params.string('VpcId');
  const zoneId = params.string('ZoneId');
  const vSwitchId = params.string('VSwitchId');
  const instanceType = params.string('InstanceType');
  const status = params.string('Status');
  const selected = [...model.listInstances()]
    .filter(
      (instance) =>
        (ids === undefined || ids.includes(instance.instanceId)) &&
        (vpcId === undefined || instance.vpcId === vpcId) &&
        (zoneId === undefined || instance.zoneId === zoneId) &&
        (vSwitchId === undefined || instance.vSwitchId === vSwitchId) &&
        (instanceType === undefined || instance.instanceType.instanceTypeId === instanceType) &&
        (status === undefined || instance.status === status),
    )
    .map((instance, index) => ({ instance, index }));
  const page = pageItems({
    items: selected,
    keyOf: (item) => item.index,
    params,
    limits: { minResults: 1, maxResults: 100, defaultPageSize: 10, maxPageSize: 100 },
  });
  return {
    NextToken: page.nextToken,
    TotalCount: page.totalCount,
    PageNumber: page.pageNumber,
    PageSize: page.pageSize,
    Instances: {
      Instance: page.items.map(({ instance }) =>
        instanceToWire({ instance, enis: model.enisOfInstance(instance.instanceId), regionId: model.regionId }),
      ),
    },
  };
}

/** Instance and instance-type reads of the ECS API. */
export const INSTANCE_ACTIONS: Record<string, ActionDefinition> = {
  DescribeInstanceTypes: {
    product: 'Ecs',
    version: ECS_VERSION,
    requiresRegion: false,
    idempotent: false,
    handle: describeInstanceTypes,
  },
  DescribeInstances: {
    product: 'Ecs',
    version: ECS_VERSION,
    requiresRegion: true,
    idempotent: false,
    handle: describeInstances,
  },
};
