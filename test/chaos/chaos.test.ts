/**
 * The chaos test (no ENI leaks, whatever crashes): ten nodes, a pod burst and waves of churn, slow creates and
 * attaches, cloud faults (throttling, 5xx, lost responses, two creates lost in a row), two worker replicas
 * SIGKILLed over twenty times in all and the Temporal server SIGKILLed once, a security-group change and a node
 * removal while creates are in flight; then the audit, **before** any janitor pass: the janitor is the backstop, so
 * an ENI it would delete is a leak that construction failed to prevent. Every random choice comes from a seeded PRNG
 * (`CHAOS_SEED`, default 13), so a run's plan (what is killed and when, which pods churn) reproduces; the
 * interleaving with the servers' timing does not.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';

import { SeededRandom } from '../../src/ecs-emulator/seeded-random.js';
import { assertCleanAudit, formatAudit } from '../support/audit.js';
import { DEMO } from '../support/ecs-emulator.js';
import { startChaosCluster } from '../support/chaos-cluster.js';
import type { ChaosCluster } from '../support/chaos-cluster.js';

const SEED = Number(process.env['CHAOS_SEED'] ?? 13);
const NODE_COUNT = 10;
const PODS_PER_NODE = 10;
const WORKER_KILLS = 22;
const CHURN_WAVES = 4;
const WORKER_REPLICAS = 2;
/** The security group a node's spec is switched to mid-burst (the fixture's second group in the VPC). */
const SECOND_SECURITY_GROUP = 'sg-bp1emu00000000000002';

/** Cloud faults for the whole chaos phase: the first rule that fires decides a call's fault. */
const FAULTS = [
  // Both attempts of the first create lost (the response, not the create): the create-intent path.
  'CreateNetworkInterface next 2 lost ServiceUnavailable 503',
  // And again later in the run.
  'CreateNetworkInterface skip 12 next 2 lost ServiceUnavailable 503',
  'CreateNetworkInterface rate 0.1 lost',
  'AttachNetworkInterface rate 0.1 lost',
  'AssignPrivateIpAddresses rate 0.1 lost',
  'AssignIpv6Addresses rate 0.1 lost',
  'UnassignPrivateIpAddresses rate 0.1 lost',
  'DeleteNetworkInterface rate 0.1 lost',
  '* rate 0.04 error Throttling.User',
  '* rate 0.03 error ServiceUnavailable 503',
  '* rate 0.02 error InternalError 500',
];

const log = (line: string): void => {
  process.stderr.write(`chaos: ${line}\n`);
};

let cluster: ChaosCluster;
let failed = false;

before(async () => {
  cluster = await startChaosCluster({
    name: 'chaos',
    nodeCount: NODE_COUNT,
    dualStack: true,
    pool: { minPoolSize: 2, maxPoolSize: 5 },
    emulatorSettings: {
      seed: SEED,
      latency: {
        CreateNetworkInterface: { minMs: 2_000, maxMs: 4_000 },
        AttachNetworkInterface: { minMs: 1_000, maxMs: 3_000 },
      },
      transitionDelays: { attachMs: 1_500, detachMs: 500, deleteMs: 500 },
    },
    // Recorded by the watcher in every node workflow (NODE_WORKFLOW_SETTINGS): waiting pods and failed passes are
    // retried within seconds instead of minutes, so the run settles soon after the chaos stops.
    nodeSettings: { gcPeriodMs: 10_000, maxFailureBackoffMs: 5_000, idleWakeMs: 60_000 },
    workerReplicas: WORKER_REPLICAS,
  });
});

after(async () => {
  await cluster.close({ keepLogs: failed });
  if (failed) log(`logs kept in ${cluster.runDir}`);
});

