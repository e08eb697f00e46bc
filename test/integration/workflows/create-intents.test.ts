/**
 * Create intents that hold the whole request, and attaches that keep failing, end to end: real Temporal dev server,
 * real kube-apiserver, the ECS emulator through the real SDK. Each test checks that no ENI of the node is left
 * without a CR entry and that no second ENI is created for one demand.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';

import { pollUntil } from '../../../scripts/lib/poll-until.js';
import { ENIFLOW_INTENT_TAG, ENIFLOW_NODE_TAG } from '../../../src/ipam/index.js';
import { reconcileSignal } from '../../../src/workflows/messages.js';
import { DEMO } from '../../support/ecs-emulator.js';
import { deleteNodeCr, NODE_CR_RESOURCE } from '../../support/kube-env.js';
import { allBound, demoNodeSpec, openScenarioEnv, withScenario } from '../../support/node-scenario.js';
import type { NodeScenario, ScenarioEnv } from '../../support/node-scenario.js';

let env: ScenarioEnv;
before(async () => {
  env = await openScenarioEnv();
});
after(async () => {
  await env.close();
});

const OTHER_SECURITY_GROUP = 'sg-bp1emu00000000000002';

/** The node's ENIs in the cloud, and whether the CR lists each. */
async function nodeEnis(scenario: NodeScenario) {
  const inventory = await scenario.emulator.emulator.admin.inventory();
  const cr = await scenario.readCr();
  const listed = new Set(Object.keys(cr.status?.networkInterfaces ?? {}));
  return inventory.networkInterfaces
    .filter((eni) => eni.tags[ENIFLOW_NODE_TAG] === scenario.nodeName)
    .map((eni) => ({ id: eni.eniId, status: eni.status, tags: eni.tags, inCr: listed.has(eni.eniId) }));
}

async function createTokens(scenario: NodeScenario): Promise<string[]> {
  const creates = await scenario.emulator.emulator.admin.calls({ action: 'CreateNetworkInterface' });
  return creates.map((call) => call.params['ClientToken'] ?? '');
}

describe('create intents', () => {
  it('re-issues an intent with its recorded security groups after a spec change: one ENI, in the CR', async () => {
    await withScenario(
      env,
      { name: 'intent-sg-change', spec: demoNodeSpec({ instance: 'large-h' }) },
      async (scenario) => {
        const { admin } = scenario.emulator.emulator;
        // Both attempts of the first create are applied by the cloud but answered 503: the pass ends with an intent.
        await admin.addFaults(['CreateNetworkInterface next 2 lost ServiceUnavailable 503']);
        await scenario.createPods(['a']);
        await scenario.signal();
        await pollUntil(async () => ((await createTokens(scenario)).length >= 1 ? true : undefined), {
          description: 'the first create',
          timeoutMs: 30_000,
        });
        // The daemon changes the security groups while the intent is open.
        await env.kube.customObjects.patchClusterCustomObject(
          {
            ...NODE_CR_RESOURCE,
            name: scenario.nodeName,
            body: { spec: { eni: { securityGroupIDs: [OTHER_SECURITY_GROUP] } } },
          },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        );
        const patchedMs = Date.now();
        await scenario.waitForCr('the pod bound', allBound(scenario, ['a']), 90_000);
        const creates = await admin.calls({ action: 'CreateNetworkInterface' });
        assert.ok(creates.length >= 3, `two lost attempts and a re-issue (${creates.length})`);
        assert.ok(
          creates.some((call) => Date.parse(call.time) > patchedMs),
          `a re-issue after the spec change (${creates.map((call) => call.time).join(', ')}, patched ${new Date(patchedMs).toISOString()})`,
        );
        assert.equal(new Set(creates.map((call) => call.params['ClientToken'])).size, 1, 'one token');
        for (const call of creates) {
          assert.equal(call.params['SecurityGroupIds.1'], DEMO.securityGroup, 'the recorded security group');
          assert.notEqual(call.code, 'IdempotentParameterMismatch');
        }
        const enis = await nodeEnis(scenario);
        assert.equal(enis.length, 1, 'no second ENI');
        assert.deepEqual(
          enis.map((eni) => [eni.status, eni.inCr, eni.tags[ENIFLOW_INTENT_TAG]]),
          [['InUse', true, creates[0]?.params['ClientToken']]],
        );
        assert.equal((await scenario.state()).pendingCreates ?? 0, 0);
      },
    );
  });

  it('resolves IdempotentFailed by listing the intent tag: the ENI the lost attempt made is used, none other', async () => {
    await withScenario(
      env,
      {
        name: 'intent-idempotent-failed',
        spec: demoNodeSpec({ instance: 'large-h' }),
        settings: { createAttemptHorizonMs: 5_000 },
      },
      async (scenario) => {
        const { admin } = scenario.emulator.emulator;
        // Attempt 1 creates the ENI and its answer is lost; attempt 2 is told the token cannot be reused.
        await admin.addFaults([
          'CreateNetworkInterface next 1 lost ServiceUnavailable 503',
          'CreateNetworkInterface next 1 error IdempotentFailed 400',
        ]);
        await scenario.createPods(['a']);
        await scenario.signal();
        await scenario.waitForCr('the pod bound', allBound(scenario, ['a']), 90_000);
        const tokens = await createTokens(scenario);
        assert.equal(tokens.length, 2, 'no create after IdempotentFailed: the list by tag found the ENI');
        const lists = await admin.calls({ action: 'DescribeNetworkInterfaces' });
        assert.ok(
          lists.some((call) => Object.values(call.params).includes(ENIFLOW_INTENT_TAG)),
          'a list by the intent tag',
        );
        const enis = await nodeEnis(scenario);
        assert.equal(enis.length, 1, 'no second ENI');
        assert.deepEqual(
          enis.map((eni) => [eni.status, eni.inCr]),
          [['InUse', true]],
        );
      },
    );
  });

  it('a first use spent inside the service (IdempotentFailed on retry) and no ENI: a new token, one ENI', async () => {
    await withScenario(
      env,
      {
        name: 'intent-spent-token',
        spec: demoNodeSpec({ instance: 'large-h' }),
        settings: { createAttemptHorizonMs: 5_000 },
      },
      async (scenario) => {
        const { admin } = scenario.emulator.emulator;
        await admin.addFaults(['CreateNetworkInterface next 1 error InternalError 500 spent']);
        await scenario.createPods(['a']);
        await scenario.signal();
        await scenario.waitForCr('the pod bound', allBound(scenario, ['a']), 90_000);
        const creates = await admin.calls({ action: 'CreateNetworkInterface' });
        assert.deepEqual(
          creates.map((call) => call.code),
          ['InternalError', 'IdempotentFailed', 'Success'],
        );
        assert.equal(new Set(creates.map((call) => call.params['ClientToken'])).size, 2, 'a new token at last');
        const enis = await nodeEnis(scenario);
        assert.deepEqual(
          enis.map((eni) => [eni.status, eni.inCr]),
          [['InUse', true]],
        );
      },
    );
  });
});

