import { parseIp } from './ip-address.js';
import type { EniSpec } from './node-model.js';

/** Extended resource a container asks for to get an ERDMA-capable IP. */
export const ERDMA_RESOURCE_NAME = 'aliyun/erdma';
/** Pod annotation of Terway's exclusive-ENI ("pod ENI") mode: such pods are not served by this pool. */
export const POD_ENI_ANNOTATION = 'k8s.aliyun.com/pod-eni';

/** The few fields of a Kubernetes Pod the IPAM core reads; everything else is dropped at the edge. */
export interface PodSnapshot {
  metadata: { namespace: string; name: string; uid?: string; annotations?: Record<string, string> };
  spec: {
    hostNetwork?: boolean;
    containers?: readonly ContainerSnapshot[];
    initContainers?: readonly ContainerSnapshot[];
  };
  status?: { phase?: string; podIP?: string; podIPs?: readonly { ip: string }[] };
}

export interface ContainerSnapshot {
  resources?: { limits?: Record<string, string | number> };
}

/** What one pod on the node needs from the pool, and the IPs its sandbox already reports. */
export interface PodIpRequest {
  /** `<namespace>/<name>`, the value stored in an IP's `podID`. */
  podId: string;
  podUid: string;
  requireIpv4: boolean;
  requireIpv6: boolean;
  requireErdma: boolean;
  /** IPv4 from the pod status: the pod already runs with it, so it can only be taken over, never replaced. */
  statusIpv4?: string;
  statusIpv6?: string;
}

/** A pod that could not be turned into a request, with the reason (it keeps any IP it already holds). */
export interface PodProblem {
  podId: string;
  message: string;
}

export interface PodDemand {
  /** Sorted by `podId`. */
  requests: PodIpRequest[];
  problems: PodProblem[];
}

function isZeroQuantity(quantity: string | number): boolean {
  if (typeof quantity === 'number') return quantity === 0;
  // A Kubernetes quantity is zero only when its numeric part is; suffixes (m, k, Ki…) do not change that.
  const numeric = /^[+-]?([0-9]*\.?[0-9]*)/.exec(quantity.trim())?.[1] ?? '';
  return numeric === '' || Number(numeric) === 0;
}

function requestsErdma(pod: PodSnapshot): boolean {
  const containers = [...(pod.spec.initContainers ?? []), ...(pod.spec.containers ?? [])];
  return containers.some((container) => {
    const limit = container.resources?.limits?.[ERDMA_RESOURCE_NAME];
    return limit !== undefined && !isZeroQuantity(limit);
  });
}

function isPodEniPod(pod: PodSnapshot): boolean {
  const value = pod.metadata.annotations?.[POD_ENI_ANNOTATION];
  return value !== undefined && ['1', 't', 'true'].includes(value.toLowerCase());
}

/** Finds the pod's IPv4 and IPv6 from `status.podIP` and `status.podIPs`; the last of each family wins. */
function statusIps(pod: PodSnapshot): { ipv4?: string; ipv6?: string; malformed?: string } {
  const candidates = [pod.status?.podIP ?? '', ...(pod.status?.podIPs ?? []).map((entry) => entry.ip)];
  const found: { ipv4?: string; ipv6?: string } = {};
  for (const text of candidates) {
    if (text === '') continue;
    const parsed = parseIp(text);
    if (parsed === undefined) return { malformed: text };
    found[parsed.family] = text;
  }
  return found;
}

/**
 * Turns the pods bound to a node into IP requests, as the reference's `getPods` does: hostNetwork pods,
 * pod-ENI pods and exited sandboxes (phase Succeeded/Failed) need no pool IP; terminating pods keep theirs.
 * A pod whose status carries a malformed IP is reported and asks for nothing new (its existing binding is kept),
 * instead of failing the whole node as the reference does.
 */
export function podIpRequestsFromPods(input: { pods: readonly PodSnapshot[]; eniSpec: EniSpec }): PodDemand {
  const { pods, eniSpec } = input;
  const requests: PodIpRequest[] = [];
  const problems: PodProblem[] = [];
  for (const pod of pods) {
    if (pod.spec.hostNetwork === true || isPodEniPod(pod)) continue;
    const phase = pod.status?.phase;
    if (phase === 'Succeeded' || phase === 'Failed') continue;
    const podId = `${pod.metadata.namespace}/${pod.metadata.name}`;
    const ips = statusIps(pod);
    const request: PodIpRequest = {
      podId,
      podUid: pod.metadata.uid ?? '',
      requireIpv4: eniSpec.enableIPv4 === true,
      requireIpv6: eniSpec.enableIPv6 === true,
      requireErdma: eniSpec.enableERDMA === true && requestsErdma(pod),
    };
    if (ips.malformed !== undefined) {
      problems.push({ podId, message: `pod status has a malformed IP "${ips.malformed}"` });
      request.requireIpv4 = false;
      request.requireIpv6 = false;
    }
    if (ips.ipv4 !== undefined) request.statusIpv4 = ips.ipv4;
    if (ips.ipv6 !== undefined) request.statusIpv6 = ips.ipv6;
    requests.push(request);
  }
  requests.sort((a, b) => (a.podId < b.podId ? -1 : a.podId > b.podId ? 1 : 0));
  problems.sort((a, b) => (a.podId < b.podId ? -1 : a.podId > b.podId ? 1 : 0));
  return { requests, problems };
}
