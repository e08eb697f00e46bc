/** Validation of a Node CR's `status`: ENIs and their IPs (see validate-node.ts for when a defect blocks). */

import { isIpInCidr, parseCidr, parseIp } from './ip-address.js';
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
  readTime,
  report,
  scopeOf,
  withSink,
} from './node-cr-fields.js';
import type { Scope, Sink } from './node-cr-fields.js';
import type { SpecProblem } from './node-cr-problems.js';
import { ENI_CONDITION_TYPES, IP_PREFIX_STATUSES, IP_STATUSES, sortedKeys } from './node-model.js';
import type {
  EniCondition,
  EniConditionType,
  IpEntry,
  IpFamily,
  IpPrefixEntry,
  NetworkInterface,
  NodeStatus,
} from './node-model.js';
import { parseRfc3339 } from './rfc3339.js';

/** A raw IP entry holds a binding if its podID is non-empty, or unreadable (then assume the worst). */
function mayHoldBinding(rawEntry: unknown): boolean {
  if (!isObject(rawEntry)) return true;
  const podID = own(rawEntry, 'podID');
  return podID !== undefined && podID !== '';
}

interface IpEntryInput {
  scope: Scope;
  key: string;
  family: IpFamily;
}

/** Validates one IP entry; a defective entry is dropped, as a warning if idle and blocking if it may be bound. */
function validateIpEntry(input: IpEntryInput, rawEntry: unknown): IpEntry | undefined {
  const { scope: mapScope, key, family } = input;
  const path = mapEntryPath(mapScope.path, key);
  const defects: SpecProblem[] = [];
  const sink: Sink = { problems: defects, severity: mayHoldBinding(rawEntry) ? 'blocking' : 'warning' };
  const parsedKey = parseIp(key);
  if (parsedKey === undefined) {
    report(sink, { path, code: 'malformedIp', message: `${path}: the key ${describe(key)} is not an IP address` });
  } else if (parsedKey.family !== family) {
    const message = `${path}: ${key} is not an ${family === 'ipv4' ? 'IPv4' : 'IPv6'} address`;
    report(sink, { path, code: 'wrongFamily', message });
  }
  let entry: IpEntry | undefined;
  if (isObject(rawEntry)) {
    const scope = scopeOf(sink, path, rawEntry);
    const ip = readString(scope, 'ip', { required: true });
    const primary = readBoolean(scope, 'primary', { required: true });
    const status = readEnum(scope, 'status', { required: true, values: IP_STATUSES });
    const podID = readString(scope, 'podID');
    const podUID = readString(scope, 'podUID');
    if (ip !== undefined && ip !== key) {
      const ipPath = childPath(path, 'ip');
      const message = `${ipPath} is ${describe(ip)} but the entry is stored under ${describe(key)}`;
      report(sink, { path: ipPath, code: 'keyMismatch', message });
    }
    if (ip !== undefined && primary !== undefined && status !== undefined) {
      entry = {
        ip,
        primary,
        status,
        ...(podID === undefined ? {} : { podID }),
        ...(podUID === undefined ? {} : { podUID }),
      };
    }
  } else {
    report(sink, { path, code: 'invalidType', message: `${path} must be an object, got ${describe(rawEntry)}` });
  }
  mapScope.sink.problems.push(...defects);
  return defects.length === 0 ? entry : undefined;
}

/** Reads one IP map: an unreadable map is a defect of the ENI (`eni.sink`), bad entries go to `entrySink`. */
function validateIpMap(eni: Scope, input: { family: IpFamily; entrySink: Sink }): Record<string, IpEntry> | undefined {
  const { family, entrySink } = input;
  const mapScope = readObject(eni, family);
  if (typeof mapScope === 'string') return undefined;
  const scope = withSink(mapScope, entrySink);
  const entries: [string, IpEntry][] = [];
  for (const key of sortedKeys(scope.object)) {
    const entry = validateIpEntry({ scope, key, family }, scope.object[key]);
    if (entry !== undefined) entries.push([key, entry]);
  }
  return Object.fromEntries(entries);
}

