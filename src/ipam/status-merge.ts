import { ENI_CONDITION_TYPES, sortedKeys } from './node-model.js';
import type { NetworkInterfaces } from './node-model.js';

type JsonRecord = Record<string, unknown>;

/** The fields of an ENI entry the model owns; any other field (a newer Terway's) belongs to whoever wrote it. */
const MODELLED_ENI_FIELDS = [
  'id',
  'status',
  'macAddress',
  'vSwitchID',
  'securityGroupIDs',
  'primaryIPAddress',
  'networkInterfaceTrafficMode',
  'networkInterfaceType',
  'ipv4',
  'ipv6',
  'ipv4CIDR',
  'ipv6CIDR',
  'ipv4Prefix',
  'ipv6Prefix',
  'conditions',
  'unschedulable',
] as const;
const MAP_FIELDS: readonly string[] = ['ipv4', 'ipv6', 'conditions'];
/** Fields of an IP entry or an ENI condition the model owns. */
const MODELLED_ENTRY_FIELDS = ['ip', 'primary', 'status', 'podID', 'podUID', 'observedTime', 'message'];
function isRecord(value: unknown): value is JsonRecord {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * Lays `next` over `raw` one key level deep: keys of `next` replace (or, for entries of a keyed map, are merged
 * into) the raw value; modelled keys absent from `next` are removed; every other raw key is kept as it is.
 */
function overlay(raw: unknown, next: JsonRecord, modelled: readonly string[]): JsonRecord {
  const result: JsonRecord = isRecord(raw) ? { ...raw } : {};
  for (const key of modelled) {
    if (!(key in next) || next[key] === undefined) delete result[key];
  }
  for (const key of sortedKeys(next)) {
    const value = next[key];
    if (value === undefined) continue;
    if (!MAP_FIELDS.includes(key) || !isRecord(value)) {
      result[key] = value;
      continue;
    }
    // Condition types the model does not know are someone else's: they stay. IPs follow the controller's map.
    const keepUnknown =
      key === 'conditions' ? (name: string) => !ENI_CONDITION_TYPES.some((type) => type === name) : undefined;
    result[key] = overlayMap(result[key], value, keepUnknown);
  }
  return result;
}

/** A keyed map (IPs by address, conditions by type): entries follow `next`, each entry keeps its unknown fields. */
function overlayMap(raw: unknown, next: JsonRecord, keepUnknown?: (key: string) => boolean): JsonRecord {
  const rawMap = isRecord(raw) ? raw : {};
  const result: JsonRecord = {};
  if (keepUnknown !== undefined) {
    for (const key of sortedKeys(rawMap)) if (keepUnknown(key)) result[key] = rawMap[key];
  }
  for (const key of sortedKeys(next)) {
    const value = next[key];
    if (!isRecord(value)) continue;
    result[key] = overlay(rawMap[key], value, sortedKeys(value).concat(MODELLED_ENTRY_FIELDS));
  }
  return result;
}

/**
 * The `status.networkInterfaces` to write: the controller's ENIs laid over what the CR holds now, so fields the
 * model does not know (an IP's `ipName`, anything newer) survive every write.
 * ENIs and IPs the controller dropped are dropped; modelled fields follow the controller's view exactly.
 */
export function mergeNetworkInterfacesOverRaw(input: { raw: unknown; enis: Readonly<NetworkInterfaces> }): JsonRecord {
  const rawEnis = isRecord(input.raw) ? input.raw : {};
  const result: JsonRecord = {};
  for (const eniId of sortedKeys(input.enis)) {
    const eni = input.enis[eniId];
    if (eni === undefined) continue;
    result[eniId] = overlay(rawEnis[eniId], eni as unknown as JsonRecord, MODELLED_ENI_FIELDS);
  }
  return result;
}
