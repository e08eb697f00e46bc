/**
 * Validation of `spec.pool` (see validate-node.ts for the severities). Pool bounds, warm-up and idle reclaim decide
 * how many addresses are allocated or released, so a defect there blocks the node. Two tuning fields have a safe
 * fallback and only warn, as Terway falls back on them: a bad `poolSyncPeriod` keeps the controller's period, a bad
 * `reclaim.jitterFactor` keeps the default 0.1.
 */

import { parseGoDuration } from './go-duration.js';
import { childPath, describe, readInteger, readObject, readString, report, withSink } from './node-cr-fields.js';
import type { Scope } from './node-cr-fields.js';
import type { IdleIpReclaimPolicy, PoolSpec } from './node-model.js';

/** A Go duration string; `positive` refuses zero too. A defect goes to the scope's sink and drops the field. */
function readDuration(scope: Scope, key: string, rule: { positive: boolean }): string | undefined {
  const text = readString(scope, key);
  if (text === undefined) return undefined;
  const path = childPath(scope.path, key);
  const ms = parseGoDuration(text);
  if (ms === undefined) {
    const message = `${path} is not a duration (such as "30s", "5m" or "1h"): ${describe(text)}`;
    report(scope.sink, { path, code: 'malformedDuration', message });
    return undefined;
  }
  if (ms < 0 || (rule.positive && ms === 0)) {
    const message = `${path} must be ${rule.positive ? 'positive' : 'zero or more'}, got ${describe(text)}`;
    report(scope.sink, { path, code: 'outOfRange', message });
    return undefined;
  }
  return text;
}

/** `reclaim.jitterFactor`: decimal text in [0, 1] (Terway keeps it as a string). */
function readJitterFactor(scope: Scope): string | undefined {
  const lenient = withSink(scope, { problems: scope.sink.problems, severity: 'warning' });
  const text = readString(lenient, 'jitterFactor');
  if (text === undefined) return undefined;
  const value = /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/.test(text) ? Number(text) : Number.NaN;
  if (value >= 0 && value <= 1) return text;
  const path = childPath(scope.path, 'jitterFactor');
  const message = `${path} must be a decimal number in [0, 1], got ${describe(text)}; the default 0.1 is used`;
  report(lenient.sink, { path, code: 'outOfRange', message });
  return undefined;
}

function readReclaim(pool: Scope): IdleIpReclaimPolicy | undefined {
  const scope = readObject(pool, 'reclaim');
  if (typeof scope === 'string') return undefined;
  const after = readDuration(scope, 'after', { positive: false });
  const interval = readDuration(scope, 'interval', { positive: true });
  const batchSize = readInteger(scope, 'batchSize', { min: 0 });
  const jitterFactor = readJitterFactor(scope);
  return {
    ...(after === undefined ? {} : { after }),
    ...(interval === undefined ? {} : { interval }),
    ...(batchSize === undefined ? {} : { batchSize }),
    ...(jitterFactor === undefined ? {} : { jitterFactor }),
  };
}

export function validatePool(spec: Scope): PoolSpec | undefined {
  const scope = readObject(spec, 'pool');
  if (scope === 'absent') {
    const path = childPath(spec.path, 'pool');
    const message = `${path} is not set yet: the Terway daemon on the node has not written its pool configuration`;
    report(spec.sink, { path, code: 'missing', severity: 'info', message });
  }
  if (typeof scope === 'string') return undefined;
  const maxPoolSize = readInteger(scope, 'maxPoolSize', { required: true, min: 0 });
  const minPoolSize = readInteger(scope, 'minPoolSize', { required: true, min: 0 });
  const lenient = withSink(scope, { problems: scope.sink.problems, severity: 'warning' });
  // Terway floors a period below 1 s at 1 s (see `poolPeriodMs`), so only text that is no duration at all warns.
  const poolSyncPeriod = readDuration(lenient, 'poolSyncPeriod', { positive: false });
  const warmUpSize = readInteger(scope, 'warmUpSize', { min: 0 });
  const reclaim = readReclaim(scope);
  if (maxPoolSize === undefined || minPoolSize === undefined) return undefined;
  if (minPoolSize > maxPoolSize) {
    // The pool would grow to min and then release down to max on every pass.
    const path = childPath(scope.path, 'minPoolSize');
    const message = `${path} (${minPoolSize}) is greater than maxPoolSize (${maxPoolSize})`;
    report(scope.sink, { path, code: 'inverted', message });
  }
  return {
    maxPoolSize,
    minPoolSize,
    ...(poolSyncPeriod === undefined ? {} : { poolSyncPeriod }),
    ...(warmUpSize === undefined ? {} : { warmUpSize }),
    ...(reclaim === undefined ? {} : { reclaim }),
  };
}