function validateCidr(scope: Scope, key: 'ipv4CIDR' | 'ipv6CIDR'): string | undefined {
  const value = readString(scope, key);
  // The seed writes "" until the vSwitch pool fills the CIDR in.
  if (value === undefined || value === '') return value;
  const parsed = parseCidr(value);
  const family = key === 'ipv4CIDR' ? 'ipv4' : 'ipv6';
  if (parsed?.ip.family === family) return value;
  const path = childPath(scope.path, key);
  const code = parsed === undefined ? 'malformedCidr' : 'wrongFamily';
  const expected = family === 'ipv4' ? 'an IPv4 CIDR' : 'an IPv6 CIDR';
  report(scope.sink, { path, code, message: `${path} must be ${expected}, got ${describe(value)}` });
  return undefined;
}

function validateConditions(eni: Scope): NetworkInterface['conditions'] {
  const scope = readObject(eni, 'conditions');
  if (typeof scope === 'string') return undefined;
  const conditions: [EniConditionType, EniCondition][] = [];
  for (const key of sortedKeys(scope.object)) {
    const path = mapEntryPath(scope.path, key);
    const type = ENI_CONDITION_TYPES.find((candidate) => candidate === key);
    if (type === undefined) {
      const message = `${path} is not a known ENI condition (${ENI_CONDITION_TYPES.join(', ')})`;
      report(scope.sink, { path, code: 'unknownValue', message });
      continue;
    }
    const raw = scope.object[key];
    if (!isObject(raw)) {
      report(scope.sink, { path, code: 'invalidType', message: `${path} must be an object, got ${describe(raw)}` });
      continue;
    }
    const entry = scopeOf(scope.sink, path, raw);
    const observedTime = readString(entry, 'observedTime', { required: true });
    const message = readString(entry, 'message', { required: true });
    if (observedTime !== undefined && parseRfc3339(observedTime) === undefined) {
      const timePath = childPath(path, 'observedTime');
      const text = `${timePath} is not an RFC 3339 time: ${describe(observedTime)}`;
      report(entry.sink, { path: timePath, code: 'malformedTime', message: text });
      continue;
    }
    if (observedTime !== undefined && message !== undefined) conditions.push([type, { observedTime, message }]);
  }
  return Object.fromEntries(conditions);
}

/**
 * Reads `ipv4Prefix`/`ipv6Prefix`. A defective entry blocks the node (`blocking` sink): the controller could count
 * neither the ENI's slots nor the node's prefixes without it, and writing the list back would lose a prefix the
 * daemon may use. A malformed `frozenExpireAt` is only a warning: the prefix stays `Frozen` (no expiry known).
 */
function validatePrefixList(eni: Scope, input: { family: IpFamily; blocking: Sink }): IpPrefixEntry[] | undefined {
  const key = input.family === 'ipv4' ? 'ipv4Prefix' : 'ipv6Prefix';
  const raw = own(eni.object, key);
  if (raw === undefined) return undefined;
  const path = childPath(eni.path, key);
  if (!Array.isArray(raw)) {
    report(input.blocking, { path, code: 'invalidType', message: `${path} must be a list, got ${describe(raw)}` });
    return undefined;
  }
  const entries: IpPrefixEntry[] = [];
  for (const [index, item] of Array.from(raw as readonly unknown[]).entries()) {
    const itemPath = `${path}[${index}]`;
    if (!isObject(item)) {
      const message = `${itemPath} must be an object, got ${describe(item)}`;
      report(input.blocking, { path: itemPath, code: 'invalidType', message });
      continue;
    }
    const scope = scopeOf(input.blocking, itemPath, item);
    const prefix = readString(scope, 'prefix', { required: true });
    const status = readEnum(scope, 'status', { required: true, values: IP_PREFIX_STATUSES });
    const frozenExpireAt = readTime(withSink(scope, eni.sink), 'frozenExpireAt');
    const parsed = prefix === undefined ? undefined : parseCidr(prefix);
    if (prefix !== undefined && parsed?.ip.family !== input.family) {
      const expected = input.family === 'ipv4' ? 'an IPv4 CIDR' : 'an IPv6 CIDR';
      const prefixPath = childPath(itemPath, 'prefix');
      const code = parsed === undefined ? 'malformedCidr' : 'wrongFamily';
      report(input.blocking, {
        path: prefixPath,
        code,
        message: `${prefixPath} must be ${expected}, got ${describe(prefix)}`,
      });
      continue;
    }
    if (prefix === undefined || status === undefined) continue;
    entries.push({ prefix, status, ...(frozenExpireAt === undefined ? {} : { frozenExpireAt }) });
  }
  return entries;
}

