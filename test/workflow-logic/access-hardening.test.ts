/**
 * What a Temporal client can no longer make the node workflow do, on the real workflow code with stub activities:
 * a fresh start with forged `carried` state or without a cluster id fails at once, a run continued with carried
 * state of another version than this release's fails at once too, and GC removes only ENIs the cloud shows attached
 * to the node or tagged as created for this node of this cluster.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';

import type { NetworkInterfaces } from '../../src/ipam/index.js';
import type { nodeIpamWorkflow } from '../../src/workflows/node-ipam-workflow.js';
import { newCarriedState } from '../../src/workflows/node/memory/carried-state.js';
import type { CarriedState } from '../../src/workflows/node/memory/carried-state.js';
import type { continuedNodeStart } from '../support/continued-start-workflows.js';
import { FAST_SETTINGS, openLogicEnv, runNode, waitForState } from './support/harness.js';
import type { LogicEnv } from './support/harness.js';
import { StubNode, stubNodeSpec } from './support/stub-node.js';

let env: LogicEnv;
before(async () => {
  // The production workflows plus continuedNodeStart, which hands carried state on by continue-as-new.
  env = await openLogicEnv(fileURLToPath(new URL('../support/continued-start-workflows.ts', import.meta.url)));
});
after(async () => {
  await env.close();
});

/** The failure a workflow ended with (undefined: it did not fail). */
async function failureOf(run: Promise<unknown>): Promise<ApplicationFailure | undefined> {
  try {
    await run;
    return undefined;
  } catch (error) {
    assert.ok(error instanceof WorkflowFailedError, String(error));
    assert.ok(error.cause instanceof ApplicationFailure, String(error.cause));
    return error.cause;
  }
}

/** The failure type a workflow ended with. */
async function failureTypeOf(run: Promise<unknown>): Promise<string | undefined> {
  return (await failureOf(run))?.type ?? undefined;
}

describe('node workflow access hardening', () => {
  it('refuses a fresh start with carried state, and one without a cluster id', async () => {
    const node = new StubNode({ nodeName: 'forged-start', spec: stubNodeSpec() });
    await runNode(env, node, {}, async (workflow) => {
      const { taskQueue } = await workflow.describe();
      const start = (id: string, input: Parameters<typeof nodeIpamWorkflow>[0]) =>
        env.temporal.client.workflow.start<typeof nodeIpamWorkflow>('nodeIpamWorkflow', {
          taskQueue,
          workflowId: `${workflow.workflowId}-${id}`,
          args: [input],
        });
      const forged = await start('forged', {
        nodeName: node.nodeName,
        settings: FAST_SETTINGS,
        carried: { ...newCarriedState(), failureStreak: 0 },
      });
      assert.equal(await failureTypeOf(forged.result()), 'ForgedCarriedState');
      const noCluster = { ...FAST_SETTINGS };
      delete noCluster.clusterId;
      const anonymous = await start('anonymous', { nodeName: node.nodeName, settings: noCluster });
      assert.equal(await failureTypeOf(anonymous.result()), 'MissingClusterId');
    });
  });

  it('a run continued with carried state of another version fails at once, naming it; version 1 is taken', async () => {
    const node = new StubNode({ nodeName: 'carried-version', spec: stubNodeSpec() });
    await runNode(env, node, {}, async (workflow) => {
      const { taskQueue } = await workflow.describe();
      const continued = (id: string, carried: unknown) =>
        env.temporal.client.workflow.start<typeof continuedNodeStart>('continuedNodeStart', {
          taskQueue,
          workflowId: `${workflow.workflowId}-${id}`,
          args: [{ nodeName: node.nodeName, settings: FAST_SETTINGS, carried: carried as CarriedState }],
        });
      const older = await continued('v5', { ...newCarriedState(), version: 5 });
      const refused = await failureOf(older.result());
      assert.ok(refused !== undefined, 'the run continued with version 5 failed');
      assert.equal(refused.type, 'UnsupportedCarriedState');
      assert.equal(refused.nonRetryable, true);
      assert.match(refused.message, /^carried state has version 5; this release takes carried state version 1 only/);
      const malformed = await continued('malformed', { ...newCarriedState(), lastErrors: undefined });
      assert.match((await failureOf(malformed.result()))?.message ?? '', /version 1 is malformed \(lastErrors\)/);
      // The same start with this release's version runs, with the state it was handed.
      const taken = await continued('v1', { ...newCarriedState(), reconcileCount: 41 });
      const running = env.temporal.client.workflow.getHandle<typeof nodeIpamWorkflow>(taken.workflowId);
      await waitForState(running, 'a pass of the continued run', (state) => state.reconcileCount >= 42);
      await running.terminate('test finished');
    });
  });

  it('GC deletes an Available ENI tagged for this node and cluster, and leaves one that is not provably ours', async () => {
    const node = new StubNode({
      nodeName: 'gc-ownership',
      spec: stubNodeSpec(),
      enis: [
        { eniId: 'eni-foreign', pods: [null] },
        { eniId: 'eni-mine', pods: [null] },
      ],
    });
    const crEnis = node.cr.status['networkInterfaces'] as NetworkInterfaces;
    for (const eniId of ['eni-foreign', 'eni-mine']) {
      const cloud = node.cloud.get(eniId);
      const entry = crEnis[eniId];
      assert.ok(cloud !== undefined && entry !== undefined);
      // Detached, and marked for deletion in the CR (as a forged or stale status could mark any ENI id).
      cloud.status = 'Available';
      cloud.instanceId = '';
      entry.status = 'Deleting';
    }
    const foreign = node.cloud.get('eni-foreign');
    const mine = node.cloud.get('eni-mine');
    assert.ok(foreign !== undefined && mine !== undefined);
    // Another cluster's ENI with this node's name on it: the cluster tag is what tells them apart.
    foreign.tags = { creator: 'eniflow', 'eniflow.io/node': node.nodeName, 'eniflow.io/cluster-id': 'c-other' };
    mine.tags = { creator: 'eniflow', 'eniflow.io/node': node.nodeName, 'eniflow.io/cluster-id': 'eniflow-test' };
    await runNode(env, node, {}, async (workflow) => {
      await node.waitForCalls((calls) =>
        calls.some((call) => call.name === 'deleteEni' && (call.input as { eniId: string }).eniId === 'eni-mine'),
      );
      const state = await waitForState(workflow, 'the foreign ENI kept with a reason', (view) =>
        view.lastErrors.some((error) => error.type === 'EniNotProvablyOurs'),
      );
      assert.ok(
        state.lastErrors.some((error) => /eni-foreign .*not detached or deleted/.test(error.message)),
        JSON.stringify(state.lastErrors),
      );
    });
    const touched = node.calls
      .filter((call) => ['deleteEni', 'detachEni'].includes(call.name))
      .map((call) => (call.input as { eniId: string }).eniId);
    assert.ok(!touched.includes('eni-foreign'), `never detached or deleted: ${touched.join(', ')}`);
    assert.ok(node.cloud.has('eni-foreign'));
  });
});
