import { apiError } from './api-error.js';
import type { ResourceTag } from './model-types.js';

/**
 * Typed reads of an action's decoded query parameters: scalars, `X.N` lists and `Tag.N.Key`/`Tag.N.Value` pairs
 * (the RPC style's flattened query form), with the real `MissingParameter` / `InvalidParameter` errors on bad input.
 */
export class RequestParams {
  readonly raw: Record<string, string>;

  constructor(raw: Record<string, string>) {
    this.raw = raw;
  }

  string(name: string): string | undefined {
    const value = this.raw[name];
    return value === undefined || value === '' ? undefined : value;
  }

  requiredString(name: string): string {
    const value = this.string(name);
    if (value === undefined) {
      throw apiError(
        'MissingParameter',
        `The input parameter "${name}" that is mandatory for processing this request is not supplied.`,
      );
    }
    return value;
  }

  integer(name: string): number | undefined {
    const text = this.string(name);
    if (text === undefined) return undefined;
    const value = Number(text);
    if (!Number.isInteger(value)) throw apiError('InvalidParameter', `The specified parameter "${name}" is not valid.`);
    return value;
  }

  boolean(name: string): boolean | undefined {
    const text = this.string(name);
    if (text === undefined) return undefined;
    if (text !== 'true' && text !== 'false') {
      throw apiError('InvalidParameter', `The specified parameter "${name}" is not valid.`);
    }
    return text === 'true';
  }

  /** Collects `name.1`, `name.2`, … ordered numerically by N (so `.10` follows `.9`). */
  list(name: string): string[] {
    const prefix = `${name}.`;
    const indexed: [number, string][] = [];
    for (const key of Object.keys(this.raw)) {
      if (!key.startsWith(prefix)) continue;
      const index = Number(key.slice(prefix.length));
      const value = this.raw[key];
      if (Number.isInteger(index) && index >= 1 && value !== undefined && value !== '') indexed.push([index, value]);
    }
    return indexed.sort((a, b) => a[0] - b[0]).map(([, value]) => value);
  }

  /** A parameter sent as a JSON array string, as DescribeInstances sends `InstanceIds`. */
  jsonList(name: string): string[] | undefined {
    const text = this.string(name);
    if (text === undefined) return undefined;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw apiError('InvalidParameter', `The specified parameter "${name}" is not a JSON array.`);
    }
    if (!Array.isArray(parsed) || parsed.some((item) => typeof item !== 'string')) {
      throw apiError('InvalidParameter', `The specified parameter "${name}" is not a JSON array of strings.`);
    }
    return parsed as string[];
  }

  /** `Tag.N.Key` / `Tag.N.Value` pairs ordered by N; a missing value is the empty string. */
  tags(): ResourceTag[] {
    const byIndex = new Map<number, { key?: string; value?: string }>();
    for (const [key, value] of Object.entries(this.raw)) {
      const match = /^Tag\.(\d+)\.(Key|Value)$/.exec(key);
      if (match === null) continue;
      const index = Number(match[1]);
      const entry = byIndex.get(index) ?? {};
      if (match[2] === 'Key') entry.key = value;
      else entry.value = value;
      byIndex.set(index, entry);
    }
    const tags: ResourceTag[] = [];
    for (const [, entry] of [...byIndex].sort((a, b) => a[0] - b[0])) {
      if (entry.key === undefined || entry.key === '') {
        throw apiError('InvalidParameter', 'The specified parameter "Tag.N.Key" is not valid.');
      }
      tags.push({ key: entry.key, value: entry.value ?? '' });
    }
    return tags;
  }
}
