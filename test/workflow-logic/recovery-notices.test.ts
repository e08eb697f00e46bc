/**
 * What a node says when it recovers: after attaches that kept failing succeed again, the `Recovered` Event counts
 * what the recovering pass served, and no pod it served is told afterwards that it still waits. Real workflow code,
 * stub activities.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { EVENT_REASONS } from '../../src/ipam/index.js';
import { openLogicEnv, runNode, waitForState } from './support/harness.js';
import type { LogicEnv } from './support/harness.js';
import { ecsFailure, StubNode, stubNodeSpec } from './support/stub-node.js';

let env: LogicEnv;
before(async () => {
  env = await openLogicEnv();
});
after(async () => {
  await env.close();
});

describe('a node recovering from failing attaches', () => {
  it('counts what the recovering pass served and tells no served pod it waits', async () => {
    // Two pods on a full ENI of 2 addresses; four more need new ENIs, whose attaches fail until the fault clears.
    const pods = ['p1', 'p2', 'p3', 'p4', 'p5', 'p6'];
    const node = new StubNode({
      nodeName: 'recovering-node',
      spec: stubNodeSpec({ adapters: 4, ipv4PerAdapter: 2, pool: { minPoolSize: 0, maxPoolSize: 2 } }),
      pods,
      enis: [{ eniId: 'eni-a', pods: ['p1', 'p2'] }],
    });
    let faulty = true;
    // The first attach that went through: a pass whose attaches failed before the fault cleared may still tell its
    // waiting pods so after `faulty` flips (rightly: they wait), so what is told is judged from here on.
    let firstAttachThrough: number | undefined;
    node.script('attachEni', (_input, call) => {
      if (!faulty) firstAttachThrough ??= call.seq;
      if (faulty) {
        throw ecsFailure({
          type: 'EcsTransient',
          operation: 'AttachNetworkInterface',
          code: 'ServiceUnavailable',
          retryable: true,
        });
      }
      return undefined;
    });
    await runNode(env, node, { pendingPodEventAfterMs: 0 }, async (workflow) => {
      await waitForState(
        workflow,
        'attaches failing',
        (state) => (state.failingOperations ?? []).some((failure) => failure.operation === 'AttachNetworkInterface'),
        90_000,
      );
      faulty = false;
      const cleared = node.calls.length;
      await waitForState(
        workflow,
        'every pod served, calls healthy',
        (state) => state.pods.withIp === pods.length && (state.failingOperations ?? []).length === 0,
        90_000,
      );
      await node.waitForCalls((calls) =>
        calls.some(
          (call, index) =>
            index >= cleared &&
            call.name === 'recordEvent' &&
            (call.input as { reason?: string }).reason === EVENT_REASONS.Recovered.reason,
        ),
      );
      const after = node.calls.slice(Math.max(cleared, firstAttachThrough ?? cleared));
      const recovered = after.find(
        (call) =>
          call.name === 'recordEvent' && (call.input as { reason?: string }).reason === EVENT_REASONS.Recovered.reason,
      );
      const told = after
        .filter((call) => call.name === 'recordEvents')
        .flatMap((call) => (call.input as { events: { reason: string; involved: { name: string } }[] }).events)
        .filter((event) => event.reason === EVENT_REASONS.IPAllocationPending.reason)
        .map((event) => event.involved.name);
      assert.deepEqual(told, [], 'no pod is told it waits once the fault has cleared and it is served');
      assert.match(
        (recovered?.input as { message?: string } | undefined)?.message ?? '',
        /this pass gave 4 pods their IPs, 6 of 6 pods hold theirs/,
      );
    });
  });
});
