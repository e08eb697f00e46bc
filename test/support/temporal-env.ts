/**
 * Access to the Temporal dev server shared by a test run (started by scripts/with-testenv.ts or
 * `npm run testenv`): connections, unique task queues and the custom search-attribute keys.
 */
import { randomUUID } from 'node:crypto';

import { Client, Connection } from '@temporalio/client';
import { SearchAttributeType, defineSearchAttributeKey } from '@temporalio/common';
import { IllegalStateError, makeTelemetryFilterString, NativeConnection, Runtime } from '@temporalio/worker';

import type { TEMPORAL_SEARCH_ATTRIBUTES } from '../../scripts/lib/temporal-dev-server.js';
import { TEST_ENV_VARS, requireTestEnvVar } from '../../scripts/lib/test-env-vars.js';

import { testTemporalLogger } from './test-logs.js';

type RegisteredSearchAttribute = keyof typeof TEMPORAL_SEARCH_ATTRIBUTES;

/** Typed keys of the search attributes the dev server registers at start (see TEMPORAL_SEARCH_ATTRIBUTES). */
export const SEARCH_ATTRIBUTE_KEYS = {
  nodeName: defineSearchAttributeKey('NodeName' satisfies RegisteredSearchAttribute, SearchAttributeType.KEYWORD),
  instanceId: defineSearchAttributeKey('InstanceId' satisfies RegisteredSearchAttribute, SearchAttributeType.KEYWORD),
  ipamState: defineSearchAttributeKey('IpamState' satisfies RegisteredSearchAttribute, SearchAttributeType.KEYWORD),
  errorCode: defineSearchAttributeKey(
    'EniflowErrorCode' satisfies RegisteredSearchAttribute,
    SearchAttributeType.KEYWORD,
  ),
  errorSince: defineSearchAttributeKey(
    'EniflowErrorSince' satisfies RegisteredSearchAttribute,
    SearchAttributeType.DATETIME,
  ),
} as const;

/** Client and worker connections to the shared dev server; close it in `after`. */
export interface TemporalTestEnv {
  readonly address: string;
  readonly namespace: string;
  readonly connection: Connection;
  readonly client: Client;
  /** For `Worker.create({ connection: nativeConnection, ... })`. */
  readonly nativeConnection: NativeConnection;
  close(): Promise<void>;
}

/**
 * The SDK's logger for tests: warnings and errors only, since per-task INFO lines would bury anything, written to the
 * test log directory (test/support/test-logs.ts), or to the terminal with TEST_LOG_LEVEL. Also passed to
 * bundleWorkflowCode, whose webpack summary is INFO.
 */
export const quietTemporalLogger = testTemporalLogger();

/**
 * Installs the SDK runtime with {@link quietTemporalLogger}, unless the test file installed its own first. The native
 * core's own lines (warnings up) are forwarded into the same logger instead of its console output.
 */
export function installQuietRuntime(): void {
  try {
    Runtime.install({
      logger: quietTemporalLogger,
      telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'WARN' }), forward: {} } },
    });
  } catch (error) {
    if (!(error instanceof IllegalStateError)) throw error;
  }
}

/** Connects to the dev server named by the ENIFLOW_TEST_TEMPORAL_* variables. */
export async function connectTemporalTestEnv(): Promise<TemporalTestEnv> {
  installQuietRuntime();
  const address = requireTestEnvVar(TEST_ENV_VARS.temporalAddress);
  const namespace = requireTestEnvVar(TEST_ENV_VARS.temporalNamespace);
  const connection = await Connection.connect({ address });
  const nativeConnection = await NativeConnection.connect({ address });
  return {
    address,
    namespace,
    connection,
    client: new Client({ connection, namespace }),
    nativeConnection,
    close: async () => {
      await Promise.all([connection.close(), nativeConnection.close()]);
    },
  };
}

/**
 * A task queue no other test uses, so workers of different tests (or of an earlier run against the same
 * long-lived `npm run testenv` server) never pick up each other's tasks.
 */
export function uniqueTaskQueue(testName: string): string {
  return `${slug(testName)}-${randomUUID()}`;
}

/** A workflow id unique to one test, readable in the Web UI. */
export function uniqueWorkflowId(testName: string): string {
  return `${slug(testName)}-${randomUUID()}`;
}

function slug(text: string): string {
  return (
    text
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '')
      .slice(0, 40) || 'test'
  );
}
