/**
 * A stuck node costs little while it waits: a node with 30 pods stuck on an exhausted vSwitch for an hour writes at
 * most 200 history events (all runs of its workflow), and its pods get their IPs soon after the vSwitch gains
 * addresses, woken by the worker's vSwitch wake (a signal), not by its long timer.
 *
 * The hour runs {@link SCALE} times faster: every time setting of the node workflow (`NodeIpamSettings`, recorded
 * workflow input) and of the worker (vSwitch cache TTL, vSwitch wake poll and rate bound) is divided by SCALE. That
 * is faithful because every timer that decides when a pass runs is one of those settings: the GC period, the stuck
 * backoff, the failure backoffs, the pending-pod and repeat times of Events, the sync period, the safety net and the
 * run age; and the history a pass writes does not depend on how long it waited. What is not scaled (activity retry
 * intervals, the status write's latency) adds no pass: a stuck node's calls are refused for good, not retried.
 * Real Temporal dev server and kube-apiserver, the ECS emulator with a /26 vSwitch filled by "another tenant".
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';

import * as $Ecs from '@alicloud/ecs20140526';
import * as $Vpc from '@alicloud/vpc20160428';
import type { WorkflowHandle } from '@temporalio/client';
import proto from '@temporalio/proto';

import { pollUntil } from '../../../scripts/lib/poll-until.js';
import { VSwitchCache } from '../../../src/activities/ecs/vswitch-cache.js';
import { DEMO_FIXTURE_PATH } from '../../../src/ecs-emulator/index.js';
import type { EmulatorFixture } from '../../../src/ecs-emulator/index.js';
import type { NodeSpec } from '../../../src/ipam/index.js';
import { PROBE_ENI_ID } from '../../../src/worker/cloud-probe.js';
import { VSWITCH_GAINED_REASON } from '../../../src/worker/vswitch-wake.js';
import { DEFAULT_NODE_SETTINGS } from '../../../src/workflows/messages.js';
import type { NodeIpamSettings, NodeIpamTunables } from '../../../src/workflows/messages.js';
import { DEMO } from '../../support/ecs-emulator.js';
import type { EmulatorHarness } from '../../support/ecs-emulator.js';
import { TEST_CLUSTER_ID } from '../../support/kube-env.js';
import { allBound, demoNodeSpec, openScenarioEnv, withScenario } from '../../support/node-scenario.js';
import type { ScenarioEnv } from '../../support/node-scenario.js';

/** One hour of the node's life in 60 s of test time. */
const SCALE = 60;
const HOUR_MS = 3_600_000 / SCALE;
const PODS = 30;
const BUDGET = 200;
/** The outage: one node, 6 pods waiting, AttachNetworkInterface answering ServiceUnavailable. */
const OUTAGE_PODS = 6;
const ATTACH_BUDGET = 60;

/** The production defaults with every time setting divided by SCALE (counts, like maxPassesPerRun, unchanged). */
function scaledSettings(): NodeIpamSettings {
  const scaled: NodeIpamSettings = { ...DEFAULT_NODE_SETTINGS, clusterId: TEST_CLUSTER_ID };
  for (const key of Object.keys(DEFAULT_NODE_SETTINGS) as (keyof NodeIpamTunables)[]) {
    if (key.endsWith('Ms')) scaled[key] = Math.max(1, Math.round(scaled[key] / SCALE));
  }
  return scaled;
}

/** The demo fixture with the small zone-h vSwitch cut to a /26: 64 − 4 reserved = 60 addresses. */
async function fixtureWithSmallVSwitch(): Promise<EmulatorFixture> {
  const fixture = JSON.parse(await readFile(DEMO_FIXTURE_PATH, 'utf8')) as EmulatorFixture & {
    vSwitches: { vSwitchId: string; cidrBlock: string }[];
  };
  for (const vsw of fixture.vSwitches) if (vsw.vSwitchId === DEMO.vSwitchHSmall) vsw.cidrBlock = '10.10.16.0/26';
  return fixture;
}

