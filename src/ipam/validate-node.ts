/**
 * Runtime validation of a Terway `Node` custom resource read from Kubernetes: untyped JSON in, a typed
 * {@link NodeCr} plus a list of problems out. It never throws.
 *
 * Severity policy (the apiserver's structural schema already refuses wrong JSON types and enum values, so most
 * problems found here are semantic: inverted pool bounds, bad IP text, map keys that disagree with their entry):
 *
 * - `unusable` (`ok: false`): not an object, not `network.alibabacloud.com/v1beta1` `Node`, or no `metadata.name`.
 * - `info`: `spec.eni` / `spec.pool` absent. The per-node daemon has not written them yet; `readiness` is
 *   `daemonNotReady` and the controller waits, exactly as Terway does.
 * - `blocking`: the controller must neither allocate nor release for this node, because acting on a partial
 *   reading could hand one IP to two pods or create the wrong ENIs. This covers every defect in what the daemon
 *   asked for (`spec.eni`, `spec.pool`, `spec.flavor`), a missing or unusable `nodeMetadata.instanceID` / `zoneID`
 *   or `nodeCap` limits, garbled `metadata` fields, an unreadable `status` or `networkInterfaces`, Terway's prefix
 *   mode (`spec.eni.enableIPPrefix`, which this controller does not implement), and any defective ENI or IP entry
 *   that holds (or may hold) a pod binding.
 * - `warning`: a defect that can be dropped without losing a pod binding. The defective ENI or IP entry, or the
 *   optional field, is left out of the returned node and the next OpenAPI sync rebuilds it from ECS. This covers
 *   idle IP entries, ENIs without bound IPs, descriptive fields (`macAddress`, CIDRs, conditions, sync times),
 *   optional `nodeMetadata` / `nodeCap` fields and an unknown `vSwitchSelectPolicy` (the controller then uses its
 *   default). Two warnings keep or fill the value instead: a malformed `deletionTimestamp` (only its presence
 *   matters) and a missing `apiVersion` / `kind`.
 *
 * `null` counts as absent everywhere: Go marshals nil slices and zero times as `null`. Fields the model does not
 * know (Kubernetes' own metadata, newer Terway fields) are dropped silently, so the returned node must never be
 * written back whole: patch only the fields this controller owns.
 */

import { isIpInCidr, parseCidr, parseIp } from './ip-address.js';
import {
  ENI_CONDITION_TYPES,
  ENI_TRAFFIC_MODES,
  ENI_TYPES,
  IP_STATUSES,
  NODE_CR_API_VERSION,
  NODE_CR_KIND,
  VSWITCH_SELECT_POLICIES,
  sortedKeys,
} from './node-model.js';
import type {
  EniCondition,
  EniConditionType,
  EniSpec,
  EniTag,
  FlavorEntry,
  IpEntry,
  IpFamily,
  NetworkInterface,
  NodeCap,
  NodeCr,
  NodeMetadata,
  NodeSpec,
  NodeStatus,
  ObjectMeta,
  PoolSpec,
} from './node-model.js';
import { parseRfc3339 } from './rfc3339.js';

/** Every {@link SpecProblemCode}, for exhaustive tables (metrics labels, event reasons). */
export const SPEC_PROBLEM_CODES = [
  'missing',
  'invalidType',
  'outOfRange',
  'inverted',
  'unknownValue',
  'malformedIp',
  'malformedCidr',
  'malformedTime',
  'wrongFamily',
  'keyMismatch',
  'noIpFamily',
  'unsupported',
  'emptyKey',
  'outsideCidr',
] as const;
/** What is wrong with one field of the CR. */
export type SpecProblemCode = (typeof SPEC_PROBLEM_CODES)[number];

/** Every {@link SpecProblemSeverity}, most severe first. */
export const SPEC_PROBLEM_SEVERITIES = ['blocking', 'warning', 'info'] as const;
/** `blocking` stops allocation for the node, `warning` dropped a field or entry, `info` is an expected state. */
export type SpecProblemSeverity = (typeof SPEC_PROBLEM_SEVERITIES)[number];

/** One problem found in a Node CR; `message` is a self-contained sentence fit for a Kubernetes Event. */
export interface SpecProblem {
  /** Dotted path of the field, map keys in brackets: `status.networkInterfaces["eni-1"].ipv4["10.0.0.9"]`. */
  path: string;
  code: SpecProblemCode;
  severity: SpecProblemSeverity;
  message: string;
}

/**
 * `daemonNotReady` while Terway's daemon has not yet written `spec.eni` and `spec.pool`; `ready` with `isBlocked`
 * false guarantees both are present in the returned node.
 */
export type NodeReadiness = 'ready' | 'daemonNotReady';

