import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { VSwitchCache } from '../../../src/activities/ecs/vswitch-cache.js';
import { readNodeViewForPass } from '../../../src/activities/node-pass-read.js';
import type { NodeViewReply } from '../../../src/activities/kube/node-view.js';

const a = { vSwitchId: 'vsw-a', zoneId: 'z', availableIpCount: 10 };
const b = { vSwitchId: 'vsw-b', zoneId: 'z', availableIpCount: 4 };

async function cacheWith(now: { ms: number }, ...infos: (typeof a)[]): Promise<VSwitchCache> {
  const cache = new VSwitchCache({ ttlMs: 1000, nowMs: () => now.ms });
  for (const info of infos) await cache.get(info.vSwitchId, () => Promise.resolve({ ...info }));
  return cache;
}

describe('VSwitchCache.peek', () => {
  it('answers as get would for ids all cached and fresh, sorted, without fetching', async () => {
    const now = { ms: 0 };
    const cache = await cacheWith(now, a, b);
    cache.took('vsw-a', 3);
    assert.deepEqual(cache.peek(['vsw-b', 'vsw-a', 'vsw-b']), { 'vsw-a': { ...a, availableIpCount: 7 }, 'vsw-b': b });
    assert.deepEqual(Object.keys(cache.peek(['vsw-b', 'vsw-a']) ?? {}), ['vsw-a', 'vsw-b']);
  });

  it('answers nothing when one id is missing or stale, so the pass asks describeVSwitches', async () => {
    const now = { ms: 0 };
    const cache = await cacheWith(now, a);
    assert.equal(cache.peek(['vsw-a', 'vsw-b']), undefined);
    now.ms = 1000;
    assert.equal(cache.peek(['vsw-a']), undefined);
  });

  it('shows a block with its remaining time, as get does', async () => {
    const now = { ms: 0 };
    const cache = await cacheWith(now, a);
    cache.block('vsw-a');
    now.ms = 400;
    const viaGet = await cache.get('vsw-a', () => Promise.reject(new Error('no fetch expected')));
    assert.deepEqual(cache.peek(['vsw-a']), { 'vsw-a': viaGet });
    assert.equal(viaGet?.availableIpCount, 0);
    assert.equal(viaGet?.blockedForMs, 600);
  });

  it('answers nothing for a vSwitch being fetched (the lookup shares that fetch instead)', async () => {
    const now = { ms: 0 };
    const cache = await cacheWith(now, a);
    cache.refresh(['vsw-a']);
    let release: (() => void) | undefined;
    const pending = cache.get(
      'vsw-a',
      () =>
        new Promise((resolve) => {
          release = () => {
            resolve({ ...a });
          };
        }),
    );
    assert.equal(cache.peek(['vsw-a']), undefined);
    release?.();
    await pending;
    assert.deepEqual(cache.peek(['vsw-a']), { 'vsw-a': a });
  });
});

describe('readNodeViewForPass', () => {
  const reply: NodeViewReply = { digest: 'd1', base: 'd0', changes: [] };

  it('adds the cached vSwitches to the read, and passes the read its own input only', async () => {
    const now = { ms: 0 };
    const cache = await cacheWith(now, a, b);
    const asked: unknown[] = [];
    const read = readNodeViewForPass(
      (input) => {
        asked.push(input);
        return Promise.resolve({ ...reply });
      },
      { vSwitches: cache },
    );
    const answer = await read({ nodeName: 'n', base: 'd0', vSwitchIds: ['vsw-a'] });
    assert.deepEqual(answer, { ...reply, vSwitches: { 'vsw-a': a } });
    assert.deepEqual(asked, [{ nodeName: 'n', base: 'd0' }]);
  });

  it('adds nothing when not asked, for a page, or when a vSwitch is not cached', async () => {
    const now = { ms: 0 };
    const cache = await cacheWith(now, a);
    const read = readNodeViewForPass(() => Promise.resolve({ ...reply }), { vSwitches: cache });
    assert.deepEqual(await read({ nodeName: 'n' }), reply);
    assert.deepEqual(await read({ nodeName: 'n', vSwitchIds: [] }), reply);
    assert.deepEqual(await read({ nodeName: 'n', vSwitchIds: ['vsw-a', 'vsw-b'] }), reply);
    assert.deepEqual(await read({ nodeName: 'n', page: { digest: 'd', after: 'x' }, vSwitchIds: ['vsw-a'] }), reply);
  });

  it('reports the versions the read cache had seen before the read, not for a page or an unsynced cache', async () => {
    const now = { ms: 0 };
    const cache = await cacheWith(now, a);
    let versions: Record<string, string> = { pods: '10', 'node-crs': '4' };
    const read = readNodeViewForPass(
      () => {
        // The informers move on while the read runs: the reply names what was seen before it.
        versions = { pods: '12', 'node-crs': '4' };
        return Promise.resolve({ ...reply });
      },
      { vSwitches: cache, readCache: { versions: () => versions } },
    );
    assert.deepEqual(await read({ nodeName: 'n' }), { ...reply, seen: { pods: '10', 'node-crs': '4' } });
    assert.deepEqual(await read({ nodeName: 'n', page: { digest: 'd', after: 'x' } }), reply);
    // An unsynced cache reports nothing (then the read may be live): the reply names no versions.
    versions = {};
    const unsynced = readNodeViewForPass(() => Promise.resolve({ ...reply }), {
      vSwitches: cache,
      readCache: { versions: () => versions },
    });
    assert.deepEqual(await unsynced({ nodeName: 'n' }), reply);
  });
});
