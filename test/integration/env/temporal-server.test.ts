import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import { Connection } from '@temporalio/client';
import { Worker, bundleWorkflowCode } from '@temporalio/worker';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';

import { reserveFreePorts } from '../../../scripts/lib/free-ports.js';
import { pollUntil } from '../../../scripts/lib/poll-until.js';
import { isPortTaken, startTemporalDevServer } from '../../../scripts/lib/temporal-dev-server.js';
import {
  SEARCH_ATTRIBUTE_KEYS,
  connectTemporalTestEnv,
  quietTemporalLogger,
  uniqueTaskQueue,
  uniqueWorkflowId,
} from '../../support/temporal-env.js';
import type { TemporalTestEnv } from '../../support/temporal-env.js';
import { addItemSignal, collectItemsWorkflow, itemsQuery } from './fixtures/collect-items-workflow.js';

const FIXTURE_WORKFLOWS_PATH = fileURLToPath(new URL('./fixtures/collect-items-workflow.ts', import.meta.url));

describe('Temporal dev server', () => {
  let env: TemporalTestEnv;
  let workflowBundle: WorkflowBundleWithSourceMap;

  before(async () => {
    env = await connectTemporalTestEnv();
    workflowBundle = await bundleWorkflowCode({ workflowsPath: FIXTURE_WORKFLOWS_PATH, logger: quietTemporalLogger });
  });

  after(async () => {
    await env.close();
  });

  async function withWorker<T>(taskQueue: string, body: () => Promise<T>): Promise<T> {
    const worker = await Worker.create({
      connection: env.nativeConnection,
      namespace: env.namespace,
      taskQueue,
      workflowBundle,
    });
    return worker.runUntil(body());
  }

  it('starts a workflow by signal-with-start, delivers a second signal and answers a query', async () => {
    const taskQueue = uniqueTaskQueue('signal-with-start');
    await withWorker(taskQueue, async () => {
      const handle = await env.client.workflow.signalWithStart(collectItemsWorkflow, {
        workflowId: uniqueWorkflowId('signal-with-start'),
        taskQueue,
        args: [{ expectedItemCount: 3 }],
        signal: addItemSignal,
        signalArgs: ['first'],
      });
      await handle.signal(addItemSignal, 'second');

      // A query sees the signals the worker has processed so far; both arrive, but not necessarily at once.
      const itemsWhileRunning = await pollUntil(
        async () => {
          const items = await handle.query(itemsQuery);
          return items.length === 2 ? items : undefined;
        },
        { description: 'the query to report both signals', timeoutMs: 30_000 },
      );
      assert.deepEqual(itemsWhileRunning, ['first', 'second']);
      assert.equal((await handle.describe()).status.name, 'RUNNING');

      await handle.signal(addItemSignal, 'third');
      assert.deepEqual(await handle.result(), ['first', 'second', 'third']);
    });
  });

  it('finds a workflow by its NodeName search attribute', async () => {
    const taskQueue = uniqueTaskQueue('search-attribute');
    const nodeName = `node-${uniqueWorkflowId('sa')}`;
    await withWorker(taskQueue, async () => {
      const handle = await env.client.workflow.start(collectItemsWorkflow, {
        workflowId: uniqueWorkflowId('search-attribute'),
        taskQueue,
        args: [{ expectedItemCount: 1 }],
        typedSearchAttributes: [{ key: SEARCH_ATTRIBUTE_KEYS.nodeName, value: nodeName }],
      });

      // Visibility is eventually consistent: poll the list query until the new workflow shows up.
      const found = await pollUntil(
        async () => {
          const ids: string[] = [];
          for await (const execution of env.client.workflow.list({ query: `NodeName = "${nodeName}"` })) {
            ids.push(execution.workflowId);
          }
          return ids.length > 0 ? ids : undefined;
        },
        { description: `a workflow with NodeName = "${nodeName}" in visibility`, timeoutMs: 30_000, intervalMs: 250 },
      );
      assert.deepEqual(found, [handle.workflowId]);

      const description = await handle.describe();
      assert.equal(description.typedSearchAttributes.get(SEARCH_ATTRIBUTE_KEYS.nodeName), nodeName);

      await handle.signal(addItemSignal, 'done');
      assert.deepEqual(await handle.result(), ['done']);
    });
  });

  // A fresh-port start is tried again when it meets this error; this pins the error the real server gives.
  it('fails a start on a taken port with the error a fresh-port start retries on', async () => {
    const [grpc, ui, http, metrics] = await reserveFreePorts(4);
    assert.ok(grpc !== undefined && ui !== undefined && http !== undefined && metrics !== undefined);
    // The HTTP API port: nothing connects to it while the server starts (a squatter on the frontend port would hold
    // the readiness probe's connections open).
    const squatter = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => squatter.listen(http, '127.0.0.1', resolve));
    const runDir = await mkdtemp(join(tmpdir(), 'eniflow-port-taken-'));
    try {
      const started = startTemporalDevServer({ runDir, log: () => undefined }, { ports: { grpc, ui, http, metrics } });
      await assert.rejects(started, (error: unknown) => {
        assert.ok(isPortTaken(error), `not recognised as a taken port: ${String(error)}`);
        return true;
      });
    } finally {
      await new Promise((resolve) => squatter.close(resolve));
      await rm(runDir, { recursive: true, force: true });
    }
  });

  it('starts again on new ports when a reserved port is taken before the server binds it', async () => {
    const [taken] = await reserveFreePorts(1);
    assert.ok(taken !== undefined);
    const squatter = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => squatter.listen(taken, '127.0.0.1', resolve));
    const runDir = await mkdtemp(join(tmpdir(), 'eniflow-port-race-'));
    const reservations: number[][] = [];
    const logged: string[] = [];
    try {
      const server = await startTemporalDevServer(
        { runDir, log: (line) => logged.push(line) },
        {
          // The first reservation hands the squatted port as the HTTP API port, as the race would.
          reservePorts: async (count) => {
            const ports = await reserveFreePorts(count);
            reservations.push(reservations.length === 0 ? ports.map((port, i) => (i === 2 ? taken : port)) : ports);
            return reservations.at(-1) ?? ports;
          },
        },
      );
      try {
        assert.equal(reservations.length, 2, 'one more start, on new ports');
        assert.ok(
          logged.some((line) => line.includes('starting again on new ports')),
          logged.join('\n'),
        );
        const connection = await Connection.connect({ address: String(server.details['address']) });
        await connection.workflowService.describeNamespace({ namespace: env.namespace });
        await connection.close();
      } finally {
        await server.stop();
      }
    } finally {
      await new Promise((resolve) => squatter.close(resolve));
      await rm(runDir, { recursive: true, force: true });
    }
  });
});
