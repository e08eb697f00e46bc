/**
 * Throughput of the ECS/VPC emulator over the real SDK on loopback: DescribeNetworkInterfaces and
 * AssignPrivateIpAddresses, each for a fixed time with a fixed number of concurrent callers.
 *
 * The emulator runs in a child process, so the figure is the server's and not shared with the SDK client's CPU;
 * the clients run in worker threads of this process. The server's own CPU time is read from /proc to report its
 * cost per request as well. Usage: npm run bench:emulator [-- --seconds 3 --concurrency 32 --clients 2]
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import Ecs, * as $Ecs from '@alicloud/ecs20140526';
import * as $OpenApi from '@alicloud/openapi-core';
import { DEMO_FIXTURE_PATH, EmulatorAdminClient } from '../src/ecs-emulator/index.js';
import type { EmulatorFixture } from '../src/ecs-emulator/index.js';

interface Banner {
  endpoint: string;
  regionId: string;
  accessKeyId: string;
  accessKeySecret: string;
}

interface WorkerTask {
  banner: Banner;
  phase: 'describe' | 'assign';
  seconds: number;
  concurrency: number;
  instanceId: string;
  eniIds: string[];
}

interface WorkerResult {
  ok: number;
  failed: number;
  firstError: string | null;
  latenciesMs: number[];
}

const BENCH_VSWITCH = 'vsw-bp1benchh0000000000';

function sdkClient(banner: Banner): Ecs.default {
  return new Ecs.default(
    new $OpenApi.$OpenApiUtil.Config({
      accessKeyId: banner.accessKeyId,
      accessKeySecret: banner.accessKeySecret,
      endpoint: banner.endpoint,
      protocol: 'http',
      readTimeout: 10_000,
      connectTimeout: 5_000,
    }),
  );
}

/** Worker thread: once told to start, `concurrency` callers loop on one action until the shared deadline. */
async function runWorker(task: WorkerTask): Promise<WorkerResult> {
  const ecs = sdkClient(task.banner);
  const deadlineEpochMs = await new Promise<number>((resolve) => {
    parentPort?.once('message', resolve);
    parentPort?.postMessage('ready');
  });
  const deadline = performance.now() + (deadlineEpochMs - Date.now());
  const result: WorkerResult = { ok: 0, failed: 0, firstError: null, latenciesMs: [] };
  const callOnce = (caller: number): Promise<unknown> => {
    if (task.phase === 'describe') {
      return ecs.describeNetworkInterfaces(
        new $Ecs.DescribeNetworkInterfacesRequest({
          regionId: task.banner.regionId,
          instanceId: task.instanceId,
          maxResults: 100,
        }),
      );
    }
    return ecs.assignPrivateIpAddresses(
      new $Ecs.AssignPrivateIpAddressesRequest({
        regionId: task.banner.regionId,
        networkInterfaceId: task.eniIds[caller % task.eniIds.length] ?? '',
        secondaryPrivateIpAddressCount: 1,
      }),
    );
  };
  const caller = async (index: number): Promise<void> => {
    while (performance.now() < deadline) {
      const started = performance.now();
      try {
        await callOnce(index);
        result.ok++;
        result.latenciesMs.push(performance.now() - started);
      } catch (error) {
        result.failed++;
        result.firstError ??= error instanceof Error ? error.message : String(error);
      }
    }
  };
  await Promise.all(Array.from({ length: task.concurrency }, (_, index) => caller(index)));
  return result;
}

function cpuSecondsOf(pid: number): number {
  // /proc/<pid>/stat fields 14 and 15 are utime and stime in clock ticks (100 per second on Linux).
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? Number.NaN;
}

async function startServer(fixturePath: string): Promise<{ banner: Banner; pid: number; stop: () => Promise<void> }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'src/ecs-emulator/main.ts', '--port', '0', '--fixture', fixturePath],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  if (child.stdout === null || child.pid === undefined) throw new Error('could not start the emulator');
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', resolve);
    child.once('exit', (code) => {
      reject(new Error(`emulator exited with ${code}`));
    });
  });
  return {
    banner: JSON.parse(line) as Banner,
    pid: child.pid,
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', () => {
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}

