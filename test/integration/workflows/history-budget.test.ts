/**
 * Small histories: a pass over a 110-pod node whose pods carry 1 KB of annotations each costs at most
 * {@link PASS_BUDGET_BYTES} of workflow history, whether nothing changed or one pod came or went; the read activity
 * answers with the changes since the view the workflow holds. Real Temporal dev server and kube-apiserver, the ECS
 * emulator (its demo instance type widened to 8 ENIs × 20 IPs so 110 pods fit).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import type { WorkflowHandle } from '@temporalio/client';
import proto from '@temporalio/proto';

import { pollUntil } from '../../../scripts/lib/poll-until.js';
import { DEMO_FIXTURE_PATH, loadFixtureFile } from '../../../src/ecs-emulator/index.js';
import { DEFAULT_NODE_SETTINGS } from '../../../src/workflows/messages.js';
import { allBound, demoNodeSpec, openScenarioEnv, withScenario } from '../../support/node-scenario.js';
import type { NodeScenario, ScenarioEnv } from '../../support/node-scenario.js';

/** The target: history bytes per pass of a 110-pod node, ECS calls of a growing pass aside. */
const PASS_BUDGET_BYTES = 4 * 1024;
const POD_COUNT = 110;

let env: ScenarioEnv;
before(async () => {
  env = await openScenarioEnv();
});
after(async () => {
  await env.close();
});

/** ECS activities that grow the pool: outside the budget (a pass that must grow the pool pays for them). */
const GROW_ACTIVITIES = new Set(['createEni', 'attachEni', 'waitEniStatus', 'assignIpv4', 'assignIpv6']);

interface PassCost {
  /** Encoded bytes of the pass's events (from its signal to the next), pool-growing ECS activities aside. */
  bytes: number;
  /** Encoded bytes of the pool-growing ECS activities' events. */
  growBytes: number;
  /** Bytes by event type, for the report. */
  byType: Record<string, number>;
  activities: string[];
  /** Size of the pass's `readNodeView` result. */
  readBytes: number;
}

interface HistoryFacts {
  /** Cost of the events after the n-th signal (index = signal number, from 1). */
  afterSignal: PassCost[];
  /** Size of each `readNodeView` result payload, in order. */
  readResultBytes: number[];
  /** Results of `readNodeView`, decoded. */
  readResults: { full?: unknown; changes?: unknown[] }[];
}

async function historyFacts(workflow: WorkflowHandle): Promise<HistoryFacts> {
  const history = await workflow.fetchHistory();
  const facts: HistoryFacts = { afterSignal: [], readResultBytes: [], readResults: [] };
  const typeOfScheduled = new Map<string, string>();
  let current: PassCost | undefined;
  for (const event of history.events ?? []) {
    if (event.workflowExecutionSignaledEventAttributes) {
      current = { bytes: 0, growBytes: 0, byType: {}, activities: [], readBytes: 0 };
      facts.afterSignal.push(current);
    }
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled) typeOfScheduled.set(String(event.eventId), scheduled.activityType?.name ?? '');
    const scheduledId =
      event.activityTaskStartedEventAttributes?.scheduledEventId ??
      event.activityTaskCompletedEventAttributes?.scheduledEventId ??
      event.activityTaskFailedEventAttributes?.scheduledEventId ??
      event.activityTaskTimedOutEventAttributes?.scheduledEventId;
    const activity = scheduled ? typeOfScheduled.get(String(event.eventId)) : typeOfScheduled.get(String(scheduledId));
    const size = proto.temporal.api.history.v1.HistoryEvent.encode(event).finish().length;
    if (current !== undefined) {
      if (activity !== undefined && GROW_ACTIVITIES.has(activity)) current.growBytes += size;
      else current.bytes += size;
      const type = activity ?? String(event.eventType);
      current.byType[type] = (current.byType[type] ?? 0) + size;
      if (scheduled) current.activities.push(activity ?? '');
    }
    // A local activity's result is in its marker's `data.result`, next to its `data` (type, attempt, times).
    const marker = event.markerRecordedEventAttributes;
    const markerType = marker?.details?.['data']?.payloads?.[0]?.data;
    if (markerType !== undefined && markerType !== null) {
      const info = JSON.parse(Buffer.from(markerType).toString('utf8')) as { activity_type?: string };
      if (current !== undefined && info.activity_type !== undefined) current.activities.push(info.activity_type);
      const data = marker?.details?.['result']?.payloads?.[0]?.data;
      if (info.activity_type === 'readNodeView' && data !== undefined && data !== null) {
        facts.readResultBytes.push(data.length);
        if (current !== undefined) current.readBytes += data.length;
        facts.readResults.push(JSON.parse(Buffer.from(data).toString('utf8')) as HistoryFacts['readResults'][number]);
      }
    }
  }
  return facts;
}

/** Whether the workflow is blocked waiting (no workflow task or activity pending). */
async function isIdle(scenario: NodeScenario): Promise<boolean> {
  const description = await scenario.workflow.describe();
  return (description.raw.pendingActivities ?? []).length === 0 && !description.raw.pendingWorkflowTask;
}

/**
 * Signals the node and waits for the pass it causes to end. The signal comes after the minimum interval between
 * passes (1 s), as a lone change does: a signal within it adds the coalescing timer and one more workflow task
 * (about 550 B, measured), the price of folding a burst of changes into one pass.
 */
