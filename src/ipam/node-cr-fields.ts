/**
 * Typed readers of the untyped JSON of a Node CR. Each reader takes the object being read (a {@link Scope}) and a
 * key, returns the value when it has the expected type, and otherwise reports a problem to the scope's sink and
 * returns `undefined`, so a validator reads a whole object without stopping at the first defect.
 */

import { sortedKeys } from './node-model.js';
import type { SpecProblem, SpecProblemSeverity } from './node-cr-problems.js';
import { parseRfc3339 } from './rfc3339.js';

export type JsonObject = Readonly<Record<string, unknown>>;

/** Where problems of one part of the walk go, and the severity its defects get by default. */
export interface Sink {
  readonly problems: SpecProblem[];
  readonly severity: SpecProblemSeverity;
}

/** One object being read: its path and its own properties. */
export interface Scope {
  readonly sink: Sink;
  readonly path: string;
  readonly object: JsonObject;
}

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Path of a field: fields are identifiers, so they join with a dot. */
export function childPath(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

/** Path of a map entry: keys (ENI ids, IPs) may hold dots or colons, so they go in brackets, JSON-quoted. */
export function mapEntryPath(path: string, key: string): string {
  return `${path}[${JSON.stringify(key)}]`;
}

/** A value shown in a message: short, and never the content of an object. */
export function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (typeof value === 'string') return JSON.stringify(value.length > 64 ? `${value.slice(0, 64)}…` : value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

export function report(sink: Sink, problem: Omit<SpecProblem, 'severity'> & { severity?: SpecProblemSeverity }): void {
  sink.problems.push({ severity: sink.severity, ...problem });
}

export function scopeOf(sink: Sink, path: string, object: JsonObject): Scope {
  return { sink, path, object };
}

/** An own property, with `null` read as absent. */
export function own(object: JsonObject, key: string): unknown {
  if (!Object.hasOwn(object, key)) return undefined;
  const value = object[key];
  return value === null ? undefined : value;
}

export function reportMissing(scope: Scope, key: string): void {
  const path = childPath(scope.path, key);
  report(scope.sink, { path, code: 'missing', message: `${path} is missing` });
}

export function reportType(scope: Scope, key: string, expected: string): void {
  const path = childPath(scope.path, key);
  const got = describe(own(scope.object, key));
  report(scope.sink, { path, code: 'invalidType', message: `${path} must be ${expected}, got ${got}` });
}

export interface FieldRule {
  required?: boolean;
}

export function readString(scope: Scope, key: string, rule: FieldRule = {}): string | undefined {
  const value = own(scope.object, key);
  if (value === undefined) {
    if (rule.required === true) reportMissing(scope, key);
    return undefined;
  }
  if (typeof value === 'string') return value;
  reportType(scope, key, 'a string');
  return undefined;
}

/** A required string that must also be non-empty (ids and names). */
export function readName(scope: Scope, key: string): string | undefined {
  const value = readString(scope, key, { required: true });
  if (value !== '') return value;
  const path = childPath(scope.path, key);
  report(scope.sink, { path, code: 'missing', message: `${path} is empty` });
  return undefined;
}

export function readBoolean(scope: Scope, key: string, rule: FieldRule = {}): boolean | undefined {
  const value = own(scope.object, key);
  if (value === undefined) {
    if (rule.required === true) reportMissing(scope, key);
    return undefined;
  }
  if (typeof value === 'boolean') return value;
  reportType(scope, key, 'true or false');
  return undefined;
}

export interface IntegerRule extends FieldRule {
  /** Smallest accepted value: 0 for counts, 1 for capacities the allocator divides by or multiplies with. */
  min: number;
}

export function readInteger(scope: Scope, key: string, rule: IntegerRule): number | undefined {
  const value = own(scope.object, key);
  if (value === undefined) {
    if (rule.required === true) reportMissing(scope, key);
    return undefined;
  }
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) {
    reportType(scope, key, 'an integer');
    return undefined;
  }
  if (value >= rule.min) return value;
  const path = childPath(scope.path, key);
  const bound = rule.min === 0 ? 'negative' : `below ${rule.min}`;
  report(scope.sink, { path, code: 'outOfRange', message: `${path} must not be ${bound}, got ${value}` });
  return undefined;
}

export function readEnum<T extends string>(
  scope: Scope,
  key: string,
  rule: FieldRule & { values: readonly T[] },
): T | undefined {
  const value = readString(scope, key, rule);
  if (value === undefined) return undefined;
  const known = rule.values.find((candidate) => candidate === value);
  if (known !== undefined) return known;
  const path = childPath(scope.path, key);
  const message = `${path} is ${describe(value)}, expected one of ${rule.values.join(', ')}`;
  report(scope.sink, { path, code: 'unknownValue', message });
  return undefined;
}

export function readStringArray(scope: Scope, key: string): string[] | undefined {
  const value = own(scope.object, key);
  if (value === undefined) return undefined;
  if (Array.isArray(value)) {
    // Array.from turns holes of a sparse array into undefined, which every() then sees and refuses.
    const items: readonly unknown[] = Array.from(value as readonly unknown[]);
    if (items.every((item): item is string => typeof item === 'string')) return [...items];
  }
  reportType(scope, key, 'a list of strings');
  return undefined;
}

export function readStringMap(scope: Scope, key: string): Record<string, string> | undefined {
  const value = own(scope.object, key);
  if (value === undefined) return undefined;
  if (isObject(value) && Object.values(value).every((item) => typeof item === 'string')) {
    // fromEntries defines own properties, so a "__proto__" key stays data instead of changing the prototype.
    return Object.fromEntries(sortedKeys(value).map((name) => [name, value[name] as string]));
  }
  reportType(scope, key, 'a map of strings');
  return undefined;
}

/** An RFC 3339 time kept as text; a malformed one is reported (as a warning) and dropped. */
export function readTime(scope: Scope, key: string): string | undefined {
  const value = readString(scope, key);
  if (value === undefined || parseRfc3339(value) !== undefined) return value;
  const path = childPath(scope.path, key);
  report(scope.sink, {
    path,
    code: 'malformedTime',
    severity: 'warning',
    message: `${path} is not an RFC 3339 time: ${describe(value)}`,
  });
  return undefined;
}

/** A nested object; absent gives `undefined` silently, another type is reported. */
export function readObject(scope: Scope, key: string): Scope | 'absent' | 'invalid' {
  const value = own(scope.object, key);
  if (value === undefined) return 'absent';
  if (isObject(value)) return scopeOf(scope.sink, childPath(scope.path, key), value);
  reportType(scope, key, 'an object');
  return 'invalid';
}

export function withSink(scope: Scope, sink: Sink): Scope {
  return { ...scope, sink };
}

/** Copies an object with its keys sorted, so output never depends on the order fields were checked. */
export function sortObject<T extends object>(value: T): T {
  const record = value as Readonly<Record<string, unknown>>;
  return Object.fromEntries(sortedKeys(record).map((key) => [key, record[key]])) as T;
}