async function runPhase(request: {
  phase: WorkerTask['phase'];
  server: { banner: Banner; pid: number };
  options: { seconds: number; concurrency: number; clients: number };
  instanceId: string;
  eniIds: string[];
}): Promise<void> {
  const { options, server } = request;
  const perClient = Math.ceil(options.concurrency / options.clients);
  const ready: (() => void)[] = [];
  const workers: Worker[] = [];
  const finished = Promise.all(
    Array.from({ length: options.clients }, (_, client) => {
      const task: WorkerTask = {
        banner: server.banner,
        phase: request.phase,
        seconds: options.seconds,
        concurrency: perClient,
        instanceId: request.instanceId,
        eniIds: request.eniIds.filter((_, index) => index % options.clients === client),
      };
      return new Promise<WorkerResult>((resolve, reject) => {
        // Node 20 workers do not inherit tsx's loader, so the worker registers it before importing this file.
        const bootstrap = `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(import.meta.url)}); });`;
        const worker = new Worker(bootstrap, { eval: true, workerData: task });
        workers.push(worker);
        let isReady = false;
        worker.on('message', (message: unknown) => {
          if (message === 'ready' && !isReady) {
            isReady = true;
            ready.push(() => undefined);
            return;
          }
          resolve(message as WorkerResult);
        });
        worker.once('error', reject);
      });
    }),
  );
  // Start every worker at once, after their (slow) tsx start-up, so the window measured is the load window.
  while (ready.length < options.clients) await new Promise((resolve) => setTimeout(resolve, 20));
  const cpuBefore = cpuSecondsOf(server.pid);
  const started = performance.now();
  const deadlineEpochMs = Date.now() + options.seconds * 1000;
  for (const worker of workers) worker.postMessage(deadlineEpochMs);
  const results = await finished;
  const elapsedSeconds = (performance.now() - started) / 1000;
  const serverCpuSeconds = cpuSecondsOf(server.pid) - cpuBefore;
  const ok = results.reduce((sum, r) => sum + r.ok, 0);
  const failed = results.reduce((sum, r) => sum + r.failed, 0);
  const latencies = results.flatMap((r) => r.latenciesMs).sort((a, b) => a - b);
  const firstError = results.find((r) => r.firstError !== null)?.firstError ?? null;
  const line = {
    phase: request.phase === 'describe' ? 'DescribeNetworkInterfaces' : 'AssignPrivateIpAddresses',
    requestsPerSecond: Math.round(ok / elapsedSeconds),
    ok,
    failed,
    concurrency: perClient * options.clients,
    p50Ms: Number(percentile(latencies, 50).toFixed(2)),
    p99Ms: Number(percentile(latencies, 99).toFixed(2)),
    serverCpuSeconds: Number(serverCpuSeconds.toFixed(2)),
    serverCpuMicrosPerRequest: ok > 0 ? Math.round((serverCpuSeconds * 1e6) / ok) : null,
    // What one fully busy core of server could serve at this cost: the server's figure without the SDK clients.
    serverRequestsPerCpuSecond: serverCpuSeconds > 0 ? Math.round(ok / serverCpuSeconds) : null,
    ...(firstError === null ? {} : { firstError }),
  };
  console.log(JSON.stringify(line));
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      seconds: { type: 'string', default: '3' },
      concurrency: { type: 'string', default: '32' },
      clients: { type: 'string', default: '2' },
    },
  });
  const options = {
    seconds: Number(values.seconds),
    concurrency: Number(values.concurrency),
    clients: Number(values.clients),
  };
  // The demo fixture plus a /16 vSwitch, so thousands of assigns per second do not exhaust it.
  const demo = JSON.parse(await readFile(DEMO_FIXTURE_PATH, 'utf8')) as EmulatorFixture;
  const fixture: EmulatorFixture = {
    ...demo,
    vSwitches: [
      ...demo.vSwitches,
      {
        vSwitchId: BENCH_VSWITCH,
        vpcId: 'vpc-bp1emu0000000000000',
        zoneId: 'cn-hangzhou-h',
        cidrBlock: '10.20.0.0/16',
      },
    ],
    settings: {
      transitionDelays: { attachMs: 0, detachMs: 0, deleteMs: 0 },
      limits: { maxIpv4OnDetachedEni: 1_000_000 },
      callLogCapacity: 10_000,
    },
  };
  const scratch = await mkdtemp(join(tmpdir(), 'emulator-bench-'));
  const fixturePath = join(scratch, 'fixture.json');
  await writeFile(fixturePath, JSON.stringify(fixture));
  const server = await startServer(fixturePath);
  try {
    const ecs = sdkClient(server.banner);
    const instanceId = 'i-bp1emu00000000000003';
    for (let i = 0; i < 3; i++) {
      const created = await ecs.createNetworkInterface(
        new $Ecs.CreateNetworkInterfaceRequest({
          regionId: server.banner.regionId,
          vSwitchId: BENCH_VSWITCH,
          securityGroupIds: ['sg-bp1emu00000000000001'],
          secondaryPrivateIpAddressCount: 5,
        }),
      );
      await ecs.attachNetworkInterface(
        new $Ecs.AttachNetworkInterfaceRequest({
          regionId: server.banner.regionId,
          networkInterfaceId: created.body?.networkInterfaceId ?? '',
          instanceId,
        }),
      );
    }
    const eniIds: string[] = [];
    for (let i = 0; i < options.concurrency; i++) {
      const created = await ecs.createNetworkInterface(
        new $Ecs.CreateNetworkInterfaceRequest({
          regionId: server.banner.regionId,
          vSwitchId: BENCH_VSWITCH,
          securityGroupIds: ['sg-bp1emu00000000000001'],
        }),
      );
      eniIds.push(created.body?.networkInterfaceId ?? '');
    }
    console.log(
      `emulator in a child process (pid ${server.pid}), signatures verified; ${options.clients} client worker threads, ` +
        `${options.concurrency} concurrent callers, ${options.seconds} s per action`,
    );
    for (const phase of ['describe', 'assign'] as const) {
      await runPhase({ phase, server, options, instanceId, eniIds });
    }
    const log = await new EmulatorAdminClient(server.banner.endpoint).calls({ limit: 1 });
    console.log(`call log bounded: last seq ${log[0]?.seq ?? 0}, capacity 10000`);
  } finally {
    await server.stop();
    await rm(scratch, { recursive: true, force: true });
  }
}

if (isMainThread) {
  await main();
} else {
  const result = await runWorker(workerData as WorkerTask);
  parentPort?.postMessage(result);
}
