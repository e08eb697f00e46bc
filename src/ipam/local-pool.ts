import { cloneNetworkInterfaces, ipEntries, isAvailable, isHighPerformance, isIdle } from './eni-records.js';
import { sortEnisForAllocation } from './eni-records.js';
import { sortedKeys } from './node-model.js';
import type { IpEntry, IpFamily, NetworkInterface, NetworkInterfaces } from './node-model.js';
import type { NodeRuntimeView } from './node-runtime.js';
import type { PodIpRequest } from './pod-demand.js';

const FAMILIES: readonly IpFamily[] = ['ipv4', 'ipv6'];

/** Where one IP lives: the ENI and the address. */
export interface IpRef {
  eniId: string;
  ip: string;
}

/** An IP taken away from a pod that is no longer on the node. */
export interface ReleasedBinding {
  podId: string;
  eniId: string;
  ip: string;
  family: IpFamily;
}

/**
 * Frees the IPs of pods that are gone (the reference's `releasePodNotFound`) and refreshes `podUID` of the pods
 * that are still there. Where the daemon writes a `NodeRuntime` CR (`nodeRuntime` given), an IP bound to a known
 * pod UID is freed only once the daemon has recorded the CNI delete for it (Terway's safe release); the others are
 * kept and listed in `awaitingCniDelete`. Without a NodeRuntime the IP is free at once, as at the seed.
 */
export function releaseIpsOfGonePods(input: {
  enis: Readonly<NetworkInterfaces>;
  requests: readonly PodIpRequest[];
  nodeRuntime?: NodeRuntimeView | undefined;
}): {
  enis: NetworkInterfaces;
  released: ReleasedBinding[];
  awaitingCniDelete: ReleasedBinding[];
} {
  const enis = cloneNetworkInterfaces(input.enis);
  const uidByPod = new Map(input.requests.map((request) => [request.podId, request.podUid]));
  const released: ReleasedBinding[] = [];
  const awaitingCniDelete: ReleasedBinding[] = [];
  for (const eniId of sortedKeys(enis)) {
    const eni = enis[eniId];
    if (eni === undefined) continue;
    for (const family of FAMILIES) {
      for (const entry of ipEntries(eni, family)) {
        if (isIdle(entry)) continue;
        const podId = entry.podID ?? '';
        const uid = uidByPod.get(podId);
        if (uid !== undefined) {
          if (uid !== '') entry.podUID = uid;
          continue;
        }
        const binding = { podId, eniId, ip: entry.ip, family };
        const podUid = entry.podUID ?? '';
        if (input.nodeRuntime !== undefined && podUid !== '') {
          if (input.nodeRuntime.cniStatusByPodUid[podUid] !== 'deleted') {
            awaitingCniDelete.push(binding);
            continue;
          }
        }
        released.push(binding);
        delete entry.podID;
        delete entry.podUID;
      }
    }
  }
  return { enis, released, awaitingCniDelete };
}

/** Why a pod is still without the IPs it needs after the local pool was tried. */
export type UnsatisfiedReason =
  /** No idle IP fits: this pod counts as demand for new IPs. */
  | 'noIdleIp'
  /** The pod already runs with an IP this node does not hold: it cannot be given another, and is not demand. */
  | 'statusIpNotInPool';

export interface UnsatisfiedPod {
  request: PodIpRequest;
  reason: UnsatisfiedReason;
  /** The families the pod still lacks. */
  missing: IpFamily[];
}

export interface LocalPoolResult {
  enis: NetworkInterfaces;
  /** Every requesting pod that holds all the IPs it needs, sorted by pod. */
  bound: { podId: string; ipv4?: IpRef; ipv6?: IpRef }[];
  /** Pods bound to an IP during this call (taken over or newly assigned). */
  newlyBound: { podId: string; family: IpFamily; ref: IpRef }[];
  unsatisfied: UnsatisfiedPod[];
  /**
   * Bindings to `Invalid` addresses (unknown to the cloud) that were dropped because the pod's sandbox does not
   * use them (no status IP, or another one): the pod is then served like any pending pod.
   */
  droppedInvalid: { podId: string; family: IpFamily; ref: IpRef }[];
}

