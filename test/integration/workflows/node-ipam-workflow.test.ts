/**
 * The node workflow end to end: real Temporal dev server, real kube-apiserver, the ECS emulator through the real
 * SDK. Each test asserts the CR status, the emulator's inventory and its call log.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { pollUntil } from '../../../scripts/lib/poll-until.js';
import { countIdleIps } from '../../../src/ipam/index.js';
import { gcSignal, gcUpdate, reconcileSignal, resyncSignal } from '../../../src/workflows/messages.js';
import { DEMO } from '../../support/ecs-emulator.js';
import { allBound, bindingsOf, demoNodeSpec, openScenarioEnv, withScenario } from '../../support/node-scenario.js';
import type { ScenarioEnv } from '../../support/node-scenario.js';

let env: ScenarioEnv;
before(async () => {
  env = await openScenarioEnv();
});
after(async () => {
  await env.close();
});

const podNames = (count: number, prefix = 'pod'): string[] => Array.from({ length: count }, (_, i) => `${prefix}-${i}`);

describe('node IPAM workflow', () => {
  it('coalesces a burst of signals into a few passes and writes the status only when it changed', async () => {
    await withScenario(env, { name: 'coalesce', spec: demoNodeSpec({ instance: 'large-h' }) }, async (scenario) => {
      await scenario.createPods(['a']);
      await scenario.signal();
      await scenario.waitForCr('pod bound', allBound(scenario, ['a']));
      const settled = await pollUntil(
        async () => {
          const s = await scenario.state();
          return s.ipamState === 'Ready' && s.pendingOperations.length === 0 ? s : undefined;
        },
        { description: 'a settled node', timeoutMs: 30_000 },
      );
      const resourceVersion = (await scenario.readCr()).metadata.resourceVersion;
      await Promise.all(
        Array.from({ length: 30 }, (_, i) => scenario.workflow.signal(reconcileSignal, { reason: `burst-${i}` })),
      );
      const after = await pollUntil(
        async () => {
          const s = await scenario.state();
          return s.signalsReceived >= settled.signalsReceived + 30 && s.reconcileCount > settled.reconcileCount
            ? s
            : undefined;
        },
        { description: 'the burst handled', timeoutMs: 30_000 },
      );
      assert.ok(
        after.reconcileCount - settled.reconcileCount <= 5,
        `30 signals ran ${after.reconcileCount - settled.reconcileCount} passes`,
      );
      assert.equal((await scenario.readCr()).metadata.resourceVersion, resourceVersion, 'no status write');
    });
  });

  it('gives five pods on a new node an IP each from a created and attached ENI, leaving minPoolSize idle', async () => {
    await withScenario(
      env,
      { name: 'new-node', spec: demoNodeSpec({ instance: 'large-h', pool: { minPoolSize: 1, maxPoolSize: 3 } }) },
      async (scenario) => {
        const pods = podNames(5);
        await scenario.createPods(pods);
        await scenario.signal('pods-created');
        const bindings = await scenario.waitForCr('5 pods bound', allBound(scenario, pods));
        const cr = await scenario.readCr();
        const enis = Object.values(cr.status?.networkInterfaces ?? {});
        assert.equal(enis.length, 1, 'one ENI holds five pods plus the minimum pool');
        const [eni] = enis;
        assert.equal(eni?.status, 'InUse');
        assert.equal(eni?.vSwitchID, DEMO.vSwitchH);
        assert.equal(eni?.ipv4CIDR, '10.10.0.0/20');
        assert.equal(Object.keys(eni?.ipv4 ?? {}).length, 6);
        assert.equal(new Set([...bindings.values()].map((b) => b.ipv4)).size, 5, 'five distinct addresses');
        assert.equal(countIdleIps({ enis: cr.status?.networkInterfaces ?? {}, family: 'ipv4' }), 1);
        assert.match(cr.status?.lastSyncOpenAPITime ?? '', /^\d{4}-\d\d-\d\dT/);

        const inventory = await scenario.emulator.emulator.admin.inventory();
        const cloudEni = inventory.networkInterfaces.find((e) => e.eniId === eni?.id);
        assert.equal(cloudEni?.status, 'InUse');
        assert.equal(cloudEni?.instanceId, DEMO.instanceLargeH);
        assert.equal(cloudEni?.tags['eniflow.io/node'], scenario.nodeName);
        assert.deepEqual(
          [cloudEni?.primaryIp, ...(cloudEni?.secondaryIps ?? [])].sort(),
          Object.keys(eni?.ipv4 ?? {}).sort(),
          'the CR holds exactly the cloud addresses',
        );
        const calls = await scenario.emulator.emulator.admin.calls({});
        assert.equal(calls.filter((c) => c.action === 'CreateNetworkInterface').length, 1);
        assert.equal(calls.filter((c) => c.action === 'AttachNetworkInterface').length, 1);
        const state = await scenario.state();
        assert.equal(state.ipamState, 'Ready');
        assert.equal(state.pods.withIp, 5);
        assert.deepEqual(state.pendingOperations, []);
      },
    );
  });

  it('unbinds IPs of deleted pods and, on a gc update, releases idle IPs above maxPoolSize in the cloud', async () => {
    await withScenario(
      env,
      { name: 'shrink', spec: demoNodeSpec({ instance: 'large-h', pool: { minPoolSize: 0, maxPoolSize: 1 } }) },
      async (scenario) => {
        const pods = podNames(5);
        await scenario.createPods(pods);
        await scenario.signal();
        await scenario.waitForCr('5 pods bound', allBound(scenario, pods));
        await scenario.deletePods(pods.slice(0, 4));
        await scenario.signal('pods-deleted');
        await scenario.waitForCr('4 pods unbound', (cr) => (bindingsOf(cr).size === 1 ? true : undefined));
        const result = await scenario.workflow.executeUpdate(gcUpdate);
        const released = result.releasedIps.flatMap((r) => r.ips);
        // Six addresses (the node's first ENI for waiting pods takes its quota of 6), one bound: five idle with the
        // primary among them; maxPoolSize 1 → four secondaries go, in one call.
        assert.equal(released.length, 4);
        assert.deepEqual(result.failed, []);
        const cr = await scenario.readCr();
        assert.equal(countIdleIps({ enis: cr.status?.networkInterfaces ?? {}, family: 'ipv4' }), 1);
        const inventory = await scenario.emulator.emulator.admin.inventory();
        const cloudIps = inventory.networkInterfaces
          .filter((e) => e.instanceId === DEMO.instanceLargeH && e.type === 'Secondary')
          .flatMap((e) => [e.primaryIp, ...e.secondaryIps]);
        for (const ip of released) assert.ok(!cloudIps.includes(ip), `${ip} was unassigned in the cloud`);
        const calls = await scenario.emulator.emulator.admin.calls({ action: 'UnassignPrivateIpAddresses' });
        assert.equal(calls.length, 1);
      },
    );
  });

  it('dual-stack: every pod gets an IPv4 and an IPv6 of the same ENI', async () => {
    await withScenario(
      env,
      {
        name: 'dual',
        spec: demoNodeSpec({ instance: 'large-h', dualStack: true, pool: { minPoolSize: 0, maxPoolSize: 5 } }),
      },
      async (scenario) => {
        const pods = podNames(4);
        await scenario.createPods(pods);
        await scenario.signal();
        const bindings = await scenario.waitForCr('4 dual-stack pods bound', (cr) => {
          const found = bindingsOf(cr);
          return [...found.values()].filter((b) => b.ipv4 !== undefined && b.ipv6 !== undefined).length === 4
            ? found
            : undefined;
        });
        const cr = await scenario.readCr();
        for (const [pod, binding] of bindings) {
          const eni = cr.status?.networkInterfaces?.[binding.eniId];
          assert.ok(eni?.ipv4?.[binding.ipv4 ?? '']?.podID === pod, `${pod} IPv4 on ${binding.eniId}`);
          assert.ok(eni?.ipv6?.[binding.ipv6 ?? '']?.podID === pod, `${pod} IPv6 on the same ENI`);
          assert.match(binding.ipv6 ?? '', /^2408:4005:3f2:a00:/);
        }
      },
    );
  });

  it('an ERDMA pod gets its IP from a HighPerformance ENI and other pods never do', async () => {
    await withScenario(
      env,
      {
        name: 'erdma',
        spec: demoNodeSpec({ instance: 'erdma-i', erdma: true, pool: { minPoolSize: 0, maxPoolSize: 5 } }),
      },
      async (scenario) => {
        await scenario.createPods(['rdma-0'], { erdma: true });
        await scenario.createPods(['plain-0', 'plain-1']);
        await scenario.signal();
        const bindings = await scenario.waitForCr('3 pods bound', allBound(scenario, ['rdma-0', 'plain-0', 'plain-1']));
        const cr = await scenario.readCr();
        const modeOf = (pod: string) =>
          cr.status?.networkInterfaces?.[bindings.get(`${scenario.namespace}/${pod}`)?.eniId ?? '']
            ?.networkInterfaceTrafficMode;
        assert.equal(modeOf('rdma-0'), 'HighPerformance');
        assert.equal(modeOf('plain-0'), 'Standard');
        assert.equal(modeOf('plain-1'), 'Standard');
      },
    );
  });

  it('deletes the ENI when attach fails for good, then serves the pods from a new one', async () => {
    await withScenario(env, { name: 'attach-fail', spec: demoNodeSpec({ instance: 'large-h' }) }, async (scenario) => {
      await scenario.emulator.emulator.admin.addFaults(['AttachNetworkInterface next 1 attach-fail']);
      await scenario.createPods(['a', 'b']);
      await scenario.signal();
      const bindings = await scenario.waitForCr('2 pods bound', allBound(scenario, ['a', 'b']));
      const creates = await scenario.emulator.emulator.admin.calls({ action: 'CreateNetworkInterface' });
      assert.equal(creates.length, 2, 'the failed ENI was replaced');
      const deletes = await scenario.emulator.emulator.admin.calls({ action: 'DeleteNetworkInterface' });
      assert.equal(deletes.length, 1, 'the ENI whose attach failed was deleted');
      const inventory = await scenario.emulator.emulator.admin.inventory();
      const ours = inventory.networkInterfaces.filter((e) => e.tags['eniflow.io/node'] === scenario.nodeName);
      assert.deepEqual(
        ours.map((e) => e.eniId),
        [[...bindings.values()][0]?.eniId],
        'only the ENI in the CR exists in the cloud',
      );
      const state = await scenario.state();
      assert.ok(state.lastErrors.some((e) => e.type === 'EniAttachFailed'));
    });
  });

  it('records the ENI Deleting when attach and delete both fail, and a later GC removes it', async () => {
    await withScenario(env, { name: 'leak-guard', spec: demoNodeSpec({ instance: 'large-h' }) }, async (scenario) => {
      const admin = scenario.emulator.emulator.admin;
      await admin.addFaults([
        'AttachNetworkInterface next 1 attach-fail',
        'DeleteNetworkInterface always error Forbidden.RAM 403',
      ]);
      await scenario.createPods(['a']);
      await scenario.signal();
      const stuck = await scenario.waitForCr('an ENI recorded Deleting', (cr) =>
        Object.values(cr.status?.networkInterfaces ?? {}).find((eni) => eni.status === 'Deleting'),
      );
      const inCloud = (await admin.inventory()).networkInterfaces.find((e) => e.eniId === stuck.id);
      assert.ok(inCloud !== undefined, 'the ENI still exists in the cloud: the CR is what remembers it');
      await admin.clearFaults();
      await scenario.workflow.signal(gcSignal);
      await scenario.waitForCr('the stuck ENI removed', (cr) =>
        cr.status?.networkInterfaces?.[stuck.id] === undefined ? true : undefined,
      );
      assert.equal(
        (await admin.inventory()).networkInterfaces.find((e) => e.eniId === stuck.id),
        undefined,
        'and deleted in the cloud',
      );
      await scenario.waitForCr('the pod bound', allBound(scenario, ['a']));
    });
  });

  it('a lost create response does not create a second ENI', async () => {
    await withScenario(env, { name: 'lost-create', spec: demoNodeSpec({ instance: 'large-h' }) }, async (scenario) => {
      await scenario.emulator.emulator.admin.addFaults(['CreateNetworkInterface next 1 lost ServiceUnavailable 503']);
      await scenario.createPods(['a', 'b']);
      await scenario.signal();
      await scenario.waitForCr('2 pods bound', allBound(scenario, ['a', 'b']));
      const creates = await scenario.emulator.emulator.admin.calls({ action: 'CreateNetworkInterface' });
      assert.equal(creates.length, 2, 'the create was retried once');
      const inventory = await scenario.emulator.emulator.admin.inventory();
      const ours = inventory.networkInterfaces.filter((e) => e.tags['eniflow.io/node'] === scenario.nodeName);
      assert.equal(ours.length, 1, 'the retry got the same ENI back (ClientToken)');
    });
  });

  it('a create lost on every attempt is re-issued with its token by the next pass: one ENI, no orphan', async () => {
    await withScenario(
      env,
      { name: 'lost-create-twice', spec: demoNodeSpec({ instance: 'large-h' }) },
      async (scenario) => {
        const { admin } = scenario.emulator.emulator;
        // Both attempts of the activity are applied by the cloud but answered 503: the workflow never learns the ENI.
        await admin.addFaults(['CreateNetworkInterface next 2 lost ServiceUnavailable 503']);
        await scenario.createPods(['a']);
        await scenario.signal();
        await scenario.waitForCr('the pod bound', allBound(scenario, ['a']), 90_000);
        const creates = await admin.calls({ action: 'CreateNetworkInterface' });
        assert.ok(creates.length >= 3, `two lost attempts and the next pass's re-issue (${creates.length} calls)`);
        assert.equal(new Set(creates.map((call) => call.params['ClientToken'])).size, 1, 'one ClientToken throughout');
        const inventory = await admin.inventory();
        const ours = inventory.networkInterfaces.filter((e) => e.tags['eniflow.io/node'] === scenario.nodeName);
        assert.equal(ours.length, 1, 'no second ENI, nothing left Available');
        assert.equal(ours[0]?.status, 'InUse');
        assert.equal((await scenario.state()).pendingCreates ?? 0, 0, 'the intent is resolved');
      },
    );
  });

  it('a lost assign response does not assign the addresses twice', async () => {
    await withScenario(
      env,
      // The pool opens an ENI of one address (minPoolSize 1, no pod waiting: exactly that); two pods then take its
      // primary and ask for 2 more (the pod and the minPoolSize top-up; maxPoolSize 1 leaves no headroom): one assign.
      { name: 'lost-assign', spec: demoNodeSpec({ instance: 'large-h', pool: { minPoolSize: 1, maxPoolSize: 1 } }) },
      async (scenario) => {
        await scenario.signal();
        await scenario.waitForCr('the pool ENI', (cr) =>
          Object.keys(cr.status?.networkInterfaces ?? {}).length === 1 ? true : undefined,
        );
        await scenario.emulator.emulator.admin.addFaults(['AssignPrivateIpAddresses next 1 lost drop']);
        await scenario.createPods(['a', 'b']);
        await scenario.signal();
        await scenario.waitForCr('2 pods bound', allBound(scenario, ['a', 'b']));
        const cr = await scenario.readCr();
        const inventory = await scenario.emulator.emulator.admin.inventory();
        const [eni] = Object.values(cr.status?.networkInterfaces ?? {});
        const cloudEni = inventory.networkInterfaces.find((e) => e.eniId === eni?.id);
        assert.equal(cloudEni?.secondaryIps.length, 2, 'two secondaries, not four');
        const assigns = await scenario.emulator.emulator.admin.calls({ action: 'AssignPrivateIpAddresses' });
        assert.ok(assigns.length >= 2, `the lost assign was sent again (${String(assigns.length)} calls)`);
        assert.deepEqual(
          [cloudEni?.primaryIp, ...(cloudEni?.secondaryIps ?? [])].sort(),
          Object.keys(eni?.ipv4 ?? {}).sort(),
        );
      },
    );
  });

  it('answers the state query and resyncs on demand', async () => {
    await withScenario(env, { name: 'query', spec: demoNodeSpec({ instance: 'large-h' }) }, async (scenario) => {
      await scenario.createPods(['a']);
      await scenario.signal();
      await scenario.waitForCr('pod bound', allBound(scenario, ['a']));
      const before = await scenario.emulator.emulator.admin.calls({ action: 'DescribeNetworkInterfaces' });
      await scenario.workflow.signal(resyncSignal);
      const describes = await pollUntil(
        async () => {
          const calls = await scenario.emulator.emulator.admin.calls({ action: 'DescribeNetworkInterfaces' });
          return calls.length > before.length ? calls.length : undefined;
        },
        { description: 'a resync', timeoutMs: 30_000 },
      );
      assert.ok(describes > before.length);
      const state = await scenario.state();
      assert.equal(state.nodeName, scenario.nodeName);
      assert.equal(state.instanceId, DEMO.instanceLargeH);
      assert.equal(state.pods.total, 1);
      assert.ok(state.reconcileCount >= 2);
      assert.ok(state.signalsReceived >= 1);
    });
  });
});
