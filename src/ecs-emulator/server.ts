import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { parse as parseQuery } from 'node:querystring';
import type { Logger } from 'pino';
import { ADMIN_PATH_PREFIX, AdminRequestError, routeAdminRequest } from './admin-api.js';
import type { EmulatorAdmin } from './admin-api.js';
import type { EmulatorCore } from './emulator-core.js';

/** Longer than Node's 5 s client-side idle reuse, so the SDK's keep-alive agent never hits a closed socket. */
const KEEP_ALIVE_TIMEOUT_MS = 65_000;
/** Admin request bodies (state snapshots) are bounded to keep a bad client from exhausting memory. */
const MAX_ADMIN_BODY_BYTES = 64 * 1024 * 1024;

function decodeQuery(url: string): Record<string, string> {
  const start = url.indexOf('?');
  if (start < 0) return {};
  const parsed = parseQuery(url.slice(start + 1));
  const query: Record<string, string> = {};
  for (const key of Object.keys(parsed)) {
    const value = parsed[key];
    query[key] = Array.isArray(value) ? (value[0] ?? '') : (value ?? '');
  }
  return query;
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_ADMIN_BODY_BYTES) {
        reject(new AdminRequestError({ status: 413, message: 'admin request body too large' }));
        request.destroy();
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => {
      resolve(Buffer.concat(chunks).toString('utf8'));
    });
    request.on('error', reject);
  });
}

function sendJson(
  response: ServerResponse,
  answer: { status: number; body: string; headers?: Record<string, string> },
): void {
  response.writeHead(answer.status, {
    'content-type': 'application/json;charset=utf-8',
    'content-length': Buffer.byteLength(answer.body),
    ...answer.headers,
  });
  response.end(answer.body);
}

async function serveAdmin(context: {
  admin: EmulatorAdmin;
  request: IncomingMessage;
  response: ServerResponse;
}): Promise<void> {
  const { request, response } = context;
  try {
    const url = new URL(request.url ?? '/', 'http://emulator');
    const text = await readBody(request);
    let body: unknown = undefined;
    if (text !== '') {
      try {
        body = JSON.parse(text);
      } catch {
        throw new AdminRequestError({ status: 400, message: 'body is not JSON' });
      }
    }
    const result = await routeAdminRequest({
      admin: context.admin,
      method: request.method ?? 'GET',
      path: url.pathname,
      search: url.searchParams,
      body,
    });
    sendJson(response, { status: 200, body: JSON.stringify(result) });
  } catch (error) {
    const status = error instanceof AdminRequestError ? error.status : 400;
    const message = error instanceof Error ? error.message : String(error);
    sendJson(response, { status, body: JSON.stringify({ error: message }) });
  }
}

/**
 * The node:http server: the ECS/VPC API on `/` and the admin API under `/__admin/`. The API path decodes the
 * query once and hands everything else to the core; the empty request body is drained without buffering.
 */
export function createEmulatorServer(context: { core: EmulatorCore; admin: EmulatorAdmin; logger?: Logger }): Server {
  const { core, admin } = context;
  const server = createServer((request, response) => {
    const url = request.url ?? '/';
    if (url.startsWith(ADMIN_PATH_PREFIX)) {
      void serveAdmin({ admin, request, response });
      return;
    }
    request.resume();
    core
      .handle({ method: request.method ?? 'POST', headers: request.headers, query: decodeQuery(url) })
      .then((answer) => {
        if (answer.kind === 'drop') {
          request.socket.destroy();
          return;
        }
        sendJson(response, {
          status: answer.status,
          body: answer.body,
          ...(answer.retryAfterMs === undefined
            ? {}
            : { headers: { 'x-acs-retry-after': String(answer.retryAfterMs) } }),
        });
      })
      .catch((error: unknown) => {
        context.logger?.error({ err: error }, 'emulator request failed');
        response.destroy();
      });
  });
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.headersTimeout = KEEP_ALIVE_TIMEOUT_MS + 1_000;
  return server;
}
