/** Which pods count as waiting for an IP, for how long, and how the per-node series are bounded (pure). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { V1Pod } from '@kubernetes/client-node';

import { ipamGauges, nodesWithWaitingPods } from '../../../src/watcher/ipam-gauges.js';
import { nodeCrView, podView } from '../../../src/watcher/relevant-changes.js';
import type { NodeCrObject } from '../../../src/watcher/relevant-changes.js';

const NOW = Date.parse('2026-12-03T10:00:00Z');
const minutesAgo = (minutes: number): Date => new Date(NOW - minutes * 60_000);

function pod(input: {
  name: string;
  node?: string;
  createdMinutesAgo?: number;
  scheduledMinutesAgo?: number;
  phase?: string;
  ip?: string;
  hostNetwork?: boolean;
  deleting?: boolean;
}): [string, ReturnType<typeof podView>] {
  const object: V1Pod = {
    metadata: {
      name: input.name,
      namespace: 'ns',
      creationTimestamp: minutesAgo(input.createdMinutesAgo ?? 1),
      ...(input.deleting === true ? { deletionTimestamp: minutesAgo(0) } : {}),
    },
    spec: {
      containers: [],
      ...(input.node === undefined ? {} : { nodeName: input.node }),
      ...(input.hostNetwork === true ? { hostNetwork: true } : {}),
    },
    status: {
      ...(input.phase === undefined ? {} : { phase: input.phase }),
      ...(input.ip === undefined ? {} : { podIP: input.ip, podIPs: [{ ip: input.ip }] }),
      ...(input.scheduledMinutesAgo === undefined
        ? {}
        : {
            conditions: [
              { type: 'PodScheduled', status: 'True', lastTransitionTime: minutesAgo(input.scheduledMinutesAgo) },
            ],
          }),
    },
  };
  return [`ns/${input.name}`, podView(object)];
}

function cr(input: {
  node: string;
  bound?: string[];
  idle?: number;
  exclusive?: boolean;
  deleting?: boolean;
}): [string, ReturnType<typeof nodeCrView>] {
  const ipv4: Record<string, { ip: string; primary: boolean; status: string; podID?: string }> = {};
  (input.bound ?? []).forEach((podId, i) => {
    ipv4[`10.0.0.${String(i + 10)}`] = {
      ip: `10.0.0.${String(i + 10)}`,
      primary: false,
      status: 'Valid',
      podID: podId,
    };
  });
  for (let i = 0; i < (input.idle ?? 0); i += 1) {
    ipv4[`10.0.1.${String(i + 10)}`] = { ip: `10.0.1.${String(i + 10)}`, primary: false, status: 'Valid' };
  }
  ipv4['10.0.2.1'] = { ip: '10.0.2.1', primary: false, status: 'Deleting' };
  const object: NodeCrObject = {
    metadata: {
      name: input.node,
      ...(input.exclusive === true ? { labels: { 'k8s.aliyun.com/exclusive-mode-eni-type': 'eniOnly' } } : {}),
      ...(input.deleting === true ? { deletionTimestamp: '2026-12-03T09:00:00Z' } : {}),
    },
    spec: {},
    status: { networkInterfaces: { 'eni-1': { ipv4 } } },
  };
  return [input.node, nodeCrView(object)];
}

describe('ipamGauges', () => {
  it('counts a pod as waiting only on a managed node, without an IP, and not bound in the CR', () => {
    const gauges = ipamGauges({
      nodeCrs: [
        cr({ node: 'a', bound: ['ns/bound'], idle: 2 }),
        cr({ node: 'x', exclusive: true }),
        cr({ node: 'd', deleting: true }),
      ],
      pods: [
        pod({ name: 'waiting', node: 'a', createdMinutesAgo: 5 }),
        pod({ name: 'bound', node: 'a' }),
        pod({ name: 'has-ip', node: 'a', ip: '10.9.9.9' }),
        pod({ name: 'host', node: 'a', hostNetwork: true }),
        pod({ name: 'done', node: 'a', phase: 'Succeeded' }),
        pod({ name: 'failed', node: 'a', phase: 'Failed' }),
        pod({ name: 'going', node: 'a', deleting: true }),
        pod({ name: 'unbound' }),
        pod({ name: 'no-cr', node: 'b' }),
        pod({ name: 'exclusive', node: 'x' }),
        pod({ name: 'cr-deleting', node: 'd' }),
      ],
      nowMs: NOW,
      topNodes: 10,
    });
    assert.deepEqual(
      { waiting: gauges.waitingPods, oldest: gauges.oldestWaitSeconds, nodes: gauges.nodesWithWaitingPods },
      { waiting: 1, oldest: 300, nodes: 1 },
    );
    assert.deepEqual(gauges.topNodes, [{ node: 'a', waitingPods: 1, oldestWaitSeconds: 300 }]);
    assert.equal(gauges.nodeCrs, 1);
    assert.deepEqual(gauges.poolIps, [
      { family: 'ipv4', state: 'idle', count: 2 },
      { family: 'ipv4', state: 'used', count: 1 },
      { family: 'ipv6', state: 'idle', count: 0 },
      { family: 'ipv6', state: 'used', count: 0 },
    ]);
  });

  it('measures the wait from scheduling when the pod has a PodScheduled condition', () => {
    const gauges = ipamGauges({
      nodeCrs: [cr({ node: 'a' })],
      pods: [pod({ name: 'p', node: 'a', createdMinutesAgo: 30, scheduledMinutesAgo: 2 })],
      nowMs: NOW,
      topNodes: 10,
    });
    assert.equal(gauges.oldestWaitSeconds, 120);
  });

  it('keeps only the top nodes by waiting pods, then by longest wait, then by name; the totals count all', () => {
    const table = [
      { topNodes: 2, expected: ['c', 'a'] },
      { topNodes: 3, expected: ['c', 'a', 'b'] },
      { topNodes: 0, expected: [] },
    ];
    for (const row of table) {
      const gauges = ipamGauges({
        nodeCrs: [cr({ node: 'a' }), cr({ node: 'b' }), cr({ node: 'c' })],
        pods: [
          pod({ name: 'a1', node: 'a', createdMinutesAgo: 9 }),
          pod({ name: 'b1', node: 'b', createdMinutesAgo: 1 }),
          pod({ name: 'c1', node: 'c' }),
          pod({ name: 'c2', node: 'c' }),
        ],
        nowMs: NOW,
        topNodes: row.topNodes,
      });
      assert.deepEqual(
        gauges.topNodes.map((node) => node.node),
        row.expected,
        `top ${String(row.topNodes)}`,
      );
      assert.equal(gauges.waitingPods, 4);
      assert.equal(gauges.nodesWithWaitingPods, 3);
      assert.equal(gauges.oldestWaitSeconds, 540);
    }
  });
});

describe('nodesWithWaitingPods', () => {
  it('names, in order, the managed nodes with a pod waiting for an IP, each once', () => {
    const nodes = nodesWithWaitingPods({
      nodeCrs: [
        cr({ node: 'b', bound: ['ns/served'] }),
        cr({ node: 'a' }),
        cr({ node: 'c' }),
        cr({ node: 'x', exclusive: true }),
        cr({ node: 'd', deleting: true }),
      ],
      pods: [
        pod({ name: 'b1', node: 'b' }),
        pod({ name: 'b2', node: 'b' }),
        pod({ name: 'served', node: 'b' }),
        pod({ name: 'a1', node: 'a' }),
        pod({ name: 'c-host', node: 'c', hostNetwork: true }),
        pod({ name: 'c-ip', node: 'c', ip: '10.9.9.9' }),
        pod({ name: 'x1', node: 'x' }),
        pod({ name: 'd1', node: 'd' }),
        pod({ name: 'no-cr', node: 'e' }),
      ],
    });
    assert.deepEqual(nodes, ['a', 'b']);
  });
});
