/**
 * The worker's latency histograms as a scrape shows them: pod→IP from the status write's observer, and ENI attaches
 * from the workflow sink, which the worker registers not to be called on replay.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { WorkflowInfo } from '@temporalio/workflow';

import { createWorkerMetrics, ENI_ATTACH_BUCKETS, POD_IP_READY_BUCKETS } from '../../../src/worker/metrics.js';

/** The value of one exposition line, labels as prom-client writes them. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((entry) => entry.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

const info = { unsafe: { isReplaying: false } } as unknown as WorkflowInfo;

describe('latency histograms', () => {
  it('records pod→IP seconds in 0.1–300 s buckets', async () => {
    const metrics = createWorkerMetrics();
    metrics.podIpReady({ nodeName: 'n1', podId: 'ns/a', seconds: 0.4 });
    metrics.podIpReady({ nodeName: 'n1', podId: 'ns/b', seconds: 42 });
    const text = await metrics.registry.metrics();
    assert.equal(sample(text, 'eniflow_pod_ip_ready_seconds_count'), 2);
    assert.equal(sample(text, 'eniflow_pod_ip_ready_seconds_sum'), 42.4);
    assert.equal(sample(text, 'eniflow_pod_ip_ready_seconds_bucket{le="0.5"}'), 1);
    assert.equal(sample(text, 'eniflow_pod_ip_ready_seconds_bucket{le="30"}'), 1);
    assert.equal(sample(text, 'eniflow_pod_ip_ready_seconds_bucket{le="45"}'), 2);
    assert.deepEqual(
      [...POD_IP_READY_BUCKETS].sort((a, b) => a - b),
      POD_IP_READY_BUCKETS,
      'bucket bounds ascend',
    );
  });

  it('records attaches by result and ENI type, and is not called on replay', async () => {
    const metrics = createWorkerMetrics();
    const sink = metrics.sinks.eniflowMetrics.eniAttach;
    assert.notEqual(sink.callDuringReplay, true, 'a replayed attach must not be counted again');
    await sink.fn(info, { nodeName: 'n1', eniType: 'secondary', result: 'success', seconds: 4 });
    await sink.fn(info, { nodeName: 'n1', eniType: 'secondary', result: 'timeout', seconds: 240 });
    await sink.fn(info, { nodeName: 'n1', eniType: 'trunk', result: 'failed', seconds: 12 });
    const text = await metrics.registry.metrics();
    const series = (result: string, type: string, suffix = 'count') =>
      sample(text, `eniflow_eni_attach_duration_seconds_${suffix}{result="${result}",eni_type="${type}"}`);
    assert.equal(series('success', 'secondary'), 1);
    assert.equal(series('timeout', 'secondary'), 1);
    assert.equal(series('failed', 'trunk'), 1);
    assert.equal(series('success', 'trunk'), undefined);
    assert.equal(
      sample(text, 'eniflow_eni_attach_duration_seconds_bucket{le="180",result="timeout",eni_type="secondary"}'),
      0,
      'a 4-minute timeout lies above the last bucket',
    );
    assert.deepEqual([ENI_ATTACH_BUCKETS[0], ENI_ATTACH_BUCKETS.at(-1)], [1, 180]);
  });
});
