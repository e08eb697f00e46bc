/**
 * What a Temporal client can no longer make the node workflow do, on the real workflow code with stub activities:
 * a fresh start with forged `carried` state or without a cluster id fails at once, and GC removes only ENIs the
 * cloud shows attached to the node or tagged as created for this node of this cluster.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';

import type { NetworkInterfaces } from '../../src/ipam/index.js';
import type { nodeIpamWorkflow } from '../../src/workflows/node-ipam-workflow.js';
import { newCarriedState } from '../../src/workflows/node/carried-state.js';
import { FAST_SETTINGS, openLogicEnv, runNode, waitForState } from './support/harness.js';
import type { LogicEnv } from './support/harness.js';
import { StubNode, stubNodeSpec } from './support/stub-node.js';

let env: LogicEnv;
before(async () => {
  env = await openLogicEnv();
});
after(async () => {
  await env.close();
});

/** The failure type a workflow ended with. */
async function failureTypeOf(run: Promise<unknown>): Promise<string | undefined> {
  try {
    await run;
    return undefined;
  } catch (error) {
    assert.ok(error instanceof WorkflowFailedError, String(error));
    return error.cause instanceof ApplicationFailure ? (error.cause.type ?? undefined) : undefined;
  }
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
