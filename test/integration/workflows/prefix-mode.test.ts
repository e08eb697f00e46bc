import { NEXT_PASS_REASONS } from '../../../src/ipam/index.js';
/**
 * IP prefix mode end to end (Terway v1.17): real Temporal dev server, real kube-apiserver, the ECS emulator through
 * the real SDK. A Node CR as Terway's daemon writes it in prefix mode gets its /28 prefixes over the fewest calls,
 * keeps them, releases the ones the daemon marks `Deleting`, and ignores a later change of `enableIPPrefix`.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';

import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { CoreV1Event } from '@kubernetes/client-node';

import { pollUntil } from '../../../scripts/lib/poll-until.js';
import { DEMO_FIXTURE_PATH } from '../../../src/ecs-emulator/index.js';
import type { EmulatorFixture } from '../../../src/ecs-emulator/index.js';
import type { IpPrefixEntry, NodeCr, NodeSpec } from '../../../src/ipam/index.js';
import { gcUpdate } from '../../../src/workflows/messages.js';
import { DEMO } from '../../support/ecs-emulator.js';
import { NODE_CR_RESOURCE } from '../../support/kube-env.js';
import { demoNodeSpec, openScenarioEnv, withScenario } from '../../support/node-scenario.js';
import type { NodeScenario, ScenarioEnv } from '../../support/node-scenario.js';

let env: ScenarioEnv;
before(async () => {
  env = await openScenarioEnv();
});
after(async () => {
  await env.close();
});

const PREFIX_INSTANCE_TYPE = 'ecs.g7.4xlarge';

/** The demo fixture with instance 2xl-h turned into an instance type with 20 IPv4 slots per ENI and 8 ENIs. */
async function fixtureWith20Slots(): Promise<EmulatorFixture> {
  const fixture = JSON.parse(await readFile(DEMO_FIXTURE_PATH, 'utf8')) as EmulatorFixture & {
    instanceTypes: Record<string, unknown>[];
    instances: { instanceId: string; instanceType: string }[];
  };
  const base = fixture.instanceTypes.find((type) => type.instanceTypeId === 'ecs.g7.2xlarge') ?? {};
  fixture.instanceTypes.push({
    ...base,
    instanceTypeId: PREFIX_INSTANCE_TYPE,
    eniQuantity: 8,
    eniTotalQuantity: 8,
    eniPrivateIpAddressQuantity: 20,
    eniIpv6AddressQuantity: 20,
  });
  for (const instance of fixture.instances) {
    if (instance.instanceId === DEMO.instance2xlH) instance.instanceType = PREFIX_INSTANCE_TYPE;
  }
  return fixture;
}

/** A Node CR spec as Terway v1.17's daemon writes it in prefix mode, on the 20-slot instance. */
function prefixNodeSpec(ipv4PrefixCount: number): NodeSpec {
  const spec = demoNodeSpec({ instance: 'large-h', pool: { minPoolSize: 0, maxPoolSize: 5 } });
  return {
    ...spec,
    nodeMetadata: { ...spec.nodeMetadata, instanceID: DEMO.instance2xlH, instanceType: PREFIX_INSTANCE_TYPE },
    nodeCap: { adapters: 8, totalAdapters: 8, ipv4PerAdapter: 20, ipv6PerAdapter: 20, eriQuantity: 0 },
    eni: { ...spec.eni, enableIPPrefix: true, ipv4PrefixCount },
    flavor: [{ networkInterfaceType: 'Secondary', networkInterfaceTrafficMode: 'Standard', count: 7 }],
  };
}

function ipv4Prefixes(cr: NodeCr): { eniId: string; entry: IpPrefixEntry }[] {
  return Object.values(cr.status?.networkInterfaces ?? {}).flatMap((eni) =>
    (eni.ipv4Prefix ?? []).map((entry) => ({ eniId: eni.id, entry })),
  );
}

/** The prefixes counted toward `ipv4PrefixCount`: `Valid` and `Frozen` (Terway's count). */
const usablePrefixes = (cr: NodeCr): string[] =>
  ipv4Prefixes(cr)
    .filter(({ entry }) => entry.status === 'Valid' || entry.status === 'Frozen')
    .map(({ entry }) => entry.prefix)
    .sort();

const validPrefixes = (cr: NodeCr): string[] =>
  ipv4Prefixes(cr)
    .filter(({ entry }) => entry.status === 'Valid')
    .map(({ entry }) => entry.prefix)
    .sort();

async function callsOf(scenario: NodeScenario, action: string) {
  return scenario.emulator.emulator.admin.calls({ action });
}

async function cloudPrefixes(scenario: NodeScenario): Promise<string[]> {
  const inventory = await scenario.emulator.emulator.admin.inventory();
  return inventory.networkInterfaces
    .filter((eni) => eni.instanceId === DEMO.instance2xlH)
    .flatMap((eni) => eni.ipv4Prefixes)
    .sort();
}

