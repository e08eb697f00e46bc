/**
 * The workflow bundle eniflow ships carries a source map without sources (workflow-bundle-options.ts): it is much
 * smaller than the SDK's default, and a workflow failure's stack still names the TypeScript file and line.
 * Needs the Temporal dev server: `node --import tsx scripts/with-testenv.ts --only=temporal node --import tsx --test …`.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';

import { WorkflowFailedError } from '@temporalio/client';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';

import { bundleWorkflows } from '../../../src/worker/workflow-bundle-options.js';
import {
  connectTemporalTestEnv,
  quietTemporalLogger,
  uniqueTaskQueue,
  uniqueWorkflowId,
} from '../../support/temporal-env.js';
import type { TemporalTestEnv } from '../../support/temporal-env.js';

const WORKFLOW_FILE = fileURLToPath(new URL('../../support/throwing-workflow.ts', import.meta.url));

/** The source map inside a bundle (its last line), parsed. */
function inlineMap(code: string): { sources: string[]; sourcesContent?: unknown[] } {
  const at = code.lastIndexOf('//# sourceMappingURL=data:');
  const base64 = code.slice(code.indexOf('base64,', at) + 'base64,'.length).trim();
  return JSON.parse(Buffer.from(base64, 'base64').toString()) as { sources: string[]; sourcesContent?: unknown[] };
}

describe('the workflow bundle without sources', () => {
  let env: TemporalTestEnv;
  let code: string;
  before(async () => {
    env = await connectTemporalTestEnv();
    code = await bundleWorkflows(WORKFLOW_FILE, quietTemporalLogger);
  });
  after(() => env.close());

  it('is much smaller than the SDK default and keeps the file names', async () => {
    const { code: withSources } = await bundleWorkflowCode({
      workflowsPath: WORKFLOW_FILE,
      logger: quietTemporalLogger,
    });
    const map = inlineMap(code);
    assert.equal(map.sourcesContent, undefined, 'no sources in the map');
    assert.ok(map.sources.some((source) => source.endsWith('throwing-workflow.ts')));
    assert.ok(inlineMap(withSources).sourcesContent !== undefined, 'the SDK default embeds the sources');
    assert.ok(code.length * 2 < withSources.length, `${code.length} bytes against ${withSources.length}`);
  });

  it("names the workflow's TypeScript file and line in a failure's stack", async () => {
    const lines = (await readFile(WORKFLOW_FILE, 'utf8')).split('\n');
    const knownLine = lines.findIndex((line) => line.includes('// KNOWN LINE')) + 1;
    assert.ok(knownLine > 0);
    const taskQueue = uniqueTaskQueue('stack-trace');
    const worker = await Worker.create({
      connection: env.nativeConnection,
      namespace: env.namespace,
      taskQueue,
      workflowBundle: { code },
    });
    const failure = await worker.runUntil(
      env.client.workflow.execute('failsAtAKnownLine', { taskQueue, workflowId: uniqueWorkflowId('stack-trace') }).then(
        () => assert.fail('the workflow should fail'),
        (error: unknown) => error,
      ),
    );
    assert.ok(failure instanceof WorkflowFailedError);
    const stack = failure.cause?.stack ?? '';
    assert.match(stack, new RegExp(`throwing-workflow\\.ts:${knownLine}:\\d+`), stack);
  });
});
