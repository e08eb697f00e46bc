/**
 * A walk through one node's reconcile with the pure IPAM core, on a sample node as Terway's daemon writes it.
 * It stands in for `npm start` until the main job (watcher + worker on Temporal) exists: no server is started,
 * and the cloud's answers are made up here (addresses counted up from the vSwitch CIDR).
 */
import {
  assignIpsFromLocalPool,
  planEniAllocations,
  planGc,
  planPoolRelease,
  podIpRequestsFromPods,
  primaryFamilyOf,
  recordAssignedIps,
  recordCreatedEni,
  releaseIpsOfGonePods,
  validateNodeCr,
  ENI_KIND_SHAPE,
} from '../src/ipam/index.js';
import type { EniAllocation, NetworkInterfaces, NodeSpec, PodSnapshot, VSwitchInfo } from '../src/ipam/index.js';

const sampleNode = {
  apiVersion: 'network.alibabacloud.com/v1beta1',
  kind: 'Node',
  metadata: { name: 'cn-hangzhou.192.168.0.10' },
  spec: {
    nodeMetadata: {
      regionID: 'cn-hangzhou',
      instanceType: 'ecs.g7.large',
      instanceID: 'i-demo',
      zoneID: 'cn-hangzhou-k',
    },
    nodeCap: { adapters: 3, totalAdapters: 3, ipv4PerAdapter: 6, ipv6PerAdapter: 6, eriQuantity: 0 },
    eni: {
      enableIPv4: true,
      enableIPv6: true,
      vSwitchOptions: ['vsw-demo'],
      securityGroupIDs: ['sg-demo'],
      vSwitchSelectPolicy: 'most',
      tag: { 'k8s.aliyun.com': 'true' },
    },
    pool: { minPoolSize: 2, maxPoolSize: 4 },
    flavor: [{ networkInterfaceType: 'Secondary', networkInterfaceTrafficMode: 'Standard', count: 2 }],
  },
  status: {},
};

const vSwitches: Record<string, VSwitchInfo> = {
  'vsw-demo': {
    vSwitchId: 'vsw-demo',
    zoneId: 'cn-hangzhou-k',
    availableIpCount: 250,
    ipv4Cidr: '192.168.1.0/24',
    ipv6Cidr: '2408:4005:1::/64',
  },
};

function pods(names: readonly string[]): PodSnapshot[] {
  return names.map((name) => ({
    metadata: { namespace: 'demo', name, uid: `uid-${name}` },
    spec: { containers: [{}] },
    status: { phase: 'Pending' },
  }));
}

let nextHost = 10;
let nextEni = 1;
/** What the cloud would answer: fresh addresses for assigns, an InUse ENI for creates. */
function carryOut(enis: NetworkInterfaces, allocations: readonly EniAllocation[]): NetworkInterfaces {
  let result = enis;
  const take = (count: number, family: 'ipv4' | 'ipv6'): string[] =>
    Array.from({ length: count }, () => {
      nextHost += 1;
      return family === 'ipv4' ? `192.168.1.${nextHost}` : `2408:4005:1::${nextHost.toString(16)}`;
    });
  for (const allocation of allocations) {
    if (allocation.kind === 'assignIps') {
      result = recordAssignedIps({
        enis: result,
        eniId: allocation.eniId,
        family: 'ipv4',
        ips: take(allocation.ipv4Count, 'ipv4'),
      });
      result = recordAssignedIps({
        enis: result,
        eniId: allocation.eniId,
        family: 'ipv6',
        ips: take(allocation.ipv6Count, 'ipv6'),
      });
      continue;
    }
    const ipv4 = take(allocation.ipv4Count, 'ipv4').map((ip, i) => ({ ip, primary: i === 0 }));
    const shape = ENI_KIND_SHAPE[allocation.eniKind];
    result = recordCreatedEni({
      enis: result,
      cloud: {
        eniId: `eni-demo${String(nextEni++).padStart(3, '0')}`,
        status: 'InUse',
        type: shape.type,
        trafficMode: shape.trafficMode,
        macAddress: '00:16:3e:00:00:01',
        vSwitchId: allocation.vSwitchId,
        securityGroupIds: ['sg-demo'],
        primaryIp: ipv4[0]?.ip ?? '',
        ipv4,
        ipv6: take(allocation.ipv6Count, 'ipv6'),
      },
      cidrs: vSwitches[allocation.vSwitchId] ?? {},
    });
  }
  return result;
}

function reconcile(spec: NodeSpec, enis: NetworkInterfaces, podNames: readonly string[]): NetworkInterfaces {
  const demand = podIpRequestsFromPods({ pods: pods(podNames), eniSpec: spec.eni ?? {} });
  const released = releaseIpsOfGonePods({ enis, requests: demand.requests });
  for (const gone of released.released) console.log(`  released ${gone.ip} of gone pod ${gone.podId}`);
  const primaryFamily = primaryFamilyOf(spec.eni ?? {});
  const local = assignIpsFromLocalPool({ enis: released.enis, requests: demand.requests, primaryFamily });
  const plan = planEniAllocations({
    spec,
    enis: local.enis,
    unsatisfied: local.unsatisfied,
    vSwitches,
    randomValue: 0,
  });
  console.log(
    `  ${local.unsatisfied.length} pod(s) wait; demand ${plan.demand.normal} IP pair(s) (pods + minPoolSize top-up)`,
  );
  for (const allocation of plan.allocations) console.log(`  plan: ${JSON.stringify(allocation)}`);
  const grown = carryOut(local.enis, plan.allocations);
  const served = assignIpsFromLocalPool({ enis: grown, requests: demand.requests, primaryFamily });
  for (const binding of served.bound) {
    console.log(
      `  ${binding.podId} -> ${binding.ipv4?.ip ?? '-'} / ${binding.ipv6?.ip ?? '-'} on ${binding.ipv4?.eniId ?? binding.ipv6?.eniId ?? '?'}`,
    );
  }
  const release = planPoolRelease({ spec, enis: served.enis });
  console.log(
    `  idle IPv4: ${release.idleBefore} before GC, ${release.idleAfter} after (maxPoolSize ${spec.pool?.maxPoolSize ?? 0})`,
  );
  for (const action of planGc({ enis: release.enis })) console.log(`  gc: ${JSON.stringify(action)}`);
  return release.enis;
}

const validation = validateNodeCr(sampleNode);
if (!validation.ok) {
  console.error('sample node is invalid', validation.problems);
  process.exit(1);
}
const spec = validation.node.spec;
console.log('eniflow core demo: one dual-stack node, no servers (the cloud answers are simulated).');
console.log('\nPass 1: five new pods on an empty node');
let enis = reconcile(spec, {}, ['web-0', 'web-1', 'web-2', 'web-3', 'web-4']);
console.log('\nPass 2: three pods deleted');
enis = reconcile(spec, enis, ['web-0', 'web-4']);
console.log(`\nENIs in status: ${Object.keys(enis).sort().join(', ')}`);
