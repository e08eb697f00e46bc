import { apiError } from '../api-error.js';
import type { ActionContext, ActionDefinition } from './action-types.js';
import { VPC_VERSION } from './action-types.js';
import { pageItems } from './paging.js';
import { vSwitchToWire } from './response-shapes.js';

function describeVSwitches({ params, model }: ActionContext): Record<string, unknown> {
  const vpcId = params.string('VpcId');
  if (params.string('RegionId') === undefined && vpcId === undefined) {
    throw apiError('MissingParameter', 'The input parameter "RegionId" or "VpcId" is mandatory.');
  }
  const vSwitchId = params.string('VSwitchId');
  const zoneId = params.string('ZoneId');
  const name = params.string('VSwitchName');
  const enableIpv6 = params.boolean('EnableIpv6');
  const tags = params.tags();
  const selected = [...model.listVSwitches()]
    .filter(
      (v) =>
        (vpcId === undefined || v.vpcId === vpcId) &&
        (vSwitchId === undefined || v.vSwitchId === vSwitchId) &&
        (zoneId === undefined || v.zoneId === zoneId) &&
        (name === undefined || v.name === name) &&
        (enableIpv6 === undefined || (v.ipv6CidrBlock !== null) === enableIpv6) &&
        tags.every((wanted) =>
          v.tags.some((tag) => tag.key === wanted.key && (wanted.value === '' || tag.value === wanted.value)),
        ),
    )
    .map((vSwitch, index) => ({ vSwitch, index }));
  const page = pageItems({
    items: selected,
    keyOf: (item) => item.index,
    params,
    limits: { minResults: 1, maxResults: 50, defaultPageSize: 10, maxPageSize: 50 },
  });
  return {
    TotalCount: page.totalCount,
    PageNumber: page.pageNumber,
    PageSize: page.pageSize,
    VSwitches: { VSwitch: page.items.map((item) => vSwitchToWire(item.vSwitch, model.ownerId)) },
  };
}

function describeVSwitchAttributes({ params, model }: ActionContext): Record<string, unknown> {
  const vSwitch = model.requireVSwitch(params.requiredString('VSwitchId'));
  return vSwitchToWire(vSwitch, model.ownerId);
}

/** vSwitch reads of the VPC API. */
export const VSWITCH_ACTIONS: Record<string, ActionDefinition> = {
  DescribeVSwitches: {
    product: 'Vpc',
    version: VPC_VERSION,
    requiresRegion: false,
    idempotent: false,
    handle: describeVSwitches,
  },
  DescribeVSwitchAttributes: {
    product: 'Vpc',
    version: VPC_VERSION,
    requiresRegion: false,
    idempotent: false,
    handle: describeVSwitchAttributes,
  },
};