/** Waits until the workflow has run `passes` more passes than `since` and has nothing in flight. */
async function passesAfter(scenario: NodeScenario, since: number, passes: number) {
  return pollUntil(
    async () => {
      const state = await scenario.state();
      return state.reconcileCount >= since + passes && state.pendingOperations.length === 0 ? state : undefined;
    },
    { description: `${passes} more passes`, timeoutMs: 60_000 },
  );
}

async function eventsOf(name: string, reason: string): Promise<CoreV1Event[]> {
  const list = await env.kube.core.listNamespacedEvent({
    namespace: 'default',
    fieldSelector: `involvedObject.name=${name},reason=${reason}`,
  });
  return list.items;
}

describe('IP prefix mode', () => {
  it('gives a v1.17 prefix-mode node its 20 /28 prefixes over the fewest calls, keeps them, releases Deleting ones, and ignores a mode change', async () => {
    await withScenario(
      env,
      { name: 'prefix-mode', spec: prefixNodeSpec(20), emulator: { fixture: await fixtureWith20Slots() } },
      async (scenario) => {
        await scenario.signal();
        const cr = await scenario.waitForCr('20 Valid prefixes', (current) =>
          validPrefixes(current).length === 20 ? current : undefined,
        );
        const prefixes = validPrefixes(cr);
        for (const prefix of prefixes) assert.match(prefix, /^10\.10\.\d+\.\d+\/28$/);
        assert.deepEqual(await cloudPrefixes(scenario), prefixes, 'the CR lists exactly what the cloud holds');

        // Fewest calls: 20 prefixes need two ENIs (19 slots each); each is created with 10 (the per-call limit),
        // so no Assign call is needed at all: 2 creates + 2 attaches.
        const creates = await callsOf(scenario, 'CreateNetworkInterface');
        assert.deepEqual(
          creates.map((call) => [call.params['Ipv4PrefixCount'], call.params['SecondaryPrivateIpAddressCount']]),
          [
            ['10', undefined],
            ['10', undefined],
          ],
        );
        assert.equal((await callsOf(scenario, 'AttachNetworkInterface')).length, 2);
        assert.equal((await callsOf(scenario, 'AssignPrivateIpAddresses')).length, 0);
        // No pod binding in prefix mode: the ENIs hold only their primary address.
        for (const eni of Object.values(cr.status?.networkInterfaces ?? {})) {
          assert.equal(Object.keys(eni.ipv4 ?? {}).length, 1, `${eni.id} has only its primary IP`);
          assert.equal(eni.status, 'InUse');
        }

        // None is removed while listed: a GC and more passes (pods come and go) leave every prefix in place.
        await scenario.createPods(['a', 'b']);
        const before = (await scenario.state()).reconcileCount;
        await scenario.workflow.executeUpdate(gcUpdate);
        await scenario.signal('again');
        await scenario.deletePods(['a']);
        await scenario.signal('pod-gone');
        await passesAfter(scenario, before, 2);
        assert.equal((await callsOf(scenario, 'UnassignPrivateIpAddresses')).length, 0, 'nothing unassigned');
        assert.equal((await callsOf(scenario, 'DeleteNetworkInterface')).length, 0, 'no ENI deleted');
        assert.equal((await callsOf(scenario, 'CreateNetworkInterface')).length, 2, 'no ENI created');
        assert.deepEqual(validPrefixes(await scenario.readCr()), prefixes);
        assert.deepEqual(await cloudPrefixes(scenario), prefixes);

        // The daemon marks a prefix Deleting: the GC unassigns it, and the node's total is made up with a new one.
        const [victim] = ipv4Prefixes(cr);
        assert.ok(victim !== undefined);
        const list = (cr.status?.networkInterfaces?.[victim.eniId]?.ipv4Prefix ?? []).map((entry) =>
          entry.prefix === victim.entry.prefix ? { ...entry, status: 'Deleting' } : entry,
        );
        await env.kube.customObjects.patchClusterCustomObjectStatus(
          {
            ...NODE_CR_RESOURCE,
            name: scenario.nodeName,
            body: { status: { networkInterfaces: { [victim.eniId]: { ipv4Prefix: list } } } },
          },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        );
        await scenario.signal('prefix-deleting');
        const refilled = await scenario.waitForCr('the Deleting prefix released and replaced', (current) => {
          const all = ipv4Prefixes(current).map(({ entry }) => entry.prefix);
          return !all.includes(victim.entry.prefix) && validPrefixes(current).length === 20 ? current : undefined;
        });
        const unassigns = await callsOf(scenario, 'UnassignPrivateIpAddresses');
        assert.deepEqual(
          unassigns.map((call) => [call.params['NetworkInterfaceId'], call.params['Ipv4Prefix.1']]),
          [[victim.eniId, victim.entry.prefix]],
        );
        assert.ok(!(await cloudPrefixes(scenario)).includes(victim.entry.prefix), 'gone from the cloud');
        const assigns = await callsOf(scenario, 'AssignPrivateIpAddresses');
        assert.deepEqual(
          assigns.map((call) => call.params['Ipv4PrefixCount']),
          ['1'],
        );
        assert.deepEqual(await cloudPrefixes(scenario), validPrefixes(refilled));

        // A Frozen prefix past its frozenExpireAt is Valid again, within the same pass that would otherwise count it
        // missing: nothing is assigned for it.
        const [thawing] = ipv4Prefixes(refilled);
        assert.ok(thawing !== undefined);
        const frozenList = (refilled.status?.networkInterfaces?.[thawing.eniId]?.ipv4Prefix ?? []).map((entry) =>
          entry.prefix === thawing.entry.prefix
            ? { ...entry, status: 'Frozen', frozenExpireAt: '2026-01-01T00:00:00Z' }
            : entry,
        );
        await env.kube.customObjects.patchClusterCustomObjectStatus(
          {
            ...NODE_CR_RESOURCE,
            name: scenario.nodeName,
            body: { status: { networkInterfaces: { [thawing.eniId]: { ipv4Prefix: frozenList } } } },
          },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        );
        await scenario.signal('prefix-frozen-expired');
        await scenario.waitForCr('the expired Frozen prefix Valid again', (current) => {
          const entry = ipv4Prefixes(current).find(({ entry: e }) => e.prefix === thawing.entry.prefix)?.entry;
          return entry?.status === 'Valid' && entry.frozenExpireAt === undefined ? current : undefined;
        });
        assert.equal((await callsOf(scenario, 'AssignPrivateIpAddresses')).length, 1, 'nothing assigned for it');

        // A Frozen prefix whose frozenExpireAt is still ahead stays Frozen, and the node wakes at that time by itself
        // (a durable timer, no signal) to return it to Valid.
        const thawed = await scenario.readCr();
        const assignsBeforeFreeze = (await callsOf(scenario, 'AssignPrivateIpAddresses')).length;
        const unassignsBeforeFreeze = (await callsOf(scenario, 'UnassignPrivateIpAddresses')).length;
        const later = ipv4Prefixes(thawed).find(({ entry }) => entry.prefix !== thawing.entry.prefix);
        assert.ok(later !== undefined);
        const expireAt = new Date(Math.ceil((Date.now() + 4_000) / 1000) * 1000).toISOString().replace('.000Z', 'Z');
        const laterList = (thawed.status?.networkInterfaces?.[later.eniId]?.ipv4Prefix ?? []).map((entry) =>
          entry.prefix === later.entry.prefix ? { ...entry, status: 'Frozen', frozenExpireAt: expireAt } : entry,
        );
        await env.kube.customObjects.patchClusterCustomObjectStatus(
          {
            ...NODE_CR_RESOURCE,
            name: scenario.nodeName,
            body: { status: { networkInterfaces: { [later.eniId]: { ipv4Prefix: laterList } } } },
          },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        );
        await scenario.signal('prefix-frozen-ahead');
        const frozenState = await pollUntil(
          async () => {
            const state = await scenario.state();
            return state.nextPass?.reason === NEXT_PASS_REASONS.frozenPrefixExpiry ? state : undefined;
          },
          { description: 'a frozen-expiry timer', timeoutMs: 30_000, intervalMs: 100 },
        );
        assert.equal(frozenState.nextPass?.at, expireAt.replace('Z', '.000Z'));
        const frozenEntry = ipv4Prefixes(await scenario.readCr()).find(
          ({ entry }) => entry.prefix === later.entry.prefix,
        );
        assert.equal(frozenEntry?.entry.status, 'Frozen', 'not thawed before its time');
        await scenario.waitForCr('the Frozen prefix Valid at its frozenExpireAt, with no signal', (current) => {
          const entry = ipv4Prefixes(current).find(({ entry: e }) => e.prefix === later.entry.prefix)?.entry;
          return entry?.status === 'Valid' ? current : undefined;
        });
        // A Frozen prefix counts toward ipv4PrefixCount (as in Terway): neither the freeze nor the thaw made a call,
        // and the frozen prefix was never unassigned.
        assert.equal((await callsOf(scenario, 'AssignPrivateIpAddresses')).length, assignsBeforeFreeze);
        assert.equal((await callsOf(scenario, 'UnassignPrivateIpAddresses')).length, unassignsBeforeFreeze);

        // enableIPPrefix is fixed at creation: a change raises a Warning Event and changes nothing.
        const assignsBeforeModeChange = (await callsOf(scenario, 'AssignPrivateIpAddresses')).length;
        const prefixesBeforeModeChange = validPrefixes(await scenario.readCr());
        await env.kube.customObjects.patchClusterCustomObject(
          { ...NODE_CR_RESOURCE, name: scenario.nodeName, body: { spec: { eni: { enableIPPrefix: false } } } },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        );
        await scenario.createPods(['c']);
        await scenario.signal('mode-changed');
        const warning = await pollUntil(
          async () => (await eventsOf(scenario.nodeName, 'PrefixModeImmutable')).find((e) => e.type === 'Warning'),
          { description: 'PrefixModeImmutable Warning', timeoutMs: 60_000, intervalMs: 250 },
        );
        assert.match(warning.message ?? '', /enableIPPrefix is false.*IP prefix mode/);
        const settled = await passesAfter(scenario, (await scenario.state()).reconcileCount, 1);
        assert.equal(settled.ipamState, 'Ready');
        const last = await scenario.readCr();
        assert.deepEqual(validPrefixes(last), prefixesBeforeModeChange, 'prefixes unchanged');
        for (const eni of Object.values(last.status?.networkInterfaces ?? {})) {
          assert.equal(Object.keys(eni.ipv4 ?? {}).length, 1, `${eni.id}: still no pod IP allocated`);
        }
        assert.equal(
          (await callsOf(scenario, 'AssignPrivateIpAddresses')).length,
          assignsBeforeModeChange,
          'no IP assigned',
        );
        assert.equal((await callsOf(scenario, 'UnassignPrivateIpAddresses')).length, 1, 'nothing more released');
      },
    );
  });
  it('counts the prefixes the daemon freezes toward ipv4PrefixCount: 1 Deleting and 2 Frozen of 4 get 1 new one', async () => {
    await withScenario(
      env,
      { name: 'prefix-frozen', spec: prefixNodeSpec(4), emulator: { fixture: await fixtureWith20Slots() } },
      async (scenario) => {
        await scenario.signal();
        const cr = await scenario.waitForCr('4 Valid prefixes', (current) =>
          validPrefixes(current).length === 4 ? current : undefined,
        );
        const [deleting, frozenA, frozenB] = ipv4Prefixes(cr);
        assert.ok(deleting !== undefined && frozenA !== undefined && frozenB !== undefined);
        assert.equal(new Set([deleting.eniId, frozenA.eniId, frozenB.eniId]).size, 1, 'one ENI holds the 4');
        // The daemon, as Terway's does: one prefix given up (Deleting), two frozen for an hour.
        const frozenExpireAt = new Date(Math.ceil(Date.now() / 1000) * 1000 + 3_600_000)
          .toISOString()
          .replace('.000Z', 'Z');
        const frozen = new Set([frozenA.entry.prefix, frozenB.entry.prefix]);
        const list = (cr.status?.networkInterfaces?.[deleting.eniId]?.ipv4Prefix ?? []).map((entry) => {
          if (entry.prefix === deleting.entry.prefix) return { ...entry, status: 'Deleting' };
          return frozen.has(entry.prefix) ? { ...entry, status: 'Frozen', frozenExpireAt } : entry;
        });
        await env.kube.customObjects.patchClusterCustomObjectStatus(
          {
            ...NODE_CR_RESOURCE,
            name: scenario.nodeName,
            body: { status: { networkInterfaces: { [deleting.eniId]: { ipv4Prefix: list } } } },
          },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        );
        const before = (await scenario.state()).reconcileCount;
        await scenario.signal('daemon-froze');
        await scenario.waitForCr('the Deleting prefix released and replaced', (current) => {
          const all = ipv4Prefixes(current).map(({ entry }) => entry.prefix);
          return !all.includes(deleting.entry.prefix) && usablePrefixes(current).length === 4 ? current : undefined;
        });
        await scenario.signal('again');
        await passesAfter(scenario, before, 2);
        const final = await scenario.readCr();
        // Terway assigns 1 and ends with 4; counting Valid only would assign 3 and end with 6, never shrunk.
        assert.deepEqual(
          (await callsOf(scenario, 'AssignPrivateIpAddresses')).map((call) => call.params['Ipv4PrefixCount']),
          ['1'],
          'one prefix assigned, for the Deleting one only',
        );
        assert.equal(usablePrefixes(final).length, 4);
        assert.deepEqual(
          ipv4Prefixes(final)
            .filter(({ entry }) => entry.status === 'Frozen')
            .map(({ entry }) => entry.prefix)
            .sort(),
          [...frozen].sort(),
          'the Frozen prefixes stay Frozen until their frozenExpireAt',
        );
        assert.deepEqual(await cloudPrefixes(scenario), usablePrefixes(final), 'the cloud holds exactly the 4');
        assert.equal((await callsOf(scenario, 'CreateNetworkInterface')).length, 1, 'no ENI created for them');
      },
    );
  });
});
