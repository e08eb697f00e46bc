import { ApiException } from '@kubernetes/client-node';
import type { KubeConfig, RequestContext } from '@kubernetes/client-node';

/** The part of an undici Dispatcher this module calls (client-node's dispatchers are undici Agents). */
interface RequestDispatcher {
  request(options: {
    origin: string;
    path: string;
    method: string;
    headers: Record<string, string>;
    body?: string;
    signal: AbortSignal;
  }): Promise<{ statusCode: number; headers: Record<string, unknown>; body: { text(): Promise<string> } }>;
}

function isRequestDispatcher(value: unknown): value is RequestDispatcher {
  return typeof value === 'object' && value !== null && typeof (value as RequestDispatcher).request === 'function';
}

export interface KubeJsonRequest {
  method: 'GET' | 'PUT';
  /** The API path (`/apis/...`), appended to the cluster's server URL as client-node does (a path prefix is kept). */
  path: string;
  body?: unknown;
  signal: AbortSignal;
}

/**
 * One JSON request to the apiserver with the kubeconfig's authentication and TLS exactly as client-node applies them
 * (its `applySecurityAuthentication`: bearer token or exec/OIDC authenticator, basic auth, impersonation, CA, client
 * certificate, and the dispatcher `withPooledConnections` keeps per TLS material), without client-node's generated
 * request path: for a custom object that path is rxjs middleware chains, an `ObjectSerializer` pass, and undici's
 * WHATWG `fetch` with its web streams, about two thirds of each request's CPU in the worker's 40-node burst (the
 * Node CR's read and status write run once or twice per pass). Answers the parsed JSON body; any status outside
 * 2xx throws client-node's `ApiException` with that code, so callers keep matching on 404 and 409.
 */
export async function kubeJsonRequest(kubeConfig: KubeConfig, request: KubeJsonRequest): Promise<unknown> {
  const cluster = kubeConfig.getCurrentCluster();
  if (cluster === null) throw new Error('No active cluster!');
  const headers: Record<string, string> = { Accept: 'application/json' };
  let dispatcher: unknown;
  const context = {
    setHeaderParam: (key: string, value: string) => {
      headers[key] = value;
    },
    setDispatcher: (value: unknown) => {
      dispatcher = value;
    },
  };
  await kubeConfig.applySecurityAuthentication(context as unknown as RequestContext);
  const body = request.body === undefined ? undefined : JSON.stringify(request.body);
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const url = new URL(cluster.server + request.path);
  let status: number;
  let text: string;
  let responseHeaders: Record<string, string>;
  if (isRequestDispatcher(dispatcher)) {
    const response = await dispatcher.request({
      origin: url.origin,
      path: url.pathname + url.search,
      method: request.method,
      headers,
      ...(body === undefined ? {} : { body }),
      signal: request.signal,
    });
    status = response.statusCode;
    text = await response.body.text();
    responseHeaders = {};
    for (const [key, value] of Object.entries(response.headers)) {
      if (typeof value === 'string') responseHeaders[key] = value;
      else if (Array.isArray(value)) responseHeaders[key] = value.join(', ');
    }
  } else {
    // No TLS material (a plain-HTTP apiserver with skipTLSVerify): client-node then uses the global dispatcher too.
    const response = await fetch(url, {
      method: request.method,
      headers,
      ...(body === undefined ? {} : { body }),
      signal: request.signal,
    });
    status = response.status;
    text = await response.text();
    responseHeaders = Object.fromEntries(response.headers.entries());
  }
  if (status < 200 || status > 299) {
    throw new ApiException(status, 'Unknown API Status Code!', parseOrText(text), responseHeaders);
  }
  return JSON.parse(text) as unknown;
}

function parseOrText(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
