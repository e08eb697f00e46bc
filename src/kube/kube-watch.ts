import { Watch } from '@kubernetes/client-node';
import type { KubeConfig } from '@kubernetes/client-node';

/** Counters of one watch client, for tests and metrics. */
export interface WatchCounters {
  /** Watch requests made. */
  requests: number;
  /** Watches the server answered with 410 Gone ("too old resource version"), in-stream or as HTTP status. */
  expired: number;
  /** Watches client-node ended because nothing (not even a bookmark) arrived for `idleTimeoutMs`. */
  idleTimeouts: number;
}

export interface KubeWatchOptions {
  kubeConfig: KubeConfig;
  /** Asked of the server (`timeoutSeconds`): it ends the watch cleanly after this long, and the informer resumes. */
  serverTimeoutSeconds: number;
  /**
   * client-node's inactivity timeout (30 s by default): a watch that has not connected, or has received nothing,
   * for this long is aborted and `ListWatch` resumes it at once from its resourceVersion. With bookmarks requested
   * the server sends something about once a minute, so a longer timeout spares quiet resources a reconnect.
   */
  idleTimeoutMs: number;
}

type WatchCallback = (phase: string, apiObj: unknown, watchObj?: unknown) => void;
type DoneCallback = (err: unknown) => void;

/**
 * client-node's `Watch` (inactivity timeout, streaming, auth) for `ListWatch`, which also asks for bookmarks and a
 * server-side timeout, counts what happened, and aborts a request that was still connecting when {@link close}
 * was called (`ListWatch.stop()` can abort only requests whose controller it already holds).
 */
export class KubeWatch extends Watch {
  readonly counters: WatchCounters = { requests: 0, expired: 0, idleTimeouts: 0 };
  private readonly serverTimeoutSeconds: number;
  private readonly open = new Set<AbortController>();
  private closed = false;

  constructor(options: KubeWatchOptions) {
    super(options.kubeConfig);
    this.serverTimeoutSeconds = options.serverTimeoutSeconds;
    // client-node declares its timeout private; fail loudly should a new version rename it.
    if (typeof Reflect.get(this, 'requestTimeoutMs') !== 'number') {
      throw new Error('@kubernetes/client-node Watch has no requestTimeoutMs: check the watch timeout');
    }
    Reflect.set(this, 'requestTimeoutMs', options.idleTimeoutMs);
  }

  /** Lets new watches start again after {@link close}. */
  reopen(): void {
    this.closed = false;
  }

  /** Aborts every open watch, and any still connecting as soon as it returns. */
  close(): void {
    this.closed = true;
    for (const controller of this.open) controller.abort();
    this.open.clear();
  }

  // The signature is client-node's Watch.watch, which ListWatch calls.
  // eslint-disable-next-line max-params
  override async watch(
    path: string,
    queryParams: Record<string, string | number | boolean | undefined>,
    callback: WatchCallback,
    done: DoneCallback,
  ): Promise<AbortController> {
    this.counters.requests += 1;
    const state: { finished: boolean; controller?: AbortController } = { finished: false };
    const controller = await super.watch(
      path,
      { ...queryParams, allowWatchBookmarks: true, timeoutSeconds: this.serverTimeoutSeconds },
      (phase, apiObj: unknown, watchObj?: unknown) => {
        if (phase === 'ERROR' && codeOf(apiObj) === 410) this.counters.expired += 1;
        callback(phase, apiObj, watchObj);
      },
      (err: unknown) => {
        state.finished = true;
        if (state.controller !== undefined) this.open.delete(state.controller);
        if (isTimeout(err)) this.counters.idleTimeouts += 1;
        else if (statusCodeOf(err) === 410) this.counters.expired += 1;
        done(err);
      },
    );
    state.controller = controller;
    if (this.closed) controller.abort();
    else if (!state.finished) this.open.add(controller);
    return controller;
  }
}

function isTimeout(err: unknown): boolean {
  return err instanceof Error && err.name === 'TimeoutError';
}

function codeOf(object: unknown): unknown {
  return typeof object === 'object' && object !== null && 'code' in object ? object.code : undefined;
}

function statusCodeOf(err: unknown): unknown {
  return typeof err === 'object' && err !== null && 'statusCode' in err ? err.statusCode : undefined;
}
