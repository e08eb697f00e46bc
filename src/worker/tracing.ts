import type { ActivityInterceptorsFactory } from '@temporalio/worker';

import type { CallTracer } from '../activities/call-tracer.js';
import type { Logger } from '../logger.js';

/** What the worker needs from OpenTelemetry: spans for its outbound calls and its activities, and a way to flush. */
export interface WorkerTracing {
  /** Wraps one ECS or Kubernetes call in a span (a child of the running activity's span). */
  callTracer: CallTracer;
  /** A span per activity execution (Temporal's interceptor), and trace ids on the SDK's activity log lines. */
  activityInterceptors: ActivityInterceptorsFactory;
  /** Exports the spans still buffered. */
  flush(): Promise<void>;
  /** Exports what is buffered and stops exporting. */
  shutdown(): Promise<void>;
}

/**
 * Where spans go, from the standard OTLP variables: the traces endpoint as given, or `/v1/traces` under the base
 * endpoint. Undefined when neither is set: then tracing is off.
 */
export function otlpTracesUrl(env: NodeJS.ProcessEnv): string | undefined {
  const traces = env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'];
  if (traces !== undefined && traces !== '') return traces;
  const base = env['OTEL_EXPORTER_OTLP_ENDPOINT'];
  if (base === undefined || base === '') return undefined;
  return `${base.replace(/\/+$/, '')}/v1/traces`;
}

/**
 * Starts tracing when an OTLP endpoint is configured, exporting OTLP/HTTP JSON. The OpenTelemetry packages are
 * imported here, on demand: a worker without the variables loads none of them.
 *
 * Only activities and the calls they make are traced, not workflow code: Temporal's workflow interceptor would
 * have to be bundled into every worker's workflow code, tracing on or off (docs/decisions.md).
 */
export async function startTracing(input: {
  env: NodeJS.ProcessEnv;
  logger: Logger;
}): Promise<WorkerTracing | undefined> {
  const url = otlpTracesUrl(input.env);
  if (url === undefined) return undefined;
  const [api, sdk, resources, otlp, contextHooks, temporalOtel] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/sdk-trace'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/context-async-hooks'),
    import('@temporalio/interceptors-opentelemetry/lib/worker/index.js'),
  ]);
  const serviceName = input.env['OTEL_SERVICE_NAME'] ?? 'eniflow-worker';
  const provider = new sdk.TracerProvider({
    resource: resources.resourceFromAttributes({ 'service.name': serviceName }),
    spanProcessors: [new sdk.BatchSpanProcessor({ exporter: new otlp.OTLPTraceExporter({ url }) })],
  });
  // Spans of ECS and Kubernetes calls find their activity's span through the active context.
  api.context.setGlobalContextManager(new contextHooks.AsyncLocalStorageContextManager().enable());
  api.trace.setGlobalTracerProvider(provider);
  const tracer = provider.getTracer('eniflow');
  input.logger.info({ url, serviceName }, 'Exporting traces over OTLP/HTTP');

  const callTracer: CallTracer = (call, run) =>
    tracer.startActiveSpan(call.name, { kind: api.SpanKind.CLIENT, attributes: call.attributes }, async (span) => {
      try {
        return await run((attributes) => span.setAttributes(attributes));
      } catch (error) {
        span.setStatus({
          code: api.SpanStatusCode.ERROR,
          message: error instanceof Error ? error.message : String(error),
        });
        throw error;
      } finally {
        span.end();
      }
    });
  return {
    callTracer,
    activityInterceptors: (ctx) => ({
      inbound: new temporalOtel.OpenTelemetryActivityInboundInterceptor(ctx, { tracer }),
      outbound: new temporalOtel.OpenTelemetryActivityOutboundInterceptor(ctx),
    }),
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}
