/**
 * A cluster handed from Terway to eniflow, in an account another cluster shares: the node's CR lists an ENI Terway
 * created (`creator=terway`, no cluster tag) serving a pod, and Terway's next OpenAPI sync time, an hour away.
 * eniflow's first pass lists the instance's ENIs anyway and tags that one with this cluster's id before it changes
 * it, so every later call on it passes the shipped RAM policy (evaluated here on the emulator's call log with the
 * ENI's tags at the time), while an ENI of the same kind attached to another cluster's node is never tagged. Real Temporal dev server, real kube-apiserver, the ECS emulator through the real SDK.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import * as $Ecs from '@alicloud/ecs20140526';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';

import type { NetworkInterface } from '../../../src/ipam/index.js';
import { DEMO } from '../../support/ecs-emulator.js';
import type { EmulatorHarness } from '../../support/ecs-emulator.js';
import { NODE_CR_RESOURCE } from '../../support/kube-env.js';
import {
  bindingsOf,
  demoNodeSpec,
  openScenarioEnv,
  TEST_CLUSTER_ID,
  withScenario,
} from '../../support/node-scenario.js';
import type { NodeScenario, ScenarioEnv } from '../../support/node-scenario.js';
import { ramAction, ramAllows, shippedRamPolicy } from '../../support/ram-policy.js';

let env: ScenarioEnv;
before(async () => {
  env = await openScenarioEnv();
});
after(async () => {
  await env.close();
});

/** Calls that change an existing ENI: the RAM policy conditions each on the ENI's cluster tag. */
const CHANGES_EXISTING = [
  'DetachNetworkInterface',
  'DeleteNetworkInterface',
  'AssignPrivateIpAddresses',
  'UnassignPrivateIpAddresses',
  'AssignIpv6Addresses',
  'UnassignIpv6Addresses',
];

/** An ENI made as Terway makes one (tags as given), attached to `instanceId`, with secondary IPv4 addresses. */
async function attachedEni(
  harness: EmulatorHarness,
  input: { instanceId: string; vSwitchId: string; tags: Record<string, string>; secondaryIps: number },
): Promise<{ eniId: string; primaryIp: string; ips: string[] }> {
  const eniId = await harness.createEni({
    vSwitchId: input.vSwitchId,
    tag: Object.entries(input.tags).map(([key, value]) => new $Ecs.CreateNetworkInterfaceRequestTag({ key, value })),
  });
  await harness.ecs.attachNetworkInterface(
    new $Ecs.AttachNetworkInterfaceRequest({
      regionId: DEMO.regionId,
      networkInterfaceId: eniId,
      instanceId: input.instanceId,
    }),
  );
  await harness.waitForStatus(eniId, 'InUse');
  await harness.ecs.assignPrivateIpAddresses(
    new $Ecs.AssignPrivateIpAddressesRequest({
      regionId: DEMO.regionId,
      networkInterfaceId: eniId,
      secondaryPrivateIpAddressCount: input.secondaryIps,
    }),
  );
  const described = await harness.ecs.describeNetworkInterfaces(
    new $Ecs.DescribeNetworkInterfacesRequest({ regionId: DEMO.regionId, networkInterfaceId: [eniId] }),
  );
  const eni = described.body?.networkInterfaceSets?.networkInterfaceSet?.[0];
  const ips = (eni?.privateIpSets?.privateIpSet ?? [])
    .filter((set) => set.primary !== true)
    .map((set) => set.privateIpAddress ?? '');
  return { eniId, primaryIp: eni?.privateIpAddress ?? '', ips };
}

/** The CR record Terway's controller wrote for an ENI, binding `pods` (ip → pod id). */
function crEni(input: { eniId: string; primaryIp: string; ips: readonly string[]; pods: Record<string, string> }) {
  const ipv4: NonNullable<NetworkInterface['ipv4']> = {
    [input.primaryIp]: { ip: input.primaryIp, primary: true, status: 'Valid' },
  };
  for (const ip of input.ips) {
    const podID = input.pods[ip];
    ipv4[ip] = { ip, primary: false, status: 'Valid', ...(podID === undefined ? {} : { podID }) };
  }
  return {
    id: input.eniId,
    status: 'InUse',
    macAddress: '00:16:3e:00:00:aa',
    vSwitchID: DEMO.vSwitchH,
    securityGroupIDs: [DEMO.securityGroup],
    primaryIPAddress: input.primaryIp,
    networkInterfaceTrafficMode: 'Standard',
    networkInterfaceType: 'Secondary',
    ipv4,
    ipv4CIDR: '10.10.0.0/20',
  } satisfies NetworkInterface;
}

async function tagsOf(harness: EmulatorHarness, eniId: string): Promise<Record<string, string>> {
  const inventory = await harness.emulator.admin.inventory();
  return inventory.networkInterfaces.find((eni) => eni.eniId === eniId)?.tags ?? {};
}

