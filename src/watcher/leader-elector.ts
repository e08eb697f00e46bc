import { CoordinationV1Api, V1MicroTime } from '@kubernetes/client-node';
import type { KubeConfig, V1Lease, V1ObjectMeta } from '@kubernetes/client-node';

import { abortOptions } from '../kube-request.js';
import type { Logger } from '../logger.js';

export interface LeaderElectorOptions {
  kubeConfig: KubeConfig;
  namespace: string;
  name: string;
  /** This replica's identity as written to `holderIdentity` (pod name or hostname by default). */
  identity: string;
  /** How long others wait after the last observed renewal before taking over. */
  leaseDurationMs: number;
  /** The leader steps down when it could not renew for this long; shorter than the lease duration. */
  renewDeadlineMs: number;
  /** Pause between attempts to acquire or renew. */
  retryPeriodMs: number;
  logger: Logger;
  onStartedLeading: () => void;
  onStoppedLeading: () => void;
}

/** Leadership counters, for tests and metrics. */
export interface LeaderCounters {
  /** Times this replica became leader. */
  acquired: number;
  /** Times it stepped down because renewals failed past the renew deadline. */
  lost: number;
}

/**
 * Leader election on a `coordination.k8s.io/v1` Lease, after client-go's algorithm: a candidate takes the lease
 * when it is free or its holder has not renewed for the lease duration (measured on this replica's clock from
 * when it last saw the lease change), every write is a compare-and-swap on resourceVersion (409 = lost the race),
 * and the leader renews every retry period and steps down once a renewal has not succeeded for the renew deadline.
 */
export class LeaderElector {
  readonly counters: LeaderCounters = { acquired: 0, lost: 0 };
  private readonly options: LeaderElectorOptions;
  private readonly api: CoordinationV1Api;
  private leading = false;
  private lastRenewMs = 0;
  private observed: { key: string; atMs: number } | undefined;
  private stopped = false;
  private wake: (() => void) | undefined;
  private loop: Promise<void> | undefined;

  constructor(options: LeaderElectorOptions) {
    if (!(options.renewDeadlineMs < options.leaseDurationMs)) {
      throw new RangeError('the renew deadline must be shorter than the lease duration');
    }
    if (!(options.retryPeriodMs < options.renewDeadlineMs)) {
      throw new RangeError('the retry period must be shorter than the renew deadline');
    }
    this.options = options;
    this.api = options.kubeConfig.makeApiClient(CoordinationV1Api);
  }

  isLeader(): boolean {
    return this.leading;
  }

  start(): void {
    this.loop ??= this.run();
  }

