/**
 * Polling with a deadline: how the test environment and the tests wait for eventually consistent state
 * (server readiness, CRD establishment, Temporal visibility) without fixed sleeps.
 */
import { setTimeout as sleep } from 'node:timers/promises';
/**
 * Calls `probe` until it returns a value other than `undefined` and returns that value. A probe that throws
 * counts as "not yet"; the last error is reported if the deadline passes.
 */
export async function pollUntil(probe, options) {
    const deadline = Date.now() + options.timeoutMs;
    let lastError;
    for (;;) {
        options.signal?.throwIfAborted();
        try {
            const value = await probe();
            if (value !== undefined)
                return value;
        }
        catch (error) {
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
function errorMessage(error) {
    return error instanceof Error ? error.message : String(error);
}
