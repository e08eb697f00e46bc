/**
 * The fold of a pass's allocations is deterministic: whatever order the cloud calls of one pass complete in, the
 * statuses the workflow writes are the same. A pass that assigns and creates writes twice: the pods its assigns serve
 * as soon as the assigns are in (not seconds later, after the attach), then the new ENI's; a pod served by the first
 * write keeps its address. Real workflow code on the Temporal dev server, stub activities.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';

import type { JsonChange } from '../../src/ipam/index.js';
import { stateQuery } from '../../src/workflows/messages.js';
import type { NodeWorkflowState } from '../../src/workflows/messages.js';
import { openLogicEnv, runNode } from './support/harness.js';
import type { LogicEnv } from './support/harness.js';
import { completionOrder } from './support/history.js';
import { StubNode, stubNodeSpec } from './support/stub-node.js';
import type { RecordedCall } from './support/stub-node.js';

let env: LogicEnv;
before(async () => {
  env = await openLogicEnv();
});
after(async () => {
  await env.close();
});

/** The last step of each allocation of the pass: two assigns on existing ENIs, and the create saga's wait. */
const STEPS = {
  assignA: (call: RecordedCall) => call.name === 'assignIpv4' && (call.input as { eniId: string }).eniId === 'eni-a',
  assignB: (call: RecordedCall) => call.name === 'assignIpv4' && (call.input as { eniId: string }).eniId === 'eni-b',
  created: (call: RecordedCall) =>
    call.name === 'waitEniStatus' && (call.input as { status: string }).status === 'InUse',
} as const;
type Step = keyof typeof STEPS;

/** Margin after the step before has returned, so its result is recorded first (the history check below proves it). */
const SPACING_MS = 250;

/**
 * A node with two full ENIs (4 pods) and 6 new pods: the plan grows eni-a and eni-b by 2 each and creates an ENI
 * for the last 2. The stubs hold each step until the one before it in `order` has returned.
 */
async function runPass(order: readonly Step[]): Promise<{
  changes: JsonChange[][];
  crEnis: unknown;
  completed: string[];
  plan: NodeWorkflowState['lastPlan'];
}> {
  const node = new StubNode({
    nodeName: 'fold-order',
    spec: stubNodeSpec({ adapters: 4, ipv4PerAdapter: 4 }),
    pods: ['p1', 'p2', 'p3', 'p4', 'q1', 'q2', 'q3', 'q4', 'q5', 'q6'],
    enis: [
      { eniId: 'eni-a', pods: ['p1', 'p2'] },
      { eniId: 'eni-b', pods: ['p3', 'p4'] },
    ],
  });
  const holdUntilPreviousStepDone = async (call: RecordedCall): Promise<undefined> => {
    const step = (Object.keys(STEPS) as Step[]).find((name) => STEPS[name](call));
    const index = step === undefined ? -1 : order.indexOf(step);
    const previous = index > 0 ? order[index - 1] : undefined;
    if (previous !== undefined) {
      await node.waitForCalls((calls) => calls.some((other) => STEPS[previous](other) && other.doneSeq !== undefined));
      await sleep(SPACING_MS);
    }
    return undefined;
  };
  node.script('assignIpv4', (_input, call) => holdUntilPreviousStepDone(call));
  node.script('waitEniStatus', (_input, call) => holdUntilPreviousStepDone(call));

  return runNode(env, node, {}, async (workflow) => {
    await node.waitForPasses(1);
    const writes = node.callsOf('writeNodeStatusChanges');
    assert.equal(writes.length, 2, 'the pass writes the assigns, then the created ENI');
    const state = await workflow.query(stateQuery);
    return {
      changes: writes.map((write) => write.input.eniChanges),
      crEnis: node.crEnis(),
      completed: (await completionOrder(workflow)).filter((name) => /^(assignIpv4|waitEniStatus)/.test(name)),
      plan: state.lastPlan,
    };
  });
}

describe('fold order', () => {
  it('writes the same status whether allocations complete in plan order or in reverse', async () => {
    const inPlanOrder = await runPass(['assignA', 'assignB', 'created']);
    const reversed = await runPass(['created', 'assignB', 'assignA']);

    // The plan is the one the stubs were written for, in both runs.
    for (const run of [inPlanOrder, reversed]) {
      assert.deepEqual(
        run.plan.allocations.map((allocation) => [allocation.kind, 'eniId' in allocation ? allocation.eniId : '']),
        [
          ['assignIps', 'eni-a'],
          ['assignIps', 'eni-b'],
          ['createEni', ''],
        ],
      );
    }
    // The workflow really saw the results in the two orders (history order of the completions).
    assert.deepEqual(inPlanOrder.completed, ['assignIpv4:eni-a', 'assignIpv4:eni-b', 'waitEniStatus:eni-new-3']);
    assert.deepEqual(reversed.completed, ['waitEniStatus:eni-new-3', 'assignIpv4:eni-b', 'assignIpv4:eni-a']);

    assert.deepEqual(
      reversed.changes,
      inPlanOrder.changes,
      'the written ENI changes do not depend on completion order',
    );
    assert.deepEqual(reversed.crEnis, inPlanOrder.crEnis);
    // The first write serves the 4 pods the assigns made room for, on the existing ENIs, and keeps them: the second
    // only adds the new ENI.
    const [first = [], second = []] = inPlanOrder.changes;
    const touched = (changes: JsonChange[]) => [...new Set(changes.map((change) => String(change.path[0])))].sort();
    assert.deepEqual(touched(first), ['eni-a', 'eni-b']);
    assert.deepEqual(touched(second), ['eni-new-3']);
    const boundInFirst = JSON.stringify(first).match(/"podID":"[^"]+"/g) ?? [];
    assert.equal(boundInFirst.length, 4, JSON.stringify(first));
    // And the writes are the useful ones: all 10 pods bound, on 3 ENIs.
    const bound = Object.values(inPlanOrder.crEnis as Record<string, { ipv4?: Record<string, { podID?: string }> }>)
      .flatMap((eni) => Object.values(eni.ipv4 ?? {}))
      .filter((entry) => entry.podID !== undefined && entry.podID !== '');
    assert.equal(bound.length, 10);
    assert.deepEqual(Object.keys(inPlanOrder.crEnis as object).sort(), ['eni-a', 'eni-b', 'eni-new-3']);
  });
});
