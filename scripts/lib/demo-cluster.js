/**
 * The demo cluster of the embedded default: core Nodes for the emulator's demo instances, their Node CRs as
 * Terway's control plane and daemon write them, and a few pods on each; plus the one-screen summary of how the
 * pods are doing.
 */
import { CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { NODE_CR_API_VERSION, NODE_CR_FINALIZER, NODE_CR_GROUP, NODE_CR_KIND, NODE_CR_PLURAL, NODE_CR_VERSION, } from '../../src/ipam/index.js';
export const DEMO_NAMESPACE = 'demo';
/** Quotas of the demo fixture's instance types (what `DescribeInstanceTypes` reports for them). */
const TYPE_QUOTAS = {
    'ecs.g7.large': { adapters: 3, ipsPerAdapter: 6 },
    'ecs.g7.2xlarge': { adapters: 4, ipsPerAdapter: 15 },
    'ecs.g8ae.2xlarge': { adapters: 4, ipsPerAdapter: 15 },
};
const CR = { group: NODE_CR_GROUP, version: NODE_CR_VERSION, plural: NODE_CR_PLURAL };
function nodeSpec(node, regionId) {
    return {
        nodeMetadata: {
            regionID: regionId,
            instanceType: node.instanceType,
            instanceID: node.instanceId,
            zoneID: node.zoneId,
        },
        nodeCap: {
            adapters: node.adapters,
            totalAdapters: node.adapters,
            ipv4PerAdapter: node.ipsPerAdapter,
            ipv6PerAdapter: node.ipsPerAdapter,
        },
        eni: {
            enableIPv4: true,
            enableIPv6: node.dualStack,
            enableERDMA: false,
            enableTrunk: false,
            vSwitchOptions: node.vSwitchIds,
            securityGroupIDs: ['sg-bp1emu00000000000001'],
            vSwitchSelectPolicy: 'most',
            tag: { 'k8s.aliyun.com': 'true' },
        },
        pool: { minPoolSize: 2, maxPoolSize: 5 },
        flavor: [{ networkInterfaceType: 'Secondary', networkInterfaceTrafficMode: 'Standard', count: node.adapters - 1 }],
    };
}
/** Demo nodes for the emulator's instances: the first three, the third dual-stack. */
async function demoNodes(emulator) {
    const inventory = await emulator.admin.inventory();
    const vSwitchesByZone = new Map();
    for (const vsw of [...inventory.vSwitches].sort((a, b) => (a.vSwitchId < b.vSwitchId ? -1 : 1))) {
        if (vsw.ipv6CidrBlock === null)
            continue;
        vSwitchesByZone.set(vsw.zoneId, [...(vSwitchesByZone.get(vsw.zoneId) ?? []), vsw.vSwitchId]);
    }
    return [...inventory.instances]
        .sort((a, b) => (a.instanceId < b.instanceId ? -1 : 1))
        .slice(0, 3)
        .map((instance, index) => {
        const quotas = TYPE_QUOTAS[instance.instanceType] ?? { adapters: 3, ipsPerAdapter: 6 };
        return {
            name: `demo-node-${index + 1}`,
            instanceId: instance.instanceId,
            instanceType: instance.instanceType,
            zoneId: instance.zoneId,
            vSwitchIds: vSwitchesByZone.get(instance.zoneId) ?? [],
            adapters: quotas.adapters,
            ipsPerAdapter: quotas.ipsPerAdapter,
            dualStack: index === 2,
            pods: 4,
        };
    });
}
/** Creates the demo cluster (idempotent enough for a fresh server: it fails loudly on a used one). */
export async function createDemoCluster(input) {
    const core = input.kubeConfig.makeApiClient(CoreV1Api);
    const custom = input.kubeConfig.makeApiClient(CustomObjectsApi);
    const nodes = await demoNodes(input.emulator);
    await core.createNamespace({ body: { metadata: { name: DEMO_NAMESPACE } } });
    let podCount = 0;
    for (const node of nodes) {
        await core.createNode({
            body: {
                metadata: {
                    name: node.name,
                    labels: {
                        'topology.kubernetes.io/region': input.emulator.regionId,
                        'topology.kubernetes.io/zone': node.zoneId,
                        'node.kubernetes.io/instance-type': node.instanceType,
                    },
                },
                spec: { providerID: `${input.emulator.regionId}.${node.instanceId}` },
            },
        });
        await core.patchNodeStatus({
            name: node.name,
            body: {
                status: {
                    conditions: [
                        {
                            type: 'Ready',
                            status: 'True',
                            reason: 'KubeletReady',
                            message: 'demo node',
                            lastHeartbeatTime: new Date(),
                            lastTransitionTime: new Date(),
                        },
                    ],
                },
            },
        }, setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch));
        const body = {
            apiVersion: NODE_CR_API_VERSION,
            kind: NODE_CR_KIND,
            metadata: { name: node.name, labels: { name: node.name }, finalizers: [NODE_CR_FINALIZER] },
            spec: nodeSpec(node, input.emulator.regionId),
        };
        await custom.createClusterCustomObject({ ...CR, body });
        for (let i = 0; i < node.pods; i += 1) {
            await core.createNamespacedPod({
                namespace: DEMO_NAMESPACE,
                body: {
                    metadata: { name: `${node.name}-web-${i}`, labels: { app: 'web' } },
                    spec: { nodeName: node.name, containers: [{ name: 'web', image: 'registry.invalid/demo:none' }] },
                },
            });
            podCount += 1;
        }
    }
    return { nodeNames: nodes.map((node) => node.name), podCount };
}
/** Reads how the demo is doing: per node, pods bound to an IP in the CR, ENIs and idle IPs; the last cloud calls. */
export async function summarizeDemo(input) {
    const core = input.kubeConfig.makeApiClient(CoreV1Api);
    const custom = input.kubeConfig.makeApiClient(CustomObjectsApi);
    const pods = await core.listNamespacedPod({ namespace: DEMO_NAMESPACE });
    const rows = [];
    for (const node of input.nodeNames) {
        const cr = (await custom.getClusterCustomObject({ ...CR, name: node }));
        const enis = Object.values(cr.status?.networkInterfaces ?? {});
        const bound = new Set();
        let idle = 0;
        for (const eni of enis) {
            for (const entry of Object.values(eni.ipv4 ?? {})) {
                if (entry.podID !== undefined && entry.podID !== '')
                    bound.add(entry.podID);
                else if (entry.status === 'Valid' && eni.status === 'InUse')
                    idle += 1;
            }
        }
        const onNode = pods.items.filter((pod) => pod.spec?.nodeName === node);
        const withIp = onNode.filter((pod) => bound.has(`${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`));
        rows.push({ node, pods: onNode.length, withIp: withIp.length, enis: enis.length, idle });
    }
    const calls = await input.emulator.admin.calls({});
    return {
        rows,
        podsWithIp: rows.reduce((sum, row) => sum + row.withIp, 0),
        podCount: rows.reduce((sum, row) => sum + row.pods, 0),
        lastOperations: calls
            .filter((call) => !call.action.startsWith('Describe'))
            .slice(-5)
            .map((call) => `${call.action} ${call.code}`),
    };
}
/** The summary as a few lines of text. */
export function formatDemoSummary(summary) {
    const header = `${'NODE'.padEnd(14)}${'PODS'.padStart(5)}${'WITH IP'.padStart(9)}${'PENDING'.padStart(9)}${'ENIS'.padStart(6)}${'IDLE'.padStart(6)}`;
    const lines = summary.rows.map((row) => `${row.node.padEnd(14)}${String(row.pods).padStart(5)}${String(row.withIp).padStart(9)}${String(row.pods - row.withIp).padStart(9)}${String(row.enis).padStart(6)}${String(row.idle).padStart(6)}`);
    return [header, ...lines, `last cloud operations: ${summary.lastOperations.join(', ') || '-'}`];
}
