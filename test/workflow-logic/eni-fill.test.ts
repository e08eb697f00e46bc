/**
 * One create per ENI that is needed (issue 29, point 3), on the real workflow code with stub activities: an ENI with
 * room is taken to its quota in one pass by several assigns of at most ten, one after the other, and a new ENI gets
 * what its create could not carry by assigns once it is attached, in the same pass; neither opens another ENI.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import type { NetworkInterfaces } from '../../src/ipam/index.js';
import { openLogicEnv, runNode } from './support/harness.js';
import type { LogicEnv } from './support/harness.js';
import { reconcileSignal } from '../../src/workflows/messages.js';
import { StubNode, stubNodeSpec, stubPod } from './support/stub-node.js';

let env: LogicEnv;
before(async () => {
  env = await openLogicEnv();
});
after(async () => {
  await env.close();
});

const podNames = (count: number): string[] => Array.from({ length: count }, (_, i) => `p${String(i).padStart(2, '0')}`);

function boundCount(enis: NetworkInterfaces): number {
  return Object.values(enis)
    .flatMap((eni) => Object.values(eni.ipv4 ?? {}))
    .filter((entry) => entry.podID !== undefined && entry.podID !== '').length;
}

describe('one create per ENI that is needed', () => {
  it('takes an ENI with room to the 25 addresses wanted in one pass: assigns of 10, 10 and 9, no create', async () => {
    const pods = podNames(25);
    const node = new StubNode({
      nodeName: 'fill-existing',
      spec: stubNodeSpec({ adapters: 4, ipv4PerAdapter: 30 }),
      pods: ['x', ...pods],
      enis: [{ eniId: 'eni-a', pods: ['x'] }],
    });
    await runNode(env, node, {}, async () => {
      await node.waitForPasses(1);
    });
    const assigns = node.callsOf('assignIpv4').map((call) => [call.input.eniId, call.input.count]);
    assert.deepEqual(assigns, [
      ['eni-a', 10],
      ['eni-a', 10],
      // 5 for the pods and 4 idle (up to the quota of 30; maxPoolSize is 10): the third call carries them free.
      ['eni-a', 9],
    ]);
    // One after the other: each call starts once the one before it has ended.
    const [first, second, third] = node.callsOf('assignIpv4');
    assert.ok(first?.doneSeq !== undefined && second !== undefined && first.doneSeq < second.seq);
    assert.ok(second.doneSeq !== undefined && third !== undefined && second.doneSeq < third.seq);
    assert.equal(node.callsOf('createEni').length, 0, 'no ENI opened while eni-a has room');
    assert.equal(boundCount(node.crEnis()), 26, 'every pod bound after the first pass');
  });

  it('fills a new ENI past what its create carries once it is attached, in the same pass', async () => {
    // 55 addresses wanted on 60-address ENIs: ECS takes at most 49 secondary addresses in a create. The node's first
    // ENI for waiting pods is filled to its quota: 50 at creation, 10 once attached.
    const pods = podNames(55);
    const node = new StubNode({
      nodeName: 'fill-new',
      spec: stubNodeSpec({ adapters: 4, ipv4PerAdapter: 60 }),
      pods,
    });
    await runNode(env, node, {}, async () => {
      await node.waitForPasses(1);
    });
    const creates = node.callsOf('createEni');
    assert.deepEqual(
      creates.map((call) => call.input.ipv4Count),
      [50],
      'one create, with all it may carry',
    );
    const steps = node.calls
      .filter((call) => (call.input as { eniId?: string }).eniId === 'eni-new-1')
      .map((call) => `${call.name}${call.name === 'assignIpv4' ? `(${(call.input as { count: number }).count})` : ''}`);
    assert.deepEqual(steps, ['attachEni', 'waitEniStatus', 'assignIpv4(10)']);
    assert.equal(boundCount(node.crEnis()), 55, 'every pod bound after the first pass');
    assert.deepEqual(Object.keys(node.crEnis()), ['eni-new-1']);
  });

  it("a cold node's first ENI carries its quota, so pods arriving while it attaches need no assign", async () => {
    const node = new StubNode({
      nodeName: 'fill-first',
      spec: stubNodeSpec({ adapters: 4, ipv4PerAdapter: 15 }),
      pods: podNames(5),
    });
    await runNode(env, node, {}, async (workflow) => {
      await node.waitForPasses(1);
      assert.deepEqual(
        node.callsOf('createEni').map((call) => call.input.ipv4Count),
        [15],
        'the first ENI for 5 waiting pods: its quota',
      );
      node.pods = podNames(15).map(stubPod);
      await workflow.signal(reconcileSignal, { reason: 'test' });
      await node.waitForPasses(2);
    });
    assert.equal(node.callsOf('assignIpv4').length, 0, 'the 10 pods that came next found their addresses');
    assert.equal(node.callsOf('createEni').length, 1);
    assert.equal(boundCount(node.crEnis()), 15);
  });
});
