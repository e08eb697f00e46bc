/**
 * The degradation switch end to end, on the real Temporal dev server and kube-apiserver with the ECS emulator: the
 * watcher and a worker run, the operator sets the level with the CLI (the control ConfigMap), and the emulator's call
 * log shows what reached the cloud. `l1`: no releasing call (GC asked for and due), allocation goes on; `l0`: no
 * call at all while pods wait, and the node's Event says why; `off`: the held-back work happens.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import type { CoreV1Event } from '@kubernetes/client-node';

import { pollUntil } from '../../../scripts/lib/poll-until.js';
import { kubeControlStore, runCli } from '../../../src/cli/commands.js';
import type { CliContext } from '../../../src/cli/commands.js';
import { runWatcher } from '../../../src/watcher/run-watcher.js';
import type { WatcherHandle } from '../../../src/watcher/run-watcher.js';
import { DEFAULT_NODE_SETTINGS, gcSignal } from '../../../src/workflows/messages.js';
import type { NodeWorkflowState } from '../../../src/workflows/messages.js';
import { uniqueName } from '../../support/kube-env.js';
import {
  allBound,
  demoNodeSpec,
  openScenarioEnv,
  startNodeScenario,
  TEST_CLUSTER_ID,
  TEST_SETTINGS,
} from '../../support/node-scenario.js';
import type { NodeScenario, ScenarioEnv } from '../../support/node-scenario.js';
import { testWatcherConfig, terminateWorkflowsOn } from './watcher-harness.js';

/** Calls that give something back to the cloud: what `l1` must stop. */
const RELEASING = new Set([
  'UnassignPrivateIpAddresses',
  'UnassignIpv6Addresses',
  'DetachNetworkInterface',
  'DeleteNetworkInterface',
]);
const ALLOCATING = new Set(['AssignPrivateIpAddresses', 'CreateNetworkInterface', 'AttachNetworkInterface']);

let env: ScenarioEnv;
let scenario: NodeScenario;
let watcher: WatcherHandle;
const configMapName = uniqueName('eniflow-control');

before(async () => {
  env = await openScenarioEnv();
  scenario = await startNodeScenario(env, {
    name: 'degrade',
    spec: demoNodeSpec({ instance: 'large-h', pool: { minPoolSize: 0, maxPoolSize: 2 } }),
  });
  const base = testWatcherConfig({
    taskQueue: scenario.taskQueue,
    temporalAddress: env.temporal.address,
    temporalNamespace: env.temporal.namespace,
    leaseNamespace: 'default',
    leaseName: uniqueName('eniflow-watcher'),
    identity: 'degradation-test',
  });
  watcher = await runWatcher(
    {
      ...base,
      nodeSettings: { ...DEFAULT_NODE_SETTINGS, ...TEST_SETTINGS, clusterId: TEST_CLUSTER_ID },
      degradation: { level: 'off', configMap: { namespace: 'default', name: configMapName } },
    },
    { kubeConfig: env.kube.kubeConfig },
  );
  await watcher.synced;
});

after(async () => {
  await watcher.stop();
  await terminateWorkflowsOn(env.temporal.client, scenario.taskQueue);
  await scenario.close();
  await env.kube.core.deleteNamespacedConfigMap({ namespace: 'default', name: configMapName }).catch(() => undefined);
  await env.close();
});

function cliContext(lines: string[]): CliContext {
  return {
    client: env.temporal.client,
    namespace: env.temporal.namespace,
    taskQueue: scenario.taskQueue,
    control: kubeControlStore({ core: env.kube.core, namespace: 'default', name: configMapName }),
    out: (line) => lines.push(...line.split('\n')),
  };
}

/**
 * `eniflow degradation set <level>`, then the time until the node's workflow runs at it (measured, not asserted):
 * the level is in the workflow and no pass begun before it still runs.
 */
async function setLevel(level: 'l0' | 'l1' | 'off'): Promise<{ ms: number; lines: string[] }> {
  const lines: string[] = [];
  const startedMs = Date.now();
  assert.equal(await runCli(['degradation', 'set', level], cliContext(lines)), 0, lines.join('\n'));
  await pollUntil(
    async () => {
      const state = await scenario.state();
      // In effect once no pass that took its gates at the former level still runs (it finishes what it began).
      const degradation = state.degradation;
      return (degradation?.level ?? 'off') === level && degradation?.passRunningAt === undefined ? state : undefined;
    },
    { description: `the workflow runs at ${level}`, timeoutMs: 30_000, intervalMs: 50 },
  );
  const ms = Date.now() - startedMs;
  process.stdout.write(`# degradation ${level}: set → workflow has it in ${ms} ms\n`);
  return { ms, lines };
}

async function lastSeq(): Promise<number> {
  const calls = await scenario.emulator.emulator.admin.calls({});
  return calls.at(-1)?.seq ?? 0;
}

async function callsSince(seq: number): Promise<string[]> {
  return (await scenario.emulator.emulator.admin.calls({ sinceSeq: seq })).map((call) => call.action);
}