/** ecs.g7.2xlarge (4 ENIs, 15 IPv4 each) on the small vSwitch: room for 30 pods once the vSwitch has addresses. */
function stuckNodeSpec(): NodeSpec {
  const spec = demoNodeSpec({
    instance: 'large-h',
    vSwitchIds: [DEMO.vSwitchHSmall],
    pool: { minPoolSize: 0, maxPoolSize: 0 },
  });
  return {
    ...spec,
    nodeMetadata: { ...spec.nodeMetadata, instanceType: 'ecs.g7.2xlarge', instanceID: DEMO.instance2xlH },
    nodeCap: { adapters: 4, totalAdapters: 4, ipv4PerAdapter: 15, ipv6PerAdapter: 15, eriQuantity: 0 },
    flavor: [{ networkInterfaceType: 'Secondary', networkInterfaceTrafficMode: 'Standard', count: 3 }],
  };
}

async function freeAddresses(harness: EmulatorHarness): Promise<number> {
  const response = await harness.vpc.describeVSwitches(
    new $Vpc.DescribeVSwitchesRequest({ regionId: DEMO.regionId, vSwitchId: DEMO.vSwitchHSmall }),
  );
  return response.body?.vSwitches?.vSwitch?.[0]?.availableIpAddressCount ?? -1;
}

/** Another tenant takes every address of the small vSwitch; returns its ENIs. */
async function fillVSwitch(harness: EmulatorHarness): Promise<string[]> {
  const enis: string[] = [];
  for (let free = await freeAddresses(harness); free > 0; free = await freeAddresses(harness)) {
    enis.push(
      await harness.createEni({ vSwitchId: DEMO.vSwitchHSmall, secondaryPrivateIpAddressCount: Math.min(9, free - 1) }),
    );
  }
  return enis;
}

/**
 * Every history event of the workflow, all runs (continue-as-new included), by event type. The runs are found by
 * walking back from the current run through each run's `continuedExecutionRunId`, not from visibility, which may lag
 * behind the latest runs and would then undercount.
 */