describe('a Node CR deleted with an intent open', () => {
  it('lists the intent tag once its attempts ended and deletes the ENI it made before letting the node go', async () => {
    await withScenario(
      env,
      {
        name: 'intent-node-deleted',
        spec: demoNodeSpec({ instance: 'large-h' }),
        finalizer: true,
        settings: { createAttemptHorizonMs: 5_000 },
      },
      async (scenario) => {
        const { admin } = scenario.emulator.emulator;
        await admin.addFaults(['CreateNetworkInterface next 2 lost ServiceUnavailable 503']);
        await scenario.createPods(['a']);
        await scenario.signal();
        await pollUntil(async () => ((await createTokens(scenario)).length >= 1 ? true : undefined), {
          description: 'the first create',
          timeoutMs: 30_000,
        });
        // Deleted while the create's answers are being lost: the pass ends with an open intent, the CR deleting.
        await deleteNodeCr(env.kube, scenario.nodeName);
        await scenario.workflow.signal(reconcileSignal, { reason: 'node-cr-deleted' });
        const result = await scenario.workflow.result();
        assert.equal(result.ipamState, 'Gone');
        const inventory = await admin.inventory();
        const left = inventory.networkInterfaces.filter((eni) => eni.tags[ENIFLOW_NODE_TAG] === scenario.nodeName);
        assert.deepEqual(left, [], 'the ENI the lost create made was found by its tag and deleted');
        assert.equal(new Set(await createTokens(scenario)).size, 1, 'no create after the deletion');
        await assert.rejects(scenario.readCr(), 'the CR is gone once the finalizer is removed');
      },
    );
  });
});

describe('an attach that keeps failing', () => {
  it('creates at most one ENI for the demand, keeps it in the CR, and attaches it once the fault clears', async () => {
    await withScenario(env, { name: 'attach-5xx', spec: demoNodeSpec({ instance: 'large-h' }) }, async (scenario) => {
      const { admin } = scenario.emulator.emulator;
      await admin.addFaults(['AttachNetworkInterface always error ServiceUnavailable 503']);
      await scenario.createPods(['a', 'b']);
      await scenario.signal();
      const started = Date.now();
      // Several passes' worth of failing attaches (each pass's attach activity retries for about 30 s).
      await pollUntil(
        async () => {
          const attaches = await admin.calls({ action: 'AttachNetworkInterface' });
          return attaches.length >= 8 && Date.now() - started > 45_000 ? true : undefined;
        },
        { description: 'attaches failing for 45 s', timeoutMs: 120_000 },
      );
      const waiting = await nodeEnis(scenario);
      assert.equal(waiting.length, 1, `one ENI for the demand (${JSON.stringify(waiting)})`);
      assert.deepEqual(
        waiting.map((eni) => [eni.status, eni.inCr]),
        [['Available', true]],
        'kept, Available, and known to the CR',
      );
      assert.equal(new Set(await createTokens(scenario)).size, 1, 'one create (one token)');
      assert.equal((await admin.calls({ action: 'DeleteNetworkInterface' })).length, 0, 'never deleted');

      await admin.clearFaults();
      await scenario.waitForCr('both pods bound', allBound(scenario, ['a', 'b']), 90_000);
      const served = await nodeEnis(scenario);
      assert.deepEqual(
        served.map((eni) => [eni.id, eni.status, eni.inCr]),
        [[waiting[0]?.id, 'InUse', true]],
        'the same ENI serves the pods',
      );
    });
  });
});
