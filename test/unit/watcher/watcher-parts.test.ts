/**
 * The parts runWatcher is built from that hold their own state: the degradation broadcast and the state poll (and
 * the counts it makes).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TestContext } from 'node:test';

import type { DegradationSetting } from '../../../src/ipam/degradation.js';
import { createLogger } from '../../../src/logger.js';
import { IPAM_STATES } from '../../../src/workflows/messages.js';
import { DegradationBroadcast } from '../../../src/watcher/degradation-broadcast.js';
import type { DegradationCounters } from '../../../src/watcher/degradation-watch.js';
import { NodeStatePoll } from '../../../src/watcher/node-state-poll.js';
import { countNodesByState } from '../../../src/watcher/state-counts.js';
import type { BroadcastResult, WorkflowGateway } from '../../../src/watcher/workflow-gateway.js';

const logger = createLogger({ name: 'test', level: 'silent' });

function broadcastWith(answers: (BroadcastResult | Error)[], options: { leader?: () => boolean } = {}) {
  const sent: { setting: DegradationSetting; nodeNames: readonly string[] }[] = [];
  let setting: DegradationSetting = { level: 'l1', revision: '7' };
  const counters: DegradationCounters = {
    level: 'l1',
    source: 'configMap',
    changes: 1,
    invalidValues: 0,
    signalsSent: 0,
    signalFailures: 0,
  };
  const gateway: WorkflowGateway = {
    signalNode: () => Promise.resolve(),
    broadcastDegradation: (given, nodeNames) => {
      sent.push({ setting: given, nodeNames });
      const answer = answers.shift() ?? { signalled: 0, notRunning: 0, failed: [] };
      return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer);
    },
  };
  const broadcast = new DegradationBroadcast({
    gateway,
    degradation: { current: () => setting, counters },
    isLeader: options.leader ?? (() => true),
    nodeNames: () => new Set(['node-a', 'node-b']),
    logger,
    backoffMs: () => 0,
  });
  return {
    broadcast,
    sent,
    counters,
    setLevel: (next: DegradationSetting) => {
      setting = next;
    },
  };
}

describe('DegradationBroadcast', () => {
  it('sends the current setting to every node once, and counts the signals', async () => {
    const { broadcast, sent, counters } = broadcastWith([{ signalled: 3, notRunning: 1, failed: [] }]);
    await broadcast.broadcast();
    assert.deepEqual(sent, [{ setting: { level: 'l1', revision: '7' }, nodeNames: ['node-a', 'node-b'] }]);
    assert.equal(counters.signalsSent, 3);
    assert.equal(counters.signalFailures, 0);
    assert.notEqual(counters.lastBroadcastMs, undefined);
  });

  it('retries failed signals and errors, five attempts at most', async () => {
    const failing = { signalled: 1, notRunning: 0, failed: ['node-b'] };
    const { broadcast, sent, counters } = broadcastWith([
      failing,
      new Error('down'),
      failing,
      failing,
      failing,
      failing,
    ]);
    await broadcast.broadcast();
    assert.equal(sent.length, 5);
    assert.equal(counters.signalsSent, 4);
    assert.equal(counters.signalFailures, 5);
  });

  it('sends nothing unless this replica leads', async () => {
    const { broadcast, sent } = broadcastWith([], { leader: () => false });
    await broadcast.broadcast();
    assert.deepEqual(sent, []);
  });

  it('runs broadcasts one after another, each with the setting current when it starts', async () => {
    const { broadcast, sent, setLevel } = broadcastWith([]);
    const first = broadcast.broadcast();
    setLevel({ level: 'off', revision: '8' });
    const second = broadcast.broadcast();
    await Promise.all([first, second, broadcast.settled()]);
    assert.deepEqual(
      sent.map((one) => one.setting.revision),
      ['8', '8'],
    );
  });
});

describe('NodeStatePoll', () => {
  function pollWith(answers: (Record<string, number> | Error)[]) {
    let leader = true;
    let asked = 0;
    const poll = new NodeStatePoll({
      gateway: {
        countNodesByState: () => {
          asked += 1;
          const answer = answers.shift() ?? {};
          return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer);
        },
      },
      isLeader: () => leader,
      logger,
      intervalMs: 3_600_000,
    });
    return {
      poll,
      asked: () => asked,
      setLeader: (value: boolean) => {
        leader = value;
      },
    };
  }
  const settle = () => new Promise((resolve) => setImmediate(resolve));

  it('counts at once on start, reports only while leading, and forgets on stop', async () => {
    const { poll, asked, setLeader } = pollWith([{ Ready: 2 }]);
    assert.equal(poll.current(), undefined);
    poll.start();
    await settle();
    assert.equal(asked(), 1);
    assert.deepEqual(poll.current(), { Ready: 2 });
    setLeader(false);
    assert.equal(poll.current(), undefined);
    setLeader(true);
    await poll.stop();
    assert.equal(poll.current(), undefined);
  });

  it('keeps the last count when a poll fails; a gateway that cannot count reports none', async () => {
    const { poll } = pollWith([{ Ready: 1 }, new Error('down')]);
    poll.start();
    await settle();
    poll.start();
    await settle();
    assert.deepEqual(poll.current(), { Ready: 1 });
    await poll.stop();
    const none = new NodeStatePoll({ gateway: {}, isLeader: () => true, logger, intervalMs: 3_600_000 });
    none.start();
    await settle();
    assert.equal(none.current(), undefined);
    await none.stop();
  });

  /** A poll whose counts answer only when the test says; stopped after the test, its counts answered. */
  function heldPoll(t: TestContext) {
    const pending: ((counts: Record<string, number>) => void)[] = [];
    const poll = new NodeStatePoll({
      gateway: {
        countNodesByState: () =>
          new Promise((resolve) => {
            pending.push(resolve);
          }),
      },
      isLeader: () => true,
      logger,
      intervalMs: 3_600_000,
    });
    t.after(async () => {
      const stopping = Promise.resolve(poll.stop());
      for (const answer of pending) answer({});
      await stopping;
    });
    return { poll, pending };
  }

  it('stop waits for the count under way, and that count reports nothing', async (t) => {
    // A throttled count the client retries must end before the watcher closes the client's connection.
    const { poll, pending } = heldPoll(t);
    let stopped = false;
    poll.start();
    await settle();
    assert.equal(pending.length, 1);
    const stopping = Promise.resolve(poll.stop()).then(() => {
      stopped = true;
    });
    await settle();
    assert.equal(stopped, false, 'stop() resolved while the count was still under way');
    pending[0]?.({ Ready: 3 });
    await stopping;
    assert.equal(poll.current(), undefined);
  });

  it("polls one at a time: a new term counts after the last term's count, and only its own count reports", async (t) => {
    const { poll, pending } = heldPoll(t);
    poll.start();
    await settle();
    poll.start();
    await settle();
    assert.equal(pending.length, 1, 'the second term waits for the first count');
    pending[0]?.({ Ready: 1 });
    await settle();
    assert.equal(pending.length, 2);
    assert.equal(poll.current(), undefined, "the first term's count is not reported in the second");
    pending[1]?.({ Ready: 2 });
    await settle();
    assert.deepEqual(poll.current(), { Ready: 2 });
  });
});

