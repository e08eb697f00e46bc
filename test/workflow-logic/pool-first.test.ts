/**
 * Pods the warm pool serves are written before the pass's cloud calls: a pool top-up may wait seconds for the ECS
 * budget (after a burst, the AssignPrivateIpAddresses queue), and the pods need none of it. Real workflow code on the
 * Temporal dev server, stub activities.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';

import type { NetworkInterfaces } from '../../src/ipam/index.js';
import { openLogicEnv, runNode } from './support/harness.js';
import type { LogicEnv } from './support/harness.js';
import { StubNode, stubNodeSpec } from './support/stub-node.js';

let env: LogicEnv;
before(async () => {
  env = await openLogicEnv();
});
after(async () => {
  await env.close();
});

function boundPods(enis: NetworkInterfaces): string[] {
  return Object.values(enis)
    .flatMap((eni) => Object.values(eni.ipv4 ?? {}).map((entry) => entry.podID))
    .filter((pod): pod is string => pod !== undefined)
    .sort();
}

describe('pods served from the warm pool', () => {
  it('are in the CR before the pool top-up it plans is answered', async () => {
    // One ENI: p1 on its primary address, two idle addresses. Two new pods take them, which leaves the pool below
    // its minimum of 2: the pass assigns 2 more.
    const node = new StubNode({
      nodeName: 'pool-first',
      spec: stubNodeSpec({ adapters: 4, ipv4PerAdapter: 6, pool: { minPoolSize: 2, maxPoolSize: 5 } }),
      pods: ['p1', 'q1', 'q2'],
      enis: [{ eniId: 'eni-a', pods: ['p1', null, null] }],
    });
    let releaseAssign: () => void = () => undefined;
    const assignHeld = new Promise<void>((resolve) => {
      releaseAssign = resolve;
    });
    let boundWhileAssignHeld: string[] | undefined;
    node.script('assignIpv4', async () => {
      await assignHeld;
      return undefined;
    });

    await runNode(env, node, {}, async () => {
      await node.waitForCalls((calls) => calls.some((call) => call.name === 'assignIpv4'));
      // The assign is held: whatever the CR has now was written before it was answered. Without an early write none
      // comes while it is held: the wait is bounded so that the assertions below tell.
      await Promise.race([
        node.waitForCalls((calls) => calls.some((call) => call.name === 'writeNodeStatusChanges')),
        sleep(10_000),
      ]);
      boundWhileAssignHeld = boundPods(node.crEnis());
      releaseAssign();
      await node.waitForPasses(1);
    });

    assert.deepEqual(boundWhileAssignHeld, ['default/p1', 'default/q1', 'default/q2']);
    const calls = node.calls.map((call) => call.name);
    const firstWrite = calls.indexOf('writeNodeStatusChanges');
    assert.ok(firstWrite >= 0 && firstWrite < calls.indexOf('assignIpv4'), `calls: ${calls.join(', ')}`);
    assert.equal(
      node.callsOf('writeNodeStatusChanges').length,
      2,
      'the served pods, then the topped-up pool: two writes',
    );
    assert.deepEqual(boundPods(node.crEnis()), ['default/p1', 'default/q1', 'default/q2']);
    const addresses = Object.values(node.crEnis()).flatMap((eni) => Object.keys(eni.ipv4 ?? {}));
    assert.equal(addresses.length, 5, 'three bound, two idle after the top-up');
  });
});
