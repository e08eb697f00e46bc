import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';

import { ApiException, KubeConfig } from '@kubernetes/client-node';

import { kubeJsonRequest } from '../../../src/kube/kube-json.js';
import { withPooledConnections } from '../../../src/kube/pooled-connections.js';

interface Seen {
  method: string;
  url: string;
  authorization: string | undefined;
  contentType: string | undefined;
  body: string;
}

void describe('kubeJsonRequest', () => {
  const seen: Seen[] = [];
  let reply: (request: IncomingMessage, response: ServerResponse) => void = (_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      seen.push({
        method: request.method ?? '',
        url: request.url ?? '',
        authorization: request.headers.authorization,
        contentType: request.headers['content-type'],
        body: Buffer.concat(chunks).toString('utf8'),
      });
      reply(request, response);
    });
  });
  let kubeConfig: KubeConfig;

  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    kubeConfig = withPooledConnections(new KubeConfig());
    // A server URL with a path prefix (as behind a proxy), kept in front of every API path as client-node keeps it.
    kubeConfig.loadFromOptions({
      clusters: [{ name: 'c', server: `http://127.0.0.1:${port}/prefix`, skipTLSVerify: true }],
      users: [{ name: 'u', token: 'a-token' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
  });
  after(() => {
    server.close();
  });

  const signal = () => AbortSignal.timeout(5_000);

  void it('GETs with the kubeconfig token and answers the parsed body', async () => {
    seen.length = 0;
    reply = (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"metadata":{"name":"n1"}}');
    };
    const body = await kubeJsonRequest(kubeConfig, { method: 'GET', path: '/apis/g/v1/nodes/n1', signal: signal() });
    assert.deepEqual(body, { metadata: { name: 'n1' } });
    assert.deepEqual(seen, [
      {
        method: 'GET',
        url: '/prefix/apis/g/v1/nodes/n1',
        authorization: 'Bearer a-token',
        contentType: undefined,
        body: '',
      },
    ]);
  });

  void it('PUTs the body as JSON', async () => {
    seen.length = 0;
    reply = (request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' }).end(seen.at(-1)?.body ?? '');
    };
    const object = { metadata: { name: 'n1', resourceVersion: '7' }, status: { a: [1, 'two'] } };
    const body = await kubeJsonRequest(kubeConfig, {
      method: 'PUT',
      path: '/apis/g/v1/nodes/n1/status',
      body: object,
      signal: signal(),
    });
    assert.deepEqual(body, object);
    assert.equal(seen[0]?.method, 'PUT');
    assert.equal(seen[0]?.contentType, 'application/json');
    assert.deepEqual(JSON.parse(seen[0]?.body ?? ''), object);
  });

  for (const code of [404, 409, 500]) {
    void it(`a ${code} is client-node's ApiException with that code and the Status body`, async () => {
      reply = (_request, response) => {
        response.writeHead(code, { 'content-type': 'application/json' }).end(`{"kind":"Status","code":${code}}`);
      };
      await assert.rejects(
        kubeJsonRequest(kubeConfig, { method: 'GET', path: '/apis/g/v1/nodes/gone', signal: signal() }),
        (error: unknown) => {
          assert.ok(error instanceof ApiException);
          assert.equal(error.code, code);
          assert.deepEqual(error.body, { kind: 'Status', code });
          return true;
        },
      );
    });
  }

  void it('an aborted signal ends the request', async () => {
    reply = () => {
      // Never answers: only the signal can end the request.
    };
    await assert.rejects(
      kubeJsonRequest(kubeConfig, { method: 'GET', path: '/apis/g/v1/nodes/slow', signal: AbortSignal.timeout(100) }),
    );
  });
});
