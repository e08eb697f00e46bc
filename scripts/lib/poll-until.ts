/**
 * Polling with a deadline: how the test environment and the tests wait for eventually consistent state
 * (server readiness, CRD establishment, Temporal visibility) without fixed sleeps.
 */
import { setTimeout as sleep } from 'node:timers/promises';

export interface PollOptions {
  /** What is awaited, for the timeout message, e.g. `the CRD nodes.network.alibabacloud.com to be Established`. */
  readonly description: string;
  readonly timeoutMs: number;
  /** Pause between attempts; defaults to 100 ms. */
  readonly intervalMs?: number;
  /** Stops the polling (with the signal's reason) once aborted, e.g. when the server awaited has exited. */
  readonly signal?: AbortSignal;
}

/**
 * Calls `probe` until it returns a value other than `undefined` and returns that value. A probe that throws
 * counts as "not yet"; the last error is reported if the deadline passes.
 */
export async function pollUntil<T>(probe: () => Promise<T | undefined>, options: PollOptions): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  let lastError: unknown;
  for (;;) {
    options.signal?.throwIfAborted();
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() >= deadline) {
      const detail = lastError === undefined ? '' : ` (last error: ${errorMessage(lastError)})`;
      throw new Error(`timed out after ${options.timeoutMs} ms waiting for ${options.description}${detail}`, {
        cause: lastError,
      });
    }
    await sleep(options.intervalMs ?? 100, undefined, options.signal === undefined ? {} : { signal: options.signal });
  }
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
