import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

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
      { settings: { ...DEFAULT_JANITOR_SETTINGS, clusterId: 'c-1', vpcId: 'vpc-1', dryRun: true } },
    ]);
  });
});
