/**
 * The compose file's Temporal server on PostgreSQL, started by the test environment (scripts/lib/
 * temporal-postgres-server.ts): the release of the compose file, its state in PostgreSQL, the namespace and search
 * attributes as the compose jobs register them, a test's ECS burst in its dynamic config, the database counters
 * bench:scale reads, a restart after a kill -9 on the same database, and nothing left after a stop. Needs `npm run tools -- --temporal postgres`; run by `npm run test:temporal-postgres`.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';

import { Client, Connection } from '@temporalio/client';
import proto from '@temporalio/proto';

import { readDatabaseCounters } from '../../bench/scale/temporal-server.js';
import type { DatabaseAccess, DatabaseCounters } from '../../bench/scale/temporal-server.js';
import { findPostgresBinDir } from '../../scripts/lib/postgres.js';
import { startTemporalPostgresServer } from '../../scripts/lib/temporal-postgres-server.js';
import type { TemporalPostgresServer } from '../../scripts/lib/temporal-postgres-server.js';
import {
  TEMPORAL_NAMESPACE,
  TEMPORAL_SEARCH_ATTRIBUTES,
  TEMPORAL_SERVER_VERSION,
} from '../../scripts/lib/temporal-settings.js';

const execFileAsync = promisify(execFile);

/** The CLI's type names → the API's enum. */
const { IndexedValueType } = proto.temporal.api.enums.v1;
const INDEXED_VALUE_TYPES: Record<string, proto.temporal.api.enums.v1.IndexedValueType> = {
  Keyword: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  Datetime: IndexedValueType.INDEXED_VALUE_TYPE_DATETIME,
  KeywordList: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST,
};

