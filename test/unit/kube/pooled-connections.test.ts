import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { HttpMethod, KubeConfig, RequestContext } from '@kubernetes/client-node';

import { withPooledConnections } from '../../../src/kube/pooled-connections.js';

function loaded(kubeConfig: KubeConfig, caData: string): KubeConfig {
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'c', server: 'https://127.0.0.1:6443', caData, skipTLSVerify: false }],
    users: [{ name: 'u', token: 'a-token' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kubeConfig;
}

async function dispatcherOf(kubeConfig: KubeConfig): Promise<unknown> {
  const context = new RequestContext('https://127.0.0.1:6443/api/v1/nodes', HttpMethod.GET);
  await kubeConfig.applySecurityAuthentication(context);
  return context.getDispatcher();
}

const CA = Buffer.from('-----BEGIN CERTIFICATE-----\nnot parsed before a connection\n-----END CERTIFICATE-----\n');

describe('withPooledConnections', () => {
  it('the library alone builds a new dispatcher (a new TLS connection) for every request', async () => {
    const plain = loaded(new KubeConfig(), CA.toString('base64'));
    const first = await dispatcherOf(plain);
    assert.notEqual(first, undefined);
    assert.notEqual(await dispatcherOf(plain), first);
  });

  it('pooled: every request with the same TLS material shares one dispatcher', async () => {
    const pooled = loaded(withPooledConnections(new KubeConfig()), CA.toString('base64'));
    const first = await dispatcherOf(pooled);
    assert.notEqual(first, undefined);
    assert.equal(await dispatcherOf(pooled), first);
    assert.equal(await dispatcherOf(pooled), first);
  });

  it('pooled: other TLS material (a rotated CA) gets a dispatcher of its own', async () => {
    const pooled = loaded(withPooledConnections(new KubeConfig()), CA.toString('base64'));
    const first = await dispatcherOf(pooled);
    loaded(pooled, Buffer.from(`${CA.toString()}\n`).toString('base64'));
    const rotated = await dispatcherOf(pooled);
    assert.notEqual(rotated, first);
    assert.equal(await dispatcherOf(pooled), rotated);
  });
});