/** Waits until the workflow has finished a pass that started after now (so it saw what was just changed). */
async function passAfterNow(check: (state: NodeWorkflowState) => boolean, description: string) {
  const now = await scenario.state();
  // A pass running now is counted already and may have read before the change: the one after it is wanted.
  const before = now.reconcileCount + (now.passRunning === true ? 1 : 0);
  return pollUntil(
    async () => {
      const state = await scenario.state();
      return state.reconcileCount > before && state.passRunning !== true && check(state) ? state : undefined;
    },
    { description, timeoutMs: 30_000, intervalMs: 100 },
  );
}

async function nodeEvents(reason: string): Promise<CoreV1Event[]> {
  const list = await env.kube.core.listNamespacedEvent({
    namespace: 'default',
    fieldSelector: `involvedObject.name=${scenario.nodeName},reason=${reason}`,
  });
  return list.items;
}

const pods = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix}-${i}`);

describe('degradation switch', () => {
  it('l0 stops every call, l1 every releasing call, and off lets the held-back work happen', async () => {
    // Off: four pods get their IPs.
    const first = pods('a', 4);
    await scenario.createPods(first);
    await scenario.waitForCr('four pods bound', allBound(scenario, first));

    // l0: more pods than idle IPs (the node holds 12 at most): they wait, and no call at all reaches the cloud.
    const l0 = await setLevel('l0');
    assert.match(l0.lines.join('\n'), /degradation l0 set/);
    const l0Seq = await lastSeq();
    const second = pods('b', 8);
    await scenario.createPods(second);
    const waiting = await passAfterNow((state) => state.pods.pending > 0, 'a pass with the new pods waiting');
    assert.deepEqual(waiting.degradation?.heldBack, ['allocate', 'cloud', 'release', 'sync']);
    await scenario.workflow.signal(gcSignal);
    await passAfterNow(() => true, 'a pass after a GC request');
    assert.deepEqual(await callsSince(l0Seq), [], 'no cloud call under l0');
    const l0Event = await pollUntil(
      async () => {
        const events = await nodeEvents('DegradationHoldsBack');
        return events.find((event) => event.message?.includes('degradation l0') === true);
      },
      { description: 'the DegradationHoldsBack Event of l0', timeoutMs: 10_000, intervalMs: 200 },
    );
    assert.equal(l0Event.type, 'Warning');

    // l1: allocation resumes, so the waiting pods get their IPs…
    const l1Seq = await lastSeq();
    await setLevel('l1');
    await scenario.waitForCr('the waiting pods bound under l1', allBound(scenario, second));
    // …but pods deleted so that idle IPs exceed maxPoolSize (2), and GC asked for, release nothing.
    await scenario.deletePods([...first, ...second.slice(1)]);
    await passAfterNow((state) => state.pods.total === 1, 'the pass after the deletions');
    await scenario.workflow.signal(gcSignal);
    const held = await passAfterNow((state) => state.enis.idleIps > 2, 'the pass after the GC request');
    assert.deepEqual(held.degradation?.heldBack, ['release', 'sync']);
    const underL1 = await callsSince(l1Seq);
    assert.deepEqual(
      underL1.filter((action) => RELEASING.has(action)),
      [],
      `no releasing call under l1: ${underL1.join(', ')}`,
    );
    assert.ok(
      underL1.some((action) => ALLOCATING.has(action)),
      `allocation went on under l1: ${underL1.join(', ')}`,
    );
    // Once per change, not per pass: one Event per level set (l0, l1) on the CR, none repeated.
    const holdsBack = (await nodeEvents('DegradationHoldsBack')).filter(
      (event) => event.involvedObject.apiVersion !== 'v1',
    );
    assert.equal(holdsBack.length, 2, JSON.stringify(holdsBack.map((event) => event.message)));
    assert.ok(
      holdsBack.every((event) => (event.count ?? 1) === 1),
      'no Event repeated per pass',
    );

    // Off: the held-back GC runs (idle IPs back to maxPoolSize) and the lift is told.
    const offSeq = await lastSeq();
    await setLevel('off');
    await pollUntil(async () => ((await scenario.state()).enis.idleIps <= 2 ? true : undefined), {
      description: 'the held-back GC releases the idle IPs above maxPoolSize',
      timeoutMs: 30_000,
      intervalMs: 200,
    });
    const afterLift = await callsSince(offSeq);
    assert.ok(
      afterLift.some((action) => RELEASING.has(action)),
      afterLift.join(', '),
    );
    const lifted = await pollUntil(
      async () => {
        const events = await nodeEvents('DegradationLifted');
        return events.length > 0 ? events : undefined;
      },
      { description: 'the DegradationLifted Event', timeoutMs: 10_000, intervalMs: 200 },
    );
    assert.equal(lifted[0]?.type, 'Normal');

    // `show` reports the switch and the level of each node workflow.
    const lines: string[] = [];
    assert.equal(await runCli(['degradation', 'show'], cliContext(lines)), 0);
    assert.match(lines.join('\n'), /off: [1-9]/);
  });
});
