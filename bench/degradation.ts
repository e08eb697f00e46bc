/**
 * The degradation benchmark: N nodes (200) run by the watcher and a worker process, then the operator's switch set
 * (`l1`, then `off`) in the control ConfigMap as `eniflow degradation set` writes it. Reports, from the workflows'
 * histories, how long from the write until Temporal accepted each node's `degradation` signal and until each
 * workflow's task took it (the issue asks for 10 s), and how long the watcher's broadcast took. Measured, not asserted.
 *
 * Usage: npm run bench:degradation -- [--nodes 200] [--json]
 * (runs under scripts/with-testenv.ts, which starts the kube-apiserver; the cluster has its own Temporal server).
 */
import { parseArgs } from 'node:util';

import { defaultPayloadConverter } from '@temporalio/common';

import { pollUntil } from '../scripts/lib/poll-until.js';
import { kubeControlStore } from '../src/cli/commands.js';
import { mapLimited } from '../src/shared/map-limited.js';
import { nodeWorkflowId } from '../src/shared/workflow-ids.js';
import { CONTROL_CONFIGMAP_NAME } from '../src/watcher/watcher-config.js';
import { startChaosCluster } from '../test/support/chaos-cluster.js';
import type { ChaosCluster } from '../test/support/chaos-cluster.js';

interface LevelReport {
  level: string;
  /**
   * From the ConfigMap write to the `degradation` signal in each node's history (Temporal accepted it), and to the
   * end of the workflow task that took it (the workflow has the level): p50, p90, max over the nodes, in ms.
   */
  signalled: { p50: number; p90: number; max: number };
  taken: { p50: number; p90: number; max: number };
  /** The watcher's own measure: from the change it saw to the last signal accepted by Temporal. */
  broadcastMs: number | undefined;
}

function spread(values: readonly number[]): { p50: number; p90: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? 0;
  return { p50: at(50), p90: at(90), max: sorted.at(-1) ?? 0 };
}

function eventMs(time: { seconds?: unknown; nanos?: number | null } | null | undefined): number {
  return Number(time?.seconds ?? 0) * 1000 + Math.floor((time?.nanos ?? 0) / 1e6);
}

/** When the node's workflow was signalled `level` after `sinceMs`, and when the task that took it completed. */
async function degradationTimes(
  cluster: ChaosCluster,
  nodeName: string,
  level: string,
  sinceMs: number,
): Promise<{ signalledMs: number; takenMs: number } | undefined> {
  const history = await cluster.client.workflow.getHandle(nodeWorkflowId(nodeName)).fetchHistory();
  let signalledMs: number | undefined;
  for (const event of history.events ?? []) {
    const atMs = eventMs(event.eventTime);
    const signal = event.workflowExecutionSignaledEventAttributes;
    if (signalledMs === undefined && signal?.signalName === 'degradation' && atMs >= sinceMs) {
      const payload = signal.input?.payloads?.[0];
      if (payload != null && defaultPayloadConverter.fromPayload<{ level: string }>(payload).level === level) {
        signalledMs = atMs;
      }
    }
    if (signalledMs !== undefined && event.workflowTaskCompletedEventAttributes != null && atMs >= signalledMs) {
      return { signalledMs, takenMs: atMs };
    }
  }
  return undefined;
}

async function measure(cluster: ChaosCluster, level: 'l1' | 'off'): Promise<LevelReport> {
  const store = kubeControlStore({ core: cluster.kube.core, namespace: 'default', name: CONTROL_CONFIGMAP_NAME });
  const changesBefore = cluster.watcher.metrics().degradation?.changes ?? 0;
  // Server time and this process's clock are the same machine's.
  const writtenMs = Date.now();
  await store.write(level === 'off' ? '' : level);
  await pollUntil(
    () => Promise.resolve((cluster.watcher.metrics().degradation?.changes ?? 0) > changesBefore ? true : undefined),
    { description: 'the watcher saw the change', timeoutMs: 60_000, intervalMs: 50 },
  );
  const times = await pollUntil(
    async () => {
      const found = await mapLimited(cluster.nodes, 8, (node) =>
        degradationTimes(cluster, node.name, level, writtenMs - 1_000),
      );
      return found.every((entry) => entry !== undefined) ? found : undefined;
    },
    { description: `every node took ${level}`, timeoutMs: 300_000, intervalMs: 2_000 },
  );
  return {
    level,
    signalled: spread(times.map((entry) => entry.signalledMs - writtenMs)),
    taken: spread(times.map((entry) => entry.takenMs - writtenMs)),
    broadcastMs: cluster.watcher.metrics().degradation?.lastBroadcastMs,
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { nodes: { type: 'string', default: '200' }, json: { type: 'boolean', default: false } },
  });
  const nodes = Number(values.nodes);
  const cluster = await startChaosCluster({
    name: 'degrade',
    nodeCount: nodes,
    pool: { minPoolSize: 0, maxPoolSize: 2 },
  });
  try {
    const startedMs = Date.now();
    await pollUntil(
      async () => ((await cluster.states()).every((state) => (state?.reconcileCount ?? 0) >= 1) ? true : undefined),
      { description: 'every node workflow past its first pass', timeoutMs: 600_000, intervalMs: 1_000 },
    );
    const startS = Math.round((Date.now() - startedMs) / 1000);
    const reports = [await measure(cluster, 'l1'), await measure(cluster, 'off')];
    if (values.json) {
      process.stdout.write(`${JSON.stringify({ nodes, reports }, null, 2)}\n`);
    } else {
      process.stdout.write(`${nodes} nodes (every workflow past its first pass after ${startS} s)\n`);
      for (const report of reports) {
        const { signalled, taken } = report;
        process.stdout.write(
          `  set ${report.level}: signal in every history after ${signalled.max} ms (p50 ${signalled.p50}, p90 ` +
            `${signalled.p90}); every workflow had it after ${taken.max} ms (p50 ${taken.p50}, p90 ${taken.p90}); ` +
            `the watcher's broadcast took ${report.broadcastMs ?? '?'} ms\n`,
        );
      }
    }
  } finally {
    await cluster.close();
  }
}

await main();
