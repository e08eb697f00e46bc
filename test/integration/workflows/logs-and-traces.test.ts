/**
 * What the worker tells an operator, on the real servers: its JSON log lines (the runtime is installed exactly as
 * `npm run worker` installs it, into a logger this file reads) and its spans, exported over OTLP/HTTP to a small
 * collector in this file.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';

import { pollUntil } from '../../../scripts/lib/poll-until.js';
import { createLogger } from '../../../src/logger.js';
import { installTemporalRuntime } from '../../../src/worker/run-worker.js';
import { startTracing } from '../../../src/worker/tracing.js';
import type { WorkerTracing } from '../../../src/worker/tracing.js';
import { nodeWorkflowId } from '../../../src/shared/workflow-ids.js';
import { allBound, demoNodeSpec, openScenarioEnv, withScenario } from '../../support/node-scenario.js';
import type { ScenarioEnv } from '../../support/node-scenario.js';

type LogLine = Record<string, unknown> & { level: number; msg: string };
const lines: LogLine[] = [];
const capture = new Writable({
  write(chunk: Buffer, _encoding, done) {
    for (const text of chunk.toString('utf8').split('\n')) {
      if (text.trim() !== '') lines.push(JSON.parse(text) as LogLine);
    }
    done();
  },
});
const logger = createLogger({ name: 'eniflow-worker', level: 'debug', destination: capture });
const LEVEL = { debug: 20, info: 30, warn: 40 } as const;

interface OtlpAttribute {
  key: string;
  value: { stringValue?: string; intValue?: string | number; boolValue?: boolean };
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes?: OtlpAttribute[];
}
/** Spans received by the collector, in arrival order. */
const spans: OtlpSpan[] = [];
const contentTypes = new Set<string>();
const collector = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    contentTypes.add(request.headers['content-type'] ?? '');
    if (request.method === 'POST' && request.url === '/v1/traces') {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        resourceSpans?: { scopeSpans?: { spans?: OtlpSpan[] }[] }[];
      };
      for (const resource of body.resourceSpans ?? []) {
        for (const scope of resource.scopeSpans ?? []) spans.push(...(scope.spans ?? []));
      }
    }
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end('{}');
  });
});
await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
const collectorUrl = `http://127.0.0.1:${String((collector.address() as AddressInfo).port)}`;

// Before any connection: the runtime can be installed once per process.
installTemporalRuntime({ logger });
const started = await startTracing({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: collectorUrl }, logger });
assert.ok(started, 'an OTLP endpoint turns tracing on');
const tracing: WorkerTracing = started;

function attribute(span: OtlpSpan, key: string): string | undefined {
  const value = span.attributes?.find((entry) => entry.key === key)?.value;
  if (value === undefined) return undefined;
  return String(value.stringValue ?? value.intValue ?? value.boolValue);
}

let env: ScenarioEnv;
before(async () => {
  env = await openScenarioEnv();
});
after(async () => {
  await env.close();
  await tracing.shutdown();
  collector.close();
});

