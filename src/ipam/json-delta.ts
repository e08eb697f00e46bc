/**
 * Structural deltas of JSON documents, so the node workflow's history carries what changed between two reads (or
 * what a status write changes) instead of the whole node: an unchanged node costs an empty list.
 */
import { canonicalJson } from './eni-records.js';

/** One change: the value at `path` is set to `value`, or removed when `remove` is true. */
export type JsonChange = { path: string[]; value: unknown } | { path: string[]; remove: true };

type JsonRecord = Record<string, unknown>;

function isRecord(value: unknown): value is JsonRecord {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * The changes turning `before` into `after`, in key order. Objects are compared key by key down to `maxDepth`
 * levels (deeper, and arrays, are replaced whole when they differ), so a change deep in a map costs its path and
 * the smallest value that changed.
 */
export function jsonDelta(before: unknown, after: unknown, options: { maxDepth?: number } = {}): JsonChange[] {
  const changes: JsonChange[] = [];
  const walk = (a: unknown, b: unknown, path: string[]): void => {
    if (isRecord(a) && isRecord(b) && path.length < (options.maxDepth ?? Number.POSITIVE_INFINITY)) {
      const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
      for (const key of keys) {
        const inA = Object.hasOwn(a, key) && a[key] !== undefined;
        const inB = Object.hasOwn(b, key) && b[key] !== undefined;
        if (inA && !inB) changes.push({ path: [...path, key], remove: true });
        else if (!inA && inB) changes.push({ path: [...path, key], value: b[key] });
        else if (inA && inB) walk(a[key], b[key], [...path, key]);
      }
      return;
    }
    if (canonicalJson(a) !== canonicalJson(b)) changes.push({ path, value: b });
  };
  walk(before, after, []);
  return changes;
}

/** Whether every change's parent object exists in `base` (a change to an entry of a missing ENI does not). */
export function deltaFitsBase(base: unknown, changes: readonly JsonChange[]): boolean {
  return changes.every((change) => {
    let node: unknown = base;
    for (const key of change.path.slice(0, -1)) {
      if (!isRecord(node)) return false;
      node = node[key];
    }
    return change.path.length === 0 || isRecord(node);
  });
}

/**
 * `base` with `changes` applied, without touching `base` (objects along each path are copied). A missing parent
 * object is created, so callers that must not invent partial objects check {@link deltaFitsBase} first.
 */
export function applyJsonDelta<T>(base: T, changes: readonly JsonChange[]): T {
  let root: unknown = base;
  for (const change of changes) {
    if (change.path.length === 0) {
      root = 'remove' in change ? undefined : change.value;
      continue;
    }
    const copy: JsonRecord = isRecord(root) ? { ...root } : {};
    root = copy;
    let parent = copy;
    for (const key of change.path.slice(0, -1)) {
      const child = parent[key];
      const next: JsonRecord = isRecord(child) ? { ...child } : {};
      parent[key] = next;
      parent = next;
    }
    const last = change.path[change.path.length - 1] ?? '';
    if ('remove' in change) delete parent[last];
    else parent[last] = change.value;
  }
  return root as T;
}

/**
 * Depth of a status write's changes: an ENI field, or one entry of its IP or condition maps, replaced whole. The
 * workflow computes the changes and the write activity checks them against the CR at this depth.
 */
export const STATUS_CHANGE_DEPTH = 3;
