import { ListWatch } from '@kubernetes/client-node';
import type { KubeConfig, KubernetesListObject, KubernetesObject } from '@kubernetes/client-node';

import type { Logger } from '../logger.js';
import { KubeWatch } from './kube-watch.js';

/** Counters of one informer, for tests and metrics. */
export interface InformerCounters {
  /** Successful lists: the first one, then one per relist (after a 410 or a restart without resourceVersion). */
  lists: number;
  /** Watches answered 410 Gone. */
  expired: number;
  /** Watches ended by client-node's inactivity timeout. */
  idleTimeouts: number;
  /** Lists abandoned at their deadline (`listTimeoutMs`), then retried like any failed list. */
  listTimeouts: number;
  /** Errors that stopped the informer (list failures, watch HTTP errors, network errors). */
  errors: number;
  /** Restarts after such errors. */
  restarts: number;
  /** Watch requests made. */
  watchRequests: number;
}

/** Where a change came from: the informer's name and the resourceVersion of the event (absent for a relist). */
export interface ChangeOrigin {
  informer: string;
  resourceVersion?: string;
}

export interface ResourceInformerOptions<T extends KubernetesObject, V extends { nodeName: string }, C = unknown> {
  /** e.g. `pods`, for logs and metrics. */
  name: string;
  kubeConfig: KubeConfig;
  /** The watch path, e.g. `/api/v1/pods`. */
  path: string;
  /**
   * Lists the same objects the watch selects (same field selector), abandoning the request when `signal` fires
   * (see `abortOptions` in kube-request.ts).
   */
  list: (signal: AbortSignal) => Promise<KubernetesListObject<T>>;
  fieldSelector?: string;
  /** Projects an object onto what matters; only projections are kept. */
  view: (object: T) => V;
  /** The change between two projections (undefined = not relevant); none when only the views are wanted. */
  change?: (before: V | undefined, after: V | undefined) => C | undefined;
  onChange?: (change: C, origin: ChangeOrigin) => void;
  logger: Logger;
  /** Watch timeouts (see {@link KubeWatch}) and the deadline of each list. */
  watch: { serverTimeoutSeconds: number; idleTimeoutMs: number; listTimeoutMs: number };
  /** Restart delay after an error: doubles from `initialMs` up to `maxMs`, reset by the next good list or event. */
  backoff?: { initialMs: number; maxMs: number };
}

/**
 * An informer on client-node's `ListWatch` (list, then watch from the list's resourceVersion; relist on 410) that
 * also restarts after any other error with backoff, gives every list a deadline (a list hung in an apiserver
 * failover would otherwise stall the informer for good), ends silent watches (see {@link KubeWatch}), and turns every
 * add/update/delete into a {@link NodeChange} by comparing projections. Changes of the first list are not reported:
 * the caller reads {@link nodeNames} once {@link synced} resolves. A relist reports objects that vanished.
 */
export class ResourceInformer<T extends KubernetesObject, V extends { nodeName: string }, C = unknown> {
  readonly synced: Promise<void>;
  private readonly options: ResourceInformerOptions<T, V, C>;
  private readonly views = new Map<string, V>();
  /** The keys of the views of each node, so a node's objects are found without a scan. */
  private readonly keysByNode = new Map<string, Set<string>>();
  private isSynced = false;
  private readonly kubeWatch: KubeWatch;
  private readonly listWatch: ListWatch<T>;
  private readonly counts = { lists: 0, errors: 0, restarts: 0, listTimeouts: 0 };
  /** Aborted by {@link stop}: ends a list in flight. */
  private stopping = new AbortController();
  private markSynced: () => void = () => undefined;
  private restartTimer: NodeJS.Timeout | undefined;
  private backoffMs: number;
  private stopped = false;

  constructor(options: ResourceInformerOptions<T, V, C>) {
    this.options = options;
    this.backoffMs = options.backoff?.initialMs ?? 1_000;
    this.synced = new Promise((resolve) => {
      this.markSynced = resolve;
    });
    this.kubeWatch = new KubeWatch({
      kubeConfig: options.kubeConfig,
      serverTimeoutSeconds: options.watch.serverTimeoutSeconds,
      idleTimeoutMs: options.watch.idleTimeoutMs,
    });
    this.listWatch = new ListWatch<T>(
      options.path,
      this.kubeWatch,
      () => this.listAndDiff(),
      false,
      undefined,
      options.fieldSelector,
    );
    this.listWatch.on('add', (object) => {
      this.observe(object);
    });
    this.listWatch.on('update', (object) => {
      this.observe(object);
    });
    this.listWatch.on('delete', (object) => {
      this.forget(keyOf(object), object.metadata?.resourceVersion);
    });
    this.listWatch.on('connect', () => {
      this.options.logger.debug(
        { informer: options.name, resourceVersion: this.listWatch.latestResourceVersion() },
        'Informer connecting',
      );
    });
    this.listWatch.on('error', (error: unknown) => {
      this.onError(error);
    });
  }

