/** Attributes of a traced call (OpenTelemetry semantic-convention names where one exists). */
export type CallAttributes = Record<string, string | number | boolean>;

/**
 * Runs one outbound call (ECS, Kubernetes) inside a span. `run` may add attributes learnt from the answer (result
 * code, RequestId); a rejection marks the span as failed. Injected only when tracing is on, so a worker without
 * it loads no OpenTelemetry code (see src/worker/tracing.ts).
 */
export type CallTracer = <T>(
  call: { name: string; attributes: CallAttributes },
  run: (annotate: (attributes: CallAttributes) => void) => Promise<T>,
) => Promise<T>;
