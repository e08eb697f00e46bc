import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { ConfigError } from '../../../src/config.js';
import { Coalescer } from '../../../src/watcher/coalescer.js';
import {
  coreNodeChange,
  coreNodeView,
  nodeCrChange,
  nodeCrView,
  podChange,
  podView,
  stableJson,
} from '../../../src/watcher/relevant-changes.js';
import { loadWatcherConfig } from '../../../src/watcher/watcher-config.js';
import { DEFAULT_JANITOR_SETTINGS } from '../../../src/shared/janitor-settings.js';
import { DEFAULT_NODE_SETTINGS } from '../../../src/workflows/messages.js';

describe('Coalescer', () => {
  it('merges a burst on one node into one signal with pod counts, once the node is quiet for the window', () => {
    const coalescer = new Coalescer({ windowMs: 200, maxDelayMs: 2_000 });
    for (let i = 0; i < 100; i += 1) coalescer.add({ nodeName: 'a', reason: 'pod-added', pod: 'added' }, 1_000 + i);
    coalescer.add({ nodeName: 'a', reason: 'pod-deleted', pod: 'deleted' }, 1_100);
    assert.deepEqual(coalescer.takeDue(1_299), []);
    assert.equal(coalescer.nextDueMs(), 1_300);
    assert.deepEqual(coalescer.takeDue(1_300), [
      {
        nodeName: 'a',
        reason: { reason: 'pod-added,pod-deleted', podChanges: { added: 100, updated: 0, deleted: 1 } },
      },
    ]);
    assert.equal(coalescer.nextDueMs(), undefined);
  });

  it('paces a node whose changes keep coming: each next signal waits twice as long, up to the cap', () => {
    const coalescer = new Coalescer({ windowMs: 200, maxDelayMs: 2_000, pacing: { baseMs: 1_000, maxMs: 4_000 } });
    const sent: number[] = [];
    // One pod every 400 ms for 20 s on node a; the watcher looks every 50 ms.
    for (let nowMs = 0; nowMs <= 20_000; nowMs += 50) {
      if (nowMs % 400 === 0) coalescer.add({ nodeName: 'a', reason: 'pod-added', pod: 'added' }, nowMs);
      for (const signal of coalescer.takeDue(nowMs)) {
        sent.push(nowMs);
        coalescer.settle({ signal, delivered: true, nowMs });
      }
    }
    // Unpaced, the 200 ms window would signal every pod (51 signals); paced: 200 ms, then gaps of 2 s and 4 s.
    assert.deepEqual(sent.slice(0, 4), [200, 2_200, 6_200, 10_200]);
    assert.ok(sent.length <= 7, `${sent.length} signals`);
  });

  it('signals a change after a quiet spell at the window, and another node is never held back', () => {
    const coalescer = new Coalescer({ windowMs: 200, maxDelayMs: 2_000, pacing: { baseMs: 1_000, maxMs: 4_000 } });
    coalescer.add({ nodeName: 'a', reason: 'pod-added', pod: 'added' }, 0);
    assert.equal(coalescer.takeDue(200).length, 1);
    coalescer.settle({ signal: { nodeName: 'a', reason: { reason: 'pod-added' } }, delivered: true, nowMs: 200 });
    // Busy: a change 300 ms after the signal waits for the 2 s gap.
    coalescer.add({ nodeName: 'a', reason: 'pod-added', pod: 'added' }, 500);
    coalescer.add({ nodeName: 'b', reason: 'pod-added', pod: 'added' }, 500);
    assert.deepEqual(
      coalescer.takeDue(700).map((signal) => signal.nodeName),
      ['b'],
    );
    assert.equal(coalescer.nextDueMs(), 2_200);
    assert.equal(coalescer.takeDue(2_200).length, 1);
    coalescer.settle({ signal: { nodeName: 'a', reason: { reason: 'pod-added' } }, delivered: true, nowMs: 2_200 });
    // Quiet for the cap: the next change goes at the window again.
    coalescer.add({ nodeName: 'a', reason: 'pod-added', pod: 'added' }, 6_300);
    assert.equal(coalescer.nextDueMs(), 6_500);
  });

  it('carries the newest resourceVersion seen per informer, also through a failed signal', () => {
    const coalescer = new Coalescer({ windowMs: 0, maxDelayMs: 0 });
    coalescer.add({ nodeName: 'a', reason: 'pod-added', pod: 'added', seen: { pods: '120' } }, 0);
    coalescer.add({ nodeName: 'a', reason: 'pod-added', pod: 'added', seen: { pods: '99' } }, 0);
    coalescer.add({ nodeName: 'a', reason: 'node-cr-changed', seen: { 'node-crs': '1000' } }, 0);
    const [signal] = coalescer.takeDue(0);
    assert.deepEqual(signal?.reason.seen, { 'node-crs': '1000', pods: '120' });
    assert.ok(signal !== undefined);
    coalescer.settle({ signal, delivered: false, nowMs: 0 });
    coalescer.add({ nodeName: 'a', reason: 'pod-deleted', pod: 'deleted', seen: { pods: '130' } }, 0);
    assert.deepEqual(coalescer.takeDue(0)[0]?.reason.seen, { 'node-crs': '1000', pods: '130' });
  });

  it('signals steady churn at least every maxDelayMs', () => {
    const coalescer = new Coalescer({ windowMs: 200, maxDelayMs: 1_000 });
    const sent: number[] = [];
    for (let now = 0; now <= 5_000; now += 50) {
      coalescer.add({ nodeName: 'a', reason: 'pod-updated', pod: 'updated' }, now);
      for (const signal of coalescer.takeDue(now)) {
        sent.push(now);
        coalescer.settle({ signal, delivered: true, nowMs: now });
      }
    }
    assert.deepEqual(sent, [1_000, 2_050, 3_100, 4_150]);
  });

  it('keeps nodes independent and leaves out podChanges when no pod changed', () => {
    const coalescer = new Coalescer({ windowMs: 200, maxDelayMs: 2_000 });
    coalescer.add({ nodeName: 'a', reason: 'node-cr-changed' }, 0);
    coalescer.add({ nodeName: 'b', reason: 'pod-added', pod: 'added' }, 150);
    assert.deepEqual(coalescer.takeDue(200), [{ nodeName: 'a', reason: { reason: 'node-cr-changed' } }]);
    assert.deepEqual(coalescer.takeDue(350), [
      { nodeName: 'b', reason: { reason: 'pod-added', podChanges: { added: 1, updated: 0, deleted: 0 } } },
    ]);
  });

  it('holds a node while its signal is in flight, then sends what arrived meanwhile', () => {
    const coalescer = new Coalescer({ windowMs: 100, maxDelayMs: 1_000 });
    coalescer.add({ nodeName: 'a', reason: 'pod-added', pod: 'added' }, 0);
    const [first] = coalescer.takeDue(100);
    assert.ok(first !== undefined);
    coalescer.add({ nodeName: 'a', reason: 'pod-deleted', pod: 'deleted' }, 150);
    assert.deepEqual(coalescer.takeDue(500), [], 'in flight');
    assert.equal(coalescer.nextDueMs(), undefined);
    coalescer.settle({ signal: first, delivered: true, nowMs: 600 });
    assert.deepEqual(coalescer.takeDue(600), [
      { nodeName: 'a', reason: { reason: 'pod-deleted', podChanges: { added: 0, updated: 0, deleted: 1 } } },
    ]);
  });

  it('puts a failed signal back, merged with newer changes, due no earlier than the retry time', () => {
    const coalescer = new Coalescer({ windowMs: 100, maxDelayMs: 1_000 });
    coalescer.add({ nodeName: 'a', reason: 'pod-added', pod: 'added' }, 0);
    const [first] = coalescer.takeDue(100);
    assert.ok(first !== undefined);
    coalescer.add({ nodeName: 'a', reason: 'core-node-changed' }, 120);
    coalescer.settle({ signal: first, delivered: false, nowMs: 130, retryAtMs: 1_130 });
    assert.deepEqual(coalescer.takeDue(1_129), []);
    assert.deepEqual(coalescer.takeDue(1_130), [
      {
        nodeName: 'a',
        reason: { reason: 'core-node-changed,pod-added', podChanges: { added: 1, updated: 0, deleted: 0 } },
      },
    ]);
  });

  it('drops pending changes on clear (leadership lost)', () => {
    const coalescer = new Coalescer({ windowMs: 100, maxDelayMs: 1_000 });
    coalescer.add({ nodeName: 'a', reason: 'pod-added', pod: 'added' }, 0);
    coalescer.clear();
    assert.deepEqual(coalescer.takeDue(10_000), []);
  });
});

