/**
 * The zero-leak audit: compares what the cloud (the ECS emulator's inventory and call log) holds with what
 * the Node CRs and the live pods of a set of nodes say, and lists every disagreement. Any test that drives nodes can
 * end with `assertCleanAudit(await auditCluster(...))`; the chaos test prints the report as well.
 */
import type { V1Pod } from '@kubernetes/client-node';

import { ENIFLOW_CREATOR_TAG } from '../../src/ipam/index.js';
import type { EmulatorAdmin } from '../../src/ecs-emulator/index.js';
import type { NodeCr } from '../../src/ipam/index.js';
import { apiStatusCode, NODE_CR_RESOURCE } from './kube-env.js';
import type { KubeTestClients } from './kube-env.js';

type Family = 'ipv4' | 'ipv6';

/** Everything the audit found; every list but the counters is a problem when not empty. */
export interface AuditReport {
  nodes: number;
  livePods: number;
  /** ENIs in the cloud that carry eniflow's creator tag. */
  eniflowEnisInCloud: number;
  enisInCrs: number;
  /** Eniflow-tagged ENIs in the cloud that no Node CR lists: leaked. */
  orphanEnis: { eniId: string; status: string; node?: string; createdAt: string; instanceId: string | null }[];
  /** ENIs a Node CR lists that the cloud does not have. */
  crEnisMissingInCloud: { node: string; eniId: string; status: string }[];
  /** Addresses assigned in the cloud on an ENI of a CR that the CR does not list. */
  cloudOnlyIps: { node: string; eniId: string; ip: string }[];
  /** Addresses a CR lists that its ENI does not hold in the cloud. */
  crOnlyIps: { node: string; eniId: string; ip: string; status: string }[];
  /** Live pods (not host-network) without an address of an enabled family. */
  podsWithoutIp: { pod: string; node: string; family: Family }[];
  /** Live pods holding more than one address of a family. */
  podsWithSeveralIps: { pod: string; family: Family; ips: string[] }[];
  /** Addresses listed twice across the CRs (two ENIs, or two nodes). */
  ipsListedTwice: { ip: string; holders: string[] }[];
  /** Addresses bound to a pod that no longer exists (or lives on another node). */
  bindingsOfGonePods: { node: string; pod: string; ip: string }[];
  /** CreateNetworkInterface calls from the emulator's call log. */
  creates: {
    calls: number;
    /** Calls that made an ENI (a replayed ClientToken answers the first ENI and makes none). */
    applied: number;
    distinctTokens: number;
    /** Tokens that made more than one ENI: the idempotency broke. */
    tokensWithSeveralEnis: { token: string; enis: number }[];
    /** Creates without a ClientToken. */
    withoutToken: number;
    /** False when the ring buffer overflowed: the counts then miss the oldest calls. */
    callLogComplete: boolean;
  };
}

/** Lists the Node CRs, the live pods of `nodeNames` and the emulator's state, and compares them. */
export async function auditCluster(input: {
  kube: KubeTestClients;
  admin: EmulatorAdmin;
  nodeNames: readonly string[];
}): Promise<AuditReport> {
  const { kube, admin } = input;
  const nodes = new Set(input.nodeNames);
  const crs = new Map<string, NodeCr>();
  for (const name of [...nodes].sort()) {
    try {
      crs.set(name, (await kube.customObjects.getClusterCustomObject({ ...NODE_CR_RESOURCE, name })) as NodeCr);
    } catch (error) {
      if (apiStatusCode(error) !== 404) throw error;
    }
  }
  const pods = (await kube.core.listPodForAllNamespaces({ fieldSelector: 'spec.nodeName!=' })).items.filter(
    (pod: V1Pod) =>
      nodes.has(pod.spec?.nodeName ?? '') &&
      pod.metadata?.deletionTimestamp === undefined &&
      pod.spec?.hostNetwork !== true,
  );
  const podNode = new Map(pods.map((pod) => [`${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`, pod]));
  const inventory = await admin.inventory();
  const cloudEnis = new Map(inventory.networkInterfaces.map((eni) => [eni.eniId, eni]));
  const eniflowEnis = inventory.networkInterfaces.filter(
    (eni) => eni.tags[ENIFLOW_CREATOR_TAG.key] === ENIFLOW_CREATOR_TAG.value,
  );

  const report: AuditReport = {
    nodes: nodes.size,
    livePods: pods.length,
    eniflowEnisInCloud: eniflowEnis.length,
    enisInCrs: 0,
    orphanEnis: [],
    crEnisMissingInCloud: [],
    cloudOnlyIps: [],
    crOnlyIps: [],
    podsWithoutIp: [],
    podsWithSeveralIps: [],
    ipsListedTwice: [],
    bindingsOfGonePods: [],
    creates: await createsFromCallLog(admin),
  };

  const knownEnis = new Set<string>();
  const holders = new Map<string, string[]>();
  const podIps = new Map<string, Record<Family, string[]>>();
  for (const [node, cr] of crs) {
    for (const [eniId, eni] of Object.entries(cr.status?.networkInterfaces ?? {})) {
      knownEnis.add(eniId);
      report.enisInCrs += 1;
      const cloud = cloudEnis.get(eniId);
      if (cloud === undefined) report.crEnisMissingInCloud.push({ node, eniId, status: eni.status });
      const cloudIps = new Set(cloud === undefined ? [] : [cloud.primaryIp, ...cloud.secondaryIps, ...cloud.ipv6s]);
      const crIps = new Set<string>();
      for (const family of ['ipv4', 'ipv6'] as const) {
        for (const entry of Object.values(eni[family] ?? {})) {
          crIps.add(entry.ip);
          holders.set(entry.ip, [...(holders.get(entry.ip) ?? []), `${node}/${eniId}`]);
          if (cloud !== undefined && !cloudIps.has(entry.ip)) {
            report.crOnlyIps.push({ node, eniId, ip: entry.ip, status: entry.status });
          }
          const pod = entry.podID ?? '';
          if (pod === '') continue;
          if (podNode.get(pod)?.spec?.nodeName !== node) {
            report.bindingsOfGonePods.push({ node, pod, ip: entry.ip });
            continue;
          }
          const ips = podIps.get(pod) ?? { ipv4: [], ipv6: [] };
          ips[family].push(entry.ip);
          podIps.set(pod, ips);
        }
      }
      for (const ip of cloudIps) if (!crIps.has(ip)) report.cloudOnlyIps.push({ node, eniId, ip });
    }
  }
  for (const eni of eniflowEnis) {
    if (knownEnis.has(eni.eniId)) continue;
    const node = eni.tags['eniflow.io/node'];
    report.orphanEnis.push({
      eniId: eni.eniId,
      status: eni.status,
      createdAt: eni.creationTime,
      instanceId: eni.instanceId,
      ...(node === undefined ? {} : { node }),
    });
  }
  for (const [ip, where] of holders) if (where.length > 1) report.ipsListedTwice.push({ ip, holders: where });
  for (const [pod, object] of podNode) {
    const node = object.spec?.nodeName ?? '';
    const eniSpec = crs.get(node)?.spec?.eni;
    const families: Family[] = [];
    if (eniSpec?.enableIPv4 !== false) families.push('ipv4');
    if (eniSpec?.enableIPv6 === true) families.push('ipv6');
    const ips = podIps.get(pod) ?? { ipv4: [], ipv6: [] };
    for (const family of families) {
      if (ips[family].length === 0) report.podsWithoutIp.push({ pod, node, family });
      if (ips[family].length > 1) report.podsWithSeveralIps.push({ pod, family, ips: ips[family] });
    }
  }
  return report;
}

