import { request as httpRequest } from 'node:http';
import type { ClientRequest, IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { RequestOptions } from 'node:https';
import { createInterface } from 'node:readline';

import { Watch } from '@kubernetes/client-node';
import type { KubeConfig } from '@kubernetes/client-node';

/** Counters of one watch client, for tests and metrics. */
export interface WatchCounters {
  /** Watch requests made. */
  requests: number;
  /** Watches the server answered with 410 Gone ("too old resource version"), in-stream or as HTTP status. */
  expired: number;
  /** Watches ended by the idle watchdog because nothing (not even a bookmark) arrived for `idleTimeoutMs`. */
  idleTimeouts: number;
}

export interface KubeWatchOptions {
  kubeConfig: KubeConfig;
  /** Asked of the server (`timeoutSeconds`): it ends the watch cleanly after this long, and the informer resumes. */
  serverTimeoutSeconds: number;
  /**
   * The watchdog: with bookmarks requested the server sends something at least every minute, so a watch silent
   * for this long is hung (client-node 1.4.0 has no client-side timeout) and is ended so the informer resumes.
   */
  idleTimeoutMs: number;
}

type WatchCallback = (phase: string, apiObj: unknown, watchObj?: unknown) => void;
type DoneCallback = (err: unknown) => void;

interface WatchEventLine {
  type?: unknown;
  object?: { code?: unknown };
}

/**
 * The watch client given to client-node's `ListWatch`: asks for bookmarks and a server-side timeout, ends a silent
 * watch (watchdog), counts 410s, and returns its AbortController at once so `ListWatch.stop()` can always abort a
 * request, even one still connecting.
 */
export class KubeWatch extends Watch {
  readonly counters: WatchCounters = { requests: 0, expired: 0, idleTimeouts: 0 };
  private readonly options: KubeWatchOptions;

  constructor(options: KubeWatchOptions) {
    super(options.kubeConfig);
    this.options = options;
  }

  // The signature is client-node's Watch.watch, which ListWatch calls.
  // eslint-disable-next-line max-params
  override watch(
    path: string,
    queryParams: Record<string, string | number | boolean | undefined>,
    callback: WatchCallback,
    done: DoneCallback,
  ): Promise<AbortController> {
    const controller = new AbortController();
    // Started on a later turn, so `done` never runs before ListWatch has stored the controller.
    setImmediate(() => {
      this.stream({ path, queryParams, callback, done, signal: controller.signal }).catch(done);
    });
    return Promise.resolve(controller);
  }

  private async stream(input: {
    path: string;
    queryParams: Record<string, string | number | boolean | undefined>;
    callback: WatchCallback;
    done: DoneCallback;
    signal: AbortSignal;
  }): Promise<void> {
    const { path, queryParams, callback, done, signal } = input;
    let finished = false;
    const active: { request?: ClientRequest } = {};
    let idleTimer: NodeJS.Timeout | undefined;
    const finish = (error: unknown): void => {
      if (finished) return;
      finished = true;
      clearTimeout(idleTimer);
      signal.removeEventListener('abort', onAbort);
      active.request?.destroy();
      done(error);
    };
    const onAbort = (): void => {
      finish(null);
    };
    if (signal.aborted) {
      finish(null);
      return;
    }
    signal.addEventListener('abort', onAbort, { once: true });
    const armWatchdog = (): void => {
      clearTimeout(idleTimer);
      idleTimer = setTimeout(() => {
        this.counters.idleTimeouts += 1;
        finish(null);
      }, this.options.idleTimeoutMs);
    };

    const cluster = this.config.getCurrentCluster();
    if (cluster === null) {
      finish(new Error('the kubeconfig has no current cluster'));
      return;
    }
    const url = new URL(cluster.server + path);
    url.searchParams.set('watch', 'true');
    url.searchParams.set('allowWatchBookmarks', 'true');
    url.searchParams.set('timeoutSeconds', String(this.options.serverTimeoutSeconds));
    for (const [key, value] of Object.entries(queryParams)) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    const requestOptions: RequestOptions = {};
    await this.config.applyToHTTPSOptions(requestOptions);
    if (isAborted(signal)) return;
    this.counters.requests += 1;
    armWatchdog();
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const request = send(url, { ...requestOptions, method: 'GET' });
    active.request = request;
    request.on('error', finish);
    request.on('response', (response: IncomingMessage) => {
      if (response.statusCode !== 200) {
        if (response.statusCode === 410) this.counters.expired += 1;
        response.resume();
        finish(
          Object.assign(new Error(`watch ${path} answered HTTP ${response.statusCode ?? 0}`), {
            statusCode: response.statusCode,
          }),
        );
        return;
      }
      const lines = createInterface({ input: response, crlfDelay: Infinity });
      // readline re-emits the response's errors (e.g. "aborted" when the connection drops) on the interface.
      lines.on('error', finish);
      lines.on('line', (line) => {
        armWatchdog();
        let event: WatchEventLine;
        try {
          event = JSON.parse(line) as WatchEventLine;
        } catch {
          return;
        }
        if (typeof event.type !== 'string') return;
        if (event.type === 'ERROR' && event.object?.code === 410) this.counters.expired += 1;
        callback(event.type, event.object, event);
      });
      response.on('error', finish);
      lines.on('close', () => {
        finish(null);
      });
      response.on('close', () => {
        finish(null);
      });
    });
    request.end();
  }
}

/** Read through a call: TypeScript narrows `signal.aborted` to false after the first check, across awaits. */
function isAborted(signal: AbortSignal): boolean {
  return signal.aborted;
}
