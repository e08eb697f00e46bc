/** Validation of a Node CR's `spec`: what the Terway daemon asked for (see validate-node.ts for the severities). */

import {
  childPath,
  describe,
  isObject,
  mapEntryPath,
  own,
  readBoolean,
  readEnum,
  readInteger,
  readName,
  readObject,
  readString,
  readStringArray,
  readStringMap,
  report,
  reportMissing,
  reportType,
  scopeOf,
  sortObject,
  withSink,
} from './node-cr-fields.js';
import type { Scope } from './node-cr-fields.js';
import { ENI_TRAFFIC_MODES, ENI_TYPES, VSWITCH_SELECT_POLICIES } from './node-model.js';
import type { EniSpec, EniTag, FlavorEntry, NodeCap, NodeMetadata, NodeSpec } from './node-model.js';
import { validatePool } from './validate-pool-spec.js';

function validateNodeMetadata(spec: Scope): NodeMetadata | undefined {
  const scope = readObject(spec, 'nodeMetadata');
  if (scope === 'absent') reportMissing(spec, 'nodeMetadata');
  if (typeof scope === 'string') return undefined;
  const optional = withSink(scope, { problems: scope.sink.problems, severity: 'warning' });
  const regionID = readString(optional, 'regionID');
  const instanceType = readString(optional, 'instanceType');
  // The controller cannot call ECS without the instance, nor pick a vSwitch without the zone.
  const instanceID = readName(scope, 'instanceID');
  const zoneID = readName(scope, 'zoneID');
  return {
    ...(regionID === undefined ? {} : { regionID }),
    ...(instanceType === undefined ? {} : { instanceType }),
    ...(instanceID === undefined ? {} : { instanceID }),
    ...(zoneID === undefined ? {} : { zoneID }),
  };
}

const OPTIONAL_NODE_CAP_FIELDS = [
  'eriQuantity',
  'totalAdapters',
  'memberAdapterLimit',
  'maxMemberAdapterLimit',
  'instanceBandwidthRx',
  'instanceBandwidthTx',
] as const;

function validateNodeCap(spec: Scope, isIpv6Enabled: boolean): NodeCap | undefined {
  const scope = readObject(spec, 'nodeCap');
  if (scope === 'absent') reportMissing(spec, 'nodeCap');
  if (typeof scope === 'string') return undefined;
  const optional = withSink(scope, { problems: scope.sink.problems, severity: 'warning' });
  const nodeCap: NodeCap = {};
  // Allocation multiplies by these limits: zero would mean "no ENI" or "no IP", never a usable node.
  const adapters = readInteger(scope, 'adapters', { required: true, min: 1 });
  const ipv4PerAdapter = readInteger(scope, 'ipv4PerAdapter', { required: true, min: 1 });
  const ipv6PerAdapter = isIpv6Enabled
    ? readInteger(scope, 'ipv6PerAdapter', { required: true, min: 1 })
    : readInteger(optional, 'ipv6PerAdapter', { min: 0 });
  if (adapters !== undefined) nodeCap.adapters = adapters;
  if (ipv4PerAdapter !== undefined) nodeCap.ipv4PerAdapter = ipv4PerAdapter;
  if (ipv6PerAdapter !== undefined) nodeCap.ipv6PerAdapter = ipv6PerAdapter;
  for (const key of OPTIONAL_NODE_CAP_FIELDS) {
    const value = readInteger(optional, key, { min: 0 });
    if (value !== undefined) nodeCap[key] = value;
  }
  return sortObject(nodeCap);
}

/**
 * A tag map the cloud receives (`tag` on created ENIs, `tagFilter` on listings): ECS refuses an empty tag key with
 * `InvalidParameter`, so one here would fail every pass with a cloud error instead of a clear spec problem.
 */
function readTagMap(scope: Scope, key: string): Record<string, string> | undefined {
  const map = readStringMap(scope, key);
  if (map === undefined) return undefined;
  for (const name of Object.keys(map)) {
    if (name.trim() !== '') continue;
    const path = mapEntryPath(childPath(scope.path, key), name);
    const message = `${path}: a tag key must not be empty (ECS refuses it with InvalidParameter)`;
    report(scope.sink, { path, code: 'emptyKey', message });
  }
  return map;
}

/** `spec.eni.tagBlockList`: `[{ key, value }]`; an unreadable item is blocking (a blocked ENI could be used). */
function readTagList(scope: Scope, key: string): EniTag[] | undefined {
  const value = own(scope.object, key);
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) {
    reportType(scope, key, 'a list');
    return undefined;
  }
  const tags: EniTag[] = [];
  for (const [index, item] of (value as unknown[]).entries()) {
    const itemPath = `${childPath(scope.path, key)}[${index}]`;
    if (!isObject(item)) {
      report(scope.sink, {
        path: itemPath,
        code: 'invalidType',
        message: `${itemPath} must be an object, got ${describe(item)}`,
      });
      continue;
    }
    const entry = scopeOf(scope.sink, itemPath, item);
    const tagKey = readString(entry, 'key', { required: true });
    const tagValue = readString(entry, 'value') ?? '';
    if (tagKey === undefined) continue;
    if (tagKey.trim() === '') {
      const message = `${itemPath}.key must not be empty`;
      report(scope.sink, { path: `${itemPath}.key`, code: 'emptyKey', message });
      continue;
    }
    tags.push({ key: tagKey, value: tagValue });
  }
  return tags;
}