async function createsFromCallLog(admin: EmulatorAdmin): Promise<AuditReport['creates']> {
  const calls = await admin.calls({ action: 'CreateNetworkInterface' });
  const newest = (await admin.calls({ limit: 1 }))[0]?.seq ?? 0;
  const capacity = (await admin.settings()).callLogCapacity;
  const perToken = new Map<string, number>();
  let withoutToken = 0;
  let applied = 0;
  for (const call of calls) {
    const token = call.params['ClientToken'];
    if (token === undefined || token === '') withoutToken += 1;
    else perToken.set(token, (perToken.get(token) ?? 0) + (call.applied ? 1 : 0));
    if (call.applied) applied += 1;
  }
  return {
    calls: calls.length,
    applied,
    distinctTokens: perToken.size,
    tokensWithSeveralEnis: [...perToken].filter(([, enis]) => enis > 1).map(([token, enis]) => ({ token, enis })),
    withoutToken,
    callLogComplete: newest <= capacity,
  };
}

/** One line per problem the report shows; empty when the cluster is clean. */
export function auditProblems(report: AuditReport): string[] {
  const lines: string[] = [];
  const add = (title: string, items: readonly unknown[]): void => {
    if (items.length > 0) lines.push(`${title} (${items.length}): ${JSON.stringify(items.slice(0, 20))}`);
  };
  add('eniflow ENIs in the cloud that no Node CR lists', report.orphanEnis);
  add('ENIs of a Node CR missing in the cloud', report.crEnisMissingInCloud);
  add('addresses in the cloud that the CR does not list', report.cloudOnlyIps);
  add('addresses in a CR that the cloud does not hold', report.crOnlyIps);
  add('live pods without an address', report.podsWithoutIp);
  add('live pods with several addresses of a family', report.podsWithSeveralIps);
  add('addresses listed twice', report.ipsListedTwice);
  add('addresses bound to gone pods', report.bindingsOfGonePods);
  add('ClientTokens that created more than one ENI', report.creates.tokensWithSeveralEnis);
  if (report.creates.withoutToken > 0) lines.push(`creates without a ClientToken: ${report.creates.withoutToken}`);
  if (!report.creates.callLogComplete) lines.push('the emulator call log overflowed: raise callLogCapacity');
  return lines;
}

/** A short human summary of the report (counters, then problems). */
export function formatAudit(report: AuditReport): string {
  const problems = auditProblems(report);
  return [
    `audit: ${report.nodes} nodes, ${report.livePods} live pods, ${report.eniflowEnisInCloud} eniflow ENIs in the ` +
      `cloud, ${report.enisInCrs} ENIs in CRs; creates: ${report.creates.calls} calls, ${report.creates.applied} ` +
      `applied, ${report.creates.distinctTokens} ClientTokens`,
    ...(problems.length === 0 ? ['audit: clean'] : problems.map((line) => `audit problem: ${line}`)),
  ].join('\n');
}

/** Throws with every problem listed unless the report is clean. */
export function assertCleanAudit(report: AuditReport): void {
  const problems = auditProblems(report);
  if (problems.length > 0) throw new Error(`the audit found problems:\n${problems.join('\n')}`);
}
