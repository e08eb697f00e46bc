/**
 * Issue 9 end to end: the node workflow on the real Temporal dev server and kube-apiserver, the ECS emulator
 * through the real SDK, with CRs and cloud state prepared the way a mixed cluster (Terway's own daemon and newer
 * controllers, hand edits, tag filters) leaves them. Each test asserts the CR, the emulator's call log and the
 * Events an operator would read.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import * as $Ecs from '@alicloud/ecs20140526';
import { ApiextensionsV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { CoreV1Event } from '@kubernetes/client-node';

import { pollUntil } from '../../../scripts/lib/poll-until.js';
import type { CallLogEntry } from '../../../src/ecs-emulator/index.js';
import { NODE_CR_GROUP, NODE_CR_VERSION } from '../../../src/ipam/index.js';
import type { NetworkInterface } from '../../../src/ipam/index.js';
import { gcUpdate } from '../../../src/workflows/messages.js';
import { DEMO } from '../../support/ecs-emulator.js';
import type { EmulatorHarness } from '../../support/ecs-emulator.js';
import { NODE_CR_RESOURCE } from '../../support/kube-env.js';
import { allBound, bindingsOf, demoNodeSpec, openScenarioEnv, withScenario } from '../../support/node-scenario.js';
import type { NodeScenario, ScenarioEnv } from '../../support/node-scenario.js';

let env: ScenarioEnv;
before(async () => {
  env = await openScenarioEnv();
});
after(async () => {
  await env.close();
});

const MUTATING = [
  'AttachNetworkInterface',
  'DetachNetworkInterface',
  'DeleteNetworkInterface',
  'AssignPrivateIpAddresses',
  'UnassignPrivateIpAddresses',
  'AssignIpv6Addresses',
  'UnassignIpv6Addresses',
];

/** Mutating calls that name one of `eniIds`. */
function mutatingCallsOn(calls: readonly CallLogEntry[], eniIds: readonly string[]): string[] {
  return calls
    .filter((call) => MUTATING.includes(call.action))
    .filter((call) => eniIds.includes(call.params['NetworkInterfaceId'] ?? ''))
    .map((call) => `${call.action} ${call.params['NetworkInterfaceId'] ?? ''}`);
}

