/** A remembered use of a ClientToken: its parameters, and the result it got (a success body, or a failure). */
export type CachedResult =
  | { fingerprint: string; body: Record<string, unknown>; failed?: never }
  /** The token's first use failed in the service: a reuse with the same parameters answers `IdempotentFailed`. */
  | { fingerprint: string; failed: { code: string }; body?: never };

/**
 * ClientToken idempotency for CreateNetworkInterface, AssignPrivateIpAddresses and AssignIpv6Addresses, as ECS
 * documents it: the same token with the same parameters replays the first result; with different parameters it is
 * `IdempotentParameterMismatch`. A token whose first use failed inside the service (a business error such as
 * `InvalidVSwitchId.IpNotEnough`, not a throttle or a gateway 5xx) cannot be reused: the same parameters answer
 * `IdempotentFailed` (ECS's idempotence page: after a failure such as insufficient stock, "change the ClientToken
 * and retry"). Tokens are remembered for a retention window measured on the emulator's clock (`retentionMs`); ECS
 * documents no window, so the default (24 h) is an assumption, like the windows other clouds document.
 */
export class ClientTokenCache {
  private readonly results = new Map<string, { result: CachedResult; atMs: number }>();
  private retentionMs: number;
  private readonly clock: () => number;

  constructor(input: { retentionMs: number; clock: () => number }) {
    this.retentionMs = input.retentionMs;
    this.clock = input.clock;
  }

  setRetention(retentionMs: number): void {
    this.retentionMs = retentionMs;
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
    this.evict();
    return this.results.get(`${request.action}\n${request.token}`)?.result;
  }

  remember(request: { action: string; token: string; result: CachedResult }): void {
    const key = `${request.action}\n${request.token}`;
    // The first use decides; a later one (a replay) never renews or changes it.
    if (this.results.has(key)) return;
    this.results.set(key, { result: request.result, atMs: this.clock() });
    this.evict();
  }

  clear(): void {
    this.results.clear();
  }

  /** Forgets tokens older than the retention window (insertion order is first-use order). */
  private evict(): void {
    const oldestKept = this.clock() - this.retentionMs;
    for (const [key, entry] of this.results) {
      if (entry.atMs > oldestKept) return;
      this.results.delete(key);
    }
  }
}
