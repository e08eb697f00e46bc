/**
 * Terway v1.17's pool tuning end to end (real Temporal dev server and kube-apiserver, the ECS emulator through the
 * real SDK): warm-up allocates its target once, idle reclaim returns idle IPs to `minPoolSize` in batches once the
 * pool has been quiet for `after`, and `poolSyncPeriod` replaces the controller's GC period for one node. Durations
 * in the CRs are seconds so the scenarios run in seconds; the assertions read the CR and the emulator's call log,
 * never the clock.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';

import { pollUntil } from '../../../scripts/lib/poll-until.js';
import { countIdleIps, NEXT_PASS_REASONS } from '../../../src/ipam/index.js';
import type { NodeCr, NodeSpec } from '../../../src/ipam/index.js';
import { NODE_CR_RESOURCE } from '../../support/kube-env.js';
import { allBound, bindingsOf, demoNodeSpec, openScenarioEnv, withScenario } from '../../support/node-scenario.js';
import type { NodeScenario, ScenarioEnv } from '../../support/node-scenario.js';

let env: ScenarioEnv;
before(async () => {
  env = await openScenarioEnv();
});
after(async () => {
  await env.close();
});

function withPool(spec: NodeSpec, pool: Partial<NonNullable<NodeSpec['pool']>>): NodeSpec {
  return { ...spec, pool: { minPoolSize: 0, maxPoolSize: 0, ...spec.pool, ...pool } };
}

function addressesOf(cr: NodeCr): number {
  return Object.values(cr.status?.networkInterfaces ?? {}).reduce(
    (sum, eni) => sum + Object.keys(eni.ipv4 ?? {}).length,
    0,
  );
}

function idleOf(cr: NodeCr): number {
  return countIdleIps({ enis: cr.status?.networkInterfaces ?? {}, family: 'ipv4' });
}

async function patchPool(scenario: NodeScenario, pool: Record<string, unknown>): Promise<void> {
  await env.kube.customObjects.patchClusterCustomObject(
    { ...NODE_CR_RESOURCE, name: scenario.nodeName, body: { spec: { pool } } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
}

async function settled(scenario: NodeScenario): Promise<void> {
  await pollUntil(
    async () => {
      const state = await scenario.state();
      return state.ipamState === 'Ready' && state.pendingOperations.length === 0 ? true : undefined;
    },
    { description: 'settled', timeoutMs: 30_000 },
  );
}

/** Addresses each Unassign call released, in call order. */
async function unassignBatches(scenario: NodeScenario): Promise<number[]> {
  const calls = await scenario.emulator.emulator.admin.calls({ action: 'UnassignPrivateIpAddresses' });
  return calls
    .filter((call) => call.code === 'Success')
    .map((call) => Object.keys(call.params).filter((key) => key.startsWith('PrivateIpAddress.')).length);
}