/** Validates one ENI entry; see validate-node.ts's module comment for when a defective ENI is dropped or blocks the node. */
function validateNetworkInterface(enisScope: Scope, key: string): NetworkInterface | undefined {
  const path = mapEntryPath(enisScope.path, key);
  const raw = enisScope.object[key];
  const warnings: Sink = { problems: enisScope.sink.problems, severity: 'warning' };
  const defects: SpecProblem[] = [];
  if (!isObject(raw)) {
    const message = `${path} must be an object, got ${describe(raw)}`;
    enisScope.sink.problems.push({ path, code: 'invalidType', severity: 'blocking', message });
    return undefined;
  }
  const scope = scopeOf({ problems: defects, severity: 'blocking' }, path, raw);
  const id = readName(scope, 'id');
  if (id !== undefined && id !== key) {
    const idPath = childPath(path, 'id');
    const message = `${idPath} is ${describe(id)} but the ENI is stored under ${describe(key)}`;
    report(scope.sink, { path: idPath, code: 'keyMismatch', message });
  }
  const status = readString(scope, 'status', { required: true });
  // Type and mode decide whether the ENI may be released, so a garbled one is a defect of the whole ENI.
  const networkInterfaceType = readString(scope, 'networkInterfaceType');
  const networkInterfaceTrafficMode = readString(scope, 'networkInterfaceTrafficMode');
  const ipMapsReadable = ['ipv4', 'ipv6'].every((family) => {
    const map = own(raw, family);
    return map === undefined || isObject(map);
  });
  const ipv4 = validateIpMap(scope, { family: 'ipv4', entrySink: warnings });
  const ipv6 = validateIpMap(scope, { family: 'ipv6', entrySink: warnings });
  const descriptive = withSink(scope, warnings);
  const macAddress = readString(descriptive, 'macAddress');
  const vSwitchID = readString(descriptive, 'vSwitchID');
  const securityGroupIDs = readStringArray(descriptive, 'securityGroupIDs');
  const primaryIPAddress = readString(descriptive, 'primaryIPAddress');
  const ipv4CIDR = validateCidr(descriptive, 'ipv4CIDR');
  const ipv6CIDR = validateCidr(descriptive, 'ipv6CIDR');
  const conditions = validateConditions(descriptive);
  const unschedulable = readBoolean(descriptive, 'unschedulable');
  const blocking: Sink = { problems: enisScope.sink.problems, severity: 'blocking' };
  const ipv4Prefix = validatePrefixList(descriptive, { family: 'ipv4', blocking });
  const ipv6Prefix = validatePrefixList(descriptive, { family: 'ipv6', blocking });
  markOutsideCidr({ scope: descriptive, family: 'ipv4', ips: ipv4, cidr: ipv4CIDR });
  markOutsideCidr({ scope: descriptive, family: 'ipv6', ips: ipv6, cidr: ipv6CIDR });
  if (defects.length > 0) {
    // Dropping the ENI is safe only when none of its IPs is bound: the OpenAPI sync re-adds it as idle.
    const rawEntries = ['ipv4', 'ipv6'].flatMap((family) => {
      const map = own(raw, family);
      return isObject(map) ? Object.values(map) : [];
    });
    const isBound = !ipMapsReadable || rawEntries.some(mayHoldBinding);
    for (const defect of defects)
      enisScope.sink.problems.push({ ...defect, severity: isBound ? 'blocking' : 'warning' });
    return undefined;
  }
  if (id === undefined || status === undefined) return undefined;
  return {
    id,
    status,
    ...(macAddress === undefined ? {} : { macAddress }),
    ...(vSwitchID === undefined ? {} : { vSwitchID }),
    ...(securityGroupIDs === undefined ? {} : { securityGroupIDs }),
    ...(primaryIPAddress === undefined ? {} : { primaryIPAddress }),
    ...(networkInterfaceTrafficMode === undefined ? {} : { networkInterfaceTrafficMode }),
    ...(networkInterfaceType === undefined ? {} : { networkInterfaceType }),
    ...(ipv4 === undefined ? {} : { ipv4 }),
    ...(ipv6 === undefined ? {} : { ipv6 }),
    ...(ipv4CIDR === undefined ? {} : { ipv4CIDR }),
    ...(ipv6CIDR === undefined ? {} : { ipv6CIDR }),
    ...(ipv4Prefix === undefined ? {} : { ipv4Prefix }),
    ...(ipv6Prefix === undefined ? {} : { ipv6Prefix }),
    ...(conditions === undefined ? {} : { conditions }),
    ...(unschedulable === undefined ? {} : { unschedulable }),
  };
}