describe('chaos', () => {
  it('every pod gets its IP and nothing leaks through worker and Temporal crashes, slow and faulty cloud calls', async () => {
    const startedAt = Date.now();
    const random = new SeededRandom(SEED);
    const pick = <T>(items: readonly T[]): T => items[random.integer({ min: 0, max: items.length - 1 })] as T;
    const admin = cluster.emulator.emulator.admin;
    const workers = cluster.workers;
    try {
      await Promise.all(workers.map((worker) => worker.ready()));
      await admin.addFaults(FAULTS);
      const live = new Map<string, string>();
      let podSeq = 0;
      const createPods = async (count: number): Promise<void> => {
        const names = Array.from({ length: count }, () => `p-${podSeq++}`);
        const nodes = cluster.nodes;
        const nodesOf = names.map((name, index) => [name, nodes[index % nodes.length]?.name ?? ''] as const);
        // A few at a time: a burst, not a queue, without flooding the shared apiserver.
        for (let index = 0; index < nodesOf.length; index += 8) {
          await Promise.all(
            nodesOf.slice(index, index + 8).map(async ([name, node]) => {
              await cluster.createPod(name, node);
              live.set(name, node);
            }),
          );
        }
      };

      // The worker killer: SIGKILL one replica at a random moment of its work, back after 0–3 s, over and over;
      // the other replica picks up what the killed one held.
      const killPlan = Array.from({ length: WORKER_KILLS }, () => ({
        replica: random.integer({ min: 0, max: WORKER_REPLICAS - 1 }),
        afterMs: random.integer({ min: 500, max: 5_000 }),
        downMs: random.integer({ min: 0, max: 3_000 }),
      }));
      const killer = (async () => {
        for (const { replica, afterMs, downMs } of killPlan) {
          const worker = workers[replica];
          if (worker === undefined) continue;
          await worker.ready();
          await sleep(afterMs);
          await worker.kill();
          await sleep(downMs);
          worker.start();
        }
      })();
      // The Temporal server: one kill -9 mid-burst, back on the same port and database after 1–4 s.
      const temporalPlan = {
        afterMs: random.integer({ min: 8_000, max: 20_000 }),
        downMs: random.integer({ min: 1_000, max: 4_000 }),
      };
      let temporalDownAtMs = 0;
      const temporalKiller = (async () => {
        await sleep(temporalPlan.afterMs);
        temporalDownAtMs = Date.now() - startedAt;
        await cluster.temporal.kill();
        await sleep(temporalPlan.downMs);
        await cluster.temporal.restart();
      })();

      // Mid-burst, while creates (2–4 s each) are in flight: a node with an open create intent (its create's
      // answers were lost, so the ENI may exist) moves to other security groups, which its re-issue must not follow;
      // and another node is removed with its pods (its CR deleted while its workflow creates ENIs for them).
      let sgNode = '';
      let removedNode = '';
      const specChange = (async () => {
        const withLostCreate = await nodeWithOpenIntent(180_000);
        const remaining = cluster.nodes.filter((node) => node.name !== removedNode);
        sgNode = remaining.find((node) => node.name === withLostCreate)?.name ?? pick(remaining).name;
        await cluster.setSecurityGroups(sgNode, [DEMO.securityGroup, SECOND_SECURITY_GROUP]);
        log(`security groups changed on ${sgNode} (${withLostCreate === undefined ? 'no' : 'a'} lost create)`);
      })();
      const nodeRemoval = (async () => {
        await sleep(random.integer({ min: 10_000, max: 30_000 }));
        removedNode = pick(cluster.nodes.filter((node) => node.name !== sgNode)).name;
        await cluster.deleteNode(removedNode, 240_000);
        for (const [name, node] of [...live]) if (node === removedNode) live.delete(name);
      })();

      await createPods(NODE_COUNT * PODS_PER_NODE);
      let churned = 0;
      for (let wave = 0; wave < CHURN_WAVES; wave++) {
        await sleep(random.integer({ min: 5_000, max: 12_000 }));
        const names = [...live.keys()].sort();
        const victims = new Set<string>();
        while (victims.size < Math.round(names.length * 0.3)) victims.add(pick(names));
        for (const name of [...victims].sort()) {
          await cluster.deletePod(name);
          live.delete(name);
        }
        await createPods(victims.size + random.integer({ min: -5, max: 5 }));
        churned += victims.size;
      }
      await Promise.all([killer, temporalKiller, specChange, nodeRemoval]);
      // A pod the burst placed on the removed node while it was being removed is deleted with it.
      const remaining = new Set(cluster.nodes.map((node) => node.name));
      for (const [name, node] of [...live].sort()) {
        if (remaining.has(node)) continue;
        await cluster.deletePod(name);
        live.delete(name);
      }
      const chaosEndMs = Date.now() - startedAt;
      await admin.clearFaults();
      await Promise.all(workers.map((worker) => worker.ready()));

      const settled = await cluster.settle(240_000);
      const settledMs = Date.now() - startedAt;
      log(`before the janitor: ${formatAudit(settled)}`);
      // The verdict is taken here, before the janitor could hide a leak by deleting it.
      assertCleanAudit(settled);
      const janitor = await cluster.runJanitor(5_000);
      log(
        `janitor: checked ${janitor.checked}, orphans ${janitor.orphans.length}, deleted ${janitor.deleted.length} ` +
          `${JSON.stringify(janitor.orphans)}, failed ${janitor.failed.length}, kept ${JSON.stringify(janitor.kept)}`,
      );
      const audit = await cluster.audit();
      log(`after the janitor: ${formatAudit(audit)}`);
      const faults = await admin.faults();
      const calls = await admin.calls();
      const faulted = calls.filter((call) => call.fault !== null);
      const byFault = new Map<string, number>();
      for (const call of faulted) {
        const kind = `${call.action}:${call.fault?.split(':')[1] ?? ''}:${call.code}`;
        byFault.set(kind, (byFault.get(kind) ?? 0) + 1);
      }
      log(
        `seed ${SEED}: ${live.size} live pods (${podSeq} created, ${churned} deleted in ${CHURN_WAVES} waves) on ` +
          `${NODE_COUNT} nodes (${removedNode} removed, ${sgNode} moved to ${SECOND_SECURITY_GROUP}); ` +
          `${WORKER_REPLICAS} worker replicas SIGKILLed ${workers.map((w) => w.kills).join('+')} times, exited on ` +
          `their own ${workers.map((w) => w.selfExits).join('+')} times, start to "Worker started" ` +
          `${JSON.stringify(summary(workers.flatMap((w) => w.startTimesMs)))} ms; Temporal SIGKILLed at ` +
          `${temporalDownAtMs} ms, ` +
          `down ${temporalPlan.downMs} ms; chaos ended at ${chaosEndMs} ms, settled at ${settledMs} ms, total ` +
          `${Date.now() - startedAt} ms; ${calls.length} cloud calls, ${faulted.length} with a fault ` +
          `(${faults.length} rules left)`,
      );
      log(`faults: ${JSON.stringify(Object.fromEntries([...byFault].sort()))}`);

      const kills = workers.reduce((sum, worker) => sum + worker.kills, 0);
      assert.ok(kills >= 20, `${kills} worker kills`);
      assert.ok(
        workers.every((worker) => worker.kills > 0),
        'every replica was killed at least once',
      );
      assert.equal(settled.livePods, live.size, 'the audit saw every live pod');
      assert.deepEqual(janitor.orphans, [], 'the janitor found nothing to delete');
      assert.deepEqual(janitor.failed, []);
      assertCleanAudit(audit);
    } catch (error) {
      failed = true;
      log(`worker log tail:\n${await cluster.workerLogTail()}`);
      throw error;
    }
  });
});

