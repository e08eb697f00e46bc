import { apiError } from '../api-error.js';
import type { RequestParams } from '../request-params.js';

/** A page of items plus the paging fields the response carries. */
export interface Page<T> {
  items: T[];
  /** Empty on the last page (token mode), as the real API does. */
  nextToken: string;
  pageNumber: number;
  pageSize: number;
  totalCount: number;
}

function encodeCursor(key: number): string {
  return Buffer.from(`after:${key}`).toString('base64');
}

function decodeCursor(token: string): number {
  const text = Buffer.from(token, 'base64').toString('utf8');
  const key = Number(text.slice('after:'.length));
  if (!text.startsWith('after:') || !Number.isInteger(key)) {
    throw apiError('InvalidParameter', 'The specified parameter "NextToken" is not valid.');
  }
  return key;
}

/**
 * Pages `items` (sorted by the increasing `keyOf`) in either mode the ECS APIs offer: `MaxResults` + `NextToken`
 * (an opaque cursor after the last key returned, so deletions between pages skip nothing) or the older
 * `PageNumber` / `PageSize`. Token mode applies when either of its parameters is present.
 */
export function pageItems<T>(request: {
  items: T[];
  keyOf: (item: T) => number;
  params: RequestParams;
  limits: { minResults: number; maxResults: number; defaultPageSize: number; maxPageSize: number };
}): Page<T> {
  const { items, params, limits } = request;
  const maxResults = params.integer('MaxResults');
  const nextToken = params.string('NextToken');
  if (maxResults !== undefined || nextToken !== undefined) {
    const size = Math.min(limits.maxResults, Math.max(limits.minResults, maxResults ?? limits.maxResults));
    const after = nextToken === undefined ? Number.NEGATIVE_INFINITY : decodeCursor(nextToken);
    const remaining = items.filter((item) => request.keyOf(item) > after);
    const pageItemsList = remaining.slice(0, size);
    const last = pageItemsList.at(-1);
    return {
      items: pageItemsList,
      nextToken: remaining.length > size && last !== undefined ? encodeCursor(request.keyOf(last)) : '',
      pageNumber: 1,
      pageSize: size,
      totalCount: items.length,
    };
  }
  const pageNumber = params.integer('PageNumber') ?? 1;
  const pageSize = params.integer('PageSize') ?? limits.defaultPageSize;
  if (pageNumber < 1 || pageSize < 1 || pageSize > limits.maxPageSize) {
    throw apiError('InvalidParameter', `PageNumber must be ≥ 1 and PageSize between 1 and ${limits.maxPageSize}.`);
  }
  return {
    items: items.slice((pageNumber - 1) * pageSize, pageNumber * pageSize),
    nextToken: '',
    pageNumber,
    pageSize,
    totalCount: items.length,
  };
}
