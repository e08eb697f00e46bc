/** A remembered result of an idempotent call. */
interface CachedResult {
  fingerprint: string;
  body: Record<string, unknown>;
}

/**
 * ClientToken idempotency for CreateNetworkInterface, AssignPrivateIpAddresses and AssignIpv6Addresses, as ECS
 * documents it: the same token with the same parameters replays the first result; with different
 * parameters it is `IdempotentParameterMismatch`. Only successful results are remembered, so a failed call may be
 * retried with its token. Bounded: the oldest tokens are forgotten first.
 */
export class ClientTokenCache {
  private readonly results = new Map<string, CachedResult>();
  private capacity: number;

  constructor(capacity: number) {
    this.capacity = capacity;
  }

  setCapacity(capacity: number): void {
    this.capacity = capacity;
    this.evict();
  }

  /** A stable fingerprint of the call's parameters, ignoring the token itself and the signature fields. */
  static fingerprint(params: Record<string, string>): string {
    const ignored = new Set(['ClientToken', 'Signature', 'SignatureNonce', 'Timestamp', 'AccessKeyId']);
    return Object.keys(params)
      .filter((key) => !ignored.has(key))
      .sort()
      .map((key) => `${key}=${params[key] ?? ''}`)
      .join('&');
  }

  lookup(request: { action: string; token: string }): CachedResult | undefined {
    return this.results.get(`${request.action}\n${request.token}`);
  }

  remember(request: { action: string; token: string; result: CachedResult }): void {
    this.results.set(`${request.action}\n${request.token}`, request.result);
    this.evict();
  }

  clear(): void {
    this.results.clear();
  }

  private evict(): void {
    while (this.results.size > this.capacity) {
      const oldest = this.results.keys().next();
      if (oldest.done === true) return;
      this.results.delete(oldest.value);
    }
  }
}
