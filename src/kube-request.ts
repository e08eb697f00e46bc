import { Observable } from '@kubernetes/client-node';
import type { ConfigurationOptions, ObservableMiddleware } from '@kubernetes/client-node';

/**
 * Deadline of one Kubernetes API request (not a watch) unless the caller has a better one. client-node sets none:
 * a request to an apiserver that accepted the connection and then hung (a failover) would wait forever.
 */
export const KUBE_REQUEST_TIMEOUT_MS = 30_000;

/**
 * Per-call options for client-node's API methods that abort the request (connect, headers and body) when `signal`
 * fires; combines with other per-call options such as `setHeaderOptions(...)`.
 */
export function abortOptions(signal: AbortSignal, options?: ConfigurationOptions): ConfigurationOptions {
  const middleware: ObservableMiddleware = {
    pre: (context) => {
      context.setSignal(signal);
      return new Observable(Promise.resolve(context));
    },
    post: (context) => new Observable(Promise.resolve(context)),
  };
  return {
    ...options,
    middleware: [...(options?.middleware ?? []), middleware],
    middlewareMergeStrategy: 'append',
  };
}

/** Per-call options with a deadline of `timeoutMs`, also aborted by `signal` if given (e.g. a cancellation). */
export function deadlineOptions(
  input: { timeoutMs?: number; signal?: AbortSignal },
  options?: ConfigurationOptions,
): ConfigurationOptions {
  const timeout = AbortSignal.timeout(input.timeoutMs ?? KUBE_REQUEST_TIMEOUT_MS);
  return abortOptions(input.signal === undefined ? timeout : AbortSignal.any([input.signal, timeout]), options);
}
