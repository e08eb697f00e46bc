/**
 * The throttle benchmark: N nodes (50) whose warm pools each want three ENIs, two worker replicas, and an
 * account-wide `Throttling` on every ECS action for the first T seconds (the emulator's fault rules). Reports how
 * the retries spread while the cloud refuses: ECS calls per second (the largest number in any one second, the median
 * and the spread), how many of them the cloud refused, and how long after the throttle lifted every node was served.
 * With fixed backoffs every node retried in the same second; with full jitter they spread over the window.
 *
 * Usage: npm run bench:throttle -- [--nodes 50] [--throttle-seconds 60] [--replicas 2] [--json]
 * (runs under scripts/with-testenv.ts, which starts the kube-apiserver; the cluster has its own Temporal server).
 */
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';

import { maxInWindow } from '../test/support/call-windows.js';
import { startChaosCluster } from '../test/support/chaos-cluster.js';

interface ThrottleReport {
  nodes: number;
  replicas: number;
  throttleSeconds: number;
  /** ECS calls the emulator saw while the throttle held, and how many it refused with Throttling. */
  callsDuringThrottle: number;
  throttled: number;
  /** Calls per second while the throttle held: the busiest second, the median second, the mean. */
  maxCallsInOneSecond: number;
  medianCallsPerSecond: number;
  meanCallsPerSecond: number;
  /**
   * The busiest whole second of the window's second half: by then every node has met the throttle and what arrives
   * is retries (activity retries and failed passes backing off), not the first passes of newly started workflows.
   */
  maxCallsInOneSecondSecondHalf: number;
  /** Seconds of the throttle window with at least one call, of all its seconds. */
  secondsWithCalls: number;
  /** Calls of each second of the window, in order (the spread). */
  callsPerSecond: number[];
  /** From lifting the throttle to every node quiet and audited clean. */
  servedAfterLiftS: number;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? 0 : (sorted[Math.floor(sorted.length / 2)] ?? 0);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      nodes: { type: 'string', default: '50' },
      'throttle-seconds': { type: 'string', default: '60' },
      replicas: { type: 'string', default: '2' },
      json: { type: 'boolean', default: false },
    },
  });
  const nodes = Number(values.nodes);
  const throttleSeconds = Number(values['throttle-seconds']);
  const replicas = Number(values.replicas);
  const cluster = await startChaosCluster({
    name: 'throttle',
    nodeCount: nodes,
    workerReplicas: replicas,
    pool: { minPoolSize: 40, maxPoolSize: 45 },
  });
  try {
    const admin = cluster.emulator.emulator.admin;
    // Account-wide: every action of every caller refused, as when the account's quota is spent elsewhere.
    await admin.addFaults(['* always error Throttling 400']);
    await Promise.all(cluster.workers.map((worker) => worker.ready()));
    const startedMs = Date.now();
    await sleep(throttleSeconds * 1_000);
    await admin.clearFaults();
    const liftedMs = Date.now();
    const calls = (await admin.calls()).filter((call) => {
      const at = Date.parse(call.time);
      return at >= startedMs && at < liftedMs;
    });
    const perSecond = Array.from({ length: throttleSeconds }, () => 0);
    for (const call of calls) {
      const second = Math.floor((Date.parse(call.time) - startedMs) / 1_000);
      if (second >= 0 && second < perSecond.length) perSecond[second] = (perSecond[second] ?? 0) + 1;
    }
    // The busiest one-second window, sliding (not only whole seconds from the start).
    const maxInSecond = maxInWindow(
      calls.map((call) => Date.parse(call.time)),
      1_000,
    );
    await cluster.settle(600_000);
    const report: ThrottleReport = {
      nodes,
      replicas,
      throttleSeconds,
      callsDuringThrottle: calls.length,
      throttled: calls.filter((call) => call.code.startsWith('Throttling')).length,
      maxCallsInOneSecond: maxInSecond,
      maxCallsInOneSecondSecondHalf: Math.max(...perSecond.slice(Math.floor(throttleSeconds / 2))),
      medianCallsPerSecond: median(perSecond),
      meanCallsPerSecond: Math.round((calls.length / throttleSeconds) * 10) / 10,
      secondsWithCalls: perSecond.filter((count) => count > 0).length,
      callsPerSecond: perSecond,
      servedAfterLiftS: Math.round((Date.now() - liftedMs) / 100) / 10,
    };
    if (values.json) {
      process.stdout.write(`${JSON.stringify(report)}\n`);
      return;
    }
    process.stdout.write(
      [
        `throttle benchmark: ${nodes} nodes, ${replicas} worker replicas, account-wide Throttling for ${throttleSeconds} s`,
        `  ECS calls while throttled: ${report.callsDuringThrottle} (${report.throttled} refused with Throttling)`,
        `  calls per second: busiest ${report.maxCallsInOneSecond} (second half of the window: ` +
          `${report.maxCallsInOneSecondSecondHalf}), median ${report.medianCallsPerSecond}, ` +
          `mean ${report.meanCallsPerSecond}; seconds with calls ${report.secondsWithCalls}/${throttleSeconds}`,
        `  spread (calls in each second): ${report.callsPerSecond.join(' ')}`,
        `  every node served ${report.servedAfterLiftS} s after the throttle lifted`,
        '',
      ].join('\n'),
    );
  } finally {
    await cluster.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
