/**
 * The orphan-ENI janitor on the real Temporal dev server and kube-apiserver, the ECS emulator through the
 * real SDK: a dry run only reports; a real run deletes exactly the ENIs eniflow created for this cluster that are
 * Available, known to no Node CR and older than the grace period, with an Event for each, and never one a CR knows,
 * one that is attached, a young one, one eniflow did not create, one of another cluster, or one made before the
 * cluster tag (reported instead).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import * as $Ecs from '@alicloud/ecs20140526';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';

import { pollUntil } from '../../../scripts/lib/poll-until.js';
import { janitorReportQuery, runJanitorUpdate } from '../../../src/workflows/janitor-workflow.js';
import type { eniJanitorWorkflow } from '../../../src/workflows/janitor-workflow.js';
import { JANITOR_WORKFLOW_TYPE } from '../../../src/shared/workflow-ids.js';
import { DEMO } from '../../support/ecs-emulator.js';
import { NODE_CR_RESOURCE, TEST_CLUSTER_ID } from '../../support/kube-env.js';
import { demoNodeSpec, openScenarioEnv, recordHistoryIfAsked, withScenario } from '../../support/node-scenario.js';
import type { ScenarioEnv } from '../../support/node-scenario.js';

let env: ScenarioEnv;
before(async () => {
  env = await openScenarioEnv();
});
after(async () => {
  await env.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('orphan-ENI janitor', () => {
  it('reports on a dry run, then deletes only old, unknown, Available ENIs of eniflow, with an Event each', async () => {
    await withScenario(env, { name: 'janitor', spec: demoNodeSpec({ instance: 'large-h' }) }, async (scenario) => {
      const harness = scenario.emulator;
      const eniflowTags = (node: string, clusterId: string | null = TEST_CLUSTER_ID) => [
        new $Ecs.CreateNetworkInterfaceRequestTag({ key: 'creator', value: 'eniflow' }),
        new $Ecs.CreateNetworkInterfaceRequestTag({ key: 'eniflow.io/node', value: node }),
        ...(clusterId === null
          ? []
          : [new $Ecs.CreateNetworkInterfaceRequestTag({ key: 'eniflow.io/cluster-id', value: clusterId })]),
      ];
      const orphan = await harness.createEni({ tag: eniflowTags(scenario.nodeName) });
      const known = await harness.createEni({ tag: eniflowTags(scenario.nodeName) });
      const attached = await harness.createEni({ tag: eniflowTags(scenario.nodeName) });
      await harness.ecs.attachNetworkInterface(
        new $Ecs.AttachNetworkInterfaceRequest({
          regionId: DEMO.regionId,
          networkInterfaceId: attached,
          instanceId: DEMO.instanceLargeH,
        }),
      );
      await harness.waitForStatus(attached, 'InUse');
      const notOurs = await harness.createEni({
        tag: [new $Ecs.CreateNetworkInterfaceRequestTag({ key: 'creator', value: 'someone-else' })],
      });
      const otherCluster = await harness.createEni({ tag: eniflowTags('b-node-1', 'c-neighbour') });
      const legacy = await harness.createEni({ tag: eniflowTags('old-node', null) });
      const legacyKnown = await harness.createEni({ tag: eniflowTags(scenario.nodeName, null) });
      await env.kube.customObjects.patchClusterCustomObjectStatus(
        {
          ...NODE_CR_RESOURCE,
          name: scenario.nodeName,
          body: {
            status: {
              networkInterfaces: {
                [known]: { id: known, status: 'Available' },
                [legacyKnown]: { id: legacyKnown, status: 'Available' },
              },
            },
          },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      // Everything above is at least 5 s old when the janitor looks; the young ENI is made right before.
      await sleep(5_000);
      const young = await harness.createEni({ tag: eniflowTags(scenario.nodeName) });

      const janitor = await env.temporal.client.workflow.start<typeof eniJanitorWorkflow>(JANITOR_WORKFLOW_TYPE, {
        workflowId: `janitor-${scenario.nodeName}`,
        taskQueue: scenario.taskQueue,
        args: [
          { settings: { graceMs: 4_000, intervalMs: 60 * 60_000, clusterId: TEST_CLUSTER_ID, vpcId: DEMO.vpcId } },
        ],
      });
      try {
        const dry = await janitor.executeUpdate(runJanitorUpdate, { args: [{ dryRun: true }] });
        assert.equal(dry.dryRun, true);
        assert.deepEqual(
          dry.orphans.map((entry) => entry.eniId),
          [orphan],
        );
        assert.deepEqual(dry.deleted, []);
        assert.ok(dry.checked >= 4, `it looked at every eniflow ENI (${dry.checked})`);
        assert.equal(dry.kept['knownToCr'], 1);
        assert.equal(dry.kept['attached'], 1);
        assert.ok((dry.kept['young'] ?? 0) >= 1);
        assert.equal(dry.clusterId, TEST_CLUSTER_ID);
        assert.ok(dry.adopted >= 1, 'the legacy ENI a CR lists is adopted');
        assert.ok(
          dry.unowned.some((eni) => eni.eniId === legacy && eni.node === 'old-node'),
          `the legacy ENI no CR lists is reported: ${JSON.stringify(dry.unowned)}`,
        );
        assert.ok(!dry.unowned.some((eni) => eni.eniId === otherCluster || eni.eniId === legacyKnown));
        const afterDry = await harness.emulator.admin.inventory();
        assert.ok(
          afterDry.networkInterfaces.some((eni) => eni.eniId === orphan),
          'a dry run deletes nothing',
        );

        const real = await janitor.executeUpdate(runJanitorUpdate, { args: [{}] });
        assert.deepEqual(real.deleted, [orphan]);
        assert.deepEqual(real.failed, []);
        const remaining = new Set((await harness.emulator.admin.inventory()).networkInterfaces.map((eni) => eni.eniId));
        assert.ok(!remaining.has(orphan), 'the orphan is gone');
        for (const id of [known, attached, notOurs, young, otherCluster, legacy, legacyKnown]) {
          assert.ok(remaining.has(id), `${id} is kept`);
        }
        // The last look before the delete: the orphan described by id right before it went.
        const lookups = await harness.emulator.admin.calls({ action: 'DescribeNetworkInterfaces' });
        assert.ok(
          lookups.some((call) => JSON.stringify(call.params).includes(orphan)),
          'the orphan is described again by id before its delete',
        );
        const deletes = await harness.emulator.admin.calls({ action: 'DeleteNetworkInterface' });
        assert.deepEqual(
          deletes.map((call) => call.params['NetworkInterfaceId']),
          [orphan],
        );
        const event = await pollUntil(
          async () =>
            (
              await env.kube.core.listNamespacedEvent({
                namespace: 'default',
                fieldSelector: `involvedObject.name=${scenario.nodeName}`,
              })
            ).items.find((item) => item.reason === 'OrphanEniDeleted'),
          { description: 'the OrphanEniDeleted event', timeoutMs: 10_000 },
        );
        assert.match(
          event.message ?? '',
          new RegExp(`${orphan} .*for cluster ${TEST_CLUSTER_ID}.*known to no Node CR`),
        );
        assert.deepEqual((await janitor.query(janitorReportQuery))?.deleted, [orphan]);
        // The janitor's own history (a dry run, then deletes), for the replay tests.
        await recordHistoryIfAsked({ workflow: janitor, name: 'janitor-workflow' });
      } finally {
        await janitor.terminate('test finished');
      }
    });
  });
});