async function writeCrStatus(scenario: NodeScenario, status: Record<string, unknown>): Promise<void> {
  await env.kube.customObjects.patchClusterCustomObjectStatus(
    { ...NODE_CR_RESOURCE, name: scenario.nodeName, body: { status } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
}

describe('adopting ENIs taken over from Terway', () => {
  it("tags the node's Terway ENI for this cluster before changing it, and no other cluster's ENI", async () => {
    const spec = demoNodeSpec({ instance: 'large-h', pool: { minPoolSize: 0, maxPoolSize: 0 } });
    await withScenario(env, { name: 'adoption', spec }, async (scenario) => {
      const harness = scenario.emulator;
      const terway = await attachedEni(harness, {
        instanceId: DEMO.instanceLargeH,
        vSwitchId: DEMO.vSwitchH,
        tags: { creator: 'terway' },
        secondaryIps: 2,
      });
      // Attached to another cluster's node: the same kind of ENI, never this cluster's to claim.
      const neighbours = await attachedEni(harness, {
        instanceId: DEMO.instanceLargeI,
        vSwitchId: DEMO.vSwitchI,
        tags: { creator: 'terway' },
        secondaryIps: 1,
      });
      const neighbourTagsBefore = await tagsOf(harness, neighbours.eniId);
      const [servingIp = '', idleIp = ''] = terway.ips;
      await scenario.createPods(['a']);
      const podA = `${scenario.namespace}/a`;
      // As Terway's controller leaves the CR: synced a minute ago, its next sync an hour away.
      await writeCrStatus(scenario, {
        networkInterfaces: { [terway.eniId]: crEni({ ...terway, pods: { [servingIp]: podA } }) },
        lastSyncOpenAPITime: new Date(Date.now() - 60_000).toISOString().replace(/\.\d+Z$/, 'Z'),
        nextSyncOpenAPITime: new Date(Date.now() + 3_600_000).toISOString().replace(/\.\d+Z$/, 'Z'),
      });
      await harness.emulator.admin.clearCalls();

      // Three more pods: one takes the idle address, the others need addresses assigned on the adopted ENI.
      await scenario.createPods(['b', 'c', 'd']);
      await scenario.signal();
      const bindings = await scenario.waitForCr('pods a–d bound', (cr) => {
        const bound = bindingsOf(cr);
        return ['a', 'b', 'c', 'd'].every((pod) => bound.has(`${scenario.namespace}/${pod}`)) ? bound : undefined;
      });
      assert.equal(bindings.get(podA)?.ipv4, servingIp, 'the running pod keeps its address');
      assert.ok([...bindings.values()].some((binding) => binding.ipv4 === idleIp));

      const adoptedTags = await tagsOf(harness, terway.eniId);
      assert.equal(adoptedTags['eniflow.io/cluster-id'], TEST_CLUSTER_ID, JSON.stringify(adoptedTags));
      assert.equal(adoptedTags['eniflow.io/node'], scenario.nodeName);
      assert.equal(adoptedTags['creator'], 'terway', "Terway's creator tag stays (its tag filters still match)");
      assert.deepEqual(await tagsOf(harness, neighbours.eniId), neighbourTagsBefore, 'the neighbour ENI untouched');

      const calls = (await harness.emulator.admin.calls({})).filter((call) => call.code === 'Success');
      const tagCalls = calls.filter((call) => call.action === 'TagResources');
      assert.equal(tagCalls.length, 1, 'adopted once');
      assert.deepEqual(
        Object.entries(tagCalls[0]?.params ?? {})
          .filter(([key]) => key.startsWith('ResourceId.'))
          .map(([, value]) => value),
        [terway.eniId],
      );
      const changes = calls.filter(
        (call) => CHANGES_EXISTING.includes(call.action) && call.params['NetworkInterfaceId'] === terway.eniId,
      );
      assert.ok(changes.length > 0, 'addresses were assigned on the adopted ENI');
      const policy = shippedRamPolicy(TEST_CLUSTER_ID);
      for (const change of changes) {
        assert.ok((tagCalls[0]?.seq ?? Infinity) < change.seq, `${change.action} came after the adoption`);
        assert.ok(
          ramAllows(policy, { action: ramAction(change.action), resourceTags: adoptedTags }),
          `${change.action} on the adopted ENI passes the RAM policy`,
        );
        assert.ok(
          !ramAllows(policy, { action: ramAction(change.action), resourceTags: { creator: 'terway' } }),
          `${change.action} would have been refused before the adoption`,
        );
      }
      const adoption = ramAllows(policy, {
        action: 'ecs:TagResources',
        resourceTags: { creator: 'terway' },
        requestTags: { 'eniflow.io/cluster-id': TEST_CLUSTER_ID, 'eniflow.io/node': scenario.nodeName },
      });
      assert.ok(adoption, 'the adoption itself passes the RAM policy');
      for (const call of calls) {
        if (call.params['NetworkInterfaceId'] === neighbours.eniId) assert.fail(`${call.action} on the neighbour`);
      }
    });
  });
});