describe('countNodesByState', () => {
  /** Counts from a fixed table, recording which states were asked. */
  function counter(byState: Partial<Record<string, number>>, total: number) {
    const asked: (string | undefined)[] = [];
    return {
      asked,
      count: (state?: string) => {
        asked.push(state);
        return Promise.resolve(state === undefined ? total : (byState[state] ?? 0));
      },
    };
  }

  it('stops counting once the states counted account for the total', async () => {
    const { asked, count } = counter({ Ready: 40 }, 40);
    const counts = await countNodesByState(count);
    assert.deepEqual(asked, [undefined, 'Ready']);
    assert.equal(counts['Ready'], 40);
    assert.equal(counts['Unknown'], 0);
    assert.deepEqual(Object.keys(counts), [...IPAM_STATES, 'Unknown']);
    assert.ok(IPAM_STATES.every((state) => state === 'Ready' || counts[state] === 0));
  });

  it('counts every state when some workflows have none yet, the rest as Unknown', async () => {
    const { asked, count } = counter({ Ready: 5, Error: 2, Starting: 1 }, 10);
    const counts = await countNodesByState(count);
    assert.equal(asked.length, 1 + IPAM_STATES.length);
    assert.deepEqual(
      { Ready: counts['Ready'], Error: counts['Error'], Starting: counts['Starting'], Unknown: counts['Unknown'] },
      { Ready: 5, Error: 2, Starting: 1, Unknown: 2 },
    );
  });

  it('asks only the total when there is no node workflow', async () => {
    const { asked, count } = counter({}, 0);
    const counts = await countNodesByState(count);
    assert.deepEqual(asked, [undefined]);
    assert.ok(Object.values(counts).every((value) => value === 0));
  });
});