/** An ENI made in the cloud behind the workflow's back: created (with tags), attached, with secondary IPv4s. */
async function cloudEni(
  harness: EmulatorHarness,
  input: { instanceId: string; vSwitchId: string; tags?: Record<string, string>; secondaryIps: number },
): Promise<{ eniId: string; primaryIp: string; ips: string[] }> {
  const eniId = await harness.createEni({
    vSwitchId: input.vSwitchId,
    tag: Object.entries(input.tags ?? {}).map(
      ([key, value]) => new $Ecs.CreateNetworkInterfaceRequestTag({ key, value }),
    ),
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
  const sets = eni?.privateIpSets?.privateIpSet ?? [];
  const ips = sets.filter((set) => set.primary !== true).map((set) => set.privateIpAddress ?? '');
  assert.equal(ips.length, input.secondaryIps);
  return { eniId, primaryIp: eni?.privateIpAddress ?? '', ips };
}

/** The CR record Terway's controller would have written for an ENI, binding `pods` (ip → pod id) as given. */
function crEni(input: {
  eniId: string;
  primaryIp: string;
  ips: readonly string[];
  pods?: Record<string, string>;
  cidr?: string;
  vSwitchId?: string;
  extra?: Record<string, unknown>;
}): NetworkInterface {
  const ipv4: NonNullable<NetworkInterface['ipv4']> = {
    [input.primaryIp]: { ip: input.primaryIp, primary: true, status: 'Valid' },
  };
  for (const ip of input.ips) {
    const podID = input.pods?.[ip];
    ipv4[ip] = { ip, primary: false, status: 'Valid', ...(podID === undefined ? {} : { podID }) };
  }
  return {
    id: input.eniId,
    status: 'InUse',
    macAddress: '00:16:3e:00:00:aa',
    vSwitchID: input.vSwitchId ?? DEMO.vSwitchH,
    securityGroupIDs: [DEMO.securityGroup],
    primaryIPAddress: input.primaryIp,
    networkInterfaceTrafficMode: 'Standard',
    networkInterfaceType: 'Secondary',
    ipv4,
    ipv4CIDR: input.cidr ?? '10.10.0.0/20',
    ...input.extra,
  };
}

async function writeCrStatus(scenario: NodeScenario, status: Record<string, unknown>): Promise<void> {
  await env.kube.customObjects.patchClusterCustomObjectStatus(
    { ...NODE_CR_RESOURCE, name: scenario.nodeName, body: { status } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
}

async function setPodIp(scenario: NodeScenario, name: string, ip: string): Promise<void> {
  await env.kube.core.patchNamespacedPodStatus(
    { namespace: scenario.namespace, name, body: { status: { phase: 'Running', podIP: ip, podIPs: [{ ip }] } } },
    setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
  );
}

async function eventsOf(input: { namespace: string; name: string }): Promise<CoreV1Event[]> {
  const list = await env.kube.core.listNamespacedEvent({
    namespace: input.namespace,
    fieldSelector: `involvedObject.name=${input.name}`,
  });
  return list.items;
}

async function waitForEvent(
  input: { namespace: string; name: string; reason: string; match?: RegExp },
  timeoutMs = 30_000,
): Promise<CoreV1Event> {
  return pollUntil(
    async () =>
      (await eventsOf(input)).find(
        (event) => event.reason === input.reason && (input.match?.test(event.message ?? '') ?? true),
      ),
    { description: `event ${input.reason} on ${input.name}`, timeoutMs },
  );
}

async function rawCr(scenario: NodeScenario): Promise<Record<string, unknown> & { status?: Record<string, unknown> }> {
  return (await env.kube.customObjects.getClusterCustomObject({
    ...NODE_CR_RESOURCE,
    name: scenario.nodeName,
  })) as Record<string, unknown> & { status?: Record<string, unknown> };
}

describe('data-plane safety', () => {
  it('keeps a running pod’s ENI hidden by tagFilter, never detaches an ENI attached elsewhere, drops a phantom without a call', async () => {
    const spec = demoNodeSpec({ instance: 'large-h', pool: { minPoolSize: 0, maxPoolSize: 3 } });
    spec.eni = { ...spec.eni, tag: { team: 'blue' }, tagFilter: { team: 'blue' } };
    await withScenario(env, { name: 'hidden-eni', spec }, async (scenario) => {
      const harness = scenario.emulator;
      const hidden = await cloudEni(harness, {
        instanceId: DEMO.instanceLargeH,
        vSwitchId: DEMO.vSwitchH,
        secondaryIps: 2,
      });
      const elsewhere = await cloudEni(harness, {
        instanceId: DEMO.instanceLargeI,
        vSwitchId: DEMO.vSwitchI,
        secondaryIps: 1,
      });
      const elsewhereDeleting = await cloudEni(harness, {
        instanceId: DEMO.instanceLargeI,
        vSwitchId: DEMO.vSwitchI,
        secondaryIps: 1,
      });
      const [servingIp = '', idleIp = ''] = hidden.ips;
      await scenario.createPods(['a']);
      await setPodIp(scenario, 'a', servingIp);
      const podId = `${scenario.namespace}/a`;
      await writeCrStatus(scenario, {
        networkInterfaces: {
          [hidden.eniId]: crEni({ ...hidden, pods: { [servingIp]: podId } }),
          [elsewhere.eniId]: crEni({ ...elsewhere, vSwitchId: DEMO.vSwitchI, cidr: '10.10.32.0/20' }),
          [elsewhereDeleting.eniId]: {
            ...crEni({ ...elsewhereDeleting, vSwitchId: DEMO.vSwitchI, cidr: '10.10.32.0/20' }),
            status: 'Deleting',
          },
          'eni-phantom0000000000': {
            id: 'eni-phantom0000000000',
            status: 'InUse',
            networkInterfaceType: 'Trunk',
            networkInterfaceTrafficMode: 'Standard',
            ipv4: {},
          },
        },
      });
      await harness.emulator.admin.clearCalls();
      await scenario.signal();

      const cr = await scenario.waitForCr('the sync decided about every unlisted ENI', (current) => {
        const enis = current.status?.networkInterfaces ?? {};
        return enis[hidden.eniId]?.unschedulable === true &&
          enis[elsewhere.eniId] === undefined &&
          enis['eni-phantom0000000000'] === undefined &&
          enis[elsewhereDeleting.eniId]?.unschedulable === true
          ? current
          : undefined;
      });
      const kept = cr.status?.networkInterfaces?.[hidden.eniId];
      assert.equal(kept?.status, 'InUse');
      assert.equal(kept?.ipv4?.[servingIp]?.podID, podId, 'the running pod keeps its binding');
      assert.equal(kept?.ipv4?.[servingIp]?.status, 'Valid');
      assert.equal(kept?.ipv4?.[idleIp]?.podID, undefined);
      assert.match(kept?.conditions?.OperationErr?.message ?? '', /not listed by the OpenAPI sync/);

      const calls = await harness.emulator.admin.calls({});
      const all = [hidden.eniId, elsewhere.eniId, elsewhereDeleting.eniId, 'eni-phantom0000000000'];
      assert.deepEqual(mutatingCallsOn(calls, all), [], 'no attach/detach/delete/assign/unassign on any of them');
      const inventory = await harness.emulator.admin.inventory();
      const status = (id: string) => inventory.networkInterfaces.find((eni) => eni.eniId === id);
      assert.equal(status(hidden.eniId)?.instanceId, DEMO.instanceLargeH, 'still attached here');
      assert.equal(status(elsewhere.eniId)?.instanceId, DEMO.instanceLargeI, 'still attached to the other instance');
      assert.equal(status(elsewhereDeleting.eniId)?.instanceId, DEMO.instanceLargeI);

      const nodeEvents = { namespace: 'default', name: scenario.nodeName };
      const keptEvent = await waitForEvent({
        ...nodeEvents,
        reason: 'EniKeptUntouched',
        match: new RegExp(hidden.eniId),
      });
      assert.equal(keptEvent.type, 'Warning');
      assert.match(keptEvent.message ?? '', /never detached or deleted/);
      await waitForEvent({ ...nodeEvents, reason: 'EniForgotten', match: /eni-phantom0000000000 does not exist/ });
      await waitForEvent({
        ...nodeEvents,
        reason: 'EniForgotten',
        match: new RegExp(`${elsewhere.eniId} is attached to another`),
      });
      const state = await scenario.state();
      assert.deepEqual(
        (state.unlistedEnis ?? []).map((report) => `${report.eniId}:${report.outcome}`).sort(),
        [
          `${elsewhere.eniId}:forgottenAttachedElsewhere`,
          `${hidden.eniId}:keptServing`,
          'eni-phantom0000000000:forgottenMissing',
        ].sort(),
      );
      assert.ok(state.unschedulableEnis?.includes(hidden.eniId));
      assert.ok(state.lastErrors.some((error) => error.type === 'EniAttachedElsewhere'));
    });
  });

  it('rebinds a pod bound to an address the cloud does not have, and says so on the pod', async () => {
    const spec = demoNodeSpec({ instance: 'large-h', pool: { minPoolSize: 0, maxPoolSize: 3 } });
    await withScenario(env, { name: 'invalid-ip', spec }, async (scenario) => {
      const eni = await cloudEni(scenario.emulator, {
        instanceId: DEMO.instanceLargeH,
        vSwitchId: DEMO.vSwitchH,
        secondaryIps: 2,
      });
      await scenario.createPods(['b']);
      const podId = `${scenario.namespace}/b`;
      const record = crEni({ ...eni });
      record.ipv4 = {
        ...record.ipv4,
        '192.168.77.7': { ip: '192.168.77.7', primary: false, status: 'Valid', podID: podId },
      };
      await writeCrStatus(scenario, { networkInterfaces: { [eni.eniId]: record } });
      await scenario.signal();
      const bindings = await scenario.waitForCr('pod b on a cloud address', (cr) => {
        const binding = bindingsOf(cr).get(podId);
        return binding?.ipv4 !== undefined && binding.ipv4 !== '192.168.77.7' ? binding : undefined;
      });
      assert.ok(
        [eni.primaryIp, ...eni.ips].includes(bindings.ipv4 ?? ''),
        `${bindings.ipv4 ?? ''} is one of the ENI's cloud addresses ${JSON.stringify(eni)}`,
      );
      const event = await waitForEvent({ namespace: scenario.namespace, name: 'b', reason: 'IPRebound' });
      assert.match(
        event.message ?? '',
        new RegExp(`192\\.168\\.77\\.7 .*Invalid.*rebound to ${(bindings.ipv4 ?? '').replaceAll('.', '\\.')}`),
      );
    });
  });

  it('keeps fields newer Terway versions write, byte for byte, across allocation, passes and a GC', async () => {
    const spec = demoNodeSpec({ instance: 'large-h', pool: { minPoolSize: 0, maxPoolSize: 0 } });
    await withScenario(env, { name: 'unknown-fields', spec }, async (scenario) => {
      const eni = await cloudEni(scenario.emulator, {
        instanceId: DEMO.instanceLargeH,
        vSwitchId: DEMO.vSwitchH,
        secondaryIps: 2,
      });
      const [first = '', second = ''] = eni.ips;
      const prefixes = [{ prefix: '10.10.8.16/28', status: 'Frozen', frozenExpireAt: '2026-12-04T00:00:00Z' }];
      const record = crEni({ ...eni, extra: { ipv4Prefix: prefixes } }) as unknown as Record<
        string,
        Record<string, unknown>
      >;
      const ipv4 = record['ipv4'] ?? {};
      ipv4[first] = { ...(ipv4[first] ?? {}), ipName: 'ip-name-first' };
      ipv4[second] = { ...(ipv4[second] ?? {}), ipName: 'ip-name-second' };
      await writeCrStatus(scenario, {
        networkInterfaces: { [eni.eniId]: record },
        lastModifiedTime: '2026-12-03T07:00:00Z',
        warmUpTarget: 5,
        warmUpCompleted: true,
      });
      const pods = ['p0', 'p1', 'p2', 'p3'];
      await scenario.createPods(pods);
      await scenario.signal();
      await scenario.waitForCr('4 pods bound', allBound(scenario, pods));
      // Two pods stay, so the ENI stays and only its idle addresses are released.
      await scenario.deletePods(['p2', 'p3']);
      await scenario.signal('pods-deleted');
      await scenario.waitForCr('pods released', (cr) => (bindingsOf(cr).size === 2 ? cr : undefined));
      await scenario.workflow.executeUpdate(gcUpdate);
      await scenario.signal('after-gc');

      const raw = await rawCr(scenario);
      // lastModifiedTime is eniflow's since idle reclaim: the pods taking pool IPs moved it on (see pool-tuning).
      const lastModified = String(raw.status?.['lastModifiedTime']);
      assert.ok(Date.parse(lastModified) > Date.parse('2026-12-03T07:00:00Z'), lastModified);
      // A warm-up Terway set up is kept as it is (never re-read from the spec).
      assert.equal(raw.status?.['warmUpTarget'], 5);
      assert.equal(raw.status?.['warmUpCompleted'], true);
      const rawEnis = raw.status?.['networkInterfaces'] as Record<string, Record<string, unknown>>;
      const kept = rawEnis[eni.eniId];
      assert.deepEqual(kept?.['ipv4Prefix'], prefixes, 'prefix set untouched');
      const keptIps = kept?.['ipv4'] as Record<string, Record<string, unknown>>;
      for (const [ip, name] of [
        [first, 'ip-name-first'],
        [second, 'ip-name-second'],
      ] as const) {
        if (keptIps[ip] !== undefined) assert.equal(keptIps[ip]['ipName'], name, `ipName of ${ip}`);
      }
      assert.ok(
        keptIps[first] !== undefined || keptIps[second] !== undefined,
        'at least one named address is still on the ENI after GC',
      );
      const gcCalls = await scenario.emulator.emulator.admin.calls({ action: 'UnassignPrivateIpAddresses' });
      assert.ok(gcCalls.length > 0, 'the GC did release addresses (the write really ran)');
    });
  });

  it('never assigns, grows, shrinks or removes an unschedulable ENI', async () => {
    const spec = demoNodeSpec({ instance: 'large-h', pool: { minPoolSize: 0, maxPoolSize: 0 } });
    await withScenario(env, { name: 'unschedulable', spec }, async (scenario) => {
      const blocked = await cloudEni(scenario.emulator, {
        instanceId: DEMO.instanceLargeH,
        vSwitchId: DEMO.vSwitchH,
        tags: { creator: 'alibabacloud-erdma-controller' },
        secondaryIps: 3,
      });
      await writeCrStatus(scenario, { networkInterfaces: { [blocked.eniId]: crEni({ ...blocked }) } });
      await scenario.emulator.emulator.admin.clearCalls();
      await scenario.createPods(['x', 'y']);
      await scenario.signal();
      await scenario.waitForCr('pods bound on an ENI of eniflow', allBound(scenario, ['x', 'y']));
      const cr = await scenario.readCr();
      const blockedRecord = cr.status?.networkInterfaces?.[blocked.eniId];
      assert.equal(blockedRecord?.unschedulable, true);
      for (const binding of bindingsOf(cr).values()) assert.notEqual(binding.eniId, blocked.eniId);
      await scenario.deletePods(['x', 'y']);
      await scenario.signal('deleted');
      await scenario.waitForCr('pods released', (current) => (bindingsOf(current).size === 0 ? current : undefined));
      await scenario.workflow.executeUpdate(gcUpdate);
      const after = await scenario.readCr();
      assert.deepEqual(
        Object.keys(after.status?.networkInterfaces?.[blocked.eniId]?.ipv4 ?? {}).sort(),
        [blocked.primaryIp, ...blocked.ips].sort(),
        'its idle addresses are not released even with maxPoolSize 0',
      );
      const calls = await scenario.emulator.emulator.admin.calls({});
      assert.deepEqual(mutatingCallsOn(calls, [blocked.eniId]), []);
      assert.ok(
        calls.some((call) => ['UnassignPrivateIpAddresses', 'DeleteNetworkInterface'].includes(call.action)),
        'the GC did shrink the pool, on the other ENI',
      );
    });
  });

  it('frees a gone pod’s IP only after the daemon records the CNI delete in its NodeRuntime', async () => {
    await ensureNodeRuntimeCrd();
    const spec = demoNodeSpec({ instance: 'large-h', pool: { minPoolSize: 0, maxPoolSize: 5 } });
    await withScenario(env, { name: 'node-runtime', spec }, async (scenario) => {
      await scenario.createPods(['r']);
      await scenario.signal();
      await scenario.waitForCr('pod r bound', allBound(scenario, ['r']));
      const pod = await env.kube.core.readNamespacedPod({ namespace: scenario.namespace, name: 'r' });
      const uid = pod.metadata?.uid ?? '';
      await scenario.waitForCr('podUID recorded', (cr) =>
        Object.values(cr.status?.networkInterfaces ?? {}).some((eni) =>
          Object.values(eni.ipv4 ?? {}).some((entry) => entry.podUID === uid),
        )
          ? true
          : undefined,
      );
      const runtime = (status: 'initial' | 'deleted') => ({
        apiVersion: `${NODE_CR_GROUP}/${NODE_CR_VERSION}`,
        kind: 'NodeRuntime',
        metadata: { name: scenario.nodeName },
        status: {
          pods: {
            [uid]: {
              podID: `${scenario.namespace}/r`,
              status: {
                initial: { lastUpdateTime: '2026-12-03T08:00:00Z' },
                ...(status === 'deleted' ? { deleted: { lastUpdateTime: '2026-12-03T08:00:05Z' } } : {}),
              },
            },
          },
        },
      });
      const resource = { group: NODE_CR_GROUP, version: NODE_CR_VERSION, plural: 'noderuntimes' };
      await env.kube.customObjects.createClusterCustomObject({ ...resource, body: runtime('initial') });
      try {
        await scenario.deletePods(['r']);
        await scenario.signal('deleted');
        await pollUntil(async () => ((await scenario.state()).podsAwaitingCniDelete === 1 ? true : undefined), {
          description: 'the release waits for the CNI delete',
          timeoutMs: 30_000,
        });
        assert.ok(bindingsOf(await scenario.readCr()).has(`${scenario.namespace}/r`), 'still bound');
        const current = (await env.kube.customObjects.getClusterCustomObject({
          ...resource,
          name: scenario.nodeName,
        })) as { metadata: { resourceVersion: string } };
        await env.kube.customObjects.replaceClusterCustomObject({
          ...resource,
          name: scenario.nodeName,
          body: {
            ...runtime('deleted'),
            metadata: { name: scenario.nodeName, resourceVersion: current.metadata.resourceVersion },
          },
        });
        await scenario.signal('cni-deleted');
        await scenario.waitForCr('released after the CNI delete', (cr) => (bindingsOf(cr).size === 0 ? cr : undefined));
      } finally {
        await env.kube.customObjects
          .deleteClusterCustomObject({ ...resource, name: scenario.nodeName })
          .catch(() => undefined);
      }
    });
  });

  it('refuses an empty tag key with an InvalidNodeSpec event and IPAMConfigValid=False, before any cloud call', async () => {
    const spec = demoNodeSpec({ instance: 'large-h' });
    spec.eni = { ...spec.eni, tagFilter: { '': 'x' } };
    await withScenario(env, { name: 'empty-tag-key', spec }, async (scenario) => {
      await scenario.createPods(['c']);
      await scenario.signal();
      const event = await waitForEvent({ namespace: 'default', name: scenario.nodeName, reason: 'InvalidNodeSpec' });
      assert.match(event.message ?? '', /tag key must not be empty/);
      const condition = await pollUntil(
        async () => {
          const node = await env.kube.core.readNode({ name: scenario.nodeName });
          return node.status?.conditions?.find((c) => c.type === 'IPAMConfigValid' && c.status === 'False');
        },
        { description: 'IPAMConfigValid=False', timeoutMs: 30_000 },
      );
      assert.match(condition.message ?? '', /tagFilter/);
      assert.equal((await scenario.state()).ipamState, 'InvalidSpec');
      assert.deepEqual(await scenario.emulator.emulator.admin.calls({}), [], 'no cloud call at all');
    });
  });

  it('says once that the daemon has not written its spec, after the grace period', async () => {
    const spec = demoNodeSpec({ instance: 'large-h' });
    delete spec.eni;
    delete spec.pool;
    await withScenario(
      env,
      { name: 'daemon-wait', spec, settings: { daemonWaitEventAfterMs: 1_500, idleWakeMs: 500 } },
      async (scenario) => {
        await scenario.signal();
        const event = await waitForEvent({ namespace: 'default', name: scenario.nodeName, reason: 'DaemonNotReady' });
        assert.equal(event.type, 'Warning');
        assert.match(event.message ?? '', /has not written spec\.eni and spec\.pool/);
        const passes = (await scenario.state()).reconcileCount;
        await pollUntil(async () => ((await scenario.state()).reconcileCount >= passes + 3 ? true : undefined), {
          description: 'more passes while waiting',
          timeoutMs: 30_000,
        });
        const events = (await eventsOf({ namespace: 'default', name: scenario.nodeName })).filter(
          (e) => e.reason === 'DaemonNotReady',
        );
        // Once on the Node CR and once on the core Node (where `kubectl describe node` shows it), not every pass.
        assert.deepEqual(
          events.map((e) => e.involvedObject.apiVersion).sort(),
          ['network.alibabacloud.com/v1beta1', 'v1'],
          'said once, not every pass',
        );
        assert.equal((await scenario.state()).ipamState, 'WaitingForDaemon');
      },
    );
  });
});

/** Terway's NodeRuntime CRD (cluster-scoped), as its daemon installs it; created once per test server. */
async function ensureNodeRuntimeCrd(): Promise<void> {
  const api = env.kube.kubeConfig.makeApiClient(ApiextensionsV1Api);
  const name = `noderuntimes.${NODE_CR_GROUP}`;
  try {
    await api.readCustomResourceDefinition({ name });
    return;
  } catch {
    // Not there yet.
  }
  await api.createCustomResourceDefinition({
    body: {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name },
      spec: {
        group: NODE_CR_GROUP,
        scope: 'Cluster',
        names: { plural: 'noderuntimes', singular: 'noderuntime', kind: 'NodeRuntime', listKind: 'NodeRuntimeList' },
        versions: [
          {
            name: NODE_CR_VERSION,
            served: true,
            storage: true,
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: {
                  spec: { type: 'object' },
                  status: { type: 'object', x_kubernetes_preserve_unknown_fields: true },
                },
              },
            },
          },
        ],
      },
    },
  });
  await pollUntil(
    async () => {
      const crd = await api.readCustomResourceDefinition({ name });
      return crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') === true
        ? true
        : undefined;
    },
    { description: 'NodeRuntime CRD established', timeoutMs: 30_000 },
  );
}