describe('relevant changes', () => {
  const pod = (input: { nodeName?: string; phase?: string; ip?: string; labels?: Record<string, string> }) =>
    podView({
      metadata: { name: 'p', namespace: 'n', labels: input.labels ?? {} },
      spec: { containers: [], ...(input.nodeName === undefined ? {} : { nodeName: input.nodeName }) },
      status: {
        ...(input.phase === undefined ? {} : { phase: input.phase }),
        ...(input.ip === undefined ? {} : { podIP: input.ip, podIPs: [{ ip: input.ip }] }),
      },
    });

  it('a pod bound to a node, its phase or IP changing, and its deletion signal that node', () => {
    assert.deepEqual(podChange(undefined, pod({ nodeName: 'a' })), {
      nodeName: 'a',
      reason: 'pod-added',
      pod: 'added',
    });
    assert.deepEqual(podChange(pod({}), pod({ nodeName: 'a' })), { nodeName: 'a', reason: 'pod-added', pod: 'added' });
    assert.deepEqual(podChange(pod({ nodeName: 'a' }), pod({ nodeName: 'a', phase: 'Running' })), {
      nodeName: 'a',
      reason: 'pod-updated',
      pod: 'updated',
    });
    assert.deepEqual(
      podChange(pod({ nodeName: 'a', phase: 'Running' }), pod({ nodeName: 'a', phase: 'Running', ip: '10.0.0.1' }))
        ?.reason,
      'pod-updated',
    );
    assert.deepEqual(podChange(pod({ nodeName: 'a' }), undefined), {
      nodeName: 'a',
      reason: 'pod-deleted',
      pod: 'deleted',
    });
  });

  it('label changes and unbound pods do not signal', () => {
    assert.equal(
      podChange(pod({ nodeName: 'a', labels: { x: '1' } }), pod({ nodeName: 'a', labels: { x: '2' } })),
      undefined,
    );
    assert.equal(podChange(undefined, pod({})), undefined);
    assert.equal(podChange(pod({}), undefined), undefined);
  });

  it('Node CR: spec changes, deletion start and deletion signal; status writes do not', () => {
    const cr = (spec: unknown, extra: Record<string, unknown> = {}) =>
      nodeCrView({
        metadata: { name: 'a', ...extra },
        spec,
        status: { lastModifiedTime: String(Math.random()) },
      } as never);
    assert.equal(nodeCrChange(undefined, cr({}))?.reason, 'node-cr-added');
    assert.equal(nodeCrChange(cr({ x: { b: 1, a: 2 } }), cr({ x: { a: 2, b: 1 } })), undefined, 'key order');
    assert.equal(nodeCrChange(cr({ x: 1 }), cr({ x: 2 }))?.reason, 'node-cr-changed');
    assert.equal(
      nodeCrChange(cr({}), cr({}, { deletionTimestamp: '2026-01-01T00:00:00Z' }))?.reason,
      'node-cr-changed',
    );
    assert.equal(nodeCrChange(cr({}), undefined)?.reason, 'node-cr-deleted');
  });

  it('core Node: Ready and label changes signal; other conditions do not', () => {
    const node = (ready: string, labels: Record<string, string>, pressure = 'False') =>
      coreNodeView({
        metadata: { name: 'a', labels },
        status: {
          conditions: [
            { type: 'Ready', status: ready },
            { type: 'MemoryPressure', status: pressure },
          ],
        },
      });
    assert.equal(coreNodeChange(undefined, node('True', {}))?.reason, 'core-node-added');
    assert.equal(coreNodeChange(node('True', {}), node('False', {}))?.reason, 'core-node-changed');
    assert.equal(coreNodeChange(node('True', {}), node('True', { a: 'b' }))?.reason, 'core-node-changed');
    assert.equal(coreNodeChange(node('True', {}), node('True', {}, 'True')), undefined);
    assert.equal(coreNodeChange(node('True', {}), undefined)?.reason, 'core-node-deleted');
  });

  it('stableJson sorts keys at every depth', () => {
    assert.equal(stableJson({ b: [{ d: 1, c: 2 }], a: null }), '{"a":null,"b":[{"c":2,"d":1}]}');
  });
});