function validateEni(spec: Scope): EniSpec | undefined {
  const scope = readObject(spec, 'eni');
  if (scope === 'absent') {
    const path = childPath(spec.path, 'eni');
    const message = `${path} is not set yet: the Terway daemon on the node has not written its ENI configuration`;
    report(spec.sink, { path, code: 'missing', severity: 'info', message });
  }
  if (typeof scope === 'string') return undefined;
  const eni: EniSpec = {};
  const tag = readTagMap(scope, 'tag');
  const tagFilter = readTagMap(scope, 'tagFilter');
  const tagBlockList = readTagList(scope, 'tagBlockList');
  const vSwitchOptions = readStringArray(scope, 'vSwitchOptions');
  const securityGroupIDs = readStringArray(scope, 'securityGroupIDs');
  const resourceGroupID = readString(scope, 'resourceGroupID');
  if (tag !== undefined) eni.tag = tag;
  if (tagFilter !== undefined) eni.tagFilter = tagFilter;
  if (vSwitchOptions !== undefined) eni.vSwitchOptions = vSwitchOptions;
  if (securityGroupIDs !== undefined) eni.securityGroupIDs = securityGroupIDs;
  if (resourceGroupID !== undefined) eni.resourceGroupID = resourceGroupID;
  if (tagBlockList !== undefined) eni.tagBlockList = tagBlockList;
  for (const key of ['enableIPv4', 'enableIPv6', 'enableERDMA', 'enableTrunk'] as const) {
    const value = readBoolean(scope, key);
    if (value !== undefined) eni[key] = value;
  }
  // Every policy has a safe fallback, so an unknown one (a newer Terway) only loses the operator's preference.
  const lenient = withSink(scope, { problems: scope.sink.problems, severity: 'warning' });
  const policy = readEnum(lenient, 'vSwitchSelectPolicy', { values: VSWITCH_SELECT_POLICIES });
  if (policy !== undefined) eni.vSwitchSelectPolicy = policy;
  if (eni.enableIPv4 !== true && eni.enableIPv6 !== true) {
    const message = `${scope.path} enables neither IPv4 nor IPv6, so there is nothing to allocate`;
    report(scope.sink, { path: scope.path, code: 'noIpFamily', message });
  }
  validatePrefixMode(scope, eni);
  return sortObject(eni);
}

/**
 * Prefix mode (Terway v1.17): `enableIPPrefix`, the node's `ipv4PrefixCount` total and, on an IPv6-only node, an
 * `ipv6PrefixCount` of 0 or 1 (a dual-stack node gets one IPv6 prefix per ENI holding IPv4 prefixes and ignores it,
 * as Terway does). A bad count blocks the node only when prefix mode uses it.
 */
function validatePrefixMode(scope: Scope, eni: EniSpec): void {
  const enabled = readBoolean(scope, 'enableIPPrefix');
  if (enabled !== undefined) eni.enableIPPrefix = enabled;
  const counts = enabled === true ? scope : withSink(scope, { problems: scope.sink.problems, severity: 'warning' });
  const ipv4PrefixCount = readInteger(counts, 'ipv4PrefixCount', { min: 0 });
  if (ipv4PrefixCount !== undefined) eni.ipv4PrefixCount = ipv4PrefixCount;
  const ipv6PrefixCount = readInteger(counts, 'ipv6PrefixCount', { min: 0 });
  if (ipv6PrefixCount === undefined) return;
  const ipv6Only = eni.enableIPv6 === true && eni.enableIPv4 !== true;
  if (ipv6Only && ipv6PrefixCount > 1) {
    const path = childPath(scope.path, 'ipv6PrefixCount');
    const message = `${path} must be 0 or 1 on an IPv6-only node (one /80 prefix per node), got ${ipv6PrefixCount}`;
    report(counts.sink, { path, code: 'outOfRange', message });
    return;
  }
  eni.ipv6PrefixCount = ipv6PrefixCount;
}

function validateFlavor(spec: Scope): FlavorEntry[] | undefined {
  const value = own(spec.object, 'flavor');
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) {
    reportType(spec, 'flavor', 'a list');
    return undefined;
  }
  const path = childPath(spec.path, 'flavor');
  const entries: FlavorEntry[] = [];
  for (const [index, item] of (value as unknown[]).entries()) {
    const itemPath = `${path}[${index}]`;
    if (!isObject(item)) {
      const message = `${itemPath} must be an object, got ${describe(item)}`;
      report(spec.sink, { path: itemPath, code: 'invalidType', message });
      continue;
    }
    const scope = scopeOf(spec.sink, itemPath, item);
    const networkInterfaceType = readEnum(scope, 'networkInterfaceType', { required: true, values: ENI_TYPES });
    const networkInterfaceTrafficMode = readEnum(scope, 'networkInterfaceTrafficMode', {
      required: true,
      values: ENI_TRAFFIC_MODES,
    });
    const count = readInteger(scope, 'count', { required: true, min: 0 });
    if (networkInterfaceType !== undefined && networkInterfaceTrafficMode !== undefined && count !== undefined) {
      entries.push({ networkInterfaceType, networkInterfaceTrafficMode, count });
    }
  }
  return entries;
}

export function validateSpec(root: Scope): NodeSpec {
  const specScope = readObject(root, 'spec');
  const scope = typeof specScope === 'string' ? scopeOf(root.sink, 'spec', {}) : specScope;
  const eni = validateEni(scope);
  const nodeMetadata = validateNodeMetadata(scope);
  const nodeCap = validateNodeCap(scope, eni?.enableIPv6 === true);
  const pool = validatePool(scope);
  const flavor = validateFlavor(scope);
  return {
    ...(nodeMetadata === undefined ? {} : { nodeMetadata }),
    ...(nodeCap === undefined ? {} : { nodeCap }),
    ...(eni === undefined ? {} : { eni }),
    ...(pool === undefined ? {} : { pool }),
    ...(flavor === undefined ? {} : { flavor }),
  };
}