/**
 * An address outside its ENI's vSwitch CIDR cannot be the cloud's: it is marked `Invalid` (never handed out, and a
 * pod bound to it without using it is rebound) until the next OpenAPI sync tells the truth.
 */
function markOutsideCidr(input: {
  scope: Scope;
  family: IpFamily;
  ips: Record<string, IpEntry> | undefined;
  cidr: string | undefined;
}): void {
  if (input.ips === undefined || input.cidr === undefined || input.cidr === '') return;
  for (const ip of sortedKeys(input.ips)) {
    const entry = input.ips[ip];
    if (entry === undefined || entry.status === 'Invalid' || isIpInCidr(ip, input.cidr)) continue;
    entry.status = 'Invalid';
    const path = mapEntryPath(childPath(input.scope.path, input.family), ip);
    const message = `${path} lies outside the ENI's CIDR ${input.cidr}: treated as Invalid until the next OpenAPI sync`;
    report(input.scope.sink, { path, code: 'outsideCidr', severity: 'warning', message });
  }
}

/**
 * The warm-up and idle-reclaim fields: what the controller wrote before, so a defect only warns and the field is
 * dropped (a dropped warm-up is set again from the spec; a dropped reclaim time is planned again).
 */
function readPoolStatus(scope: Scope): PoolStatusFields {
  const lastModifiedTime = readTime(scope, 'lastModifiedTime');
  const nextIdleIPReclaimTime = readTime(scope, 'nextIdleIPReclaimTime');
  const warmUpTarget = readInteger(scope, 'warmUpTarget', { min: 0 });
  const warmUpAllocatedCount = readInteger(scope, 'warmUpAllocatedCount', { min: 0 });
  const warmUpCompleted = readBoolean(scope, 'warmUpCompleted');
  return {
    ...(lastModifiedTime === undefined ? {} : { lastModifiedTime }),
    ...(nextIdleIPReclaimTime === undefined ? {} : { nextIdleIPReclaimTime }),
    ...(warmUpTarget === undefined ? {} : { warmUpTarget }),
    ...(warmUpAllocatedCount === undefined ? {} : { warmUpAllocatedCount }),
    ...(warmUpCompleted === undefined ? {} : { warmUpCompleted }),
  };
}

type PoolStatusFields = Pick<
  NodeStatus,
  'lastModifiedTime' | 'nextIdleIPReclaimTime' | 'warmUpTarget' | 'warmUpAllocatedCount' | 'warmUpCompleted'
>;

export function validateStatus(root: Scope): NodeStatus | undefined {
  const scope = readObject(root, 'status');
  if (typeof scope === 'string') return undefined;
  const times = withSink(scope, { problems: scope.sink.problems, severity: 'warning' });
  const nextSyncOpenAPITime = readTime(times, 'nextSyncOpenAPITime');
  const lastSyncOpenAPITime = readTime(times, 'lastSyncOpenAPITime');
  const pool = readPoolStatus(times);
  const enisScope = readObject(scope, 'networkInterfaces');
  let networkInterfaces: Record<string, NetworkInterface> | undefined;
  if (typeof enisScope !== 'string') {
    const entries: [string, NetworkInterface][] = [];
    for (const key of sortedKeys(enisScope.object)) {
      const eni = validateNetworkInterface(enisScope, key);
      if (eni !== undefined) entries.push([key, eni]);
    }
    networkInterfaces = Object.fromEntries(entries);
  }
  return {
    ...(nextSyncOpenAPITime === undefined ? {} : { nextSyncOpenAPITime }),
    ...(lastSyncOpenAPITime === undefined ? {} : { lastSyncOpenAPITime }),
    ...pool,
    ...(networkInterfaces === undefined ? {} : { networkInterfaces }),
  };
}
