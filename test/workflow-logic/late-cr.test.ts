/**
 * A node workflow that finds no Node CR releases what eniflow made for the node and ends. A change signalled while
 * that pass ran (the CR created just after the read, as happens when a node and its CR are created together) must
 * not end with it: the workflow starts a new run, whose pass finds the CR and serves the pods. Real workflow code on
 * the Temporal dev server, stub activities.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { reconcileSignal } from '../../src/workflows/messages.js';
import { openLogicEnv, runNode, waitForState } from './support/harness.js';
import type { LogicEnv, NodeWorkflowHandle } from './support/harness.js';
import { StubNode, stubNodeSpec } from './support/stub-node.js';

let env: LogicEnv;
before(async () => {
  env = await openLogicEnv();
});
after(async () => {
  await env.close();
});

describe('a Node CR that comes late', () => {
  it('a signal during the pass that found no CR starts a new run, which serves the pods', async () => {
    const node = new StubNode({ nodeName: 'late-cr', spec: stubNodeSpec(), pods: ['a'] });
    let started: (workflow: NodeWorkflowHandle) => void = () => undefined;
    const handle = new Promise<NodeWorkflowHandle>((resolve) => {
      started = resolve;
    });
    let reads = 0;
    // The first read finds no CR; while it runs, the CR is "created" and the watcher signals.
    node.script('readNodeView', async () => {
      reads += 1;
      if (reads > 1) return undefined;
      await (await handle).signal(reconcileSignal, { reason: 'node-cr-added' });
      return { result: { digest: 'no-cr-yet', full: { nodeName: 'late-cr', pods: {} } } };
    });
    // The release of a node without a CR lists what eniflow made for it: nothing.
    node.script('listEniflowEnis', () => ({ result: [] }));
    await runNode(env, node, {}, async (workflow) => {
      started(workflow);
      const served = await waitForState(workflow, 'the pod served by a later run', (view) => view.pods.withIp === 1);
      assert.equal(served.ipamState, 'Ready');
      const description = await workflow.describe();
      assert.equal(description.status.name, 'RUNNING');
      assert.notEqual(description.runId, workflow.firstExecutionRunId, 'a new run took over');
      assert.ok(node.passes.length >= 2);
    });
  });
});
