import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { WorkflowNotFoundError } from '@temporalio/client';
import type { Client } from '@temporalio/client';

import { DEFAULT_JANITOR_SETTINGS } from '../../../src/shared/janitor-settings.js';
import { JANITOR_WORKFLOW_ID, JANITOR_WORKFLOW_TYPE } from '../../../src/shared/workflow-ids.js';
import { loadWatcherConfig } from '../../../src/watcher/watcher-config.js';
import { TemporalWorkflowGateway } from '../../../src/watcher/workflow-gateway.js';

describe('TemporalWorkflowGateway', () => {
  it('starts the janitor with its settings in full: the cluster id, the VPC and the recorded dry run', async () => {
    const config = loadWatcherConfig({ ENIFLOW_CLUSTER_ID: 'c-1', ENIFLOW_VPC_ID: 'vpc-1', JANITOR_DRY_RUN: 'true' });
    const starts: { type: string; options: { workflowId: string; args: unknown[] } }[] = [];
    const client = {
      workflow: {
        start: (type: string, options: { workflowId: string; args: unknown[] }) => {
          starts.push({ type, options });
          return Promise.resolve(undefined);
        },
      },
    } as unknown as Client;
    const gateway = new TemporalWorkflowGateway({
      client,
      taskQueue: 'q',
      nodeSettings: config.nodeSettings,
      janitorSettings: config.janitorSettings,
    });
    await gateway.ensureJanitor();
    assert.equal(starts.length, 1);
    assert.equal(starts[0]?.type, JANITOR_WORKFLOW_TYPE);
    assert.equal(starts[0]?.options.workflowId, JANITOR_WORKFLOW_ID);
    assert.deepEqual(starts[0]?.options.args, [
      {
        settings: { ...DEFAULT_JANITOR_SETTINGS, clusterId: 'c-1', vpcId: 'vpc-1', dryRun: true },
        degradation: { level: 'off', revision: '0' },
      },
    ]);
  });

  it('carries the degradation setting in every start and signal, and broadcasts it to every running workflow', async () => {
    const config = loadWatcherConfig({ ENIFLOW_CLUSTER_ID: 'c-1' });
    const setting = { level: 'l1' as const, revision: '42' };
    const starts: { args: unknown[]; signalArgs: unknown[] }[] = [];
    const signalled: { workflowId: string; name: string; args: unknown[] }[] = [];
    const client = {
      workflow: {
        signalWithStart: (_type: string, options: { args: unknown[]; signalArgs: unknown[] }) => {
          starts.push(options);
          return Promise.resolve(undefined);
        },
        // Visibility lists a workflow the informers do not know yet and one they know.
        list: () => [{ workflowId: 'eniflow-node/b' }, { workflowId: 'eniflow-node/c' }][Symbol.iterator](),
        getHandle: (workflowId: string) => ({
          signal: (definition: { name: string }, ...args: unknown[]) => {
            if (workflowId === 'eniflow-node/gone') {
              return Promise.reject(new WorkflowNotFoundError('gone', workflowId, undefined));
            }
            if (workflowId === 'eniflow-node/c') return Promise.reject(new Error('unavailable'));
            signalled.push({ workflowId, name: definition.name, args });
            return Promise.resolve();
          },
        }),
      },
    } as unknown as Client;
    const gateway = new TemporalWorkflowGateway({
      client,
      taskQueue: 'q',
      nodeSettings: config.nodeSettings,
      janitorSettings: config.janitorSettings,
      degradation: () => setting,
    });
    await gateway.signalNode({ nodeName: 'a', reason: { reason: 'pod-added' } });
    assert.deepEqual(starts[0]?.args, [{ nodeName: 'a', settings: config.nodeSettings, degradation: setting }]);
    assert.deepEqual(starts[0]?.signalArgs, [{ reason: 'pod-added', degradation: setting }]);

    const result = await gateway.broadcastDegradation(setting, ['a', 'b', 'gone']);
    assert.deepEqual(result, { signalled: 3, notRunning: 1, failed: ['eniflow-node/c'] });
    assert.deepEqual(
      signalled.map((entry) => entry.workflowId),
      [JANITOR_WORKFLOW_ID, 'eniflow-node/a', 'eniflow-node/b'],
    );
    assert.ok(signalled.every((entry) => entry.name === 'degradation' && entry.args[0] === setting));
  });
  it("with the worker in this process, resets each node workflow's sticky queue once, before its first signal", async () => {
    const config = loadWatcherConfig({ ENIFLOW_CLUSTER_ID: 'c-1' });
    const calls: string[] = [];
    const client = (resetFails: boolean): Client =>
      ({
        options: { namespace: 'ns' },
        workflowService: {
          resetStickyTaskQueue: (request: { namespace: string; execution: { workflowId: string } }) => {
            calls.push(`reset ${request.namespace} ${request.execution.workflowId}`);
            return resetFails ? Promise.reject(new Error('NotFound')) : Promise.resolve({});
          },
        },
        workflow: {
          signalWithStart: (_type: string, options: { workflowId: string }) => {
            calls.push(`signal ${options.workflowId}`);
            return Promise.resolve(undefined);
          },
        },
      }) as unknown as Client;
    const gateway = (workerInProcess: boolean, resetFails = false): TemporalWorkflowGateway =>
      new TemporalWorkflowGateway({
        client: client(resetFails),
        taskQueue: 'q',
        nodeSettings: config.nodeSettings,
        janitorSettings: config.janitorSettings,
        workerInProcess,
      });

    const inProcess = gateway(true);
    await inProcess.signalNode({ nodeName: 'a', reason: { reason: 'watcher-start' } });
    await inProcess.signalNode({ nodeName: 'a', reason: { reason: 'pod-added' } });
    await inProcess.signalNode({ nodeName: 'b', reason: { reason: 'pod-added' } });
    assert.deepEqual(calls, [
      'reset ns eniflow-node/a',
      'signal eniflow-node/a',
      'signal eniflow-node/a',
      'reset ns eniflow-node/b',
      'signal eniflow-node/b',
    ]);

    calls.length = 0;
    await gateway(true, true).signalNode({ nodeName: 'new', reason: { reason: 'pod-added' } });
    assert.deepEqual(calls, ['reset ns eniflow-node/new', 'signal eniflow-node/new'], 'a failed reset still signals');

    calls.length = 0;
    await gateway(false).signalNode({ nodeName: 'a', reason: { reason: 'pod-added' } });
    assert.deepEqual(calls, ['signal eniflow-node/a'], 'a separate worker keeps its sticky cache');
  });
});