async function historyEvents(env: ScenarioEnv, workflowId: string): Promise<Map<string, number>> {
  const byType = new Map<string, number>();
  let runId: string | undefined = (await env.temporal.client.workflow.getHandle(workflowId).describe()).runId;
  for (const seen = new Set<string>(); runId !== undefined && runId !== '' && !seen.has(runId);) {
    seen.add(runId);
    const history: proto.temporal.api.history.v1.IHistory = await env.temporal.client.workflow
      .getHandle(workflowId, runId)
      .fetchHistory();
    const events = history.events ?? [];
    for (const event of events) {
      const type = (proto.temporal.api.enums.v1.EventType[event.eventType ?? 0] ?? 'UNKNOWN').replace(
        'EVENT_TYPE_',
        '',
      );
      byType.set(type, (byType.get(type) ?? 0) + 1);
    }
    runId = events[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId ?? undefined;
  }
  return byType;
}

/** The reasons of the `reconcile` signals the workflow received. */
async function signalReasons(workflow: WorkflowHandle): Promise<string[]> {
  const history = await workflow.fetchHistory();
  return (history.events ?? []).flatMap((event) => {
    const payload = event.workflowExecutionSignaledEventAttributes?.input?.payloads?.[0]?.data;
    if (payload === undefined || payload === null) return [];
    const reason = (JSON.parse(Buffer.from(payload).toString('utf8')) as { reason?: unknown }).reason;
    return typeof reason === 'string' ? [reason] : [];
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let env: ScenarioEnv;
before(async () => {
  env = await openScenarioEnv();
});
after(async () => {
  await env.close();
});

describe('a stuck node', () => {
  it(`with ${PODS} pods stuck for an hour (×${SCALE}) writes at most ${BUDGET} history events`, async (t) => {
    const settings = scaledSettings();
    await withScenario(
      env,
      {
        name: 'stuck-budget',
        spec: stuckNodeSpec(),
        settings,
        emulator: { fixture: await fixtureWithSmallVSwitch() },
        worker: {
          vSwitches: new VSwitchCache({ ttlMs: Math.round((20 * 60_000) / SCALE) }),
          vSwitchWake: { pollMs: Math.round(60_000 / SCALE), minWakeIntervalMs: Math.round(10_000 / SCALE) },
        },
      },
      async (scenario) => {
        const harness = scenario.emulator;
        const filler = await fillVSwitch(harness);
        assert.equal(await freeAddresses(harness), 0, 'the vSwitch is full');

        const pods = Array.from({ length: PODS }, (_, i) => `p${String(i).padStart(2, '0')}`);
        await scenario.createPods(pods);
        const startMs = Date.now();
        await scenario.signal('pod-added');
        const stuck = await pollUntil(
          async () => {
            const state = await scenario.state();
            return state.stuckWait?.cause === 'vSwitchExhausted' && state.pods.pending === PODS ? state : undefined;
          },
          { description: 'the node stuck on its exhausted vSwitch', timeoutMs: 30_000 },
        );
        assert.deepEqual(stuck.stuckWait?.wakeOnVSwitches, [DEMO.vSwitchHSmall]);

        // Every waiting pod is told why, from one batch.
        const told = await pollUntil(
          async () => {
            const events = await env.kube.core.listNamespacedEvent({ namespace: scenario.namespace });
            const pending = events.items.filter((event) => event.reason === 'IPAllocationPending');
            return pending.length >= PODS ? pending : undefined;
          },
          { description: 'an IPAllocationPending event on every pod', timeoutMs: 20_000 },
        );
        assert.match(told[0]?.message ?? '', /vSwitch/);

        // The hour.
        await sleep(Math.max(0, startMs + HOUR_MS - Date.now()));
        const byType = await historyEvents(env, scenario.workflow.workflowId);
        const total = [...byType.values()].reduce((sum, n) => sum + n, 0);
        const state = await scenario.state();
        t.diagnostic(
          `history events in one (scaled) hour: ${total} (budget ${BUDGET}); passes ${state.reconcileCount}; ` +
            `by type ${JSON.stringify(Object.fromEntries([...byType].sort()))}`,
        );
        assert.ok(total <= BUDGET, `${total} history events in an hour (budget ${BUDGET})`);
        assert.equal(state.pods.pending, PODS, 'still stuck: nothing freed addresses');

        // The vSwitch gains addresses. If the long timer is about to fire, let it (its pass finds the same nothing)
        // so that what serves the pods below can only be the worker's wake.
        let nextAtMs = Date.parse(state.nextPass?.at ?? '');
        if (nextAtMs - Date.now() < 15_000) {
          // A pass counts when it ends (the count grows when it starts, before its next time is known).
          const ended = state.lastReconcileMs ?? 0;
          const afterPass = await pollUntil(
            async () => {
              const now = await scenario.state();
              return (now.lastReconcileMs ?? 0) > ended ? now : undefined;
            },
            { description: 'the long timer pass', timeoutMs: 30_000 },
          );
          nextAtMs = Date.parse(afterPass.nextPass?.at ?? '');
        }
        assert.ok(nextAtMs - Date.now() >= 15_000, 'the long timer is not what serves the pods');
        for (const eniId of filler) {
          await harness.ecs.deleteNetworkInterface(
            new $Ecs.DeleteNetworkInterfaceRequest({ regionId: DEMO.regionId, networkInterfaceId: eniId }),
          );
        }
        await scenario.waitForCr(`all ${PODS} pods bound`, allBound(scenario, pods), nextAtMs - Date.now());
        assert.ok(Date.now() < nextAtMs, 'served before the long timer would have fired');
        assert.ok(
          (await signalReasons(scenario.workflow)).includes(VSWITCH_GAINED_REASON),
          'woken by the vSwitch wake',
        );
      },
    );
  });

  it(`with ${OUTAGE_PODS} pods during an hour-long attach outage (×${SCALE}) writes at most ${BUDGET} events and makes at most ${ATTACH_BUDGET} attach calls`, async (t) => {
    const settings = scaledSettings();
    await withScenario(
      env,
      {
        name: 'outage-budget',
        spec: demoNodeSpec({ instance: 'large-h', pool: { minPoolSize: 0, maxPoolSize: 0 } }),
        settings,
        worker: {
          // The worker's own times, scaled like the node's: its probe of the failing action and its wake spacing.
          wakeNodesOnCloudRecovery: {
            probeIntervalMs: Math.round(20_000 / SCALE),
            minIntervalMs: Math.round(10_000 / SCALE),
            maxIntervalMs: Math.round(300_000 / SCALE),
          },
        },
      },
      async (scenario) => {
        const { admin } = scenario.emulator.emulator;
        await admin.addFaults(['AttachNetworkInterface always error ServiceUnavailable 503']);
        const pods = Array.from({ length: OUTAGE_PODS }, (_, i) => `o${i}`);
        await scenario.createPods(pods);
        const startMs = Date.now();
        await scenario.signal('pod-added');
        await pollUntil(
          async () => ((await scenario.state()).stuckWait?.cause === 'cloudCallsFailing' ? true : undefined),
          { description: 'the node stuck on the failing attach', timeoutMs: 30_000 },
        );

        // The hour.
        await sleep(Math.max(0, startMs + HOUR_MS - Date.now()));
        const byType = await historyEvents(env, scenario.workflow.workflowId);
        const total = [...byType.values()].reduce((sum, n) => sum + n, 0);
        const attaches = await admin.calls({ action: 'AttachNetworkInterface' });
        const nodeAttaches = attaches.filter((call) => call.params['NetworkInterfaceId'] !== PROBE_ENI_ID);
        const probes = attaches.length - nodeAttaches.length;
        const creates = await admin.calls({ action: 'CreateNetworkInterface' });
        const state = await scenario.state();
        t.diagnostic(
          `outage hour: ${total} history events (budget ${BUDGET}), ${nodeAttaches.length} attach calls by the node ` +
            `(budget ${ATTACH_BUDGET}), ${probes} probe calls by the worker, ${creates.length} creates, ` +
            `passes ${state.reconcileCount}; by type ${JSON.stringify(Object.fromEntries([...byType].sort()))}`,
        );
        assert.ok(total <= BUDGET, `${total} history events in an hour (budget ${BUDGET})`);
        assert.ok(
          nodeAttaches.length <= ATTACH_BUDGET,
          `${nodeAttaches.length} attach calls (budget ${ATTACH_BUDGET})`,
        );
        assert.equal(creates.length, 1, 'one ENI, kept while its attach fails');
        assert.equal(state.pods.pending, OUTAGE_PODS, 'still waiting: the attach never succeeded');

        // The fault clears while the node sleeps: the worker's probe sees the action answer and wakes it, long before
        // its own timer.
        let nextAtMs = Date.parse(state.nextPass?.at ?? '');
        if (nextAtMs - Date.now() < 5_000) {
          const ended = state.lastReconcileMs ?? 0;
          const afterPass = await pollUntil(
            async () => {
              const now = await scenario.state();
              return (now.lastReconcileMs ?? 0) > ended ? now : undefined;
            },
            { description: 'the timer pass', timeoutMs: 30_000 },
          );
          nextAtMs = Date.parse(afterPass.nextPass?.at ?? '');
        }
        assert.ok(nextAtMs - Date.now() >= 5_000, "the node's own timer is not what serves the pods");
        await admin.clearFaults();
        await scenario.waitForCr(`all ${OUTAGE_PODS} pods bound`, allBound(scenario, pods), nextAtMs - Date.now());
        assert.ok(Date.now() < nextAtMs, "served before the node's own timer would have fired");
        assert.ok((await signalReasons(scenario.workflow)).includes('cloud-recovered'), 'woken by the worker');
      },
    );
  });
});