type PodRefs = Partial<Record<IpFamily, IpRef>>;

interface PoolState {
  enis: NetworkInterfaces;
  /** Address → ENI id per family, for take-over by status IP. */
  index: Record<IpFamily, Map<string, string>>;
  refs: Map<string, PodRefs>;
  newlyBound: LocalPoolResult['newlyBound'];
  droppedInvalid: LocalPoolResult['droppedInvalid'];
}

function entryAt(state: PoolState, family: IpFamily, ref: IpRef): IpEntry | undefined {
  return state.enis[ref.eniId]?.[family]?.[ref.ip];
}

function bind(state: PoolState, binding: { request: PodIpRequest; family: IpFamily; ref: IpRef }): void {
  const { request, family, ref } = binding;
  const entry = entryAt(state, family, ref);
  if (entry === undefined) return;
  entry.podID = request.podId;
  if (request.podUid !== '') entry.podUID = request.podUid;
  const refs = state.refs.get(request.podId) ?? {};
  refs[family] = ref;
  state.refs.set(request.podId, refs);
  state.newlyBound.push({ podId: request.podId, family, ref });
}

function unbind(state: PoolState, binding: { podId: string; family: IpFamily }): void {
  const refs = state.refs.get(binding.podId);
  const ref = refs?.[binding.family];
  if (refs === undefined || ref === undefined) return;
  const entry = entryAt(state, binding.family, ref);
  if (entry !== undefined) {
    delete entry.podID;
    delete entry.podUID;
  }
  delete refs[binding.family];
  state.newlyBound = state.newlyBound.filter(
    (item) => !(item.podId === binding.podId && item.family === binding.family),
  );
}

/**
 * Reads the bindings already in the CR. A pod holds at most one IP per family: extra entries (which only a
 * bug or a hand edit produces) are freed, keeping the one matching the pod's status IP, else the lowest address.
 * A binding to an `Invalid` address the pod's sandbox does not use is dropped, so the pod gets a real one.
 */
function collectExistingRefs(state: PoolState, requests: ReadonlyMap<string, PodIpRequest>): void {
  for (const eniId of sortedKeys(state.enis)) {
    const eni = state.enis[eniId];
    if (eni === undefined) continue;
    for (const family of FAMILIES) {
      for (const entry of ipEntries(eni, family)) {
        state.index[family].set(entry.ip, state.index[family].get(entry.ip) ?? eniId);
        const request = requests.get(entry.podID ?? '');
        if (request === undefined) continue;
        const refs = state.refs.get(request.podId) ?? {};
        const current = refs[family];
        const statusIp = family === 'ipv4' ? request.statusIpv4 : request.statusIpv6;
        if (entry.status === 'Invalid' && entry.ip !== statusIp) {
          delete entry.podID;
          delete entry.podUID;
          state.droppedInvalid.push({ podId: request.podId, family, ref: { eniId, ip: entry.ip } });
          continue;
        }
        if (current === undefined) {
          refs[family] = { eniId, ip: entry.ip };
        } else if (entry.ip === statusIp) {
          const previous = entryAt(state, family, current);
          if (previous !== undefined) {
            delete previous.podID;
            delete previous.podUID;
          }
          refs[family] = { eniId, ip: entry.ip };
        } else {
          delete entry.podID;
          delete entry.podUID;
        }
        state.refs.set(request.podId, refs);
      }
    }
  }
}

function requiredFamilies(request: PodIpRequest): IpFamily[] {
  const families: IpFamily[] = [];
  if (request.requireIpv4) families.push('ipv4');
  if (request.requireIpv6) families.push('ipv6');
  return families;
}

function statusIpOf(request: PodIpRequest, family: IpFamily): string | undefined {
  return family === 'ipv4' ? request.statusIpv4 : request.statusIpv6;
}

