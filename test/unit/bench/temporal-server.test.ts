/** The Temporal server's figures of the scale benchmark (issue 31): its windows' deltas per pod and per idle node-day. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { temporalServerFigures, temporalServerTable } from '../../../bench/scale/temporal-server.js';
import type { DatabaseCounters } from '../../../bench/scale/temporal-server.js';

const SIGNALS = { workflows: 20, concurrency: 32, signals: 500, failed: 0, seconds: 10, perSecond: 50 };

function counters(scale: number, rowsByTable: Record<string, number>): DatabaseCounters {
  return {
    inserted: 100 * scale,
    updated: 10 * scale,
    deleted: scale,
    walBytes: 1024 * scale,
    databaseBytes: 8 * 1024 * 1024 + 2048 * scale,
    rowsByTable,
    cpuSeconds: scale,
  };
}

describe('the Temporal server figures of bench:scale', () => {
  it('divides the burst by the pods served and scales the idle window to one node and a day', () => {
    const figures = temporalServerFigures({
      kind: 'temporal-server on PostgreSQL',
      podsServed: 50,
      nodes: 2,
      // An hour idle: a node-day is 24 / 2 = 12 times the window's delta.
      idleMs: 3_600_000,
      periodScale: 1,
      serverCpu: { burst: { before: 1, after: 11 }, idle: { before: 11, after: 12 } },
      database: {
        burst: { before: counters(0, {}), after: counters(5, { executions: 40, history_node: 300 }) },
        idle: {
          before: counters(5, { executions: 40, history_node: 300 }),
          after: counters(6, { executions: 41, history_node: 300, task_queues: 7 }),
        },
      },
      signals: SIGNALS,
    });
    assert.deepEqual(figures.cpuSeconds, { perPod: 0.2, perIdleNodeDay: 12 });
    assert.deepEqual(figures.database?.rowsInserted, { perPod: 10, perIdleNodeDay: 1_200 });
    assert.deepEqual(figures.database?.walBytes, { perPod: 102.4, perIdleNodeDay: 12_288 });
    assert.deepEqual(figures.database?.databaseBytes, { perPod: 204.8, perIdleNodeDay: 24_576 });
    assert.deepEqual(figures.database?.sizeAtEndBytes, {
      total: 8 * 1024 * 1024 + 12_288,
      perNode: 4 * 1024 * 1024 + 6_144,
    });
    assert.deepEqual(figures.database?.rowsByTablePerPod, { history_node: 6, executions: 0.8 });
    // Only tables written in the window, most written first.
    assert.deepEqual(figures.database?.rowsByTablePerIdleNodeDay, { task_queues: 84, executions: 12 });
    const printed = temporalServerTable(figures).join('\n');
    assert.match(printed, /rows inserted +\| +10\.0 \| +1200\.0 \|/);
    assert.match(printed, /database KiB grown on disk +\| +0\.2 \| +24\.0 \|/);
    assert.match(printed, /databases on disk at the end: 8\.0 MiB, 4\.01 MiB per node/);
  });

  it('has no database figures on the dev server, whose SQLite is inside its own process', () => {
    const figures = temporalServerFigures({
      kind: 'dev server',
      podsServed: 10,
      nodes: 1,
      idleMs: 86_400_000,
      periodScale: 1,
      serverCpu: { burst: { before: 0, after: 1 }, idle: { before: 1, after: 3 } },
      database: { burst: { before: undefined, after: undefined }, idle: { before: undefined, after: undefined } },
      signals: SIGNALS,
    });
    assert.equal(figures.database, undefined);
    assert.deepEqual(figures.cpuSeconds, { perPod: 0.1, perIdleNodeDay: 2 });
    assert.match(temporalServerTable(figures).join('\n'), /signals accepted: 50\/s/);
  });
});
