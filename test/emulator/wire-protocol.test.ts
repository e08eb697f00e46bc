import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Ecs, * as $Ecs from '@alicloud/ecs20140526';
import * as $OpenApi from '@alicloud/openapi-core';
import Vpc, * as $Vpc from '@alicloud/vpc20160428';
import * as $dara from '@darabonba/typescript';
import { captureError, DEMO, startEmulatorHarness } from '../support/ecs-emulator.js';
import type { EmulatorHarness } from '../support/ecs-emulator.js';

/** Calls an arbitrary RPC action through the SDK's generic callApi (same signing path as generated methods). */
function callRaw(
  client: Ecs.default,
  request: { action: string; version?: string; query?: Record<string, string> },
): Promise<unknown> {
  return client.callApi(
    new $OpenApi.$OpenApiUtil.Params({
      action: request.action,
      version: request.version ?? '2014-05-26',
      protocol: 'HTTPS',
      pathname: '/',
      method: 'POST',
      authType: 'AK',
      style: 'RPC',
      reqBodyType: 'formData',
      bodyType: 'json',
    }),
    new $OpenApi.$OpenApiUtil.OpenApiRequest({ query: request.query ?? {} }),
    new $dara.RuntimeOptions({}),
  );
}

describe('wire protocol', () => {
  let harness: EmulatorHarness;
  before(async () => {
    harness = await startEmulatorHarness();
  });
  after(async () => {
    await harness.close();
  });

  it('accepts v3 (ACS3-HMAC-SHA256) and v2 (HMAC-SHA1) signatures from the real clients', async () => {
    const v3 = await harness.ecs.describeInstanceTypes(new $Ecs.DescribeInstanceTypesRequest({}));
    assert.equal(v3.statusCode, 200);
    const v2Client = new Ecs.default(harness.config({ signatureAlgorithm: 'v2' }));
    const v2 = await v2Client.describeNetworkInterfaces(
      new $Ecs.DescribeNetworkInterfacesRequest({ regionId: DEMO.regionId, instanceId: DEMO.instanceLargeH }),
    );
    assert.equal(v2.body?.networkInterfaceSets?.networkInterfaceSet?.[0]?.type, 'Primary');
    const v2Vpc = new Vpc.default(harness.config({ signatureAlgorithm: 'v2' }));
    const vSwitches = await v2Vpc.describeVSwitches(new $Vpc.DescribeVSwitchesRequest({ regionId: DEMO.regionId }));
    assert.equal(vSwitches.body?.totalCount, 4);
  });

  it('rejects a wrong secret on v3 with IncompleteSignature and on v2 with SignatureDoesNotMatch', async () => {
    const badV3 = new Ecs.default(harness.config({ accessKeySecret: 'wrong' }));
    const v3Error = await captureError(() => badV3.describeInstanceTypes(new $Ecs.DescribeInstanceTypesRequest({})));
    assert.ok(v3Error instanceof $OpenApi.ClientError);
    assert.equal(v3Error.code, 'IncompleteSignature');
    assert.equal(v3Error.statusCode, 400);
    const badV2 = new Ecs.default(harness.config({ accessKeySecret: 'wrong', signatureAlgorithm: 'v2' }));
    const v2Error = await captureError(() => badV2.describeInstanceTypes(new $Ecs.DescribeInstanceTypesRequest({})));
    assert.ok(v2Error instanceof $OpenApi.ClientError);
    assert.equal(v2Error.code, 'SignatureDoesNotMatch');
    const calls = await harness.emulator.admin.calls({ action: 'DescribeInstanceTypes' });
    assert.deepEqual(
      calls.slice(-2).map((call) => [call.code, call.applied]),
      [
        ['IncompleteSignature', false],
        ['SignatureDoesNotMatch', false],
      ],
    );
  });

  it('rejects an unknown AccessKeyId on both paths with InvalidAccessKeyId.NotFound', async () => {
    for (const signatureAlgorithm of ['v3', 'v2']) {
      const client = new Ecs.default(
        harness.config({ accessKeyId: 'nobody', ...(signatureAlgorithm === 'v2' ? { signatureAlgorithm } : {}) }),
      );
      const error = await captureError(() => client.describeInstanceTypes(new $Ecs.DescribeInstanceTypesRequest({})));
      assert.equal(error.code, 'InvalidAccessKeyId.NotFound', signatureAlgorithm);
      assert.equal(error.name, 'ClientError');
    }
  });

  it('answers an unknown action with InvalidAction.NotFound (404) and a wrong version with InvalidVersion', async () => {
    const unknown = await captureError(() =>
      callRaw(harness.ecs, { action: 'RunInstances', query: { RegionId: DEMO.regionId } }),
    );
    assert.ok(unknown instanceof $OpenApi.ClientError);
    assert.equal(unknown.code, 'InvalidAction.NotFound');
    assert.equal(unknown.statusCode, 404);
    const wrongVersion = await captureError(() =>
      callRaw(harness.ecs, { action: 'DescribeInstanceTypes', version: '2016-04-28' }),
    );
    assert.equal(wrongVersion.code, 'InvalidVersion');
  });

  it('fills every error field the SDK reads: RequestId, Code, Message, HostId, Recommend', async () => {
    const error = await captureError(() =>
      harness.ecs.deleteNetworkInterface(
        new $Ecs.DeleteNetworkInterfaceRequest({ regionId: DEMO.regionId, networkInterfaceId: 'eni-missing' }),
      ),
    );
    assert.ok(error instanceof $OpenApi.ClientError);
    assert.equal(error.code, 'InvalidEniId.NotFound');
    assert.equal(error.statusCode, 404);
    assert.match(String(error.requestId), /^[0-9A-F-]{36}$/);
    const data = error.data as Record<string, unknown>;
    assert.equal(data['HostId'], 'ecs.aliyuncs.com');
    assert.match(String(data['Recommend']), /InvalidEniId\.NotFound/);
    assert.match(error.message, /^InvalidEniId\.NotFound: code: 404, .*eni-missing/);
  });

  it('requires RegionId and rejects a foreign region', async () => {
    const missing = await captureError(() =>
      harness.ecs.deleteNetworkInterface(new $Ecs.DeleteNetworkInterfaceRequest({ networkInterfaceId: 'eni-x' })),
    );
    assert.equal(missing.code, 'MissingParameter');
    assert.equal(missing.statusCode, 400);
    const foreign = await captureError(() =>
      harness.ecs.describeNetworkInterfaces(new $Ecs.DescribeNetworkInterfacesRequest({ regionId: 'cn-beijing' })),
    );
    assert.equal(foreign.code, 'InvalidRegionId.NotFound');
  });

  it('round-trips lists, tags and special characters through flattening and both signatures', async () => {
    const name = "a*b!c'd(e)f~g 名字";
    for (const config of [harness.config(), harness.config({ signatureAlgorithm: 'v2' })]) {
      const client = new Ecs.default(config);
      const created = await client.createNetworkInterface(
        new $Ecs.CreateNetworkInterfaceRequest({
          regionId: DEMO.regionId,
          vSwitchId: DEMO.vSwitchH,
          securityGroupIds: [DEMO.securityGroup, 'sg-bp1emu00000000000002'],
          networkInterfaceName: name,
          tag: [
            new $Ecs.CreateNetworkInterfaceRequestTag({ key: 'owner', value: 'my controller' }),
            new $Ecs.CreateNetworkInterfaceRequestTag({ key: 'empty', value: '' }),
          ],
        }),
      );
      assert.equal(created.body?.networkInterfaceName, name);
      assert.deepEqual(created.body?.securityGroupIds?.securityGroupId, [
        DEMO.securityGroup,
        'sg-bp1emu00000000000002',
      ]);
      assert.deepEqual(
        created.body?.tags?.tag?.map((tag) => [tag.tagKey, tag.tagValue]),
        [
          ['owner', 'my controller'],
          ['empty', ''],
        ],
      );
    }
  });

  it('rejects a replayed signature nonce (SignatureNonceUsed) and a stale x-acs-date (IllegalTimestamp)', async () => {
    /** Signs a DescribeInstanceTypes request exactly as the SDK does, so only nonce and date vary. */
    const signedRequest = (request: { nonce: string; date: string }) => {
      const headers: Record<string, string> = {
        host: harness.emulator.endpoint,
        'x-acs-action': 'DescribeInstanceTypes',
        'x-acs-version': '2014-05-26',
        'x-acs-date': request.date,
        'x-acs-signature-nonce': request.nonce,
        'x-acs-content-sha256': 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
      };
      headers['authorization'] = $OpenApi.OpenApiUtil.getAuthorization(
        { pathname: '/', method: 'POST', query: {}, headers } as unknown as Parameters<
          typeof $OpenApi.OpenApiUtil.getAuthorization
        >[0],
        'ACS3-HMAC-SHA256',
        headers['x-acs-content-sha256'] ?? '',
        harness.emulator.accessKeyId,
        harness.emulator.accessKeySecret,
      );
      return fetch(`http://${harness.emulator.endpoint}/`, { method: 'POST', headers });
    };
    const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    const first = await signedRequest({ nonce: 'nonce-replayed', date: now });
    assert.equal(first.status, 200);
    const replay = await signedRequest({ nonce: 'nonce-replayed', date: now });
    assert.equal(replay.status, 400);
    assert.equal(((await replay.json()) as { Code: string }).Code, 'SignatureNonceUsed');
    const stale = await signedRequest({ nonce: 'nonce-stale', date: '2020-01-01T00:00:00Z' });
    assert.equal(((await stale.json()) as { Code: string }).Code, 'IllegalTimestamp');
  });

  it('keeps idle keep-alive connections open longer than the client reuses them', async () => {
    await harness.ecs.describeInstanceTypes(new $Ecs.DescribeInstanceTypesRequest({}));
    await new Promise((resolve) => setTimeout(resolve, 300));
    const second = await harness.ecs.describeInstanceTypes(new $Ecs.DescribeInstanceTypesRequest({}));
    assert.equal(second.statusCode, 200);
  });
});
