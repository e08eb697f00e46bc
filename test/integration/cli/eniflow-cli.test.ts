/**
 * The `eniflow` CLI and the Web UI story of a node workflow, on the real Temporal dev server and kube-apiserver with
 * the ECS emulator: a healthy node (Starting before its first pass, static metadata, node/status/gc/resync/reconcile,
 * unknown signals), a stuck node found by its search attributes (IpamState, EniflowErrorCode, EniflowErrorSince), and
 * the janitor's dry run.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';

import * as $Ecs from '@alicloud/ecs20140526';
import type { WorkflowHandle } from '@temporalio/client';

import { pollUntil } from '../../../scripts/lib/poll-until.js';
import { TEST_ENV_VARS } from '../../../scripts/lib/test-env-vars.js';
import { runCli } from '../../../src/cli/commands.js';
import type { CliContext, StatusReport } from '../../../src/cli/commands.js';
import { TemporalWorkflowGateway } from '../../../src/watcher/workflow-gateway.js';
import type { eniJanitorWorkflow } from '../../../src/workflows/janitor-workflow.js';
import { DEFAULT_JANITOR_SETTINGS } from '../../../src/shared/janitor-settings.js';
import { DEFAULT_NODE_SETTINGS } from '../../../src/workflows/messages.js';
import type { NodeWorkflowState } from '../../../src/workflows/messages.js';
import {
  ERROR_CODE_SEARCH_ATTRIBUTE,
  ERROR_SINCE_SEARCH_ATTRIBUTE,
  IPAM_STATE_SEARCH_ATTRIBUTE,
  JANITOR_WORKFLOW_TYPE,
  nodeWorkflowId,
} from '../../../src/shared/workflow-ids.js';
import {
  TEST_CLUSTER_ID,
  TEST_SETTINGS,
  allBound,
  demoNodeSpec,
  openScenarioEnv,
  withScenario,
} from '../../support/node-scenario.js';
import type { NodeScenario, ScenarioEnv } from '../../support/node-scenario.js';

const execFileAsync = promisify(execFile);

let env: ScenarioEnv;
before(async () => {
  env = await openScenarioEnv();
});
after(async () => {
  await env.close();
});

const UI_URL = 'http://ui.example:8233/';
const ISO = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/;

function contextFor(scenario: NodeScenario, extra: Partial<CliContext> = {}): CliContext & { lines: string[] } {
  const lines: string[] = [];
  return {
    client: env.temporal.client,
    namespace: env.temporal.namespace,
    taskQueue: scenario.taskQueue,
    uiUrl: UI_URL,
    out: (line) => lines.push(...line.split('\n')),
    lines,
    ...extra,
  };
}

/** Runs one CLI command in-process; returns its exit code and output. */
async function cli(scenario: NodeScenario, argv: string[], extra: Partial<CliContext> = {}) {
  const context = contextFor(scenario, extra);
  const code = await runCli(argv, context);
  return { code, lines: context.lines, text: context.lines.join('\n') };
}

/** The workflow's current details, as the Web UI reads them (the SDK's built-in metadata query). */
async function currentDetails(workflow: WorkflowHandle): Promise<string> {
  const metadata = await workflow.query<{ currentDetails?: string }>('__temporal_workflow_metadata');
  return metadata.currentDetails ?? '';
}

async function pollState<T>(
  scenario: NodeScenario,
  description: string,
  check: (state: NodeWorkflowState) => T | undefined,
): Promise<T> {
  return pollUntil(async () => check(await scenario.state()), { description, timeoutMs: 60_000, intervalMs: 200 });
}