/** Take-over: a pod that already runs with an IP of this node gets exactly that IP back. */
function takeOverStatusIps(state: PoolState, request: PodIpRequest): void {
  for (const family of requiredFamilies(request)) {
    if (state.refs.get(request.podId)?.[family] !== undefined) continue;
    const statusIp = statusIpOf(request, family);
    if (statusIp === undefined) continue;
    const eniId = state.index[family].get(statusIp);
    if (eniId === undefined) continue;
    const eni = state.enis[eniId];
    const entry = eni?.[family]?.[statusIp];
    if (eni === undefined || entry === undefined) continue;
    if (!isIdle(entry) && entry.podID !== request.podId) continue;
    keepForPod(eni, entry);
    bind(state, { request, family, ref: { eniId, ip: statusIp } });
  }
}

/**
 * A live pod's address marked for release (`Deleting`: taken over from a CR Terway wrote, or an idle one the pod's
 * sandbox reports) is restored to `Valid`, so no GC pulls it from under the pod: not eniflow's, whose GC skips held
 * addresses anyway, nor Terway's after a hand-back, which unassigns every `Deleting` address whatever its pod. On an
 * ENI being deleted it is left as it is (the ENI goes once the pod does).
 */
function keepForPod(eni: Readonly<NetworkInterface>, entry: IpEntry): void {
  if (entry.status === 'Deleting' && eni.status !== 'Deleting') entry.status = 'Valid';
}

/** The CR's bindings of live pods to addresses marked `Deleting` are kept for them (see {@link keepForPod}). */
function keepHeldAddresses(state: PoolState): void {
  for (const refs of state.refs.values()) {
    for (const family of FAMILIES) {
      const ref = refs[family];
      const eni = ref === undefined ? undefined : state.enis[ref.eniId];
      const entry = ref === undefined ? undefined : entryAt(state, family, ref);
      if (eni !== undefined && entry !== undefined) keepForPod(eni, entry);
    }
  }
}

function servesPod(eni: Readonly<NetworkInterface>, request: PodIpRequest): boolean {
  if (eni.status !== 'InUse' || eni.unschedulable === true) return false;
  // HighPerformance ENIs are kept for ERDMA pods, and ERDMA pods only go there (Terway's newer rule).
  return isHighPerformance(eni) === request.requireErdma;
}

function firstAvailable(eni: Readonly<NetworkInterface>, family: IpFamily): IpEntry | undefined {
  // Sorted once per ENI and family: every waiting pod asks every ENI, and 10,000 pods re-sorting 3 ENIs' addresses
  // took most of a pass's workflow task. The pool works on its own clones, whose addresses it binds but never adds.
  let byFamily = sortedEntries.get(eni);
  if (byFamily === undefined) {
    byFamily = {};
    sortedEntries.set(eni, byFamily);
  }
  byFamily[family] ??= ipEntries(eni, family);
  return byFamily[family].find(isAvailable);
}

/** {@link firstAvailable}'s sorted addresses, by ENI object (a clone of one call, gone with it). */
const sortedEntries = new WeakMap<Readonly<NetworkInterface>, Partial<Record<IpFamily, IpEntry[]>>>();

/** The first ENI, in allocation order, with an idle IP of every family the pod still needs. */
function pickEni(input: {
  candidates: readonly NetworkInterface[];
  request: PodIpRequest;
  families: readonly IpFamily[];
}): NetworkInterface | undefined {
  return input.candidates.find(
    (eni) =>
      servesPod(eni, input.request) && input.families.every((family) => firstAvailable(eni, family) !== undefined),
  );
}

function bindFreshIps(state: PoolState, pick: { request: PodIpRequest; eni: NetworkInterface; families: IpFamily[] }) {
  for (const family of pick.families) {
    const entry = firstAvailable(pick.eni, family);
    if (entry !== undefined) bind(state, { request: pick.request, family, ref: { eniId: pick.eni.id, ip: entry.ip } });
  }
}