/**
 * The node of the first create whose answer was lost although the cloud made the ENI (the first fault rule loses
 * both attempts of a create): that node opens a create intent and re-issues it on a later pass. Found in the
 * emulator's call log by the create's node tag; polled for up to `timeoutMs`.
 */
async function nodeWithOpenIntent(timeoutMs: number): Promise<string | undefined> {
  const admin = cluster.emulator.emulator.admin;
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const creates = await admin.calls({ action: 'CreateNetworkInterface' });
    const lost = creates.find((call) => call.applied && (call.fault ?? '').endsWith(':lostResponse'));
    const node = lost === undefined ? undefined : nodeTagOf(lost.params);
    if (node !== undefined) return node;
    await sleep(250);
  }
  return undefined;
}

/** The `eniflow.io/node` tag of a create's wire parameters (`Tag.N.Key` / `Tag.N.Value`). */
function nodeTagOf(params: Record<string, string>): string | undefined {
  for (const [key, value] of Object.entries(params)) {
    const index = /^Tag\.(\d+)\.Key$/.exec(key)?.[1];
    if (index !== undefined && value === 'eniflow.io/node') return params[`Tag.${index}.Value`];
  }
  return undefined;
}

function summary(values: readonly number[]): { n: number; min?: number; median?: number; max?: number } {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return { n: 0 };
  return {
    n: sorted.length,
    min: sorted[0] ?? 0,
    median: sorted[Math.floor(sorted.length / 2)] ?? 0,
    max: sorted.at(-1) ?? 0,
  };
}
