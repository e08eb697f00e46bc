/**
 * The worker's cloud-recovery wake: nodes backing off after a cloud outage make no call for minutes, so the worker
 * probes the failing action while no node calls it, and wakes them when the probe that met the outage's failure gets
 * an answer. A probe that answers while real calls fail (one node's fault) wakes no one and stops.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';

import type { NativeConnection } from '@temporalio/worker';

import { pollUntil } from '../../../scripts/lib/poll-until.js';
import type { EcsFailure } from '../../../src/activities/ecs/ecs-errors.js';
import { createLogger } from '../../../src/logger.js';
import type { ProbeAnswer } from '../../../src/worker/cloud-probe.js';
import { CloudRecoveryNotifier } from '../../../src/worker/cloud-recovery.js';

const unavailable: EcsFailure = {
  type: 'EcsTransient',
  operation: 'AttachNetworkInterface',
  code: 'ServiceUnavailable',
  message: 'down',
  retryable: true,
};

const notifiers: CloudRecoveryNotifier[] = [];
after(async () => {
  await Promise.all(notifiers.map((notifier) => notifier.close()));
});

/** A notifier whose probe answers what `answer()` says, counting probes and wakes. */
function notifierWith(answer: () => ProbeAnswer, probeIntervalMs = 20, minIntervalMs = 1) {
  const counts = { probes: [] as string[], wakes: 0 };
  const notifier = new CloudRecoveryNotifier({
    // Never used: wakes are counted, not sent.
    connection: {} as unknown as NativeConnection,
    namespace: 'default',
    taskQueue: 'eniflow',
    logger: createLogger({ name: 'test', level: 'silent' }),
    minIntervalMs,
    maxIntervalMs: 600_000,
    probeIntervalMs,
    probe: (activityType) => {
      counts.probes.push(activityType);
      return Promise.resolve(answer());
    },
    wakeNodes: () => {
      counts.wakes += 1;
      return Promise.resolve();
    },
  });
  notifiers.push(notifier);
  return { notifier, counts };
}

describe('CloudRecoveryNotifier', () => {
  it('probes a failing action no node calls, and wakes the nodes once the probe that met the outage gets an answer', async () => {
    let down = true;
    const { notifier, counts } = notifierWith(() => (down ? 'failing' : 'answers'));
    notifier.failed('attachEni', unavailable);
    await pollUntil(() => Promise.resolve(counts.probes.length >= 2 ? true : undefined), {
      description: 'probes while the action fails',
      timeoutMs: 5_000,
    });
    assert.equal(counts.wakes, 0, 'no wake while the probe meets the outage');
    assert.ok(counts.probes.every((type) => type === 'attachEni'));
    down = false;
    await pollUntil(() => Promise.resolve(counts.wakes > 0 ? true : undefined), {
      description: 'the wake once the action answers',
      timeoutMs: 5_000,
    });
    const probes = counts.probes.length;
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(counts.probes.length, probes, 'no probe once the action is back');
    assert.equal(counts.wakes, 1);
  });

  it('a probe that answers while real calls fail wakes no one and stops probing', async () => {
    const { notifier, counts } = notifierWith(() => 'answers');
    notifier.failed('attachEni', unavailable);
    await pollUntil(() => Promise.resolve(counts.probes.length >= 1 ? true : undefined), {
      description: 'the first probe',
      timeoutMs: 5_000,
    });
    await new Promise((resolve) => setTimeout(resolve, 150));
    assert.equal(counts.probes.length, 1, 'one probe: it cannot tell this fault');
    assert.equal(counts.wakes, 0);
  });

  it('a real success after the failure wakes the nodes, as before, without a probe', async () => {
    const { notifier, counts } = notifierWith(() => 'failing');
    notifier.failed('attachEni', unavailable);
    notifier.succeeded('attachEni');
    await pollUntil(() => Promise.resolve(counts.wakes > 0 ? true : undefined), {
      description: 'the wake after the success',
      timeoutMs: 5_000,
    });
    assert.equal(counts.probes.length, 0);
  });

  it('does not probe an action that real calls keep trying', async () => {
    const { notifier, counts } = notifierWith(() => 'failing', 200);
    const calls = setInterval(() => {
      notifier.failed('attachEni', unavailable);
    }, 5);
    await new Promise((resolve) => setTimeout(resolve, 600));
    clearInterval(calls);
    assert.equal(counts.probes.length, 0);
  });

  it('spaces wakes further apart each time the woken nodes fail again soon (one node’s fault, others succeed)', async () => {
    const { notifier, counts } = notifierWith(() => 'failing', 60_000, 50);
    const wakes = (n: number) =>
      pollUntil(() => Promise.resolve(counts.wakes >= n ? true : undefined), {
        description: `wake ${n}`,
        timeoutMs: 10_000,
      });
    // Each cycle: a failure right after the last wake (a woken node failed again), then another node's success.
    for (let cycle = 1; cycle <= 4; cycle += 1) {
      notifier.failed('attachEni', unavailable);
      notifier.succeeded('attachEni');
      await wakes(cycle);
    }
    // Four flaps: the next wake waits 50 ms · 2^4 = 800 ms after the last one, not 50 ms.
    notifier.failed('attachEni', unavailable);
    notifier.succeeded('attachEni');
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(counts.wakes, 4, 'the fifth wake is held back');
    await wakes(5);
  });
});
