/** The parts runWatcher is built from that hold their own state: the degradation broadcast and the state poll. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { DegradationSetting } from '../../../src/ipam/degradation.js';
import { createLogger } from '../../../src/logger.js';
import { DegradationBroadcast } from '../../../src/watcher/degradation-broadcast.js';
import type { DegradationCounters } from '../../../src/watcher/degradation-watch.js';
import { NodeStatePoll } from '../../../src/watcher/node-state-poll.js';
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
    poll.stop();
    assert.equal(poll.current(), undefined);
  });

  it('keeps the last count when a poll fails; a gateway that cannot count reports none', async () => {
    const { poll } = pollWith([{ Ready: 1 }, new Error('down')]);
    poll.start();
    await settle();
    poll.start();
    await settle();
    assert.deepEqual(poll.current(), { Ready: 1 });
    poll.stop();
    const none = new NodeStatePoll({ gateway: {}, isLeader: () => true, logger, intervalMs: 3_600_000 });
    none.start();
    await settle();
    assert.equal(none.current(), undefined);
    none.stop();
  });
});
