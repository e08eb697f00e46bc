/**
 * The worker's cloud-recovery wake: nodes backing off after a cloud outage make no call for minutes, so the worker
 * probes the failing action while no node calls it, and wakes them when the probe gets an answer after the failures.
 * A probe whose wake is followed by failures soon (one node's fault) is blind: it wakes no one and stops.
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

/** A notifier whose probe answers what `answer()` says (attachEni only has one), counting probes and wakes. */
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
    probe: {
      probes: (activityType) => activityType === 'attachEni',
      probe: (activityType) => {
        counts.probes.push(activityType);
        return Promise.resolve(answer());
      },
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

  it('outage ends before the first probe: the first answer after the failures wakes the nodes once', async () => {
    const { notifier, counts } = notifierWith(() => 'answers');
    notifier.failed('attachEni', unavailable);
    await pollUntil(() => Promise.resolve(counts.wakes > 0 ? true : undefined), {
      description: 'the wake after the first answer',
      timeoutMs: 5_000,
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(counts.probes.length, 1, 'no probe once the action is back');
    assert.equal(counts.wakes, 1);
  });

  it('woken nodes failing again soon after a probe’s wake make the probe blind: it wakes no one and stops', async () => {
    const { notifier, counts } = notifierWith(() => 'answers', 20, 200);
    notifier.failed('attachEni', unavailable);
    await pollUntil(() => Promise.resolve(counts.wakes > 0 ? true : undefined), {
      description: 'the first wake',
      timeoutMs: 5_000,
    });
    // A woken node fails again at once: its own resources' fault, which the probe cannot see.
    notifier.failed('attachEni', unavailable);
    await new Promise((resolve) => setTimeout(resolve, 150));
    assert.equal(counts.probes.length, 1, 'the blind probe is not made again');
    assert.equal(counts.wakes, 1);
  });

  it('a RAM refusal of the probe is neither an answer nor a failure: no wake, and the probe stops', async () => {
    const { notifier, counts } = notifierWith(() => 'refused');
    notifier.failed('attachEni', unavailable);
    await pollUntil(() => Promise.resolve(counts.probes.length >= 1 ? true : undefined), {
      description: 'the first probe',
      timeoutMs: 5_000,
    });
    await new Promise((resolve) => setTimeout(resolve, 150));
    assert.equal(counts.probes.length, 1);
    assert.equal(counts.wakes, 0);
    // Recovery is then seen in real calls only: a success of the action still wakes the nodes.
    notifier.succeeded('attachEni');
    await pollUntil(() => Promise.resolve(counts.wakes > 0 ? true : undefined), {
      description: 'the wake after a real success',
      timeoutMs: 5_000,
    });
    assert.equal(counts.probes.length, 1, 'no probe after the refusal');
  });

  it('a failure of a type with no probe arms no timer', () => {
    const { notifier } = notifierWith(() => 'failing');
    const realSetTimeout = globalThis.setTimeout;
    let timers = 0;
    globalThis.setTimeout = ((...args: Parameters<typeof setTimeout>) => {
      timers += 1;
      return realSetTimeout(...args);
    }) as typeof setTimeout;
    try {
      notifier.failed('adoptEnis', unavailable);
    } finally {
      globalThis.setTimeout = realSetTimeout;
    }
    assert.equal(timers, 0);
  });

  it('a wake signals every Error node, a page of maxWorkflows at a time, not only the first page', async () => {
    const ids = Array.from({ length: 250 }, (_, index) => `node-${String(index).padStart(3, '0')}`);
    const pages: number[] = [];
    const signalled = new Set<string>();
    const notifier = new CloudRecoveryNotifier({
      connection: {} as unknown as NativeConnection,
      namespace: 'default',
      taskQueue: 'eniflow',
      logger: createLogger({ name: 'test', level: 'silent' }),
      minIntervalMs: 1,
      maxWorkflows: 100,
      errorNodes: {
        list: async function* () {
          await Promise.resolve();
          yield* ids;
        },
        signal: (workflowIds) => {
          pages.push(workflowIds.length);
          for (const id of workflowIds) signalled.add(id);
          return Promise.resolve();
        },
      },
    });
    notifiers.push(notifier);
    notifier.failed('attachEni', unavailable);
    notifier.succeeded('attachEni');
    await pollUntil(() => Promise.resolve(signalled.size >= 250 ? true : undefined), {
      description: 'every Error node signalled',
      timeoutMs: 5_000,
    });
    assert.deepEqual(pages, [100, 100, 50]);
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
