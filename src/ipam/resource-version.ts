/**
 * Resource versions as the watcher and the worker's cache compare them. Kubernetes calls them opaque; every
 * apiserver on etcd3 writes the etcd revision, a decimal integer, and that order is what "has the cache seen this
 * event" needs. Anything else compares as unknown, and callers then read live.
 */

const DECIMAL = /^[0-9]{1,30}$/;

/** -1, 0 or 1 as `a` is older than, the same as or newer than `b`; undefined when either is not a revision. */
export function compareResourceVersions(a: string, b: string): -1 | 0 | 1 | undefined {
  if (!DECIMAL.test(a) || !DECIMAL.test(b)) return undefined;
  const x = BigInt(a);
  const y = BigInt(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Per source (informer name), the newer of the two versions seen; a version that does not compare replaces. */
export function mergeSeenVersions(
  seen: Readonly<Record<string, string>> | undefined,
  more: Readonly<Record<string, string>> | undefined,
): Record<string, string> {
  const merged: Record<string, string> = { ...seen };
  for (const key of Object.keys(more ?? {}).sort()) {
    const next = more?.[key];
    if (next === undefined) continue;
    const current = merged[key];
    if (current === undefined || compareResourceVersions(next, current) !== -1) merged[key] = next;
  }
  return Object.fromEntries(Object.entries(merged).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/**
 * Whether a read that had seen `read` (by informer) has seen every change a signal names in `signal`: each informer
 * of the signal is in the read at the same version or newer. A signal without versions, or one the read's versions
 * do not compare with, is not covered (it asks for a pass, as before).
 */
export function seenVersionsCover(
  read: Readonly<Record<string, string>> | undefined,
  signal: Readonly<Record<string, string>> | undefined,
): boolean {
  const keys = Object.keys(signal ?? {});
  if (read === undefined || signal === undefined || keys.length === 0) return false;
  return keys.every((key) => {
    const seen = read[key];
    const version = signal[key];
    if (seen === undefined || version === undefined) return false;
    const order = compareResourceVersions(version, seen);
    return order === -1 || order === 0;
  });
}
