import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { SignatureVerifier } from '../../src/ecs-emulator/wire-signature.js';
import { startEmulatorHarness } from '../support/ecs-emulator.js';
import type { EmulatorHarness } from '../support/ecs-emulator.js';

const KEY = { accessKeyId: 'eniflow-emulator-ak', accessKeySecret: 'eniflow-emulator-secret' };
const NOW_MS = Date.UTC(2026, 11, 3, 8, 0, 0);
const EMPTY_BODY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

/**
 * The headers alibabacloud_ecs20140526 7.11.8 (alibabacloud_tea_openapi 0.4.6) sends with a v3 request, as captured
 * from the Python SDK. It signs all of these (Node and Go sign only host and x-acs-*); its HTTP library adds
 * `accept-encoding` afterwards, unsigned.
 */
function pythonStyleHeaders(nonce: string): Record<string, string> {
  return {
    accept: 'application/json',
    host: '127.0.0.1:8080',
    'user-agent': 'AlibabaCloud (Linux; x86_64) Python/3.11.7 Core/0.4.3 TeaDSL/2',
    'x-acs-action': 'DescribeInstanceTypes',
    'x-acs-content-sha256': EMPTY_BODY_SHA256,
    'x-acs-credentials-provider': 'static_ak',
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
    'x-acs-credentials-provider',
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

describe('a request signed the way the Python SDK signs it, over HTTP', () => {
  let harness: EmulatorHarness;
  before(async () => {
    harness = await startEmulatorHarness();
  });
  after(async () => {
    await harness.close();
  });

  it('is answered like any other, and refused once a required header is left out of SignedHeaders', async () => {
    const send = async (nonce: string, leaveOut?: string) => {
      const headers = {
        ...pythonStyleHeaders(nonce),
        host: harness.emulator.endpoint,
        'x-acs-date': new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
        'accept-encoding': 'identity',
      };
      const signed = [
        'accept',
        'host',
        'user-agent',
        ...Object.keys(headers).filter((name) => name.startsWith('x-acs-')),
      ]
        .filter((name) => name !== leaveOut)
        .sort();
      const response = await fetch(`http://${harness.emulator.endpoint}/?InstanceTypes.1=ecs.g7.large`, {
        method: 'POST',
        headers: { ...headers, authorization: authorization(headers, signed) },
      });
      return (await response.json()) as {
        Code?: string;
        InstanceTypes?: { InstanceType: { InstanceTypeId: string }[] };
      };
    };
    const answer = await send('python-1');
    assert.equal(answer.InstanceTypes?.InstanceType[0]?.InstanceTypeId, 'ecs.g7.large');
    assert.equal((await send('python-2', 'x-acs-signature-nonce')).Code, 'IncompleteSignature');
  });
});
