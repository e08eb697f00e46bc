import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import Ecs, * as $Ecs from '@alicloud/ecs20140526';
import * as $OpenApi from '@alicloud/openapi-core';
import { EmulatorAdminClient } from '../../src/ecs-emulator/index.js';
import type { StateSnapshot } from '../../src/ecs-emulator/index.js';
import { captureError, DEMO, startEmulatorHarness } from '../support/ecs-emulator.js';
import type { EmulatorHarness } from '../support/ecs-emulator.js';

describe('admin API: inventory, call log, settings, save and load', () => {
  let harness: EmulatorHarness;
  let admin: EmulatorAdminClient;
  let scratch: string;
  before(async () => {
    harness = await startEmulatorHarness();
    admin = new EmulatorAdminClient(harness.emulator.endpoint);
    scratch = await mkdtemp(join(tmpdir(), 'ecs-emulator-'));
  });
  after(async () => {
    await harness.close();
    await rm(scratch, { recursive: true, force: true });
  });

  it('lists every ENI and address with owner, tags and status', async () => {
    await admin.reset();
    const eniId = await harness.createEni({
      secondaryPrivateIpAddressCount: 1,
      ipv6AddressCount: 1,
      tag: [new $Ecs.CreateNetworkInterfaceRequestTag({ key: 'eniflow/node', value: 'node-h-1' })],
    });
    await harness.ecs.attachNetworkInterface(
      new $Ecs.AttachNetworkInterfaceRequest({
        regionId: DEMO.regionId,
        networkInterfaceId: eniId,
        instanceId: DEMO.instanceLargeH,
      }),
    );
    const inventory = await admin.inventory();
    assert.equal(inventory.regionId, DEMO.regionId);
    assert.equal(inventory.networkInterfaces.length, 5);
    const eni = inventory.networkInterfaces.find((item) => item.eniId === eniId);
    assert.deepEqual(
      [eni?.status, eni?.instanceId, eni?.tags, eni?.primaryIp, eni?.secondaryIps],
      ['InUse', DEMO.instanceLargeH, { 'eniflow/node': 'node-h-1' }, '10.10.0.3', ['10.10.0.4']],
    );
    const addresses = inventory.ipAddresses.filter((ip) => ip.eniId === eniId);
    assert.deepEqual(
      addresses.map((ip) => [ip.address, ip.family, ip.primary, ip.instanceId]),
      [
        ['10.10.0.3', 'ipv4', true, DEMO.instanceLargeH],
        ['10.10.0.4', 'ipv4', false, DEMO.instanceLargeH],
        ['2408:4005:3f2:a00::1', 'ipv6', false, DEMO.instanceLargeH],
      ],
    );
    const vSwitch = inventory.vSwitches.find((v) => v.vSwitchId === DEMO.vSwitchH);
    assert.deepEqual([vSwitch?.usedIpv4Count, vSwitch?.availableIpAddressCount], [4, 4096 - 4 - 4]);
  });

  it('logs each call with action, parameters, result code, RequestId, latency and fault', async () => {
    await admin.clearCalls();
    const error = await captureError(() =>
      harness.ecs.detachNetworkInterface(
        new $Ecs.DetachNetworkInterfaceRequest({
          regionId: DEMO.regionId,
          networkInterfaceId: 'eni-ghost',
          instanceId: DEMO.instanceLargeH,
        }),
      ),
    );
    const [entry] = await admin.calls();
    assert.ok(entry);
    assert.equal(entry.action, 'DetachNetworkInterface');
    assert.equal(entry.params['NetworkInterfaceId'], 'eni-ghost');
    assert.equal(entry.code, 'InvalidEniId.NotFound');
    assert.equal(entry.httpStatus, 404);
    assert.equal(entry.requestId, error.requestId);
    assert.equal(entry.applied, false);
    assert.equal(entry.fault, null);
    assert.ok(entry.latencyMs >= 0);
    const later = await admin.calls({ sinceSeq: entry.seq });
    assert.deepEqual(later, []);
  });

  it('bounds the call log as a ring buffer of the configured size', async () => {
    await admin.updateSettings({ callLogCapacity: 5 });
    for (let i = 0; i < 12; i++) await harness.ecs.describeInstanceTypes(new $Ecs.DescribeInstanceTypesRequest({}));
    const entries = await admin.calls();
    assert.equal(entries.length, 5);
    assert.deepEqual(
      entries.map((entry) => entry.seq),
      [0, 1, 2, 3, 4].map((i) => (entries[0]?.seq ?? 0) + i),
    );
    await admin.updateSettings({ callLogCapacity: 10_000 });
  });

  it('validates settings patches and reports the bad field', async () => {
    const error = await captureError(() => admin.updateSettings({ transitionDelays: { attachMs: -1 } }));
    assert.match(error.message, /settings\.transitionDelays\.attachMs/);
    const unknown = await captureError(() => admin.updateSettings({ colour: 'blue' } as never));
    assert.match(unknown.message, /settings\.colour: unknown setting/);
    const settings = await admin.settings();
    assert.equal(settings.transitionDelays.attachMs, 0);
  });

  it('saves and loads the whole state over HTTP and through a file, pending transitions included', async () => {
    await admin.reset();
    const kept = await harness.createEni({ secondaryPrivateIpAddressCount: 2 });
    const snapshot: StateSnapshot = await admin.saveState();
    const file = join(scratch, 'state.json');
    await admin.saveStateFile(file);
    assert.equal((JSON.parse(await readFile(file, 'utf8')) as StateSnapshot).networkInterfaces.length, 5);
    const extra = await harness.createEni();
    await admin.loadState(snapshot);
    let ids = (await admin.inventory()).networkInterfaces.map((eni) => eni.eniId);
    assert.ok(ids.includes(kept) && !ids.includes(extra));
    // Allocation continues exactly where the snapshot left off.
    assert.equal(await harness.createEni(), extra);
    await admin.loadStateFile(file);
    ids = (await admin.inventory()).networkInterfaces.map((eni) => eni.eniId);
    assert.ok(ids.includes(kept) && !ids.includes(extra));
    await admin.updateSettings({ transitionDelays: { deleteMs: 60_000 } });
    await harness.ecs.deleteNetworkInterface(
      new $Ecs.DeleteNetworkInterfaceRequest({ regionId: DEMO.regionId, networkInterfaceId: kept }),
    );
    await admin.loadState(await admin.saveState());
    const deleting = (await admin.inventory()).networkInterfaces.find((eni) => eni.eniId === kept);
    assert.equal(deleting?.status, 'Deleting');
    await admin.updateSettings({ transitionDelays: { deleteMs: 0 } });
  });

  it('answers unknown admin routes with 404 and keeps them off the API path', async () => {
    const response = await fetch(`http://${harness.emulator.endpoint}/__admin/nope`);
    assert.equal(response.status, 404);
    assert.match(((await response.json()) as { error: string }).error, /no admin route/);
  });
});