  /**
   * Stops campaigning. With `release` (a graceful shutdown) a held lease is given up so another replica takes over
   * at once; without it (as after a crash) the lease stays until it expires.
   */
  async stop(options: { release: boolean }): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.loop;
    const wasLeading = this.leading;
    if (wasLeading) this.stepDown('stopped');
    if (wasLeading && options.release) await this.release();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const budgetMs = this.leading
        ? this.lastRenewMs + this.options.renewDeadlineMs - Date.now()
        : this.options.retryPeriodMs * 5;
      // The requests are aborted at the deadline too, so a hung apiserver connection is not left behind.
      const options = abortOptions(AbortSignal.timeout(Math.max(budgetMs, 1)));
      const attempt = this.tryAcquireOrRenew(options).catch((error: unknown) => this.failed(error));
      const ok = await withDeadline(attempt, Math.max(budgetMs, 0));
      if (this.isStopped()) break;
      const nowMs = Date.now();
      if (ok) {
        this.lastRenewMs = nowMs;
        if (!this.leading) {
          this.leading = true;
          this.counters.acquired += 1;
          this.options.logger.info({ lease: this.leaseRef(), identity: this.options.identity }, 'Became leader');
          this.options.onStartedLeading();
        }
      } else if (this.leading && nowMs - this.lastRenewMs >= this.options.renewDeadlineMs) {
        this.counters.lost += 1;
        this.stepDown('renew deadline passed');
      }
      await this.sleep(jittered(this.options.retryPeriodMs, this.leading ? 0 : 0.2));
    }
  }

  private isStopped(): boolean {
    return this.stopped;
  }

  private stepDown(why: string): void {
    this.leading = false;
    this.options.logger.warn({ lease: this.leaseRef(), identity: this.options.identity, why }, 'Stopped leading');
    this.options.onStoppedLeading();
  }

  private async tryAcquireOrRenew(options: RequestOptions): Promise<boolean> {
    const { namespace, name, identity } = this.options;
    const nowMs = Date.now();
    const durationSeconds = Math.max(1, Math.ceil(this.options.leaseDurationMs / 1000));
    let lease: V1Lease;
    try {
      lease = await this.api.readNamespacedLease({ name, namespace }, options);
    } catch (error) {
      if (statusCode(error) !== 404) return this.failed(error);
      try {
        await this.api.createNamespacedLease(
          {
            namespace,
            body: {
              metadata: { name, namespace },
              spec: {
                holderIdentity: identity,
                leaseDurationSeconds: durationSeconds,
                acquireTime: new V1MicroTime(nowMs),
                renewTime: new V1MicroTime(nowMs),
                leaseTransitions: 0,
              },
            },
          },
          options,
        );
        return true;
      } catch (createError) {
        return this.failed(createError);
      }
    }
    const spec = lease.spec ?? {};
    const holder = spec.holderIdentity ?? '';
    const key = `${holder}|${timeText(spec.renewTime)}|${lease.metadata?.resourceVersion ?? ''}`;
    if (this.observed?.key !== key) this.observed = { key, atMs: nowMs };
    const heldByOther = holder !== '' && holder !== identity;
    const recordDurationMs = (spec.leaseDurationSeconds ?? durationSeconds) * 1000;
    if (heldByOther && this.observed.atMs + recordDurationMs > nowMs) return false;
    const isRenewal = holder === identity;
    try {
      await this.api.replaceNamespacedLease(
        {
          name,
          namespace,
          body: {
            metadata: leaseMetadata(lease),
            spec: {
              holderIdentity: identity,
              leaseDurationSeconds: durationSeconds,
              acquireTime: (isRenewal ? microTime(spec.acquireTime) : undefined) ?? new V1MicroTime(nowMs),
              renewTime: new V1MicroTime(nowMs),
              leaseTransitions: (spec.leaseTransitions ?? 0) + (isRenewal || holder === '' ? 0 : 1),
            },
          },
        },
        options,
      );
      return true;
    } catch (error) {
      return this.failed(error);
    }
  }

  private async release(): Promise<void> {
    const { namespace, name, identity } = this.options;
    const options = abortOptions(AbortSignal.timeout(this.options.renewDeadlineMs));
    try {
      const lease = await this.api.readNamespacedLease({ name, namespace }, options);
      if (lease.spec?.holderIdentity !== identity) return;
      await this.api.replaceNamespacedLease(
        {
          name,
          namespace,
          body: {
            metadata: leaseMetadata(lease),
            spec: {
              holderIdentity: '',
              leaseDurationSeconds: 1,
              renewTime: new V1MicroTime(Date.now()),
              acquireTime: microTime(lease.spec.acquireTime) ?? new V1MicroTime(Date.now()),
              ...(lease.spec.leaseTransitions === undefined ? {} : { leaseTransitions: lease.spec.leaseTransitions }),
            },
          },
        },
        options,
      );
      this.options.logger.info({ lease: this.leaseRef(), identity }, 'Released lease');
    } catch (error) {
      this.options.logger.warn({ lease: this.leaseRef(), err: error }, 'Releasing the lease failed');
    }
  }

  private failed(error: unknown): false {
    // 409: another replica wrote the lease first; anything else is worth a log line.
    if (statusCode(error) !== 409) {
      this.options.logger.warn({ lease: this.leaseRef(), err: error }, 'Lease request failed');
    }
    return false;
  }

  private leaseRef(): string {
    return `${this.options.namespace}/${this.options.name}`;
  }

  private async sleep(ms: number): Promise<void> {
    if (this.stopped) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
    this.wake = undefined;
  }
}

type RequestOptions = ReturnType<typeof abortOptions>;

/** The metadata a compare-and-swap write needs: name, namespace and the resourceVersion that was read. */
function leaseMetadata(lease: V1Lease): V1ObjectMeta {
  const metadata: V1ObjectMeta = {};
  if (lease.metadata?.name !== undefined) metadata.name = lease.metadata.name;
  if (lease.metadata?.namespace !== undefined) metadata.namespace = lease.metadata.namespace;
  if (lease.metadata?.resourceVersion !== undefined) metadata.resourceVersion = lease.metadata.resourceVersion;
  return metadata;
}

/**
 * Lease times as read: client-node types them as V1MicroTime (a Date) but hands back the wire string, so both are
 * accepted; written back, they must be V1MicroTime again.
 */
function microTime(value: unknown): V1MicroTime | undefined {
  if (value instanceof Date) return new V1MicroTime(value.getTime());
  if (typeof value !== 'string') return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : new V1MicroTime(ms);
}

function timeText(value: unknown): string {
  if (value instanceof Date) return value.toISOString();
  return typeof value === 'string' ? value : '';
}

function statusCode(error: unknown): number | undefined {
  return typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'number'
    ? error.code
    : undefined;
}

function jittered(ms: number, fraction: number): number {
  return ms * (1 + fraction * Math.random());
}

/** The attempt's result, or false once `ms` has passed (a hung request must not keep a leader leading). */
async function withDeadline(attempt: Promise<boolean>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => {
      resolve(false);
    }, ms);
  });
  try {
    return await Promise.race([attempt, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