describe('worker logs', () => {
  it('a failed pass logs one warning naming the node; retried attempts log at debug', async () => {
    await withScenario(
      env,
      { name: 'log-failed-pass', spec: demoNodeSpec({ instance: 'large-h' }), logger },
      async (scenario) => {
        const ofNode = (): LogLine[] => lines.filter((line) => line['nodeName'] === scenario.nodeName);
        await scenario.emulator.emulator.admin.addFaults(['CreateNetworkInterface always error InternalError']);
        await scenario.createPods(['a']);
        await scenario.signal();
        // createEni makes 2 attempts, 10 s apart: the first is retried, the second ends the activity and the pass.
        await pollUntil(
          () => Promise.resolve(ofNode().some((line) => line.msg === 'Reconcile pass failed') || undefined),
          {
            description: 'a failed pass logged',
            timeoutMs: 90_000,
          },
        );
        await scenario.emulator.emulator.admin.clearFaults();
        await scenario.waitForCr('pod bound once the cloud recovers', allBound(scenario, ['a']), 90_000);
        await scenario.worker.stop();

        const warnings = ofNode().filter((line) => line.level >= LEVEL.warn);
        assert.ok(warnings.length >= 1);
        for (const warning of warnings) {
          assert.equal(warning.msg, 'Reconcile pass failed', 'the only warnings naming the node are failed passes');
          assert.equal(warning['workflowId'], nodeWorkflowId(scenario.nodeName));
          const errors = warning['errors'] as { type: string; code?: string }[];
          assert.ok(
            errors.some((error) => error.type === 'EcsTransient' && error.code === 'InternalError'),
            JSON.stringify(warning),
          );
        }
        // Every pass before the cloud recovered failed, each with exactly one line.
        const passes = warnings.map((warning) => warning['pass'] as number).sort((a, b) => a - b);
        assert.deepEqual(
          passes,
          passes.map((_, index) => index + 1),
        );

        const sdkFailures = ofNode().filter(
          (line) => line.msg === 'Activity failed' && line['activityType'] === 'createEni',
        );
        const retried = sdkFailures.filter((line) => line['attempt'] === 1);
        const final = sdkFailures.filter((line) => line['attempt'] === 2);
        assert.ok(retried.length >= 1 && final.length >= 1, JSON.stringify(sdkFailures));
        for (const line of retried) assert.equal(line.level, LEVEL.debug, JSON.stringify(line));
        for (const line of final) assert.equal(line.level, LEVEL.info, JSON.stringify(line));
        assert.ok(
          final.every((line) => (line['error'] as { type?: string } | undefined)?.type === 'EcsTransient'),
          'the final failure keeps its type',
        );
        assert.ok(sdkFailures.every((line) => !('taskToken' in line)));

        const ecsLines = ofNode().filter((line) => line['errorCode'] === 'InternalError');
        assert.ok(ecsLines.length >= 2);
        for (const line of ecsLines) {
          assert.equal(line['activity'], 'createEni');
          assert.equal(line.level, line['attempt'] === 1 ? LEVEL.debug : LEVEL.info, JSON.stringify(line));
        }
      },
    );
  });
});

describe('worker traces', () => {
  it('exports a span per ECS call, with its action, code and RequestId, under its activity’s span', async () => {
    await withScenario(
      env,
      { name: 'trace-ecs', spec: demoNodeSpec({ instance: 'large-h' }), logger, tracing },
      async (scenario) => {
        await scenario.createPods(['a']);
        await scenario.signal();
        await scenario.waitForCr('pod bound', allBound(scenario, ['a']));
        await tracing.flush();
        const activitySpan = spans.find(
          (span) =>
            span.name === 'RunActivity:createEni' &&
            attribute(span, 'temporalWorkflowId') === nodeWorkflowId(scenario.nodeName),
        );
        assert.ok(activitySpan, `createEni's span arrived (${String(spans.length)} spans)`);
        const ecsSpan = spans.find(
          (span) => span.parentSpanId === activitySpan.spanId && span.name === 'ECS CreateNetworkInterface',
        );
        assert.ok(ecsSpan, 'the ECS call is a child of the activity');
        assert.equal(attribute(ecsSpan, 'ecs.action'), 'CreateNetworkInterface');
        assert.equal(attribute(ecsSpan, 'ecs.code'), 'OK');
        assert.match(attribute(ecsSpan, 'ecs.request_id') ?? '', /^[0-9A-F-]{36}$/);
        assert.equal(ecsSpan.traceId, activitySpan.traceId);

        // The status write (a local activity) may end its span after the watch saw the CR change: flush until
        // it is exported.
        const statusWrite = await pollUntil(
          async () => {
            await tracing.flush();
            return spans.find(
              (span) =>
                span.name === 'Kubernetes replaceClusterCustomObjectStatus' &&
                attribute(span, 'k8s.resource') === 'nodes' &&
                spans.some(
                  (parent) =>
                    parent.spanId === span.parentSpanId &&
                    attribute(parent, 'temporalWorkflowId') === nodeWorkflowId(scenario.nodeName),
                ),
            );
          },
          { description: 'the status write has its span', timeoutMs: 10_000, intervalMs: 100 },
        );
        assert.ok(statusWrite, 'the status write has its span');
        assert.deepEqual([...contentTypes], ['application/json']);
      },
    );
  });
});
