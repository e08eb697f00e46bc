/**
 * A vSwitch with fewer free addresses than a node asks for serves what it has: a node whose ENI could take 10 more
 * addresses, on a vSwitch with 8 left, gets 8 pods served at once; the other 2 wait with a true message (the vSwitch
 * has none left), and are served when the vSwitch gains addresses, woken by the worker's vSwitch poll, well before
 * the stuck node's long timer. The worker's vSwitch cache starts stale (it counted the vSwitch before another tenant
 * filled it), so the first ask is refused: the refusal learns the real count instead of blocking the vSwitch.
 *
 * Real Temporal dev server and kube-apiserver, the ECS emulator with a /26 vSwitch filled by "another tenant".
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';

import * as $Ecs from '@alicloud/ecs20140526';
import * as $Vpc from '@alicloud/vpc20160428';

import { pollUntil } from '../../../scripts/lib/poll-until.js';
import { DEMO_FIXTURE_PATH } from '../../../src/ecs-emulator/index.js';
import type { EmulatorFixture } from '../../../src/ecs-emulator/index.js';
import type { NodeSpec } from '../../../src/ipam/index.js';
import { DEMO } from '../../support/ecs-emulator.js';
import type { EmulatorHarness } from '../../support/ecs-emulator.js';
import { allBound, bindingsOf, demoNodeSpec, openScenarioEnv, withScenario } from '../../support/node-scenario.js';
import type { ScenarioEnv } from '../../support/node-scenario.js';

const SMALL = DEMO.vSwitchHSmall;
const LEFT = 8;
const WANTED = 10;

/** The demo fixture with the small zone-h vSwitch cut to a /26: 64 − 4 reserved = 60 addresses. */
async function fixtureWithSmallVSwitch(): Promise<EmulatorFixture> {
  const fixture = JSON.parse(await readFile(DEMO_FIXTURE_PATH, 'utf8')) as EmulatorFixture & {
    vSwitches: { vSwitchId: string; cidrBlock: string }[];
  };
  for (const vsw of fixture.vSwitches) if (vsw.vSwitchId === SMALL) vsw.cidrBlock = '10.10.16.0/26';
  return fixture;
}

/** ecs.g7.2xlarge (4 ENIs, 15 IPv4 each) on the small vSwitch only, no pool: every address is a pod's. */
function nodeSpec(): NodeSpec {
  const spec = demoNodeSpec({ instance: 'large-h', vSwitchIds: [SMALL], pool: { minPoolSize: 0, maxPoolSize: 0 } });
  return {
    ...spec,
    nodeMetadata: { ...spec.nodeMetadata, instanceType: 'ecs.g7.2xlarge', instanceID: DEMO.instance2xlH },
    nodeCap: { adapters: 4, totalAdapters: 4, ipv4PerAdapter: 15, ipv6PerAdapter: 15, eriQuantity: 0 },
    flavor: [{ networkInterfaceType: 'Secondary', networkInterfaceTrafficMode: 'Standard', count: 3 }],
  };
}

async function freeAddresses(harness: EmulatorHarness): Promise<number> {
  const response = await harness.vpc.describeVSwitches(
    new $Vpc.DescribeVSwitchesRequest({ regionId: DEMO.regionId, vSwitchId: SMALL }),
  );
  return response.body?.vSwitches?.vSwitch?.[0]?.availableIpAddressCount ?? -1;
}

/** Another tenant takes addresses of the small vSwitch until `left` remain; returns its ENIs. */
async function fillVSwitchUntil(harness: EmulatorHarness, left: number): Promise<string[]> {
  const enis: string[] = [];
  for (let free = await freeAddresses(harness); free > left; free = await freeAddresses(harness)) {
    const take = Math.min(10, free - left);
    enis.push(
      await harness.createEni({
        vSwitchId: SMALL,
        ...(take > 1 ? { secondaryPrivateIpAddressCount: take - 1 } : {}),
      }),
    );
  }
  return enis;
}

let env: ScenarioEnv;
before(async () => {
  env = await openScenarioEnv();
});
after(async () => {
  await env.close();
});