describe('loadWatcherConfig', () => {
  const CLUSTER = { ENIFLOW_CLUSTER_ID: 'c-test' };

  it('has the documented defaults', () => {
    const config = loadWatcherConfig({ ...CLUSTER, POD_NAME: 'watcher-0' });
    assert.equal(config.lease.namespace, 'kube-system');
    assert.equal(config.lease.name, 'eniflow-watcher');
    assert.equal(config.lease.identity, 'watcher-0');
    assert.equal(config.lease.durationMs, 15_000);
    assert.equal(config.lease.renewDeadlineMs, 10_000);
    assert.equal(config.lease.retryPeriodMs, 2_000);
    assert.equal(config.coalesceWindowMs, 200);
    assert.equal(config.coalesceMaxDelayMs, 2_000);
    assert.equal(config.temporal.taskQueue, 'eniflow');
  });

  it('checks relations only between values that parsed', () => {
    assert.throws(
      () => loadWatcherConfig({ ...CLUSTER, LEASE_DURATION_SECONDS: '5', RENEW_DEADLINE_SECONDS: 'x' }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.deepEqual(error.problems, ['RENEW_DEADLINE_SECONDS must be a positive number, got "x"']);
        return true;
      },
    );
    assert.throws(() => loadWatcherConfig({ ...CLUSTER, COALESCE_WINDOW_MS: '500', COALESCE_MAX_DELAY_MS: '100' }), {
      message: /COALESCE_MAX_DELAY_MS \(100\) must not be shorter than COALESCE_WINDOW_MS \(500\)/,
    });
  });

  it('NODE_WORKFLOW_SETTINGS lays settings over the node-workflow defaults, and rejects unknown or bad ones', () => {
    assert.deepEqual(loadWatcherConfig(CLUSTER).nodeSettings, { ...DEFAULT_NODE_SETTINGS, clusterId: 'c-test' });
    assert.deepEqual(loadWatcherConfig({ ...CLUSTER, NODE_WORKFLOW_SETTINGS: '{"gcPeriodMs": 10000}' }).nodeSettings, {
      ...DEFAULT_NODE_SETTINGS,
      gcPeriodMs: 10_000,
      clusterId: 'c-test',
    });
    assert.throws(
      () => loadWatcherConfig({ ...CLUSTER, NODE_WORKFLOW_SETTINGS: '{"gcPeriod": 1, "idleWakeMs": -5}' }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.deepEqual(error.problems, [
          'NODE_WORKFLOW_SETTINGS.gcPeriod is not a node-workflow setting',
          'NODE_WORKFLOW_SETTINGS.idleWakeMs must be a positive integer, got -5',
        ]);
        return true;
      },
    );
    assert.throws(() => loadWatcherConfig({ ...CLUSTER, NODE_WORKFLOW_SETTINGS: '[1]' }), {
      message: /must be a JSON object/,
    });
  });

  it('requires the cluster id and records it, the VPC and the janitor dry run in the settings', () => {
    assert.throws(() => loadWatcherConfig({}), { message: /ENIFLOW_CLUSTER_ID is required/ });
    assert.throws(() => loadWatcherConfig({ ENIFLOW_CLUSTER_ID: 'a b' }), { message: /ENIFLOW_CLUSTER_ID must be/ });
    assert.throws(() => loadWatcherConfig({ ...CLUSTER, ENIFLOW_VPC_ID: 'v1' }), { message: /ENIFLOW_VPC_ID must be/ });
    assert.throws(() => loadWatcherConfig({ ...CLUSTER, JANITOR_DRY_RUN: 'yes' }), { message: /JANITOR_DRY_RUN/ });
    assert.throws(() => loadWatcherConfig({ ...CLUSTER, NODE_WORKFLOW_SETTINGS: '{"clusterId": 1}' }), {
      message: /clusterId is not a node-workflow setting/,
    });
    const config = loadWatcherConfig({ ...CLUSTER, ENIFLOW_VPC_ID: 'vpc-1', JANITOR_DRY_RUN: 'true' });
    assert.equal(config.nodeSettings.clusterId, 'c-test');
    assert.deepEqual(config.janitorSettings, {
      ...DEFAULT_JANITOR_SETTINGS,
      clusterId: 'c-test',
      vpcId: 'vpc-1',
      dryRun: true,
    });
    assert.equal(loadWatcherConfig(CLUSTER).janitorSettings.dryRun, false);
    assert.equal('vpcId' in loadWatcherConfig(CLUSTER).janitorSettings, false);
  });

  it('records the janitor interval from JANITOR_INTERVAL_SECONDS, 30 min by default', () => {
    assert.equal(loadWatcherConfig(CLUSTER).janitorSettings.intervalMs, 1_800_000);
    assert.equal(loadWatcherConfig({ ...CLUSTER, JANITOR_INTERVAL_SECONDS: '30' }).janitorSettings.intervalMs, 30_000);
    assert.throws(() => loadWatcherConfig({ ...CLUSTER, JANITOR_INTERVAL_SECONDS: '0' }), {
      message: /JANITOR_INTERVAL_SECONDS/,
    });
  });

  it('POD_IDENTITY wins over POD_NAME', () => {
    assert.equal(loadWatcherConfig({ ...CLUSTER, POD_IDENTITY: 'me', POD_NAME: 'pod' }).lease.identity, 'me');
  });

  it('reports every problem at once', () => {
    assert.throws(
      () =>
        loadWatcherConfig({
          ...CLUSTER,
          LEASE_DURATION_SECONDS: '5',
          RENEW_DEADLINE_SECONDS: '10',
          RETRY_PERIOD_SECONDS: 'soon',
          COALESCE_WINDOW_MS: '-1',
          COALESCE_MAX_DELAY_MS: '100',
          LEASE_NAME: 'Not_A_Name',
        }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.deepEqual(error.problems, [
          'RETRY_PERIOD_SECONDS must be a positive number, got "soon"',
          'RENEW_DEADLINE_SECONDS (10) must be shorter than LEASE_DURATION_SECONDS (5)',
          'COALESCE_WINDOW_MS must be a positive integer, got "-1"',
          'LEASE_NAME must be a DNS name (lower case), got "Not_A_Name"',
        ]);
        return true;
      },
    );
  });
});