describe('pool tuning (Terway v1.17)', () => {
  it('warms a new node up to 40 once, over two passes, counting cloud results; churn and a later warmUpSize change do not restart it', async () => {
    // ecs.g8ae.2xlarge: 3 Standard secondary ENIs of 15 addresses. Each create is sized for what is wanted (issue 29):
    // one pass creates 15 + 15 + 10 and assigns nothing. maxPoolSize above the target keeps them.
    const spec = withPool(demoNodeSpec({ instance: 'erdma-i' }), { minPoolSize: 0, maxPoolSize: 45, warmUpSize: 40 });
    await withScenario(env, { name: 'warm-up', spec, settings: { idleWakeMs: 10 * 60_000 } }, async (scenario) => {
      // Pods already waiting take addresses of the first pass: warm-up counts what the cloud returned, not idle IPs.
      const early = ['p1', 'p2', 'p3', 'p4', 'p5'];
      await scenario.createPods(early);
      await scenario.signal();
      const warmed = await scenario.waitForCr('warm-up complete', (cr) =>
        cr.status?.warmUpCompleted === true ? cr : undefined,
      );
      assert.equal(warmed.status?.warmUpTarget, 40);
      const count = warmed.status?.warmUpAllocatedCount ?? 0;
      assert.equal(count, 40);
      assert.equal(addressesOf(warmed), 40, 'exactly the target: the pods were served from the warm-up addresses');
      assert.equal(allBound(scenario, early)(warmed)?.size, 5);
      await settled(scenario);
      const creates = await scenario.emulator.emulator.admin.calls({ action: 'CreateNetworkInterface' });
      const assigns = await scenario.emulator.emulator.admin.calls({ action: 'AssignPrivateIpAddresses' });
      assert.deepEqual(
        // The three creates run in parallel: the cloud sees them in any order.
        creates.map((call) => Number(call.params['SecondaryPrivateIpAddressCount'])).sort((a, b) => b - a),
        [14, 14, 9],
        'three ENIs created with what warm-up wanted (15 + 15 + 10)',
      );
      assert.equal(assigns.length, 0, 'nothing left to assign: no ENI opened with 10 and topped up later');

      // Churn: pods come and go; warmUpSize is raised. Warm-up never runs again.
      const pods = ['a', 'b', 'c', 'd', 'e'];
      await scenario.deletePods(early);
      await scenario.createPods(pods);
      await scenario.signal('pods');
      await scenario.waitForCr('pods bound', allBound(scenario, pods));
      await scenario.deletePods(pods);
      await patchPool(scenario, { warmUpSize: 80 });
      await scenario.signal('churn');
      const after = await scenario.waitForCr('pods gone', (cr) => (bindingsOf(cr).size === 0 ? cr : undefined));
      await settled(scenario);
      const final = await scenario.readCr();
      for (const cr of [after, final]) {
        assert.equal(cr.status?.warmUpTarget, 40);
        assert.equal(cr.status?.warmUpAllocatedCount, count);
        assert.equal(cr.status?.warmUpCompleted, true);
      }
      const createsAfter = await scenario.emulator.emulator.admin.calls({ action: 'CreateNetworkInterface' });
      const assignsAfter = await scenario.emulator.emulator.admin.calls({ action: 'AssignPrivateIpAddresses' });
      assert.equal(createsAfter.length, creates.length, 'no ENI created after warm-up: the pool served the pods');
      assert.equal(assignsAfter.length, assigns.length, 'no address assigned after warm-up');
    });
  });

  it('warmUpSize 20, pool 0–5, 6 pods: 20 addresses (no overshoot), and the warm ones stay a pool period', async () => {
    // Issue 28: Terway ends with warmUpAllocatedCount 20 and keeps the warm addresses until its next pool pass.
    // ecs.g8ae.2xlarge: 3 Standard secondary ENIs of 15 addresses; a new ENI is created with what is wanted.
    const spec = withPool(demoNodeSpec({ instance: 'erdma-i' }), {
      minPoolSize: 0,
      maxPoolSize: 5,
      warmUpSize: 20,
      poolSyncPeriod: '15s',
    });
    // No safety-net wake within the test: the pool period's own timer must bring the release.
    const settings = { idleWakeMs: 10 * 60_000 };
    await withScenario(env, { name: 'warm-up-hold', spec, settings }, async (scenario) => {
      const pods = ['p1', 'p2', 'p3', 'p4', 'p5', 'p6'];
      await scenario.createPods(pods);
      await scenario.signal();
      const warmed = await scenario.waitForCr('warm-up complete, pods bound', (cr) =>
        cr.status?.warmUpCompleted === true && allBound(scenario, pods)(cr) !== undefined ? cr : undefined,
      );
      assert.equal(warmed.status?.warmUpAllocatedCount, 20);
      assert.equal(addressesOf(warmed), 20, 'the pods took warm-up addresses: 20 in all, not 26');
      const creates = await scenario.emulator.emulator.admin.calls({ action: 'CreateNetworkInterface' });
      assert.deepEqual(
        // Created in parallel: the cloud sees them in any order.
        creates.map((call) => Number(call.params['SecondaryPrivateIpAddressCount'])).sort((a, b) => b - a),
        [14, 4],
        'one ENI filled to its 15 addresses and one of 5, created in the same pass',
      );
      await settled(scenario);
      const held = await scenario.readCr();
      assert.equal(idleOf(held), 14, 'the warm addresses are all there');
      assert.equal((await scenario.state()).nextPass?.reason, NEXT_PASS_REASONS.gcPeriod);
      const releases = async () => [
        ...(await scenario.emulator.emulator.admin.calls({ action: 'UnassignPrivateIpAddresses' })),
        ...(await scenario.emulator.emulator.admin.calls({ action: 'DeleteNetworkInterface' })),
      ];
      assert.deepEqual(await releases(), [], 'nothing given back before the pool period');
      // A pass within the period (a pod signal) keeps them too.
      const passes = (await scenario.state()).reconcileCount;
      await scenario.signal('within-the-period');
      await pollUntil(async () => ((await scenario.state()).reconcileCount > passes ? true : undefined), {
        description: 'one more pass',
        timeoutMs: 10_000,
      });
      assert.equal(idleOf(await scenario.readCr()), 14, 'a pass within the period releases nothing');

      // The pool period's own timer, with no signal, shrinks the pool to maxPoolSize.
      const shrunk = await scenario.waitForCr(
        'the pool shrunk to maxPoolSize after the pool period',
        (cr) => (idleOf(cr) <= 5 ? cr : undefined),
        30_000,
      );
      assert.equal(idleOf(shrunk), 5);
      assert.equal(allBound(scenario, pods)(shrunk)?.size, 6);
      // The warm-up pass started the period no earlier than the second its lastModifiedTime names.
      const warmUpPassMs = Date.parse(warmed.status?.lastModifiedTime ?? '');
      assert.ok(Number.isFinite(warmUpPassMs));
      const first = (await releases()).map((call) => Date.parse(call.time)).sort((a, b) => a - b)[0];
      assert.ok(first !== undefined && first >= warmUpPassMs + 15_000, 'released no earlier than the pool period');
    });
  });

  it('reclaims idle IPs in batches of batchSize after `after`, down to minPoolSize, then sets no timer', async (t) => {
    // ecs.g7.large: 2 secondary ENIs of 6 addresses. 8 pods + minPoolSize 2 = 10 addresses asked for; the first ENI
    // for waiting pods takes its quota (6), the second carries 2 idle more (within maxPoolSize): 12, all idle once
    // the pods go, none above maxPoolSize.
    const spec = withPool(demoNodeSpec({ instance: 'large-h' }), {
      minPoolSize: 2,
      maxPoolSize: 12,
      reclaim: { after: '2s', interval: '2s', batchSize: 3, jitterFactor: '0.1' },
    });
    await withScenario(env, { name: 'idle-reclaim', spec }, async (scenario) => {
      const pods = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
      await scenario.createPods(pods);
      await scenario.signal();
      const bound = await scenario.waitForCr('8 pods bound', allBound(scenario, pods));
      assert.equal(bound.size, 8);
      await scenario.deletePods(pods);
      await scenario.signal('pods-deleted');
      // Watch the idle count fall, batch by batch, with no further signal.
      const seen: number[] = [];
      const final = await scenario.waitForCr(
        'the pool back at minPoolSize',
        (cr) => {
          if (bindingsOf(cr).size > 0) return undefined;
          const idle = idleOf(cr);
          if (seen.at(-1) !== idle) seen.push(idle);
          return idle <= 2 && cr.status?.nextIdleIPReclaimTime === undefined ? cr : undefined;
        },
        60_000,
      );
      assert.equal(idleOf(final), 2, `idle counts seen: ${seen.join(' → ')}`);
      for (let i = 1; i < seen.length; i += 1) {
        const drop = (seen[i - 1] ?? 0) - (seen[i] ?? 0);
        assert.ok(drop > 0 && drop <= 3, `one batch at a time (≤ 3): ${seen.join(' → ')}`);
      }
      assert.ok(seen.length >= 3, `several batches: ${seen.join(' → ')}`);
      const batches = await unassignBatches(scenario);
      t.diagnostic(`idle counts: ${seen.join(' → ')}; unassign batches: ${batches.join(', ')}`);
      assert.ok(batches.length >= 2, `unassign calls: ${batches.join(', ')}`);
      assert.ok(
        batches.every((count) => count <= 3),
        `no unassign call above batchSize: ${batches.join(', ')}`,
      );
      assert.ok(final.status?.lastModifiedTime !== undefined, 'lastModifiedTime written when the pods took IPs');
      await settled(scenario);
      const state = await scenario.state();
      assert.notEqual(state.nextPass?.reason, NEXT_PASS_REASONS.idleReclaim, 'no reclaim timer at minPoolSize');
    });
  });

  it('poolSyncPeriod replaces the controller GC period for this node', async () => {
    // The controller's GC period (TEST_SETTINGS) is an hour; the node's own period is 1 s.
    // A jitterFactor out of range only warns (Terway's fallback 0.1): the node is served, and an Event says so.
    const spec = withPool(demoNodeSpec({ instance: 'large-h' }), {
      minPoolSize: 0,
      maxPoolSize: 1,
      poolSyncPeriod: '1s',
      reclaim: { jitterFactor: '1.5' },
    });
    await withScenario(env, { name: 'pool-period', spec }, async (scenario) => {
      const pods = ['a', 'b', 'c'];
      await scenario.createPods(pods);
      await scenario.signal();
      await scenario.waitForCr('pods bound', allBound(scenario, pods));
      await settled(scenario);
      await scenario.deletePods(pods);
      await scenario.signal('pods-deleted');
      // The first pass after the deletion finds idle IPs above maxPoolSize and is within the hour-long GC period:
      // only the node's own 1 s period lets it shrink the pool without another signal.
      await scenario.waitForCr(
        'the pool shrunk to maxPoolSize by the node period',
        (cr) => (bindingsOf(cr).size === 0 && idleOf(cr) <= 1 ? cr : undefined),
        20_000,
      );
      const state = await scenario.state();
      assert.notEqual(state.nextPass?.reason, NEXT_PASS_REASONS.gcPeriod, 'no GC work left: no period timer');
      const events = await env.kube.core.listNamespacedEvent({
        namespace: 'default',
        fieldSelector: `involvedObject.name=${scenario.nodeName},reason=InvalidNodeSpec`,
      });
      assert.ok(
        events.items.some((event) => event.type === 'Warning' && (event.message ?? '').includes('jitterFactor')),
        'a Warning Event names the ignored jitterFactor',
      );
    });
  });
});
