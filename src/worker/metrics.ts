import { metricMeter } from '@temporalio/activity';

import type { EcsCallObserver } from '../activities/ecs/alibaba-ecs-api.js';

/**
 * Records every ECS/VPC OpenAPI call as Prometheus metrics through the activity's Temporal metric meter, so they
 * are served on the worker's metrics endpoint (`METRICS_ADDRESS`) next to the SDK's own:
 * `eniflow_ecs_calls_total{operation,code}` and `eniflow_ecs_call_duration_ms{operation,code}` (Terway's
 * `aliyun_openapi_latency`). Calls made outside an activity (none in the worker) are not recorded.
 */
export function ecsCallMetrics(): EcsCallObserver {
  return ({ operation, durationMs, code }) => {
    let meter: typeof metricMeter;
    try {
      meter = metricMeter;
      const tags = { operation, code };
      meter
        .createCounter('eniflow_ecs_calls', 'calls', 'ECS/VPC OpenAPI calls by operation and result code')
        .add(1, tags);
      metricMeter
        .createHistogram('eniflow_ecs_call_duration', 'float', 'ms', 'ECS/VPC OpenAPI call latency')
        .record(durationMs, tags);
    } catch {
      // Not in an activity context: nothing to record on.
    }
  };
}
