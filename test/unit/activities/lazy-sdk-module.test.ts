/**
 * The ECS and VPC clients load without their generated models (lazy-sdk-module.ts), and every call eniflow makes
 * still sends and reads the same shapes, checked against the emulator. This file runs in its own process and never
 * imports the SDK packages itself, so the CommonJS cache shows exactly what the loader pulled in.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { AlibabaEcsApi } from '../../../src/activities/ecs/alibaba-ecs-api.js';
import { loadedLazily, parseModelIndex } from '../../../src/activities/ecs/lazy-sdk-module.js';
import { startEcsEmulator } from '../../../src/ecs-emulator/index.js';
import type { EcsEmulator } from '../../../src/ecs-emulator/index.js';

const require = createRequire(import.meta.url);
const PACKAGES = ['@alicloud/ecs20140526', '@alicloud/vpc20160428'] as const;
const VSWITCH = 'vsw-bp1emuh00000000000a';
const INSTANCE = 'i-bp1emu00000000000003';
const SECURITY_GROUP = 'sg-bp1emu00000000000001';

/** The generated model files an eager load requires (every `models/*.js` of both clients). */
function modelFileCount(): number {
  return PACKAGES.map((name) => join(dirname(require.resolve(name)), 'models'))
    .map((dir) => readdirSync(dir).filter((file) => file.endsWith('.js')).length)
    .reduce((a, b) => a + b, 0);
}

function loadedSdkFiles(): string[] {
  return Object.keys(require.cache).filter((file) => PACKAGES.some((name) => file.includes(`${name}/`)));
}

describe('the Alibaba SDK clients with lazy models', () => {
  let emulator: EcsEmulator;
  let api: AlibabaEcsApi;
  before(async () => {
    emulator = await startEcsEmulator({ settings: { transitionDelays: { attachMs: 0, detachMs: 0, deleteMs: 0 } } });
    api = new AlibabaEcsApi({
      connection: {
        regionId: emulator.regionId,
        ecsEndpoint: emulator.endpoint,
        vpcEndpoint: emulator.endpoint,
        protocol: 'http',
        accessKey: { accessKeyId: emulator.accessKeyId, accessKeySecret: emulator.accessKeySecret },
        readTimeoutMs: 5_000,
      },
    });
  });
  after(() => emulator.close());

  it('runs an ENI through its life against the emulator with the shapes eniflow reads', async () => {
    const vSwitch = await api.describeVSwitch({ vSwitchId: VSWITCH });
    assert.equal(vSwitch?.vSwitchId, VSWITCH);
    assert.ok((vSwitch?.availableIpCount ?? 0) > 0);

    const { eni } = await api.createEni({
      vSwitchId: VSWITCH,
      securityGroupIds: [SECURITY_GROUP],
      eniType: 'Secondary',
      trafficMode: 'Standard',
      ipv4Count: 2,
      ipv6Count: 1,
      tags: { owner: 'lazy-sdk-test' },
      clientToken: 'lazy-sdk-create',
      description: 'lazy sdk',
    });
    assert.match(eni.eniId, /^eni-/);
    assert.equal(eni.ipv4.length, 2);
    assert.equal(eni.ipv6.length, 1);

    await api.attachEni({ eniId: eni.eniId, instanceId: INSTANCE });
    const assigned = await api.assignIpv4({ eniId: eni.eniId, count: 2, clientToken: 'lazy-sdk-assign' });
    assert.equal(assigned.ips.length, 2);
    await api.tagEnis({ eniIds: [eni.eniId], tags: { extra: 'yes' } });

    const [described] = await api.describeEnis({ eniIds: [eni.eniId] });
    assert.equal(described?.instanceId, INSTANCE);
    assert.equal(described?.ipv4.length, 4);
    assert.deepEqual(described?.tags, { owner: 'lazy-sdk-test', extra: 'yes' });

    await api.unassignIpv4({ eniId: eni.eniId, ips: assigned.ips });
    await api.detachEni({ eniId: eni.eniId, instanceId: INSTANCE });
    await api.deleteEni({ eniId: eni.eniId });
    assert.deepEqual(await api.describeEnis({ eniIds: [eni.eniId] }), []);
  });

  it('loads a small fraction of the model files an eager import loads', () => {
    for (const name of PACKAGES) assert.equal(loadedLazily(name), true, `${name} loaded through the lazy path`);
    const loaded = loadedSdkFiles().length;
    const eager = modelFileCount();
    assert.ok(loaded > 0, 'the clients are loaded');
    assert.ok(loaded * 20 < eager, `${loaded} SDK files loaded, an eager import loads more than ${eager}`);
  });
});

describe('parseModelIndex', () => {
  const generated = [
    '"use strict";',
    'Object.defineProperty(exports, "__esModule", { value: true });',
    'exports.B = exports.A = void 0;',
    'var X_1 = require("./X");',
    'Object.defineProperty(exports, "A", { enumerable: true, get: function () { return X_1.A; } });',
    'var X_2 = require("./X");',
    'Object.defineProperty(exports, "B", { enumerable: true, get: function () { return X_2.B; } });',
    '//# sourceMappingURL=model.js.map',
  ];

  it('maps every export to its file', () => {
    assert.deepEqual(
      [...(parseModelIndex(generated.join('\n')) ?? [])],
      [
        ['A', { file: 'X', exportName: 'A' }],
        ['B', { file: 'X', exportName: 'B' }],
      ],
    );
  });

  it('gives up (the caller loads eagerly) on a line the generator did not write before', () => {
    assert.equal(parseModelIndex([...generated, '__exportStar(require("./more"), exports);'].join('\n')), undefined);
    assert.equal(parseModelIndex(generated.slice(0, 3).join('\n')), undefined, 'an index without exports');
  });

  it('reads the installed clients’ indexes', () => {
    for (const name of PACKAGES) {
      const source = readFileSync(join(dirname(require.resolve(name)), 'models', 'model.js'), 'utf8');
      assert.ok((parseModelIndex(source)?.size ?? 0) > 1000, name);
    }
  });
});