/** A CR that could be read: the typed copy, its readiness and whether a blocking problem forbids allocation. */
export interface UsableNodeCr {
  ok: true;
  node: NodeCr;
  readiness: NodeReadiness;
  /** True when some problem is `blocking`: do not allocate or release IPs for this node. */
  isBlocked: boolean;
  problems: readonly SpecProblem[];
}

/** A CR that cannot be used at all (not a Terway Node or no name); `problems` says why. */
export interface UnusableNodeCr {
  ok: false;
  problems: readonly SpecProblem[];
}

/** Result of {@link validateNodeCr}. */
export type NodeCrValidation = UsableNodeCr | UnusableNodeCr;

type JsonObject = Readonly<Record<string, unknown>>;

/** Where problems of one part of the walk go, and the severity its defects get by default. */
interface Sink {
  readonly problems: SpecProblem[];
  readonly severity: SpecProblemSeverity;
}

/** One object being read: its path and its own properties. */
interface Scope {
  readonly sink: Sink;
  readonly path: string;
  readonly object: JsonObject;
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Path of a field: fields are identifiers, so they join with a dot. */
function childPath(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

/** Path of a map entry: keys (ENI ids, IPs) may hold dots or colons, so they go in brackets, JSON-quoted. */
function mapEntryPath(path: string, key: string): string {
  return `${path}[${JSON.stringify(key)}]`;
}

/** A value shown in a message: short, and never the content of an object. */
function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (typeof value === 'string') return JSON.stringify(value.length > 64 ? `${value.slice(0, 64)}…` : value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

function report(sink: Sink, problem: Omit<SpecProblem, 'severity'> & { severity?: SpecProblemSeverity }): void {
  sink.problems.push({ severity: sink.severity, ...problem });
}

function scopeOf(sink: Sink, path: string, object: JsonObject): Scope {
  return { sink, path, object };
}

/** An own property, with `null` read as absent. */
function own(object: JsonObject, key: string): unknown {
  if (!Object.hasOwn(object, key)) return undefined;
  const value = object[key];
  return value === null ? undefined : value;
}

function reportMissing(scope: Scope, key: string): void {
  const path = childPath(scope.path, key);
  report(scope.sink, { path, code: 'missing', message: `${path} is missing` });
}

function reportType(scope: Scope, key: string, expected: string): void {
  const path = childPath(scope.path, key);
  const got = describe(own(scope.object, key));
  report(scope.sink, { path, code: 'invalidType', message: `${path} must be ${expected}, got ${got}` });
}

interface FieldRule {
  required?: boolean;
}

function readString(scope: Scope, key: string, rule: FieldRule = {}): string | undefined {
  const value = own(scope.object, key);
  if (value === undefined) {
    if (rule.required === true) reportMissing(scope, key);
    return undefined;
  }
  if (typeof value === 'string') return value;
  reportType(scope, key, 'a string');
  return undefined;
}

/** A required string that must also be non-empty (ids and names). */
function readName(scope: Scope, key: string): string | undefined {
  const value = readString(scope, key, { required: true });
  if (value !== '') return value;
  const path = childPath(scope.path, key);
  report(scope.sink, { path, code: 'missing', message: `${path} is empty` });
  return undefined;
}

function readBoolean(scope: Scope, key: string, rule: FieldRule = {}): boolean | undefined {
  const value = own(scope.object, key);
  if (value === undefined) {
    if (rule.required === true) reportMissing(scope, key);
    return undefined;
  }
  if (typeof value === 'boolean') return value;
  reportType(scope, key, 'true or false');
  return undefined;
}

interface IntegerRule extends FieldRule {
  /** Smallest accepted value: 0 for counts, 1 for capacities the allocator divides by or multiplies with. */
  min: number;
}

function readInteger(scope: Scope, key: string, rule: IntegerRule): number | undefined {
  const value = own(scope.object, key);
  if (value === undefined) {
    if (rule.required === true) reportMissing(scope, key);
    return undefined;
  }
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) {
    reportType(scope, key, 'an integer');
    return undefined;
  }
  if (value >= rule.min) return value;
  const path = childPath(scope.path, key);
  const bound = rule.min === 0 ? 'negative' : `below ${rule.min}`;
  report(scope.sink, { path, code: 'outOfRange', message: `${path} must not be ${bound}, got ${value}` });
  return undefined;
}

function readEnum<T extends string>(
  scope: Scope,
  key: string,
  rule: FieldRule & { values: readonly T[] },
): T | undefined {
  const value = readString(scope, key, rule);
  if (value === undefined) return undefined;
  const known = rule.values.find((candidate) => candidate === value);
  if (known !== undefined) return known;
  const path = childPath(scope.path, key);
  const message = `${path} is ${describe(value)}, expected one of ${rule.values.join(', ')}`;
  report(scope.sink, { path, code: 'unknownValue', message });
  return undefined;
}

function readStringArray(scope: Scope, key: string): string[] | undefined {
  const value = own(scope.object, key);
  if (value === undefined) return undefined;
  if (Array.isArray(value)) {
    // Array.from turns holes of a sparse array into undefined, which every() then sees and refuses.
    const items: readonly unknown[] = Array.from(value as readonly unknown[]);
    if (items.every((item): item is string => typeof item === 'string')) return [...items];
  }
  reportType(scope, key, 'a list of strings');
  return undefined;
}

function readStringMap(scope: Scope, key: string): Record<string, string> | undefined {
  const value = own(scope.object, key);
  if (value === undefined) return undefined;
  if (isObject(value) && Object.values(value).every((item) => typeof item === 'string')) {
    // fromEntries defines own properties, so a "__proto__" key stays data instead of changing the prototype.
    return Object.fromEntries(sortedKeys(value).map((name) => [name, value[name] as string]));
  }
  reportType(scope, key, 'a map of strings');
  return undefined;
}

/** An RFC 3339 time kept as text; a malformed one is reported (as a warning) and dropped. */
function readTime(scope: Scope, key: string): string | undefined {
  const value = readString(scope, key);
  if (value === undefined || parseRfc3339(value) !== undefined) return value;
  const path = childPath(scope.path, key);
  report(scope.sink, {
    path,
    code: 'malformedTime',
    severity: 'warning',
    message: `${path} is not an RFC 3339 time: ${describe(value)}`,
  });
  return undefined;
}

/** A nested object; absent gives `undefined` silently, another type is reported. */
function readObject(scope: Scope, key: string): Scope | 'absent' | 'invalid' {
  const value = own(scope.object, key);
  if (value === undefined) return 'absent';
  if (isObject(value)) return scopeOf(scope.sink, childPath(scope.path, key), value);
  reportType(scope, key, 'an object');
  return 'invalid';
}

function withSink(scope: Scope, sink: Sink): Scope {
  return { ...scope, sink };
}

function validateMetadata(scope: Scope, name: string): ObjectMeta {
  const uid = readString(scope, 'uid');
  const resourceVersion = readString(scope, 'resourceVersion');
  const labels = readStringMap(scope, 'labels');
  const annotations = readStringMap(scope, 'annotations');
  const finalizers = readStringArray(scope, 'finalizers');
  // Only the presence of deletionTimestamp matters (the CR is being deleted), so a malformed value is kept.
  const deletionTimestamp = readString(scope, 'deletionTimestamp');
  if (deletionTimestamp !== undefined && parseRfc3339(deletionTimestamp) === undefined) {
    const path = childPath(scope.path, 'deletionTimestamp');
    const message = `${path} is not an RFC 3339 time: ${describe(deletionTimestamp)}`;
    report(scope.sink, { path, code: 'malformedTime', severity: 'warning', message });
  }
  return {
    name,
    ...(uid === undefined ? {} : { uid }),
    ...(resourceVersion === undefined ? {} : { resourceVersion }),
    ...(labels === undefined ? {} : { labels }),
    ...(annotations === undefined ? {} : { annotations }),
    ...(finalizers === undefined ? {} : { finalizers }),
    ...(deletionTimestamp === undefined ? {} : { deletionTimestamp }),
  };
}

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

/** Copies an object with its keys sorted, so output never depends on the order fields were checked. */
function sortObject<T extends object>(value: T): T {
  const record = value as Readonly<Record<string, unknown>>;
  return Object.fromEntries(sortedKeys(record).map((key) => [key, record[key]])) as T;
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
  // In prefix mode Terway's daemon owns the pod bindings; individual IPs allocated here would collide with it.
  if (own(scope.object, 'enableIPPrefix') === true) {
    const path = childPath(scope.path, 'enableIPPrefix');
    const message = `${path} is true: IP prefix mode is not supported by this controller`;
    report(scope.sink, { path, code: 'unsupported', message });
  }
  return sortObject(eni);
}

function validatePool(spec: Scope): PoolSpec | undefined {
  const scope = readObject(spec, 'pool');
  if (scope === 'absent') {
    const path = childPath(spec.path, 'pool');
    const message = `${path} is not set yet: the Terway daemon on the node has not written its pool configuration`;
    report(spec.sink, { path, code: 'missing', severity: 'info', message });
  }
  if (typeof scope === 'string') return undefined;
  const maxPoolSize = readInteger(scope, 'maxPoolSize', { required: true, min: 0 });
  const minPoolSize = readInteger(scope, 'minPoolSize', { required: true, min: 0 });
  if (maxPoolSize === undefined || minPoolSize === undefined) return undefined;
  if (minPoolSize > maxPoolSize) {
    // The pool would grow to min and then release down to max on every pass.
    const path = childPath(scope.path, 'minPoolSize');
    const message = `${path} (${minPoolSize}) is greater than maxPoolSize (${maxPoolSize})`;
    report(scope.sink, { path, code: 'inverted', message });
  }
  return { maxPoolSize, minPoolSize };
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

function validateSpec(root: Scope): NodeSpec {
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

/** Validates one ENI entry; see the module comment for when a defective ENI is dropped or blocks the node. */
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

function validateStatus(root: Scope): NodeStatus | undefined {
  const scope = readObject(root, 'status');
  if (typeof scope === 'string') return undefined;
  const times = withSink(scope, { problems: scope.sink.problems, severity: 'warning' });
  const nextSyncOpenAPITime = readTime(times, 'nextSyncOpenAPITime');
  const lastSyncOpenAPITime = readTime(times, 'lastSyncOpenAPITime');
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
    ...(networkInterfaces === undefined ? {} : { networkInterfaces }),
  };
}

function compareProblems(a: SpecProblem, b: SpecProblem): number {
  if (a.path !== b.path) return a.path < b.path ? -1 : 1;
  if (a.code !== b.code) return a.code < b.code ? -1 : 1;
  return a.message < b.message ? -1 : a.message > b.message ? 1 : 0;
}

function unusable(problem: Omit<SpecProblem, 'severity'>): UnusableNodeCr {
  return { ok: false, problems: [{ ...problem, severity: 'blocking' }] };
}

/** Checks the identity fields without which the object is not a Terway Node CR at all. */
function readIdentity(root: Scope): { name: string } | UnusableNodeCr {
  for (const [key, expected] of [
    ['apiVersion', NODE_CR_API_VERSION],
    ['kind', NODE_CR_KIND],
  ] as const) {
    const value = own(root.object, key);
    if (value !== undefined && value !== expected) {
      const message = `${key} is ${describe(value)}, expected ${JSON.stringify(expected)}: not a Terway Node resource`;
      return unusable({ path: key, code: 'unknownValue', message });
    }
  }
  const metadata = own(root.object, 'metadata');
  if (!isObject(metadata)) {
    const code = metadata === undefined ? 'missing' : 'invalidType';
    return unusable({ path: 'metadata', code, message: `metadata must be an object, got ${describe(metadata)}` });
  }
  const name = own(metadata, 'name');
  if (typeof name !== 'string' || name === '') {
    const code = name === undefined || name === '' ? 'missing' : 'invalidType';
    const message = `metadata.name must be a non-empty string, got ${describe(name)}`;
    return unusable({ path: 'metadata.name', code, message });
  }
  return { name };
}

/** Whether the daemon has written `spec.eni` and `spec.pool`, valid or not: a bad value is blocking, not "not ready". */
function hasDaemonWritten(raw: JsonObject): boolean {
  const spec = own(raw, 'spec');
  return isObject(spec) && own(spec, 'eni') !== undefined && own(spec, 'pool') !== undefined;
}

/**
 * Turns a Node CR as read from Kubernetes into a typed copy with only the fields the model knows, plus every
 * problem found, ordered by path; never throws and never aliases the input.
 */
export function validateNodeCr(raw: unknown): NodeCrValidation {
  if (!isObject(raw)) {
    return unusable({
      path: '',
      code: 'invalidType',
      message: `a Node resource must be an object, got ${describe(raw)}`,
    });
  }
  const problems: SpecProblem[] = [];
  const root = scopeOf({ problems, severity: 'blocking' }, '', raw);
  const identity = readIdentity(root);
  if ('ok' in identity) return identity;
  for (const key of ['apiVersion', 'kind']) {
    if (own(raw, key) === undefined) {
      report(root.sink, { path: key, code: 'missing', severity: 'warning', message: `${key} is missing` });
    }
  }
  const metadata = validateMetadata(scopeOf(root.sink, 'metadata', raw['metadata'] as JsonObject), identity.name);
  const spec = validateSpec(root);
  const status = validateStatus(root);
  const node: NodeCr = {
    apiVersion: NODE_CR_API_VERSION,
    kind: NODE_CR_KIND,
    metadata,
    spec,
    ...(status === undefined ? {} : { status }),
  };
  problems.sort(compareProblems);
  return {
    ok: true,
    node,
    readiness: hasDaemonWritten(raw) ? 'ready' : 'daemonNotReady',
    isBlocked: problems.some((problem) => problem.severity === 'blocking'),
    problems,
  };
}
