/**
 * The ECS and VPC SDKs load after the worker polls, in the background (AlibabaEcsApi.preload), not inside the first
 * workflow task that needs a cloud call. This file runs in its own process: nothing else here loads the SDKs.
 */
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';

import { AlibabaEcsApi } from '../../../src/activities/ecs/alibaba-ecs-api.js';

const require = createRequire(import.meta.url);

/** Whether a module of the package is in the CommonJS module cache (the SDKs are CommonJS). */
function loaded(packageName: string): boolean {
  const main = require.resolve(packageName);
  return Object.keys(require.cache).includes(main);
}

describe('AlibabaEcsApi.preload', () => {
  it('loads the ECS and VPC SDKs without a call, and no sooner', async () => {
    const api = new AlibabaEcsApi({
      connection: { regionId: 'cn-hangzhou', protocol: 'http', ecsEndpoint: '127.0.0.1:9', vpcEndpoint: '127.0.0.1:9' },
    });
    assert.equal(loaded('@alicloud/ecs20140526'), false, 'importing the API class leaves the SDKs unloaded');
    assert.equal(loaded('@alicloud/vpc20160428'), false);
    await api.preload();
    assert.equal(loaded('@alicloud/ecs20140526'), true);
    assert.equal(loaded('@alicloud/vpc20160428'), true);
  });
});
