import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import * as $Ecs from '@alicloud/ecs20140526';
import * as $OpenApi from '@alicloud/openapi-core';
import * as $dara from '@darabonba/typescript';
import { DEMO_FIXTURE_PATH, EmulatorAdminClient, loadFixtureFile } from '../../src/ecs-emulator/index.js';
import { captureError, DEMO, startEmulatorHarness } from '../support/ecs-emulator.js';
import type { EmulatorHarness } from '../support/ecs-emulator.js';

describe('rate limits, latency and fault injection', () => {
  let harness: EmulatorHarness;
  let admin: EmulatorAdminClient;
  const describeTypes = () => harness.ecs.describeInstanceTypes(new $Ecs.DescribeInstanceTypesRequest({}));
  const attach = (eniId: string) =>
    harness.ecs.attachNetworkInterface(
      new $Ecs.AttachNetworkInterfaceRequest({
        regionId: DEMO.regionId,
        networkInterfaceId: eniId,
        instanceId: DEMO.instance2xlH,
      }),
    );
  const secondaryEnis = async () => (await admin.inventory()).networkInterfaces.filter((eni) => eni.type !== 'Primary');

  before(async () => {
    harness = await startEmulatorHarness();
    // Faults go through the HTTP admin API here, as a benchmark or an out-of-process test would drive them.
    admin = new EmulatorAdminClient(harness.emulator.endpoint);
  });
  beforeEach(async () => {
    await admin.reset();
    await admin.updateSettings({ rateLimitsPerMinute: {}, latency: {}, seed: 1 });
  });
  after(async () => {
    await harness.close();
  });

  it('is not rate limited by default, and throttles with Throttling.User once a per-minute bucket is empty', async () => {
    for (let i = 0; i < 30; i++) await describeTypes();
    await admin.updateSettings({ rateLimitsPerMinute: { DescribeInstanceTypes: 5 } });
    for (let i = 0; i < 5; i++) await describeTypes();
    const error = await captureError(describeTypes);
    assert.ok(error instanceof $OpenApi.ThrottlingError);
    assert.equal(error.code, 'Throttling.User');
    assert.equal(error.statusCode, 400);
    // One token comes back every 12 s at 5 per minute; the hint says how long until then.
    assert.ok(typeof error.retryAfter === 'number' && error.retryAfter > 11_000 && error.retryAfter <= 12_000);
    // Other actions have their own buckets.
    await harness.ecs.describeNetworkInterfaces(new $Ecs.DescribeNetworkInterfacesRequest({ regionId: DEMO.regionId }));
    const log = await admin.calls({ action: 'DescribeInstanceTypes', limit: 1 });
    assert.equal(log[0]?.fault, 'rateLimit');
  });

  it('fails the next 3 attach calls with ServiceUnavailable from a fault script, then lets them through', async () => {
    const [rule] = await admin.addFaults(['AttachNetworkInterface next 3 error ServiceUnavailable']);
    const label = `${rule?.id}:error`;
    assert.deepEqual(rule?.effect, { kind: 'error', code: 'ServiceUnavailable' });
    const eniId = await harness.createEni();
    for (let i = 0; i < 3; i++) {
      const error = await captureError(() => attach(eniId));
      assert.ok(error instanceof $OpenApi.ServerError);
      assert.equal(error.code, 'ServiceUnavailable');
      assert.equal(error.statusCode, 503);
    }
    assert.deepEqual(await admin.faults(), []);
    await attach(eniId);
    const calls = await admin.calls({ action: 'AttachNetworkInterface' });
    assert.deepEqual(
      calls.map((call) => [call.code, call.applied, call.fault]),
      [
        ['ServiceUnavailable', false, label],
        ['ServiceUnavailable', false, label],
        ['ServiceUnavailable', false, label],
        ['Success', true, null],
      ],
    );
  });

  it('injects random faults from a seeded PRNG, so the same seed fails the same calls', async () => {
    const run = async () => {
      await admin.reset();
      await admin.updateSettings({ seed: 42 });
      await admin.addFaults([
        { action: 'DescribeInstanceTypes', rate: 0.3, effect: { kind: 'error', code: 'InternalError' } },
      ]);
      const outcomes: string[] = [];
      for (let i = 0; i < 40; i++) {
        outcomes.push(
          await describeTypes().then(
            () => 'ok',
            (error: unknown) => String((error as { code?: unknown }).code),
          ),
        );
      }
      return outcomes;
    };
    const first = await run();
    const second = await run();
    assert.deepEqual(second, first);
    const failures = first.filter((outcome) => outcome === 'InternalError').length;
    assert.ok(failures > 3 && failures < 25, `30% of 40 calls should fail, got ${failures}`);
    await admin.updateSettings({ seed: 7 });
    await admin.clearFaults();
  });

  it('loses the response of an applied CreateNetworkInterface (5xx), and the ClientToken retry returns the same ENI', async () => {
    const [rule] = await admin.addFaults(['CreateNetworkInterface next 1 lost']);
    const error = await captureError(() => harness.createEni({ clientToken: 'lost-1' }));
    assert.ok(error instanceof $OpenApi.ServerError);
    assert.equal(error.code, 'ServiceUnavailable');
    const afterLoss = await secondaryEnis();
    assert.equal(afterLoss.length, 1, 'the change was applied although the client saw an error');
    const retried = await harness.createEni({ clientToken: 'lost-1' });
    assert.equal(retried, afterLoss[0]?.eniId);
    assert.equal((await secondaryEnis()).length, 1);
    const [lost] = await admin.calls({ action: 'CreateNetworkInterface', limit: 2 });
    assert.deepEqual(
      [lost?.code, lost?.applied, lost?.fault],
      ['ServiceUnavailable', true, `${rule?.id}:lostResponse`],
    );
  });

  it('drops the connection after applying (lost response) or before applying', async () => {
    const eniId = await harness.createEni();
    await admin.addFaults(['AttachNetworkInterface next 1 lost drop']);
    const dropped = await captureError(() => attach(eniId));
    assert.equal(dropped.code, 'ECONNRESET');
    const attached = (await admin.inventory()).networkInterfaces.find((eni) => eni.eniId === eniId);
    assert.equal(attached?.status, 'InUse');
    const [droppedCall] = await admin.calls({ action: 'AttachNetworkInterface', limit: 1 });
    assert.deepEqual(
      [droppedCall?.code, droppedCall?.httpStatus, droppedCall?.applied],
      ['ConnectionDropped', 0, true],
    );
    await admin.addFaults(['CreateNetworkInterface next 1 drop']);
    const notApplied = await captureError(() => harness.createEni());
    assert.equal(notApplied.code, 'ECONNRESET');
    assert.equal((await secondaryEnis()).length, 1);
  });

  it('adds per-action latency (fixed or seeded range) and delays beyond the client read timeout', async () => {
    await admin.updateSettings({ latency: { DescribeInstanceTypes: { fixedMs: 120 } } });
    let started = performance.now();
    await describeTypes();
    assert.ok(performance.now() - started >= 115);
    await admin.updateSettings({ latency: { '*': { minMs: 20, maxMs: 40 } } });
    started = performance.now();
    await describeTypes();
    const ranged = performance.now() - started;
    assert.ok(ranged >= 19 && ranged < 200, `latency ${ranged}`);
    await admin.updateSettings({ latency: {} });
    await admin.addFaults(['DescribeInstanceTypes next 1 delay 600']);
    const timeout = await captureError(() =>
      harness.ecs.describeInstanceTypesWithOptions(
        new $Ecs.DescribeInstanceTypesRequest({}),
        new $dara.RuntimeOptions({ readTimeout: 200 }),
      ),
    );
    assert.equal(timeout.name, 'RequestTimeoutError');
  });

  it('injects an attach failure: the call succeeds, then the ENI falls back from Attaching to Available', async () => {
    await admin.updateSettings({ transitionDelays: { attachMs: 100 } });
    const eniId = await harness.createEni();
    await admin.addFaults(['AttachNetworkInterface next 1 attach-fail']);
    await attach(eniId);
    const attaching = (await admin.inventory()).networkInterfaces.find((eni) => eni.eniId === eniId);
    assert.equal(attaching?.status, 'Attaching');
    await harness.waitForStatus(eniId, 'Available');
    const fallen = (await admin.inventory()).networkInterfaces.find((eni) => eni.eniId === eniId);
    assert.equal(fallen?.instanceId, null);
    await admin.updateSettings({ transitionDelays: { attachMs: 0 } });
  });

  it('injects any code with its own status, skips calls first, and removes rules by id', async () => {
    const [quota, conflict] = await admin.addFaults([
      'CreateNetworkInterface skip 1 next 1 error QuotaExceeded.PrivateIpAddress',
      { action: 'DeleteNetworkInterface', effect: { kind: 'error', code: 'Operation.Conflict' } },
    ]);
    await harness.createEni();
    const refused = await captureError(() => harness.createEni());
    assert.equal(refused.code, 'QuotaExceeded.PrivateIpAddress');
    assert.equal(refused.statusCode, 400);
    assert.match(quota?.id ?? '', /^fault-\d+$/);
    const eniId = await harness.createEni();
    const busy = await captureError(() =>
      harness.ecs.deleteNetworkInterface(
        new $Ecs.DeleteNetworkInterfaceRequest({ regionId: DEMO.regionId, networkInterfaceId: eniId }),
      ),
    );
    assert.equal(busy.code, 'Operation.Conflict');
    assert.equal(busy.statusCode, 403);
    await admin.removeFault(conflict?.id ?? '');
    await harness.ecs.deleteNetworkInterface(
      new $Ecs.DeleteNetworkInterfaceRequest({ regionId: DEMO.regionId, networkInterfaceId: eniId }),
    );
    const badScript = await captureError(() => admin.addFaults(['Attach sometimes explode']));
    assert.match(badScript.message, /expected next <n>, rate <p> or always/);
  });
});

describe('faults and limits from the fixture', () => {
  it('applies the fixture settings and fault rules at start', async () => {
    const fixture = await loadFixtureFile(DEMO_FIXTURE_PATH);
    const harness = await startEmulatorHarness({
      fixture: {
        ...fixture,
        settings: { rateLimitsPerMinute: { '*': 2 } },
        faults: ['DescribeInstances next 1 error InternalError'],
      },
    });
    try {
      const describeInstances = () =>
        harness.ecs.describeInstances(new $Ecs.DescribeInstancesRequest({ regionId: DEMO.regionId }));
      const injected = await captureError(describeInstances);
      assert.equal(injected.code, 'InternalError');
      assert.equal(injected.statusCode, 500);
      await describeInstances();
      const throttled = await captureError(describeInstances);
      assert.equal(throttled.code, 'Throttling.User');
    } finally {
      await harness.close();
    }
  });
});
