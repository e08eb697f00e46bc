/**
 * The new leader's start sweep: the pure pacing (StartSweep) and the SignalDispatcher sending it, with node:test's
 * mocked clock and an in-memory WorkflowGateway (what is checked is which signals leave the watcher and when; the
 * real signalWithStart is covered by watcher.test.ts).
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';

import { createLogger } from '../../../src/logger.js';
import type { NodeSignal } from '../../../src/watcher/coalescer.js';
import { SignalDispatcher } from '../../../src/watcher/signal-dispatcher.js';
import { StartSweep } from '../../../src/watcher/start-sweep.js';
import { loadWatcherConfig } from '../../../src/watcher/watcher-config.js';

describe('StartSweep', () => {
  it('hands one node on at once, then nodesPerSecond on average, in name order, each once', () => {
    const sweep = new StartSweep({ nodesPerSecond: 4 });
    sweep.begin(['d', 'b', 'a', 'c', 'e', 'f', 'b'], 1_000);
    assert.equal(sweep.pendingCount(), 6);
    assert.deepEqual(sweep.take(1_000), ['a']);
    assert.equal(sweep.nextDueMs(), 1_250);
    assert.deepEqual(sweep.take(1_249), []);
    assert.deepEqual(sweep.take(1_250), ['b']);
    // A late caller gets what accrued meanwhile, not more.
    assert.deepEqual(sweep.take(1_800), ['c', 'd']);
    assert.equal(sweep.nextDueMs(), 2_000);
    assert.deepEqual(sweep.take(5_000), ['e', 'f']);
    assert.equal(sweep.nextDueMs(), undefined);
    assert.deepEqual(sweep.take(9_000), []);
  });

  it('drops a node that got its own signal, without using up the budget for it', () => {
    const sweep = new StartSweep({ nodesPerSecond: 1 });
    sweep.begin(['a', 'b', 'c'], 0);
    assert.equal(sweep.remove('b'), true);
    assert.equal(sweep.remove('b'), false);
    assert.equal(sweep.remove('x'), false);
    assert.deepEqual(sweep.take(0), ['a']);
    assert.deepEqual(sweep.take(1_000), ['c']);
    assert.equal(sweep.pendingCount(), 0);
  });

  it('a new sweep replaces the running one; clear drops it', () => {
    const sweep = new StartSweep({ nodesPerSecond: 1 });
    sweep.begin(['a', 'b'], 0);
    assert.deepEqual(sweep.take(0), ['a']);
    sweep.begin(['a', 'c'], 500);
    assert.deepEqual(sweep.take(500), ['a']);
    assert.deepEqual(sweep.take(1_500), ['c']);
    sweep.begin(['x'], 2_000);
    sweep.clear();
    assert.equal(sweep.nextDueMs(), undefined);
    assert.deepEqual(sweep.take(10_000), []);
  });

  it('START_SWEEP_NODES_PER_SECOND sets the rate (default 10)', () => {
    assert.equal(loadWatcherConfig({ ENIFLOW_CLUSTER_ID: 'c-test' }).startSweepNodesPerSecond, 10);
    assert.equal(
      loadWatcherConfig({ ENIFLOW_CLUSTER_ID: 'c-test', START_SWEEP_NODES_PER_SECOND: '2.5' }).startSweepNodesPerSecond,
      2.5,
    );
    assert.throws(() => loadWatcherConfig({ ENIFLOW_CLUSTER_ID: 'c-test', START_SWEEP_NODES_PER_SECOND: '0' }), {
      message: /START_SWEEP_NODES_PER_SECOND must be a positive number/,
    });
  });
});

describe('SignalDispatcher sweep', () => {
  const silent = new Writable({
    write(_chunk, _encoding, callback) {
      callback();
    },
  });
  let sent: { atMs: number; signal: NodeSignal }[];
  let dispatcher: SignalDispatcher;

  beforeEach(() => {
    mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 0 });
    sent = [];
    dispatcher = new SignalDispatcher({
      gateway: {
        signalNode: (signal) => {
          sent.push({ atMs: Date.now(), signal });
          return Promise.resolve();
        },
      },
      logger: createLogger({ name: 'test', destination: silent }),
      windowMs: 200,
      maxDelayMs: 2_000,
      sweepNodesPerSecond: 10,
      now: () => Date.now(),
    });
    dispatcher.setActive(true);
  });

  afterEach(async () => {
    await dispatcher.stop();
    mock.timers.reset();
  });

  /** Advances the mocked clock in small steps, letting the gateway's promises settle in between. */
  async function advance(ms: number): Promise<void> {
    for (let step = 0; step < ms; step += 50) {
      mock.timers.tick(Math.min(50, ms - step));
      for (let i = 0; i < 5; i += 1) await Promise.resolve();
    }
  }

  const nodes = Array.from({ length: 50 }, (_, i) => `node-${String(i).padStart(2, '0')}`);

  it('spreads the start signals over time instead of sending them all at once, and sends each once', async () => {
    dispatcher.sweep(nodes, 'watcher-start');
    await advance(1_000);
    assert.ok(sent.length >= 5 && sent.length <= 12, `after 1 s: ${sent.length} signals, not 50`);
    assert.ok(dispatcher.sweepPending() >= 35, `${dispatcher.sweepPending()} nodes still owed`);
    await advance(5_000);
    assert.equal(sent.length, 50);
    assert.deepEqual(
      sent.map((entry) => entry.signal.nodeName),
      nodes,
      'each node once, in name order',
    );
    assert.ok(sent.every((entry) => entry.signal.reason.reason === 'watcher-start'));
    const lastAtMs = sent.at(-1)?.atMs ?? 0;
    assert.ok(lastAtMs >= 4_900, `the last start signal left at ${lastAtMs} ms, about 50 / 10 per second`);
  });

  it('a node with a change of its own is signalled within the window, with the start reason, and only once', async () => {
    dispatcher.sweep(nodes, 'watcher-start');
    await advance(300);
    const before = sent.length;
    dispatcher.enqueue({ nodeName: 'node-49', reason: 'pod-added', pod: 'added' });
    await advance(250);
    const own = sent.filter((entry) => entry.signal.nodeName === 'node-49');
    assert.equal(own.length, 1, 'signalled at once, not at its sweep turn');
    assert.ok(sent.length <= before + 3);
    assert.deepEqual(own[0]?.signal.reason, {
      reason: 'watcher-start,pod-added',
      podChanges: { added: 1, updated: 0, deleted: 0 },
    });
    await advance(6_000);
    assert.equal(sent.filter((entry) => entry.signal.nodeName === 'node-49').length, 1, 'the sweep skips it later');
    assert.equal(sent.length, 50);
  });

  it('losing leadership drops what the sweep still owes', async () => {
    dispatcher.sweep(nodes, 'watcher-start');
    await advance(500);
    const before = sent.length;
    dispatcher.setActive(false);
    assert.equal(dispatcher.sweepPending(), 0);
    await advance(6_000);
    assert.equal(sent.length, before, 'nothing more goes out');
  });
});
