import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { describe, it } from 'node:test';
import { SignatureVerifier } from '../../src/ecs-emulator/wire-signature.js';

const KEY = { accessKeyId: 'ak', accessKeySecret: 'secret' };
const NOW_MS = Date.UTC(2026, 11, 3, 8, 0, 0);
const EMPTY_BODY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

/** The headers the Python SDK sends with a v3 request; it signs all of them (Node and Go sign only host and x-acs-*). */
function pythonStyleHeaders(nonce: string): Record<string, string> {
  return {
    accept: 'application/json',
    host: '127.0.0.1:8080',
    'user-agent': 'AlibabaCloud (Linux; x86_64) Python/3.11.7 Core/0.4.3 TeaDSL/2',
    'x-acs-action': 'DescribeInstanceTypes',
    'x-acs-content-sha256': EMPTY_BODY_SHA256,
    'x-acs-date': '2026-12-03T08:00:00Z',
    'x-acs-signature-nonce': nonce,
    'x-acs-version': '2014-05-26',
  };
}

/** ACS3-HMAC-SHA256 over exactly `signed` (in that order), written out from the documented algorithm. */
function authorization(headers: Record<string, string>, signed: readonly string[]): string {
  const canonicalHeaders = signed.map((name) => `${name}:${(headers[name] ?? '').trim()}\n`).join('');
  const canonicalRequest = `POST\n/\nInstanceTypes.1=ecs.g7.large\n${canonicalHeaders}\n${signed.join(';')}\n${EMPTY_BODY_SHA256}`;
  const stringToSign = `ACS3-HMAC-SHA256\n${createHash('sha256').update(canonicalRequest).digest('hex')}`;
  const signature = createHmac('sha256', KEY.accessKeySecret).update(stringToSign).digest('hex');
  return `ACS3-HMAC-SHA256 Credential=${KEY.accessKeyId},SignedHeaders=${signed.join(';')},Signature=${signature}`;
}

function verify(headers: Record<string, string>, signed: readonly string[]): string {
  const verifier = new SignatureVerifier([KEY]);
  const error = verifier.verify({
    method: 'POST',
    headers: { ...headers, authorization: authorization(headers, signed) },
    query: { 'InstanceTypes.1': 'ecs.g7.large' },
    nowMs: NOW_MS,
  });
  return error === null ? 'ok' : `${error.code}: ${error.message}`;
}

describe('v3 signed-header lists', () => {
  const required = [
    'host',
    'x-acs-action',
    'x-acs-content-sha256',
    'x-acs-date',
    'x-acs-signature-nonce',
    'x-acs-version',
  ];

  it('accepts the minimal list (Node, Go) and a list that also signs accept and user-agent (Python)', () => {
    assert.equal(verify(pythonStyleHeaders('n1'), required), 'ok');
    assert.equal(verify(pythonStyleHeaders('n2'), Object.keys(pythonStyleHeaders('n2')).sort()), 'ok');
    assert.equal(verify(pythonStyleHeaders('n3'), ['accept', ...required]), 'ok');
  });

  it('verifies over exactly the listed headers: changing a signed extra header breaks the signature', () => {
    const headers = pythonStyleHeaders('n4');
    const signed = Object.keys(headers).sort();
    const verifier = new SignatureVerifier([KEY]);
    const error = verifier.verify({
      method: 'POST',
      headers: { ...headers, 'user-agent': 'tampered', authorization: authorization(headers, signed) },
      query: { 'InstanceTypes.1': 'ecs.g7.large' },
      nowMs: NOW_MS,
    });
    assert.equal(error?.code, 'IncompleteSignature');
    assert.match(error.message, /does not conform/);
  });

  it('rejects a list that leaves out a required header, names an absent one, or is not sorted and unique', () => {
    const headers = pythonStyleHeaders('n5');
    const cases: [string, readonly string[], RegExp][] = [
      ['without x-acs-action', required.filter((name) => name !== 'x-acs-action'), /x-acs-action must be signed/],
      ['without host', required.filter((name) => name !== 'host'), /host must be signed/],
      ['with an absent header', ['content-type', ...required], /"content-type" is not in the request/],
      ['unsorted', [...required].reverse(), /not sorted/],
      ['repeated', ['host', ...required], /not sorted or not unique/],
      ['upper-case', ['Host', ...required.slice(1)], /not a lower-case name/],
      ['empty', [], /not a lower-case name/],
    ];
    for (const [name, signed, message] of cases) {
      const result = verify(headers, signed);
      assert.match(result, /^IncompleteSignature: /, name);
      assert.match(result, message, name);
    }
  });
});
