import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { apiError } from './api-error.js';
import type { EmulatorApiError } from './api-error.js';

/** The signature fields of the legacy RPC (v2) path, which travel in the query. */
export const V2_SIGNATURE_FIELDS = [
  'Signature',
  'SignatureMethod',
  'SignatureVersion',
  'SignatureNonce',
  'AccessKeyId',
];

/** Encoding used by both signatures (Alibaba Cloud's percent-encoding): encodeURIComponent plus `! ' ( ) *`. */
function percentEncode(text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** Requests may be up to this far from the server clock (the real API allows 15 minutes). */
const MAX_CLOCK_SKEW_MS = 15 * 60_000;
/** Nonces remembered to detect replays; the oldest are forgotten first. */
const NONCE_MEMORY = 100_000;

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

function headerText(value: string | string[] | undefined): string {
  if (value === undefined) return '';
  return Array.isArray(value)
    ? [...value]
        .map((v) => v.trim())
        .sort()
        .join(',')
    : value.trim();
}

/** Headers every v3 signature must cover when the request carries them: `host`, `content-type` and `x-acs-*`. */
function mustBeSigned(name: string): boolean {
  return name === 'host' || name === 'content-type' || name.startsWith('x-acs-');
}

/**
 * Checks the `SignedHeaders` list of a v3 signature and returns its names, or why it is unacceptable.
 *
 * The SDKs differ in what they sign: Node and Go sign exactly the required headers, while Python's default
 * signer also signs `accept` and `user-agent`. Any list is accepted if it is lower-case, sorted without
 * repeats, names only headers the request carries, and includes every required one, so an unsigned `x-acs-*`
 * header can never slip in.
 */
function signedHeaderNames(list: string, headers: IncomingHttpHeaders): readonly string[] | string {
  const names = list.split(';');
  for (const [index, name] of names.entries()) {
    if (name === '' || name !== name.toLowerCase()) return `The signed header "${name}" is not a lower-case name.`;
    const previous = names[index - 1];
    if (previous !== undefined && previous >= name) return 'The signed headers are not sorted or not unique.';
    if (headers[name] === undefined) return `The signed header "${name}" is not in the request.`;
  }
  const listed = new Set(names);
  const unsigned = Object.keys(headers).filter((name) => mustBeSigned(name) && !listed.has(name));
  if (unsigned.length > 0) return `The request header(s) ${unsigned.join(', ')} must be signed.`;
  return names;
}

/**
 * Verifies ACS3-HMAC-SHA256 (v3, `authorization` header) and HMAC-SHA1 (v2, `Signature` query) signatures the
 * way the SDK computes them (`@alicloud/openapi-core` getAuthorization / getRPCSignature), and rejects reused
 * nonces and stale timestamps.
 */
export class SignatureVerifier {
  private readonly secrets: Map<string, string>;
  private readonly seenNonces = new Set<string>();

  constructor(accessKeys: readonly { accessKeyId: string; accessKeySecret: string }[]) {
    this.secrets = new Map(accessKeys.map((key) => [key.accessKeyId, key.accessKeySecret]));
  }

  /** Returns the error to answer, or null when the request is properly signed. */
  verify(request: {
    method: string;
    headers: IncomingHttpHeaders;
    query: Record<string, string>;
    nowMs: number;
  }): EmulatorApiError | null {
    const authorization = request.headers.authorization;
    if (authorization !== undefined) return this.verifyV3({ ...request, authorization });
    if (request.query['Signature'] !== undefined) return this.verifyV2(request);
    return apiError('IncompleteSignature', 'The request carries no signature.');
  }

  private rememberNonce(nonce: string | undefined): EmulatorApiError | null {
    if (nonce === undefined || nonce === '')
      return apiError('MissingParameter', 'The input parameter "SignatureNonce" is not supplied.');
    if (this.seenNonces.has(nonce)) return apiError('SignatureNonceUsed');
    this.seenNonces.add(nonce);
    if (this.seenNonces.size > NONCE_MEMORY) {
      const oldest = this.seenNonces.values().next();
      if (oldest.done !== true) this.seenNonces.delete(oldest.value);
    }
    return null;
  }

  private checkTimestamp(text: string | undefined, nowMs: number): EmulatorApiError | null {
    const time = text === undefined ? Number.NaN : Date.parse(text);
    if (Number.isNaN(time) || Math.abs(time - nowMs) > MAX_CLOCK_SKEW_MS) return apiError('IllegalTimestamp');
    return null;
  }

  private verifyV3(request: {
    method: string;
    headers: IncomingHttpHeaders;
    query: Record<string, string>;
    nowMs: number;
    authorization: string;
  }): EmulatorApiError | null {
    const match = /^ACS3-HMAC-SHA256 Credential=([^,]*),SignedHeaders=([^,]*),Signature=([0-9a-f]+)$/.exec(
      request.authorization,
    );
    if (match === null) return apiError('IncompleteSignature', 'The authorization header is malformed.');
    const [, accessKeyId = '', signedHeaderList = '', signature = ''] = match;
    const secret = this.secrets.get(accessKeyId);
    if (secret === undefined) return apiError('InvalidAccessKeyId.NotFound');
    const signedHeaders = signedHeaderNames(signedHeaderList, request.headers);
    if (typeof signedHeaders === 'string') return apiError('IncompleteSignature', signedHeaders);
    let canonicalHeaders = '';
    for (const name of signedHeaders) canonicalHeaders += `${name}:${headerText(request.headers[name])}\n`;
    const canonicalQuery = Object.keys(request.query)
      .sort()
      .map((key) => `${key}=${percentEncode(request.query[key] ?? '')}`)
      .join('&');
    const payloadHash = headerText(request.headers['x-acs-content-sha256']);
    const canonicalRequest = `${request.method}\n/\n${canonicalQuery}\n${canonicalHeaders}\n${signedHeaderList}\n${payloadHash}`;
    const stringToSign = `ACS3-HMAC-SHA256\n${createHash('sha256').update(canonicalRequest).digest('hex')}`;
    const expected = createHmac('sha256', secret).update(stringToSign).digest('hex');
    if (!sameText(expected, signature)) {
      return apiError('IncompleteSignature', 'The request signature does not conform to Aliyun standards.');
    }
    return (
      this.checkTimestamp(headerText(request.headers['x-acs-date']), request.nowMs) ??
      this.rememberNonce(headerText(request.headers['x-acs-signature-nonce']))
    );
  }

  private verifyV2(request: { method: string; query: Record<string, string>; nowMs: number }): EmulatorApiError | null {
    const { query } = request;
    const accessKeyId = query['AccessKeyId'];
    const secret = accessKeyId === undefined ? undefined : this.secrets.get(accessKeyId);
    if (secret === undefined) return apiError('InvalidAccessKeyId.NotFound');
    if (query['SignatureMethod'] !== 'HMAC-SHA1')
      return apiError('IncompleteSignature', 'Unsupported SignatureMethod.');
    const canonical = Object.keys(query)
      .filter((key) => key !== 'Signature')
      .sort()
      .map((key) => `${percentEncode(key)}=${percentEncode(query[key] ?? '')}`)
      .join('&');
    const stringToSign = `${request.method}&${percentEncode('/')}&${percentEncode(canonical)}`;
    const expected = createHmac('sha1', `${secret}&`).update(stringToSign).digest('base64');
    if (!sameText(expected, query['Signature'] ?? '')) return apiError('SignatureDoesNotMatch');
    return this.checkTimestamp(query['Timestamp'], request.nowMs) ?? this.rememberNonce(query['SignatureNonce']);
  }
}