describe('eniflow CLI and the Web UI story', () => {
  it('shows a healthy node: Starting before its first pass, then node, status, gc, resync, reconcile', async () => {
    await withScenario(
      env,
      { name: 'cli-healthy', spec: demoNodeSpec({ instance: 'large-h' }), inProcessWorker: false },
      async (scenario) => {
        const gateway = new TemporalWorkflowGateway({
          client: env.temporal.client,
          taskQueue: scenario.taskQueue,
          nodeSettings: { ...DEFAULT_NODE_SETTINGS, ...TEST_SETTINGS, clusterId: TEST_CLUSTER_ID },
          janitorSettings: { ...DEFAULT_JANITOR_SETTINGS, clusterId: TEST_CLUSTER_ID },
        });
        await scenario.createPods(['a']);
        await gateway.signalNode({ nodeName: scenario.nodeName, reason: { reason: 'test' } });
        // No worker yet: what the UI shows before any pass.
        const started = await scenario.workflow.describe();
        assert.equal(started.typedSearchAttributes.get(IPAM_STATE_SEARCH_ATTRIBUTE), 'Starting');
        assert.equal(await started.staticSummary(), `eniflow IPAM of node ${scenario.nodeName}`);
        assert.match((await started.staticDetails()) ?? '', new RegExp(`npm run eniflow -- gc ${scenario.nodeName}`));

        await scenario.worker.restart();
        await scenario.waitForCr('pod a bound', allBound(scenario, ['a']));

        const report = await pollUntil(
          async () => {
            const status = await cli(scenario, ['status', '--json']);
            const parsed = JSON.parse(status.text) as StatusReport;
            return parsed.byState['Ready'] === 1 ? parsed : undefined;
          },
          { description: 'status lists the node Ready', timeoutMs: 30_000, intervalMs: 200 },
        );
        assert.equal(report.nodes, 1);
        assert.equal(report.podsWaiting, 0);
        assert.deepEqual(report.stuck, []);
        const status = await cli(scenario, ['status']);
        assert.equal(status.code, 0);
        assert.deepEqual(status.lines.slice(0, 2), ['1 node(s): Ready 1', 'pods waiting for an IP: 0']);

        const state = await scenario.state();
        assert.match(state.lastReconcileAt ?? '', ISO);
        assert.equal(Date.parse(state.lastReconcileAt ?? ''), state.lastReconcileMs);
        assert.match(state.nextPass?.at ?? '', ISO);
        assert.equal(state.failedPasses, 0);

        const node = await cli(scenario, ['node', scenario.nodeName]);
        assert.equal(node.code, 0);
        assert.match(node.lines[0] ?? '', new RegExp(`^node ${scenario.nodeName} \\(instance i-\\w+\\): Ready$`));
        assert.ok(node.lines.some((line) => new RegExp(`^last pass: #\\d+ ended ${ISO.source}$`).test(line)));
        assert.ok(node.lines.includes('pods: 1, 1 with IP, 0 waiting'), node.text);
        assert.equal(
          node.lines.at(-1),
          `Web UI: http://ui.example:8233/namespaces/default/workflows/${encodeURIComponent(nodeWorkflowId(scenario.nodeName))}`,
        );
        assert.match(await currentDetails(scenario.workflow), /^\*\*Ready\*\* on `i-\w+` · 1 pods, none waiting/);

        const gc = await cli(scenario, ['gc', scenario.nodeName]);
        assert.equal(gc.code, 0);
        assert.match(gc.lines[0] ?? '', /^GC released \d+ IP\(s\) and removed \d+ ENI\(s\)$/);

        const signalsBefore = (await scenario.state()).signalsReceived;
        const reconcile = await cli(scenario, ['reconcile', scenario.nodeName]);
        assert.deepEqual(reconcile.lines, [`reconcile signalled to ${scenario.nodeName}`]);
        await pollState(scenario, 'the reconcile signal received', (s) =>
          s.signalsReceived > signalsBefore ? true : undefined,
        );
        assert.equal((await cli(scenario, ['resync', scenario.nodeName])).code, 0);

        // A misspelt signal is not silently buffered: the workflow logs it and shows it.
        await scenario.workflow.signal('gcc');
        await pollState(scenario, 'the unknown signal shown', (s) =>
          s.ignoredSignals?.some((signal) => signal.name === 'gcc') === true ? true : undefined,
        );
        assert.ok((await cli(scenario, ['node', scenario.nodeName])).lines.includes('ignored unknown signals: gcc'));
        assert.match(await currentDetails(scenario.workflow), /Ignored unknown signals: `gcc`/);

        assert.equal((await cli(scenario, ['node'])).code, 2, 'a node name is required');
        assert.equal((await cli(scenario, ['gc', scenario.nodeName, '--bogus'])).code, 2, 'unknown option');
        const missing = await cli(scenario, ['node', `${scenario.nodeName}-nope`]);
        assert.equal(missing.code, 1);
        assert.match(missing.text, /no running workflow/);

        // The same through the entry point, configured from the environment like the worker.
        const { stdout } = await execFileAsync(
          process.execPath,
          ['--import', 'tsx', 'src/cli/main.ts', 'node', scenario.nodeName],
          {
            env: {
              ...process.env,
              TEMPORAL_ADDRESS: env.temporal.address,
              TEMPORAL_NAMESPACE: env.temporal.namespace,
              TEMPORAL_TASK_QUEUE: scenario.taskQueue,
              TEMPORAL_UI_URL: 'http://127.0.0.1:8233',
              [TEST_ENV_VARS.temporalAddress]: '',
            },
          },
        );
        assert.match(stdout, new RegExp(`^node ${scenario.nodeName} \\(instance i-\\w+\\): Ready$`, 'm'));
        assert.match(stdout, /^Web UI: http:\/\/127\.0\.0\.1:8233\/namespaces\/default\/workflows\/eniflow-node%2F/m);
      },
    );
  });

  it('finds a stuck node by IpamState and EniflowErrorCode; gc answers at once; --all-failing wakes it', async () => {
    await withScenario(env, { name: 'cli-stuck', spec: demoNodeSpec({ instance: 'large-h' }) }, async (scenario) => {
      const admin = scenario.emulator.emulator.admin;
      await admin.addFaults(['CreateNetworkInterface always error Forbidden.RAM 403']);
      await scenario.createPods(['a']);
      await scenario.signal();

      const workflowId = nodeWorkflowId(scenario.nodeName);
      const query =
        `TaskQueue = "${scenario.taskQueue}" AND IpamState = "Error" AND EniflowErrorCode = "Forbidden.RAM" ` +
        'AND ExecutionStatus = "Running"';
      await pollUntil(
        async () => {
          for await (const info of env.temporal.client.workflow.list({ query })) {
            if (info.workflowId === workflowId) return info;
          }
          return undefined;
        },
        { description: `a visibility query finds the stuck node (${query})`, timeoutMs: 60_000, intervalMs: 250 },
      );
      const described = await scenario.workflow.describe();
      const since = described.typedSearchAttributes.get(ERROR_SINCE_SEARCH_ATTRIBUTE);
      assert.ok(
        since instanceof Date && since.getTime() <= Date.now(),
        `EniflowErrorSince is a time (${String(since)})`,
      );

      const gc = await cli(scenario, ['gc', scenario.nodeName]);
      assert.equal(gc.code, 0);
      assert.match(
        gc.lines[0] ?? '',
        new RegExp(
          `^GC deferred: node in failure backoff since ${since.toISOString()} on Forbidden\\.RAM \\(CreateNetworkInterface\\) after \\d+ failed pass`,
        ),
      );

      const node = await cli(scenario, ['node', scenario.nodeName]);
      assert.match(node.lines[0] ?? '', /: Error$/);
      assert.ok(
        node.lines.some((line) =>
          line.startsWith(`stuck on: Forbidden.RAM since ${since.toISOString()} in CreateNetworkInterface:`),
        ),
        node.text,
      );
      // One name per action, each part once (issue 28): the ECS action, its code, what the cloud said, the RequestId.
      const errorLine = node.lines.find((line) =>
        /^ {2}\S+Z CreateNetworkInterface: EcsInvalidRequest Forbidden\.RAM: /.test(line),
      );
      assert.ok(errorLine !== undefined, node.text);
      assert.equal(errorLine.match(/RequestId/g)?.length, 1, errorLine);
      assert.equal(errorLine.match(/CreateNetworkInterface/g)?.length, 1, errorLine);
      assert.doesNotMatch(node.text, /createEni|attachEni/);
      assert.match(await currentDetails(scenario.workflow), /Error `Forbidden\.RAM` in CreateNetworkInterface since /);

      const status = await cli(scenario, ['status']);
      assert.equal(status.lines[0], '1 node(s): Error 1');
      assert.match(
        status.lines[1] ?? '',
        new RegExp(
          `^pods waiting for an IP: 1 on 1 node\\(s\\); oldest waiting since ${ISO.source} \\(${scenario.nodeName}\\)$`,
        ),
      );
      assert.deepEqual(status.lines.slice(2, 4), [
        'stuck:',
        `  ${scenario.nodeName}  Error Forbidden.RAM since ${since.toISOString()}`,
      ]);

      const signalsBefore = (await scenario.state()).signalsReceived;
      const batch = await cli(scenario, ['reconcile', '--all-failing']);
      assert.deepEqual(batch.lines, [`reconcile → ${scenario.nodeName}`, 'reconcile signalled to 1 failing node(s)']);
      await pollState(scenario, 'the batch signal received', (s) =>
        s.signalsReceived > signalsBefore ? true : undefined,
      );

      // Healed: both error attributes go, the state is Ready again.
      await admin.clearFaults();
      await scenario.signal();
      await scenario.waitForCr('pod a bound', allBound(scenario, ['a']));
      await pollUntil(
        async () => {
          const attributes = (await scenario.workflow.describe()).typedSearchAttributes;
          return attributes.get(IPAM_STATE_SEARCH_ATTRIBUTE) === 'Ready' &&
            attributes.get(ERROR_CODE_SEARCH_ATTRIBUTE) === undefined &&
            attributes.get(ERROR_SINCE_SEARCH_ATTRIBUTE) === undefined
            ? true
            : undefined;
        },
        { description: 'error search attributes cleared once healed', timeoutMs: 60_000, intervalMs: 250 },
      );
      assert.equal((await scenario.state()).stuckOn, undefined);
    });
  });

  it('runs a janitor dry run and shows the last report', async () => {
    await withScenario(env, { name: 'cli-janitor', spec: demoNodeSpec({ instance: 'large-h' }) }, async (scenario) => {
      const orphan = await scenario.emulator.createEni({
        tag: [
          new $Ecs.CreateNetworkInterfaceRequestTag({ key: 'creator', value: 'eniflow' }),
          new $Ecs.CreateNetworkInterfaceRequestTag({ key: 'eniflow.io/node', value: scenario.nodeName }),
          new $Ecs.CreateNetworkInterfaceRequestTag({ key: 'eniflow.io/cluster-id', value: TEST_CLUSTER_ID }),
        ],
      });
      const janitorWorkflowId = `janitor-${scenario.nodeName}`;
      const janitor = await env.temporal.client.workflow.start<typeof eniJanitorWorkflow>(JANITOR_WORKFLOW_TYPE, {
        workflowId: janitorWorkflowId,
        taskQueue: scenario.taskQueue,
        args: [{ settings: { graceMs: 0, intervalMs: 60 * 60_000, clusterId: TEST_CLUSTER_ID } }],
      });
      try {
        const before = await cli(scenario, ['janitor'], { janitorWorkflowId });
        assert.deepEqual(before.lines, ['the janitor has not run a pass yet (eniflow janitor --dry-run runs one)']);
        const dry = await pollUntil(
          async () => {
            const run = await cli(scenario, ['janitor', '--dry-run'], { janitorWorkflowId });
            return run.lines.some((line) => line.startsWith(`  ${orphan} `)) ? run : undefined;
          },
          { description: 'the dry run lists the orphan', timeoutMs: 30_000, intervalMs: 500 },
        );
        assert.equal(dry.code, 0);
        assert.match(
          dry.lines[0] ?? '',
          /^janitor pass at \S+ \(dry run: nothing deleted\): \d+ ENI\(s\) of cluster eniflow-test checked, \d+ orphan/,
        );
        assert.ok(
          dry.lines.some(
            (line) => line.startsWith(`  ${orphan} created `) && line.endsWith(` for ${scenario.nodeName}`),
          ),
          dry.text,
        );
        const last = await cli(scenario, ['janitor', '--json'], { janitorWorkflowId });
        const report = JSON.parse(last.text) as { dryRun: boolean; deleted: string[] };
        assert.equal(report.dryRun, true);
        assert.deepEqual(report.deleted, []);
        const inventory = await scenario.emulator.emulator.admin.inventory();
        assert.ok(
          inventory.networkInterfaces.some((eni) => eni.eniId === orphan),
          'a dry run deletes nothing',
        );

        // A janitor whose recorded settings say dryRun: --delete is refused, and nothing is deleted.
        const dryJanitorId = `janitor-dry-${scenario.nodeName}`;
        const dryJanitor = await env.temporal.client.workflow.start<typeof eniJanitorWorkflow>(JANITOR_WORKFLOW_TYPE, {
          workflowId: dryJanitorId,
          taskQueue: scenario.taskQueue,
          args: [{ settings: { graceMs: 0, intervalMs: 60 * 60_000, clusterId: TEST_CLUSTER_ID, dryRun: true } }],
        });
        try {
          const refused = await cli(scenario, ['janitor', '--delete'], { janitorWorkflowId: dryJanitorId });
          assert.notEqual(refused.code, 0);
          assert.match(refused.text, /started with dryRun: true and never deletes/);
          const still = await scenario.emulator.emulator.admin.inventory();
          assert.ok(
            still.networkInterfaces.some((eni) => eni.eniId === orphan),
            '--delete on a dry janitor deletes nothing',
          );
        } finally {
          await dryJanitor.terminate('test finished');
        }
      } finally {
        await janitor.terminate('test finished');
      }
    });
  });
});
