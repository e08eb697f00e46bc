/**
 * The scale benchmark: the whole stack on this machine — Temporal dev server, kube-apiserver, the
 * ECS emulator with cloud-like latency, and the worker and the watcher as separate processes configured as
 * deployed — then N nodes and a burst of P pods per node created through the watcher. Prints pod → IP
 * latency, ECS calls per pod, apiserver requests by verb, history per node, CPU and memory per process, and
 * restart-to-served time, and the figures of issue 29's targets (targets.ts). Everything started is stopped at the end,
 * on failure and on Ctrl-C.
 *
 * Usage: npm run bench:scale -- [--nodes 10] [--pods 25] [--idle-seconds 600] [--eni-poll-ms 3000]
 *        [--attach-ms 2000] [--pool 2-5] [--node-settings JSON]
 *        [--timeout-seconds 900] [--preset smoke|cold|idle|cold40|burst200] [--json | --json-file report.json]
 *        [--keep-logs] [--timeline] [--workers N] [--dist] [--node-options OPTS] [--deployed-node-options]
 *        [--one-process] [--period-scale N] [--restart-during-burst] [--all-in-one-restart] [--temporal dev|postgres]
 */
import { writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';

import { describeError } from '../scripts/lib/test-servers.js';
import { assembleReport } from './scale/assemble.js';
import { benchNodeName } from './scale/cluster.js';
import { parseOptions } from './scale/options.js';
import type { Options } from './scale/options.js';
import { burst, burstTimeline, finalAudit, idle, restart, rollingUpdate, warmUp } from './scale/phases.js';
import { restartAllInOne } from './scale/all-in-one.js';
import { formatReport } from './scale/report.js';
import type { ScaleReport } from './scale/report.js';
import { Cleanup, log, startStack } from './scale/stack.js';
import { nodeWorkflowRuns } from './scale/temporal-cost.js';
import { workflowEvents } from './scale/history-events.js';
import { measureSignalRate, temporalServerFigures } from './scale/temporal-server.js';
import { JANITOR_WORKFLOW_ID, nodeWorkflowId } from '../src/shared/workflow-ids.js';

async function run(options: Options, cleanup: Cleanup): Promise<ScaleReport> {
  const loadAverageAtStart = loadavg();
  const stack = await startStack(options, cleanup);
  const { nodesWarmMs } = await warmUp(stack);
  const burstResult = await burst(stack);
  const timeline = await burstTimeline(stack, burstResult);
  const { after: afterIdle } = await idle(stack);
  const roll = await rollingUpdate(stack);
  const restartResult = await restart(stack);
  const final = await stack.snapshot();
  const audit = await finalAudit(stack);
  // After the audit's settling: every task of the restart has completed and is in the SDK's histograms.
  const sdkTasksAtEnd = await stack.sdkTasks();
  const allInOne = options.allInOneRestart ? await restartAllInOne(stack) : undefined;
  // After every measured window: the burst of signals costs the server CPU and its database writes.
  const signals = await measureSignalRate(stack.client);
  // Read last: fetching every history costs Temporal CPU, which no measured window should include.
  const runs = await nodeWorkflowRuns(
    stack.client,
    Array.from({ length: options.nodes }, (_, index) => benchNodeName(index)),
  );
  const janitorRuns = await workflowEvents(stack.client, JANITOR_WORKFLOW_ID);
  const runsReadMs = performance.now();
  stack.keepLogs = options.keepLogs;
  if (stack.keepLogs) log(`logs kept in ${stack.servers.runDir}`);
  const report = assembleReport({
    options,
    loadAverageAtStart,
    nodesWarmMs,
    burst: burstResult,
    latencies: stack.tracker.latencies(burstResult.pods.map((entry) => entry.id)),
    afterIdle,
    workers: stack.workers,
    roll,
    restart: restartResult,
    final,
    ecsLost: stack.ecsCalls.lost,
    timeline,
    runs,
    restartNodeRuns: await workflowEvents(stack.client, nodeWorkflowId(restartResult.node)),
    runsReadMs,
    sdkTasksAtEnd,
    janitorRuns,
    audit,
    ...(allInOne === undefined ? {} : { allInOne }),
  });
  const serverCpu = (snapshot: { processes: Record<string, { cpuSeconds: number } | undefined> }): number =>
    snapshot.processes['temporal server']?.cpuSeconds ?? Number.NaN;
  report.temporalServer = temporalServerFigures({
    kind: options.temporal === 'postgres' ? 'temporal-server on PostgreSQL' : 'dev server',
    podsServed: report.burst.served,
    nodes: options.nodes,
    idleMs: afterIdle.atMs - burstResult.after.atMs,
    periodScale: options.periodScale,
    serverCpu: {
      burst: { before: serverCpu(burstResult.before), after: serverCpu(burstResult.after) },
      idle: { before: serverCpu(burstResult.after), after: serverCpu(afterIdle) },
    },
    database: {
      burst: { before: burstResult.before.database, after: burstResult.after.database },
      idle: { before: burstResult.after.database, after: afterIdle.database },
    },
    signals,
  });
  return report;
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const cleanup = new Cleanup();
  let interrupted = false;
  const onSignal = (signal: string): void => {
    if (interrupted) return;
    interrupted = true;
    log(`${signal}: stopping everything`);
    void cleanup.run().finally(() => process.exit(130));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const report = await run(options, cleanup);
    await cleanup.run();
    const json = `${JSON.stringify(report, null, 2)}\n`;
    if (options.jsonFile !== undefined) await writeFile(options.jsonFile, json);
    process.stdout.write(options.json ? json : formatReport(report, { timeline: options.timeline }));
    if (!report.audit.clean) {
      log(`the zero-leak audit failed:\n${report.audit.problems.join('\n')}`);
      process.exitCode = 1;
    }
  } catch (error) {
    log(`failed: ${describeError(error)} (server and role logs kept in /tmp/eniflow-testenv-*)`);
    await cleanup.run();
    process.exitCode = 1;
  }
}

await main();
