import { createHash } from 'node:crypto';

import type { KubeConfig } from '@kubernetes/client-node';

type CreateDispatcher = (cluster: unknown, agentOptions: Record<string, unknown>) => unknown;

/**
 * Makes a KubeConfig reuse its connections. `@kubernetes/client-node` 2.0 builds a new undici Agent for every
 * request, so every apiserver call pays a TLS handshake and a new SecureContext (1.2 s of the worker's CPU in a
 * 50-node burst of `bench:scale`, more than the workflow code's IP sorting). The dispatcher is kept per TLS material
 * (server, CA, client certificate and key, as read for that request): a rotated certificate gets a new one, and the
 * bearer token, which travels in a header, is untouched.
 */
export function withPooledConnections(kubeConfig: KubeConfig): KubeConfig {
  const target = kubeConfig as unknown as { createDispatcher: CreateDispatcher };
  const create = target.createDispatcher.bind(kubeConfig);
  const dispatchers = new Map<string, unknown>();
  target.createDispatcher = (cluster, agentOptions) => {
    const key = tlsMaterialKey(cluster, agentOptions);
    if (!dispatchers.has(key)) {
      // Few keys ever exist (one per rotation); an old one is dropped rather than kept forever.
      if (dispatchers.size >= 4) dispatchers.clear();
      dispatchers.set(key, create(cluster, agentOptions));
    }
    return dispatchers.get(key);
  };
  return kubeConfig;
}

function tlsMaterialKey(cluster: unknown, agentOptions: Record<string, unknown>): string {
  const hash = createHash('sha256');
  const server = typeof cluster === 'object' && cluster !== null ? (cluster as { server?: unknown }).server : undefined;
  hash.update(String(server));
  for (const field of ['ca', 'cert', 'key', 'pfx', 'passphrase', 'rejectUnauthorized', 'servername']) {
    const value = agentOptions[field];
    hash.update(`|${field}=`);
    if (value === undefined) continue;
    if (Buffer.isBuffer(value) || typeof value === 'string') hash.update(value);
    else hash.update(JSON.stringify(value));
  }
  return hash.digest('hex');
}
