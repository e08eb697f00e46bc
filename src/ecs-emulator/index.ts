import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { createInProcessAdmin } from './admin-api.js';
import type { EmulatorAdmin } from './admin-api.js';
import { EmulatorCore } from './emulator-core.js';
import { DEMO_FIXTURE_PATH, loadFixtureFile, parseFixture } from './fixture.js';
import type { EmulatorFixture } from './fixture.js';
import type { StateSnapshot } from './model-types.js';
import { createEmulatorServer } from './server.js';
import type { SettingsPatch } from './settings.js';

export type { CallLogFilter, EmulatorAdmin } from './admin-api.js';
export { EmulatorAdminClient } from './admin-client.js';
export type { CallLogEntry } from './call-log.js';
export { ERROR_CATALOG } from './api-error.js';
export { CloudModel } from './cloud-model.js';
export { parseFaultScript } from './fault-rules.js';
export type { FaultEffect, FaultRule, FaultRuleInput } from './fault-rules.js';
export { DEMO_FIXTURE_PATH, loadFixtureFile, parseFixture } from './fixture.js';
export type { AccessKeyPair, EmulatorFixture } from './fixture.js';
export type { EniRecord, EniStatus, Inventory, StateSnapshot } from './model-types.js';
export { defaultSettings } from './settings.js';
export type { EmulatorSettings, LatencySpec, SettingsPatch } from './settings.js';

/** Options of {@link startEcsEmulator}. */
export interface EcsEmulatorOptions {
  /** TCP port on 127.0.0.1; 0 (the default) picks a free one. */
  port?: number;
  /** A fixture object or a fixture file path; default: the demo fixture. */
  fixture?: EmulatorFixture | string;
  /** Settings applied over the fixture's own. */
  settings?: SettingsPatch;
  /** A state snapshot (object or file) to start from instead of the fixture's initial state. */
  state?: StateSnapshot | string;
  logger?: Logger;
}

/** A running emulator. */
export interface EcsEmulator {
  /** `127.0.0.1:PORT`, the value for the SDK's `Config.endpoint` (with `protocol: 'http'`). */
  endpoint: string;
  port: number;
  regionId: string;
  accessKeyId: string;
  accessKeySecret: string;
  /** Admin operations without HTTP. */
  admin: EmulatorAdmin;
  /** Stops listening and closes every connection. */
  close(): Promise<void>;
}

async function resolveFixture(fixture: EcsEmulatorOptions['fixture']): Promise<EmulatorFixture> {
  if (fixture === undefined) return loadFixtureFile(DEMO_FIXTURE_PATH);
  if (typeof fixture === 'string') return loadFixtureFile(fixture);
  return parseFixture(fixture, 'fixture');
}

/** Starts the ECS/VPC emulator on loopback and resolves once it is listening. */
export async function startEcsEmulator(options: EcsEmulatorOptions = {}): Promise<EcsEmulator> {
  const fixture = await resolveFixture(options.fixture);
  const accessKey = fixture.accessKeys[0];
  if (accessKey === undefined) throw new Error('the fixture accepts no AccessKey');
  const core = new EmulatorCore({
    fixture,
    ...(options.logger === undefined ? {} : { logger: options.logger }),
    ...(options.settings === undefined ? {} : { settings: options.settings }),
  });
  if (options.state !== undefined) {
    const snapshot =
      typeof options.state === 'string'
        ? (JSON.parse(await readFile(options.state, 'utf8')) as StateSnapshot)
        : options.state;
    core.loadSnapshot(snapshot);
  }
  const admin = createInProcessAdmin(core);
  const server = createEmulatorServer({
    core,
    admin,
    ...(options.logger === undefined ? {} : { logger: options.logger }),
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `127.0.0.1:${port}`,
    port,
    regionId: fixture.regionId,
    accessKeyId: accessKey.accessKeyId,
    accessKeySecret: accessKey.accessKeySecret,
    admin,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => {
          if (error === undefined) resolve();
          else reject(error);
        });
        server.closeAllConnections();
      }),
  };
}