/**
 * Gives pending pods IPs the node already holds (the reference's `assignIPFromLocalPool`), deterministically:
 * pods in `podId` order, ENIs in allocation order, IPs in address order.
 *
 * 1. Take-over first: a pod whose status already reports an IP of this node is bound to it.
 * 2. Then new IPs, only for families the pod has no status IP for, only on `InUse` ENIs, only `Valid` idle IPs;
 *    ERDMA pods only on HighPerformance ENIs and other pods never there. A pod's IPv4 and IPv6 are on one ENI:
 *    a pod needing both gets both from the first ENI that has both, and a pod already holding one family gets
 *    the other from the same ENI. If that ENI has none left and the held IP is not yet in use by the sandbox
 *    (no status IP), the held IP is rolled back and the pod tries the other ENIs for both.
 */
export function assignIpsFromLocalPool(input: {
  enis: Readonly<NetworkInterfaces>;
  requests: readonly PodIpRequest[];
  primaryFamily: IpFamily;
}): LocalPoolResult {
  const state: PoolState = {
    enis: cloneNetworkInterfaces(input.enis),
    index: { ipv4: new Map(), ipv6: new Map() },
    refs: new Map(),
    newlyBound: [],
    droppedInvalid: [],
  };
  const requests = [...input.requests].sort((a, b) => (a.podId < b.podId ? -1 : a.podId > b.podId ? 1 : 0));
  const requestsById = new Map(requests.map((request) => [request.podId, request]));
  collectExistingRefs(state, requestsById);

  const missingFamilies = (request: PodIpRequest): IpFamily[] =>
    requiredFamilies(request).filter((family) => state.refs.get(request.podId)?.[family] === undefined);

  const pending = requests.filter((request) => missingFamilies(request).length > 0);
  for (const request of pending) takeOverStatusIps(state, request);

  const candidates = sortEnisForAllocation({
    enis: sortedKeys(state.enis).flatMap((id) => state.enis[id] ?? []),
    primaryFamily: input.primaryFamily,
  });
  const unsatisfied: UnsatisfiedPod[] = [];
  for (const request of pending) {
    const missing = missingFamilies(request);
    if (missing.length === 0) continue;
    if (missing.some((family) => statusIpOf(request, family) !== undefined)) {
      unsatisfied.push({ request, reason: 'statusIpNotInPool', missing });
      continue;
    }
    const refs = state.refs.get(request.podId) ?? {};
    const anchor = FAMILIES.map((family) => refs[family]).find((ref) => ref !== undefined);
    const anchorEni = anchor === undefined ? undefined : state.enis[anchor.eniId];
    if (anchorEni !== undefined && pickEni({ candidates: [anchorEni], request, families: missing }) !== undefined) {
      bindFreshIps(state, { request, eni: anchorEni, families: missing });
      continue;
    }
    if (anchor !== undefined) {
      const heldFamilies = FAMILIES.filter((family) => refs[family] !== undefined);
      if (heldFamilies.some((family) => statusIpOf(request, family) !== undefined)) {
        unsatisfied.push({ request, reason: 'noIdleIp', missing });
        continue;
      }
      for (const family of heldFamilies) unbind(state, { podId: request.podId, family });
    }
    const all = requiredFamilies(request);
    const eni = pickEni({ candidates, request, families: all });
    if (eni === undefined) {
      unsatisfied.push({ request, reason: 'noIdleIp', missing: all });
      continue;
    }
    bindFreshIps(state, { request, eni, families: all });
  }

  // Once bindings rolled back above are gone: an address no pod keeps stays marked for release.
  keepHeldAddresses(state);
  const bound: LocalPoolResult['bound'] = [];
  for (const request of requests) {
    const refs = state.refs.get(request.podId) ?? {};
    if (missingFamilies(request).length > 0) continue;
    const binding: LocalPoolResult['bound'][number] = { podId: request.podId };
    if (refs.ipv4 !== undefined) binding.ipv4 = refs.ipv4;
    if (refs.ipv6 !== undefined) binding.ipv6 = refs.ipv6;
    bound.push(binding);
  }
  return { enis: state.enis, bound, newlyBound: state.newlyBound, unsatisfied, droppedInvalid: state.droppedInvalid };
}