/** Starts `npm run emulator`'s entry point as its own process and reads its one-line JSON banner. */
async function startEmulatorProcess(args: string[]): Promise<{
  child: ChildProcess;
  banner: { endpoint: string; regionId: string; accessKeyId: string; accessKeySecret: string };
}> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/ecs-emulator/main.ts', '--port', '0', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (child.stdout === null || child.stderr === null) throw new Error('no stdio');
  // Logs go to stderr; keep them for the failure message instead of cluttering the test output.
  let logs = '';
  child.stderr.on('data', (chunk: Buffer) => {
    logs += chunk.toString('utf8');
  });
  const lines = createInterface({ input: child.stdout });
  const first = await new Promise<string>((resolve, reject) => {
    lines.once('line', resolve);
    child.once('exit', (code) => {
      reject(new Error(`emulator exited with ${code}: ${logs}`));
    });
  });
  return { child, banner: JSON.parse(first) as never };
}

function stopProcess(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    child.once('exit', (code) => {
      resolve(code);
    });
    child.kill('SIGTERM');
  });
}

describe('the emulator process (npm run emulator)', () => {
  let scratch: string;
  before(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'ecs-emulator-proc-'));
  });
  after(async () => {
    await rm(scratch, { recursive: true, force: true });
  });

  it('prints its endpoint and AccessKey, exits cleanly on SIGTERM, and keeps state across a restart with --state', async () => {
    const stateFile = join(scratch, 'state.json');
    const first = await startEmulatorProcess(['--state', stateFile]);
    assert.equal(first.banner.regionId, 'cn-hangzhou');
    assert.match(first.banner.endpoint, /^127\.0\.0\.1:\d+$/);
    const client = (endpoint: string) =>
      new Ecs.default(
        new $OpenApi.$OpenApiUtil.Config({
          accessKeyId: first.banner.accessKeyId,
          accessKeySecret: first.banner.accessKeySecret,
          endpoint,
          protocol: 'http',
          readTimeout: 2_000,
          connectTimeout: 2_000,
        }),
      );
    const created = await client(first.banner.endpoint).createNetworkInterface(
      new $Ecs.CreateNetworkInterfaceRequest({
        regionId: DEMO.regionId,
        vSwitchId: DEMO.vSwitchH,
        securityGroupIds: [DEMO.securityGroup],
      }),
    );
    const eniId = created.body?.networkInterfaceId;
    assert.equal(await stopProcess(first.child), 0);

    const second = await startEmulatorProcess(['--state', stateFile]);
    try {
      const found = await client(second.banner.endpoint).describeNetworkInterfaces(
        new $Ecs.DescribeNetworkInterfacesRequest({ regionId: DEMO.regionId, networkInterfaceId: [eniId ?? ''] }),
      );
      assert.equal(found.body?.networkInterfaceSets?.networkInterfaceSet?.[0]?.networkInterfaceId, eniId);
      const inventory = await new EmulatorAdminClient(second.banner.endpoint).inventory();
      assert.equal(inventory.networkInterfaces.length, 5);
    } finally {
      assert.equal(await stopProcess(second.child), 0);
    }
  });
});
