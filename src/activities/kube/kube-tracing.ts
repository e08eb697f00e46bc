import type { CallAttributes, CallTracer } from '../call-tracer.js';
import { statusOf } from './kube-failures.js';
import { asRecord } from './node-snapshot.js';

/** What a span of a client-node call names: the method, and the resource and object its first argument gives. */
function kubeCallAttributes(method: string, params: unknown): CallAttributes {
  const { plural, name, namespace } = asRecord(params);
  return {
    'k8s.method': method,
    ...(typeof plural === 'string' ? { 'k8s.resource': plural } : {}),
    ...(typeof name === 'string' ? { 'k8s.object.name': name } : {}),
    ...(typeof namespace === 'string' ? { 'k8s.namespace.name': namespace } : {}),
  };
}

/**
 * The client-node API object with each method call in a span (`Kubernetes <method>`), so every request is traced
 * wherever it is made, without touching the call sites.
 */
export function tracedApi<T extends object>(api: T, tracer: CallTracer | undefined): T {
  if (tracer === undefined) return api;
  return new Proxy(api, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function' || typeof property !== 'string') return value;
      const method = value as (...args: unknown[]) => Promise<unknown>;
      return (...args: unknown[]) =>
        tracer(
          { name: `Kubernetes ${property}`, attributes: kubeCallAttributes(property, args[0]) },
          async (annotate) => {
            try {
              return await method.apply(target, args);
            } catch (error) {
              const code = statusOf(error);
              if (code !== undefined) annotate({ 'http.response.status_code': code });
              throw error;
            }
          },
        );
    },
  });
}
