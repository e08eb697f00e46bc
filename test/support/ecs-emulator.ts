import { readFile } from 'node:fs/promises';

import Ecs, * as $Ecs from '@alicloud/ecs20140526';
import * as $OpenApi from '@alicloud/openapi-core';
import Vpc from '@alicloud/vpc20160428';
import { DEMO_FIXTURE_PATH, startEcsEmulator } from '../../src/ecs-emulator/index.js';
import type { EcsEmulator, EcsEmulatorOptions, EmulatorFixture } from '../../src/ecs-emulator/index.js';
import type { EcsConnectionConfig } from '../../src/activities/ecs/alibaba-sdk.js';

/** Ids of the demo fixture (src/ecs-emulator/fixtures/demo.json) that tests refer to. */
export const DEMO = {
  regionId: 'cn-hangzhou',
  vpcId: 'vpc-bp1emu0000000000000',
  zoneH: 'cn-hangzhou-h',
  zoneI: 'cn-hangzhou-i',
  /** 10.10.0.0/20 with IPv6, zone h. */
  vSwitchH: 'vsw-bp1emuh00000000000a',
  /** 10.10.16.0/24 with IPv6, zone h. */
  vSwitchHSmall: 'vsw-bp1emuh00000000000b',
  /** 10.10.32.0/20 with IPv6, zone i. */
  vSwitchI: 'vsw-bp1emui00000000000a',
  /** 10.10.48.0/24 without IPv6, zone i. */
  vSwitchIIpv4Only: 'vsw-bp1emui00000000000b',
  securityGroup: 'sg-bp1emu00000000000001',
  /** ecs.g7.large in zone h: 3 ENIs, 6 IPv4 and 6 IPv6 per ENI. */
  instanceLargeH: 'i-bp1emu00000000000001',
  /** ecs.g7.large in zone i. */
  instanceLargeI: 'i-bp1emu00000000000002',
  /** ecs.g7.2xlarge in zone h: 4 ENIs, 15 IPv4 per ENI, trunk capable. */
  instance2xlH: 'i-bp1emu00000000000003',
  /** ecs.g8ae.2xlarge in zone i with 2 eRDMA (HighPerformance) slots. */
  instanceErdmaI: 'i-bp1emu00000000000004',
} as const;

/** The `AlibabaEcsApi` connection a worker uses to reach `emulator` (plain HTTP, its own keys, both endpoints). */
export function emulatorConnection(emulator: EcsEmulator, readTimeoutMs = 5_000): EcsConnectionConfig {
  return {
    regionId: emulator.regionId,
    ecsEndpoint: emulator.endpoint,
    vpcEndpoint: emulator.endpoint,
    protocol: 'http',
    accessKey: { accessKeyId: emulator.accessKeyId, accessKeySecret: emulator.accessKeySecret },
    readTimeoutMs,
  };
}

/** A running emulator with SDK clients pointed at it (no SDK retries, short timeouts). */
export interface EmulatorHarness {
  emulator: EcsEmulator;
  ecs: Ecs.default;
  vpc: Vpc.default;
  /** Builds an SDK config for this emulator; overrides win (e.g. a wrong secret or `signatureAlgorithm: 'v2'`). */
  config(overrides?: Partial<$OpenApi.$OpenApiUtil.Config>): $OpenApi.$OpenApiUtil.Config;
  /** Creates a Secondary ENI in `vSwitchId` (default zone h) and returns its id. */
  createEni(request?: Partial<ConstructorParameters<typeof $Ecs.CreateNetworkInterfaceRequest>[0]>): Promise<string>;
  /** Polls DescribeNetworkInterfaces until the ENI reaches `status` (or is gone for `'gone'`). */
  waitForStatus(eniId: string, status: string): Promise<void>;
  close(): Promise<void>;
}

/** Starts an emulator on a free port (demo fixture, 0 ms transitions unless overridden) with SDK clients. */
export async function startEmulatorHarness(options: EcsEmulatorOptions = {}): Promise<EmulatorHarness> {
  const emulator = await startEcsEmulator({
    ...options,
    settings: { transitionDelays: { attachMs: 0, detachMs: 0, deleteMs: 0 }, ...options.settings },
  });
  const config = (overrides: Partial<$OpenApi.$OpenApiUtil.Config> = {}): $OpenApi.$OpenApiUtil.Config =>
    new $OpenApi.$OpenApiUtil.Config({
      accessKeyId: emulator.accessKeyId,
      accessKeySecret: emulator.accessKeySecret,
      regionId: emulator.regionId,
      endpoint: emulator.endpoint,
      protocol: 'http',
      readTimeout: 2_000,
      connectTimeout: 2_000,
      // No Config.retryOptions: the SDK then sends exactly one attempt.
      ...overrides,
    });
  const ecs = new Ecs.default(config());
  const vpc = new Vpc.default(config());
  const harness: EmulatorHarness = {
    emulator,
    ecs,
    vpc,
    config,
    async createEni(request = {}) {
      const response = await ecs.createNetworkInterface(
        new $Ecs.CreateNetworkInterfaceRequest({
          regionId: DEMO.regionId,
          vSwitchId: DEMO.vSwitchH,
          securityGroupIds: [DEMO.securityGroup],
          ...request,
        }),
      );
      const eniId = response.body?.networkInterfaceId;
      if (eniId === undefined) throw new Error('CreateNetworkInterface returned no id');
      return eniId;
    },
    async waitForStatus(eniId, status) {
      const deadline = Date.now() + 5_000;
      for (;;) {
        const response = await ecs.describeNetworkInterfaces(
          new $Ecs.DescribeNetworkInterfacesRequest({ regionId: DEMO.regionId, networkInterfaceId: [eniId] }),
        );
        const found = response.body?.networkInterfaceSets?.networkInterfaceSet ?? [];
        if (status === 'gone' ? found.length === 0 : found[0]?.status === status) return;
        if (Date.now() > deadline)
          throw new Error(`${eniId} did not reach ${status} (now ${found[0]?.status ?? 'gone'})`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    close: () => emulator.close(),
  };
  return harness;
}

/** The fields tests read from SDK errors (`ClientError`, `ServerError`, `ThrottlingError`) and transport errors. */
export type CapturedError = Error & {
  code?: unknown;
  statusCode?: unknown;
  requestId?: unknown;
  data?: unknown;
  retryAfter?: unknown;
};

/** Runs `call` and returns the error it throws (failing if it does not throw). */
export async function captureError(call: () => Promise<unknown>): Promise<CapturedError> {
  try {
    await call();
  } catch (error) {
    return error as CapturedError;
  }
  throw new Error('expected the call to fail, but it succeeded');
}

/** The demo fixture with the small zone-h vSwitch cut down to a /29: 8 − 4 reserved = 4 addresses. */
export async function demoFixtureWithTinyVSwitch(): Promise<EmulatorFixture> {
  const fixture = JSON.parse(await readFile(DEMO_FIXTURE_PATH, 'utf8')) as EmulatorFixture & {
    vSwitches: { vSwitchId: string; cidrBlock: string }[];
  };
  for (const vsw of fixture.vSwitches) if (vsw.vSwitchId === DEMO.vSwitchHSmall) vsw.cidrBlock = '10.10.16.0/29';
  return fixture;
}