describe('the Temporal server on PostgreSQL', () => {
  let runDir: string;
  let server: TemporalPostgresServer;
  let connection: Connection;
  let address: string;

  before(async () => {
    runDir = await mkdtemp(join(tmpdir(), 'eniflow-temporal-postgres-test-'));
    server = await startTemporalPostgresServer({ runDir, log: () => undefined }, { ecsBurst: 40 });
    address = String(server.details['address']);
    connection = await Connection.connect({ address });
  });

  after(async () => {
    await connection.close();
    await server.stop();
    await rm(runDir, { recursive: true, force: true });
  });

  it("is the compose file's release", async () => {
    const info = await connection.workflowService.getSystemInfo({});
    assert.equal(info.serverVersion, TEMPORAL_SERVER_VERSION);
  });

  it("creates the namespace as the compose job does, with eniflow's search attributes and their types", async () => {
    const { config } = await connection.workflowService.describeNamespace({ namespace: TEMPORAL_NAMESPACE });
    assert.equal(Number(config?.workflowExecutionRetentionTtl?.seconds), 72 * 3600);
    const { customAttributes } = await connection.operatorService.listSearchAttributes({
      namespace: TEMPORAL_NAMESPACE,
    });
    for (const [name, type] of Object.entries(TEMPORAL_SEARCH_ATTRIBUTES)) {
      assert.equal(customAttributes?.[name], INDEXED_VALUE_TYPES[type], name);
    }
  });

  it('keeps its state in PostgreSQL', async () => {
    const binDir = findPostgresBinDir();
    assert.ok(binDir !== undefined);
    const psql = existsSync(join(binDir, 'psql')) ? join(binDir, 'psql') : 'psql';
    const { stdout } = await execFileAsync(
      psql,
      [
        ...['-h', '127.0.0.1', '-p', String(server.details['postgresPort']), '-U', 'temporal', '-d', 'temporal'],
        ...['-tAc', 'SELECT name FROM namespaces ORDER BY name'],
      ],
      { env: { ...process.env, PGPASSWORD: 'temporal' } },
    );
    assert.deepEqual(stdout.trim().split('\n'), [TEMPORAL_NAMESPACE, 'temporal-system']);
  });

  it("reads the test's ECS burst from its dynamic config file", async () => {
    const config = await readFile(join(runDir, 'dynamicconfig.yaml'), 'utf8');
    assert.match(config, /^matching\.minTaskThrottlingBurstSize:\n {2}- value: 10\n/m);
    assert.match(config, /^frontend\.enableServerVersionCheck:\n {2}- value: false\n/m);
  });

  it("gives bench:scale its database's counters, rows, WAL, size and CPU, which a workflow start moves", async () => {
    const binDir = findPostgresBinDir();
    assert.ok(binDir !== undefined);
    const access: DatabaseAccess = {
      port: Number(server.details['postgresPort']),
      postmasterPid: Number(server.details['postgresPid']),
      psql: existsSync(join(binDir, 'psql')) ? join(binDir, 'psql') : 'psql',
    };
    const before = await readDatabaseCounters(access);
    for (const name of ['inserted', 'updated', 'deleted', 'walBytes', 'databaseBytes', 'cpuSeconds'] as const) {
      assert.ok(Number.isFinite(before[name]) && before[name] >= 0, `${name}: ${before[name]}`);
    }
    // Both databases with their schemas: several MiB before any workflow.
    assert.ok(before.databaseBytes > 4 * 1024 * 1024, `size ${before.databaseBytes}`);
    assert.ok(before.cpuSeconds > 0, 'the postmaster and its backends have run');
    const client = new Client({ connection, namespace: TEMPORAL_NAMESPACE });
    const handle = await client.workflow.start('countersProbe', {
      taskQueue: 'counters-probe',
      workflowId: `counters-probe-${Date.now()}`,
    });
    // A backend publishes its counters when it goes idle, within ten seconds.
    let after: DatabaseCounters = before;
    for (let waited = 0; waited < 30_000 && after.rowsByTable['executions'] === before.rowsByTable['executions'];) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      waited += 500;
      after = await readDatabaseCounters(access);
    }
    assert.ok((after.rowsByTable['executions'] ?? 0) > (before.rowsByTable['executions'] ?? 0), 'execution row');
    assert.ok(after.inserted > before.inserted, 'rows inserted');
    assert.ok(after.walBytes > before.walBytes, 'WAL written');
    assert.ok(
      Object.keys(after.rowsByTable).some((table) => table.startsWith('visibility.')),
      `the visibility database's tables are read too: ${Object.keys(after.rowsByTable).join(', ')}`,
    );
    await handle.terminate('test over');
  });

  it('comes back after a kill -9 on the same address and database, PostgreSQL untouched', async () => {
    const workflowId = `restart-probe-${Date.now()}`;
    const client = new Client({ connection, namespace: TEMPORAL_NAMESPACE });
    // No worker polls this queue: the workflow stays running, its start kept only by the database.
    await client.workflow.start('restartProbe', { taskQueue: 'restart-probe', workflowId });
    const firstPid = server.serverPid;
    await server.killServer();
    assert.equal(server.serverPid, undefined);
    assert.throws(() => process.kill(firstPid ?? 0, 0), /ESRCH/, 'the server is gone');
    process.kill(Number(server.details['postgresPid']), 0);
    await server.restartServer();
    assert.notEqual(server.serverPid, firstPid);
    const description = await client.workflow.getHandle(workflowId).describe();
    assert.equal(description.status.name, 'RUNNING');
    await client.workflow.getHandle(workflowId).terminate('test over');
  });

  it('leaves no process and no database behind when stopped', async () => {
    const other = await startTemporalPostgresServer({
      runDir: await mkdtemp(join(runDir, 'second-')),
      log: () => undefined,
    });
    const pids = [other.details.pid, Number(other.details['postgresPid'])];
    const clusterDir = String(other.details['postgresDir']);
    assert.ok(existsSync(clusterDir));
    await other.stop();
    for (const pid of pids) assert.throws(() => process.kill(pid, 0), /ESRCH/, `process ${pid} is gone`);
    assert.ok(!existsSync(clusterDir), 'the cluster is removed');
  });
});