async function passAfterSignal(scenario: NodeScenario, reason: string): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, DEFAULT_NODE_SETTINGS.minReconcileIntervalMs + 200));
  const before = await scenario.state();
  await scenario.signal(reason);
  await pollUntil(
    async () => {
      // The pass counter moves when a pass starts; the workflow is idle again once it has ended.
      if (!(await isIdle(scenario))) return undefined;
      const state = await scenario.state();
      if (state.reconcileCount <= before.reconcileCount) return undefined;
      return (await isIdle(scenario)) ? true : undefined;
    },
    { description: `pass after ${reason}`, timeoutMs: 60_000 },
  );
}

async function createAnnotatedPods(scenario: NodeScenario, names: readonly string[]): Promise<void> {
  // 1 KB of annotations the core never reads (what deployment tools, service meshes and operators add).
  const annotations = { 'example.com/config': 'x'.repeat(1_024) };
  for (const name of names) {
    await env.kube.core.createNamespacedPod({
      namespace: scenario.namespace,
      body: {
        metadata: { name, annotations },
        spec: {
          nodeName: scenario.nodeName,
          containers: [{ name: 'main', image: 'registry.invalid/eniflow-test:none' }],
        },
      },
    });
  }
}

describe('history budget', () => {
  it(`keeps a pass of a ${POD_COUNT}-pod node with 1 KB annotations under ${PASS_BUDGET_BYTES} bytes`, async (t) => {
    const fixture = await loadFixtureFile(DEMO_FIXTURE_PATH);
    for (const type of fixture.instanceTypes ?? []) {
      if (type.instanceTypeId !== 'ecs.g7.large') continue;
      type.eniQuantity = 8;
      type.eniTotalQuantity = 8;
      type.eniPrivateIpAddressQuantity = 20;
      type.eniIpv6AddressQuantity = 20;
    }
    const spec = demoNodeSpec({ instance: 'large-h', pool: { minPoolSize: 0, maxPoolSize: 200 } });
    spec.nodeCap = { adapters: 8, totalAdapters: 8, ipv4PerAdapter: 20, ipv6PerAdapter: 20, eriQuantity: 0 };
    spec.flavor = [{ networkInterfaceType: 'Secondary', networkInterfaceTrafficMode: 'Standard', count: 7 }];
    await withScenario(
      env,
      { name: 'history-budget', spec, emulator: { fixture }, settings: { idleWakeMs: 10 * 60_000 } },
      async (scenario) => {
        const names = Array.from({ length: POD_COUNT }, (_, i) => `p${String(i).padStart(3, '0')}`);
        await createAnnotatedPods(scenario, names);
        // A pass fills ENIs to their quota and creates what the rest needs; passes after a signal serve any late pod.
        const bound = allBound(scenario, names);
        await scenario.signal('pods');
        await pollUntil(
          async () => {
            await passAfterSignal(scenario, 'pods');
            return bound(await scenario.readCr());
          },
          { description: `${POD_COUNT} pods bound`, timeoutMs: 120_000 },
        );

        // Each measured pass is delimited by the next signal.
        await passAfterSignal(scenario, 'settle');
        const first = (await historyFacts(scenario.workflow)).afterSignal.length;
        await passAfterSignal(scenario, 'unchanged');
        await createAnnotatedPods(scenario, ['added']);
        await passAfterSignal(scenario, 'pod-added');
        await scenario.waitForCr('the new pod bound', allBound(scenario, ['added']));
        await scenario.deletePods(['p000']);
        await passAfterSignal(scenario, 'pod-deleted');
        await passAfterSignal(scenario, 'end');

        const facts = await historyFacts(scenario.workflow);
        // afterSignal[first] is the pass of the signal sent after `first` signals.
        const passes = { unchanged: first, podAdded: first + 1, podDeleted: first + 2 };
        const cost = (index: number): PassCost => {
          const pass = facts.afterSignal[index];
          assert.ok(pass !== undefined, `pass ${index} in history`);
          return pass;
        };
        const firstFull = facts.readResultBytes[0] ?? 0;
        for (const [kind, index] of Object.entries(passes)) {
          const pass = cost(index);
          t.diagnostic(
            `${kind} pass: ${pass.bytes} B of history (+${pass.growBytes} B of pool-growing ECS calls); ` +
              `by event: ${JSON.stringify(pass.byType)}; activities: ${pass.activities.join(',')}`,
          );
        }
        t.diagnostic(`read results: first ${firstFull} B (full), then ${facts.readResultBytes.slice(1).join(', ')} B`);
        // The first read of a run is in full, every later one a list of changes.
        assert.ok(facts.readResults[0]?.full !== undefined, 'the first read of the run is in full');
        assert.ok(
          facts.readResults.slice(1).every((result) => Array.isArray(result.changes)),
          'later reads are changes',
        );
        for (const [kind, index] of Object.entries(passes)) {
          const { bytes } = cost(index);
          assert.ok(bytes <= PASS_BUDGET_BYTES, `${kind} pass: ${bytes} B of history > ${PASS_BUDGET_BYTES} B`);
        }
        assert.ok(cost(passes.podAdded).activities.includes('readNodeView'), 'the measured passes read the node');
        for (const [kind, index] of Object.entries(passes)) {
          assert.ok(
            !cost(index).activities.includes('describeVSwitches'),
            `${kind} pass: the read brings the vSwitches the worker holds cached, with no lookup of their own`,
          );
        }
        for (const [kind, index] of Object.entries(passes)) {
          const { readBytes } = cost(index);
          assert.ok(
            readBytes <= PASS_BUDGET_BYTES,
            `${kind} pass: read result of ${readBytes} B > ${PASS_BUDGET_BYTES} B`,
          );
        }
        // The full read is what the budget saves every pass: the annotations never reach history.
        assert.ok(firstFull < POD_COUNT * 1_024, `full read of ${firstFull} B carries no annotations`);
      },
    );
  });
});