describe('a vSwitch with fewer free addresses than asked for', () => {
  it(`serves ${LEFT} of ${WANTED} pods at once, and the rest when it gains addresses`, async () => {
    await withScenario(
      env,
      {
        name: 'vsw-partial',
        spec: nodeSpec(),
        settings: { pendingPodEventAfterMs: 0 },
        emulator: { fixture: await fixtureWithSmallVSwitch() },
        worker: { vSwitchWake: { pollMs: 1_000, minWakeIntervalMs: 500 } },
      },
      async (scenario) => {
        const harness = scenario.emulator;
        // The node's first pod: an ENI with one address, and the worker's cache counts the vSwitch (59 free).
        await scenario.createPods(['first']);
        await scenario.signal('pod-added');
        await scenario.waitForCr('the first pod bound', allBound(scenario, ['first']));

        const filler = await fillVSwitchUntil(harness, LEFT);
        assert.equal(await freeAddresses(harness), LEFT);
        const pods = Array.from({ length: WANTED }, (_, i) => `p${String(i).padStart(2, '0')}`);
        await scenario.createPods(pods);
        await scenario.signal('pod-added');

        // What is there is taken: 8 pods served, 2 waiting on a vSwitch that now truly has no address.
        const served = await scenario.waitForCr(`${LEFT} of the ${WANTED} pods bound`, (cr) => {
          const bound = pods.filter((pod) => bindingsOf(cr).has(`${scenario.namespace}/${pod}`));
          return bound.length === LEFT ? bound : undefined;
        });
        const waiting = pods.filter((pod) => !served.includes(pod));
        assert.equal(await freeAddresses(harness), 0);
        const stuck = await pollUntil(
          async () => {
            const state = await scenario.state();
            return state.stuckWait !== undefined ? state : undefined;
          },
          { description: 'the node waiting on its exhausted vSwitch', timeoutMs: 30_000 },
        );
        assert.equal(stuck.stuckWait?.cause, 'vSwitchExhausted');
        assert.deepEqual(stuck.stuckWait?.wakeOnVSwitches, [SMALL]);
        assert.equal(stuck.pods.pending, WANTED - LEFT);
        // Each waiting pod's latest Event says why, and it is true: the vSwitch has no address left.
        const latestEventOf = async (pod: string) => {
          const events = await env.kube.core.listNamespacedEvent({
            namespace: scenario.namespace,
            fieldSelector: `involvedObject.name=${pod},reason=IPAllocationPending`,
          });
          const times = (event: (typeof events.items)[number]) =>
            new Date(event.lastTimestamp ?? event.eventTime ?? 0).getTime();
          return events.items.sort((a, b) => times(a) - times(b)).at(-1);
        };
        for (const pod of waiting) {
          const latest = await pollUntil(
            async () => {
              const event = await latestEventOf(pod);
              return event?.message?.includes('vSwitch exhausted') === true ? event : undefined;
            },
            {
              description: `the latest IPAllocationPending event of ${pod} saying vSwitch exhausted`,
              timeoutMs: 30_000,
            },
          );
          assert.match(latest.message ?? '', /vSwitch exhausted/);
        }
        // The stale count cost one refused ask at most; the count learnt from it, and the 8 taken, no more.
        const refused = (await harness.emulator.admin.calls({ action: 'AssignPrivateIpAddresses' })).filter(
          (call) => call.code !== 'Success',
        );
        assert.ok(refused.length <= 1, `${refused.length} refused assigns`);

        // The vSwitch gains addresses: the worker's poll wakes the node (its long timer is 30 min away).
        await harness.ecs.deleteNetworkInterface(
          new $Ecs.DeleteNetworkInterfaceRequest({ regionId: DEMO.regionId, networkInterfaceId: filler[0] }),
        );
        await scenario.waitForCr('every pod bound', allBound(scenario, ['first', ...pods]), 30_000);
        const state = await scenario.state();
        assert.equal(state.pods.pending, 0);
        assert.equal(state.stuckWait, undefined);
      },
    );
  });
});