  start(): void {
    this.stopped = false;
    this.stopping = new AbortController();
    this.kubeWatch.reopen();
    this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.restartTimer);
    this.stopping.abort();
    this.kubeWatch.close();
    await this.listWatch.stop();
  }

  /** The current view of the object with this key (`name`, or `namespace/name`). */
  view(key: string): V | undefined {
    return this.views.get(key);
  }

  /** Whether the first list has completed (then the views follow the watch). */
  hasSynced(): boolean {
    return this.isSynced;
  }

  /** The current view of the object `namespace/name` (or `name` when cluster-scoped). */
  get(key: string): V | undefined {
    return this.views.get(key);
  }

  /** The current views of the objects of one node, in key order. */
  viewsOf(nodeName: string): V[] {
    const keys = [...(this.keysByNode.get(nodeName) ?? [])].sort();
    return keys.flatMap((key) => this.views.get(key) ?? []);
  }

  /** The resourceVersion the informer has seen up to (last list, event or bookmark); '' before the first list. */
  resourceVersion(): string {
    return this.listWatch.latestResourceVersion();
  }

  /** Node names the current objects refer to. */
  nodeNames(): Set<string> {
    const names = new Set<string>();
    for (const view of this.views.values()) if (view.nodeName !== '') names.add(view.nodeName);
    return names;
  }

  /** The current projections by object key (`namespace/name`, or the name of a cluster-scoped object). */
  entries(): IterableIterator<[string, V]> {
    return this.views.entries();
  }

  counters(): InformerCounters {
    const watch = this.kubeWatch.counters;
    return {
      ...this.counts,
      expired: watch.expired,
      idleTimeouts: watch.idleTimeouts,
      watchRequests: watch.requests,
    };
  }

  private run(): void {
    this.listWatch.start().catch((error: unknown) => {
      this.onError(error);
    });
  }

  /** ListWatch's list function: lists, reports what vanished since the last view, then updates the views. */
  private async listAndDiff(): Promise<KubernetesListObject<T>> {
    const deadline = AbortSignal.timeout(this.options.watch.listTimeoutMs);
    let list: KubernetesListObject<T>;
    try {
      list = await this.options.list(AbortSignal.any([this.stopping.signal, deadline]));
    } catch (error) {
      if (deadline.aborted) {
        this.counts.listTimeouts += 1;
        throw new Error(`list ${this.options.path} got no answer within ${this.options.watch.listTimeoutMs} ms`, {
          cause: error,
        });
      }
      throw error;
    }
    const initial = this.counts.lists === 0;
    this.counts.lists += 1;
    this.backoffMs = this.options.backoff?.initialMs ?? 1_000;
    const present = new Set(list.items.map((item) => keyOf(item)));
    for (const key of [...this.views.keys()]) if (!present.has(key)) this.forget(key, undefined);
    for (const item of list.items) this.observe(item, { quiet: initial });
    if (initial) {
      this.options.logger.info({ informer: this.options.name, objects: list.items.length }, 'Informer synced');
      this.isSynced = true;
      this.markSynced();
    } else {
      this.options.logger.info({ informer: this.options.name, objects: list.items.length }, 'Informer relisted');
    }
    return list;
  }

  private observe(object: T, options: { quiet?: boolean } = {}): void {
    if (this.stopped) return;
    const key = keyOf(object);
    const after = this.options.view(object);
    const before = this.views.get(key);
    this.views.set(key, after);
    this.index(key, before, after);
    this.backoffMs = this.options.backoff?.initialMs ?? 1_000;
    if (options.quiet === true) return;
    this.report(before, after, object.metadata?.resourceVersion);
  }

  private forget(key: string, resourceVersion: string | undefined): void {
    if (this.stopped) return;
    const before = this.views.get(key);
    if (before === undefined) return;
    this.views.delete(key);
    this.index(key, before, undefined);
    this.report(before, undefined, resourceVersion);
  }

  private report(before: V | undefined, after: V | undefined, resourceVersion: string | undefined): void {
    const change = this.options.change?.(before, after);
    if (change === undefined) return;
    this.options.onChange?.(change, {
      informer: this.options.name,
      ...(resourceVersion === undefined ? {} : { resourceVersion }),
    });
  }

  private index(key: string, before: V | undefined, after: V | undefined): void {
    if (before !== undefined && before.nodeName !== after?.nodeName) {
      const keys = this.keysByNode.get(before.nodeName);
      keys?.delete(key);
      if (keys?.size === 0) this.keysByNode.delete(before.nodeName);
    }
    if (after !== undefined) {
      const keys = this.keysByNode.get(after.nodeName) ?? new Set<string>();
      keys.add(key);
      this.keysByNode.set(after.nodeName, keys);
    }
  }

  private onError(error: unknown): void {
    if (this.stopped) return;
    this.counts.errors += 1;
    const delayMs = this.backoffMs;
    this.backoffMs = Math.min(this.backoffMs * 2, this.options.backoff?.maxMs ?? 30_000);
    this.options.logger.warn(
      { informer: this.options.name, err: error, restartInMs: delayMs },
      'Informer stopped on an error; restarting',
    );
    clearTimeout(this.restartTimer);
    this.restartTimer = setTimeout(() => {
      if (this.stopped) return;
      this.counts.restarts += 1;
      this.run();
    }, delayMs);
  }
}

/** `namespace/name`, or `name` for a cluster-scoped object. */
export function keyOf(object: KubernetesObject): string {
  const namespace = object.metadata?.namespace ?? '';
  const name = object.metadata?.name ?? '';
  return namespace === '' ? name : `${namespace}/${name}`;
}
