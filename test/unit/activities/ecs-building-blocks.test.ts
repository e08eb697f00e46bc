import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { ClientError, ServerError, ThrottlingError } from '@alicloud/openapi-core';

import { classifyEcsError } from '../../../src/activities/ecs/ecs-errors.js';
import type { EcsFailureType } from '../../../src/activities/ecs/ecs-errors.js';
import { DEFAULT_CALLS_PER_MINUTE } from '../../../src/activities/ecs/ecs-operations.js';
import { EcsRateLimiter } from '../../../src/activities/ecs/rate-limiter.js';
import { VSwitchCache } from '../../../src/activities/ecs/vswitch-cache.js';

function sdkError(kind: 'client' | 'server' | 'throttling', code: string, extra: Record<string, unknown> = {}): Error {
  const init = { code, message: `${code}: boom`, statusCode: 400, requestId: 'REQ-1', data: {}, ...extra };
  if (kind === 'client') return new ClientError(init);
  if (kind === 'server') return new ServerError({ ...init, statusCode: 503 });
  return new ThrottlingError(init);
}

function transportError(code: string | undefined, name = 'Error'): Error {
  const error = new Error('transport') as Error & { code?: string };
  error.name = name;
  if (code !== undefined) error.code = code;
  return error;
}

describe('classifyEcsError', () => {
  const cases: { name: string; error: unknown; type: EcsFailureType; retryable: boolean }[] = [
    {
      name: 'Throttling.User',
      error: sdkError('throttling', 'Throttling.User'),
      type: 'EcsThrottled',
      retryable: true,
    },
    {
      name: 'ServiceUnavailable (5xx)',
      error: sdkError('server', 'ServiceUnavailable'),
      type: 'EcsTransient',
      retryable: true,
    },
    { name: 'InternalError', error: sdkError('server', 'InternalError'), type: 'EcsTransient', retryable: true },
    { name: 'an unknown 5xx code', error: sdkError('server', 'Weird.Thing'), type: 'EcsTransient', retryable: true },
    {
      name: 'Operation.Conflict',
      error: sdkError('client', 'Operation.Conflict'),
      type: 'EcsTransient',
      retryable: true,
    },
    {
      name: 'IpNotEnough',
      error: sdkError('client', 'InvalidVSwitchId.IpNotEnough'),
      type: 'EcsVSwitchExhausted',
      retryable: false,
    },
    {
      name: 'QuotaExceeded.PrivateIpAddress',
      error: sdkError('client', 'QuotaExceeded.PrivateIpAddress'),
      type: 'EcsVSwitchExhausted',
      retryable: false,
    },
    {
      name: 'EniPerInstanceLimitExceeded',
      error: sdkError('client', 'EniPerInstanceLimitExceeded'),
      type: 'EcsQuotaExceeded',
      retryable: false,
    },
    {
      name: 'Ipv6CountExceeded',
      error: sdkError('client', 'InvalidOperation.Ipv6CountExceeded'),
      type: 'EcsQuotaExceeded',
      retryable: false,
    },
    {
      name: 'InvalidEniId.NotFound',
      error: sdkError('client', 'InvalidEniId.NotFound'),
      type: 'EcsNotFound',
      retryable: false,
    },
    {
      name: 'InvalidEcsId.NotFound (the instance is missing, not the ENI)',
      error: sdkError('client', 'InvalidEcsId.NotFound'),
      type: 'EcsInstanceNotFound',
      retryable: false,
    },
    {
      name: 'InvalidInstanceId.NotFound',
      error: sdkError('client', 'InvalidInstanceId.NotFound'),
      type: 'EcsInstanceNotFound',
      retryable: false,
    },
    {
      name: 'InvalidEniState',
      error: sdkError('client', 'InvalidOperation.InvalidEniState'),
      type: 'EcsInvalidState',
      retryable: true,
    },
    {
      name: 'InvalidParameter',
      error: sdkError('client', 'InvalidParameter'),
      type: 'EcsInvalidRequest',
      retryable: false,
    },
    { name: 'Forbidden.RAM', error: sdkError('client', 'Forbidden.RAM'), type: 'EcsInvalidRequest', retryable: false },
    {
      name: 'IncompleteSignature',
      error: sdkError('client', 'IncompleteSignature'),
      type: 'EcsInvalidRequest',
      retryable: false,
    },
    {
      name: 'IdempotentParameterMismatch',
      error: sdkError('client', 'IdempotentParameterMismatch'),
      type: 'EcsInvalidRequest',
      retryable: false,
    },
    { name: 'an unknown 4xx code', error: sdkError('client', 'Brand.New'), type: 'EcsUnknown', retryable: true },
    { name: 'ECONNRESET', error: transportError('ECONNRESET'), type: 'EcsTransient', retryable: true },
    {
      name: 'a read timeout',
      error: transportError(undefined, 'RequestTimeoutError'),
      type: 'EcsTransient',
      retryable: true,
    },
    {
      name: 'a non-JSON gateway page',
      error: new SyntaxError("Unexpected token '<'"),
      type: 'EcsTransient',
      retryable: true,
    },
    { name: 'a thrown string', error: 'what', type: 'EcsUnknown', retryable: true },
  ];
  for (const c of cases) {
    it(`${c.name} → ${c.type}`, () => {
      const failure = classifyEcsError({ operation: 'AssignPrivateIpAddresses', error: c.error });
      assert.equal(failure.type, c.type);
      assert.equal(failure.retryable, c.retryable);
      assert.equal(failure.operation, 'AssignPrivateIpAddresses');
    });
  }

  it('keeps the cloud code, the RequestId and the retry-after hint', () => {
    const failure = classifyEcsError({
      operation: 'CreateNetworkInterface',
      error: sdkError('throttling', 'Throttling', { retryAfter: 1500 }),
    });
    assert.equal(failure.code, 'Throttling');
    assert.equal(failure.requestId, 'REQ-1');
    assert.equal(failure.retryAfterMs, 1500);
    const noId = classifyEcsError({ operation: 'CreateNetworkInterface', error: transportError('EPIPE') });
    assert.equal(noId.requestId, undefined);
    assert.equal(noId.code, 'EPIPE');
  });
});

describe('EcsRateLimiter', () => {
  it('allows a burst of the per-minute rate, then refills at rate/60 per second', () => {
    let now = 0;
    const limiter = new EcsRateLimiter({
      callsPerMinute: { ...DEFAULT_CALLS_PER_MINUTE, DescribeVSwitches: 3 },
      nowMs: () => now,
    });
    assert.ok(limiter.tryTake('DescribeVSwitches').ok);
    assert.ok(limiter.tryTake('DescribeVSwitches').ok);
    assert.ok(limiter.tryTake('DescribeVSwitches').ok);
    const refused = limiter.tryTake('DescribeVSwitches');
    assert.deepEqual(refused, { ok: false, waitMs: 20_000 });
    assert.ok(limiter.tryTake('DeleteNetworkInterface').ok, 'other operations have their own bucket');
    now = 20_000;
    assert.ok(limiter.tryTake('DescribeVSwitches').ok);
    assert.equal(limiter.tryTake('DescribeVSwitches').ok, false);
  });

  it('waits for a token and can be aborted', async () => {
    const limiter = new EcsRateLimiter({ callsPerMinute: { ...DEFAULT_CALLS_PER_MINUTE, DescribeVSwitches: 600 } });
    for (let i = 0; i < 600; i += 1) limiter.tryTake('DescribeVSwitches');
    const started = performance.now();
    await limiter.take('DescribeVSwitches');
    assert.ok(performance.now() - started >= 50, 'took a token only after a refill');
    const aborted = new AbortController();
    aborted.abort();
    for (let i = 0; i < 5; i += 1) limiter.tryTake('DescribeVSwitches');
    await assert.rejects(limiter.take('DescribeVSwitches', aborted.signal), { name: 'AbortError' });
  });
});

describe('VSwitchCache', () => {
  const info = { vSwitchId: 'vsw-a', zoneId: 'z', availableIpCount: 10 };

  it('serves a lookup from cache until the TTL ends, sharing one fetch between concurrent lookups', async () => {
    let now = 0;
    let fetches = 0;
    const cache = new VSwitchCache({ ttlMs: 1000, nowMs: () => now });
    const fetch = async () => {
      fetches += 1;
      await Promise.resolve();
      return { ...info };
    };
    const [a, b] = await Promise.all([cache.get('vsw-a', fetch), cache.get('vsw-a', fetch)]);
    assert.deepEqual(a, info);
    assert.deepEqual(b, info);
    assert.equal(fetches, 1);
    now = 999;
    await cache.get('vsw-a', fetch);
    assert.equal(fetches, 1);
    now = 1000;
    await cache.get('vsw-a', fetch);
    assert.equal(fetches, 2);
  });

  it('blocks an exhausted vSwitch for one TTL and does not cache unknown ones', async () => {
    let now = 0;
    const cache = new VSwitchCache({ ttlMs: 1000, nowMs: () => now });
    await cache.get('vsw-a', () => Promise.resolve({ ...info }));
    cache.block('vsw-a');
    assert.equal((await cache.get('vsw-a', () => Promise.resolve({ ...info })))?.availableIpCount, 0);
    now = 1001;
    assert.equal((await cache.get('vsw-a', () => Promise.resolve({ ...info })))?.availableIpCount, 10);
    assert.equal(await cache.get('vsw-x', () => Promise.resolve(undefined)), undefined);
    cache.block('vsw-y');
    assert.equal(
      (await cache.get('vsw-y', () => Promise.resolve({ ...info, vSwitchId: 'vsw-y' })))?.availableIpCount,
      0,
    );
  });

  it('lists blocks, and lifts one on a refresh (which then asks the cloud) or on addresses given', async () => {
    let now = 0;
    const cache = new VSwitchCache({ ttlMs: 1000, nowMs: () => now, wallClockMs: () => 5_000 });
    let fetches = 0;
    const fetch = () => {
      fetches += 1;
      return Promise.resolve({ ...info });
    };
    await cache.get('vsw-a', fetch);
    cache.block('vsw-a');
    cache.block('vsw-b');
    now = 400;
    assert.deepEqual(cache.blocked(), [
      { vSwitchId: 'vsw-a', blockedAtMs: 5_000, remainingMs: 600 },
      { vSwitchId: 'vsw-b', blockedAtMs: 5_000, remainingMs: 600 },
    ]);
    assert.deepEqual(await cache.get('vsw-a', fetch), { ...info, availableIpCount: 0, blockedForMs: 600 });
    assert.deepEqual(cache.refresh(['vsw-a', 'vsw-c']), ['vsw-a']);
    assert.deepEqual(await cache.get('vsw-a', fetch), info, 'asked the cloud again: not blocked');
    assert.equal(fetches, 2);
    const unblocked: string[] = [];
    cache.onUnblocked((vSwitchId) => unblocked.push(vSwitchId));
    assert.equal(cache.unblock('vsw-b'), true);
    assert.equal(cache.unblock('vsw-b'), false);
    assert.deepEqual(cache.blocked(), []);
    assert.deepEqual(unblocked, ['vsw-b'], 'only a lifted block is told (stuck nodes on it are woken)');
  });

  it('after a refusal keeps what the vSwitch still has when it is fewer than asked for, and blocks it otherwise', async () => {
    const cache = new VSwitchCache({ ttlMs: 1000, nowMs: () => 0 });
    const cloud = (availableIpCount: number) => () => Promise.resolve({ ...info, availableIpCount });
    await cache.get('vsw-a', cloud(10));
    // 10 asked, the cloud now says 8: the next ask takes the 8, no block.
    assert.equal(cache.refused('vsw-a', 10, { ...info, availableIpCount: 8 }), 'revised');
    assert.deepEqual(await cache.get('vsw-a', cloud(99)), { ...info, availableIpCount: 8 });
    assert.deepEqual(cache.blocked(), []);
    // 8 asked, the cloud says 8 (or more): the count is what the refusal contradicts, so the vSwitch is blocked.
    assert.equal(cache.refused('vsw-a', 8, { ...info, availableIpCount: 8 }), 'blocked');
    assert.equal((await cache.get('vsw-a', cloud(99)))?.availableIpCount, 0);
    // None left, or no answer: blocked; a revision lifts an earlier block.
    assert.equal(cache.refused('vsw-b', 3, { ...info, vSwitchId: 'vsw-b', availableIpCount: 0 }), 'blocked');
    assert.equal(cache.refused('vsw-c', 3, undefined), 'blocked');
    assert.equal(cache.refused('vsw-b', 3, { ...info, vSwitchId: 'vsw-b', availableIpCount: 2 }), 'revised');
    assert.deepEqual(
      cache.blocked().map((block) => block.vSwitchId),
      ['vsw-a', 'vsw-c'],
    );
  });

  it('counts addresses taken off the cached free count, never below 0, and leaves blocks alone', async () => {
    const cache = new VSwitchCache({ ttlMs: 1000, nowMs: () => 0 });
    const fetch = () => Promise.resolve({ ...info });
    await cache.get('vsw-a', fetch);
    cache.took('vsw-a', 8);
    assert.equal((await cache.get('vsw-a', fetch))?.availableIpCount, 2);
    cache.took('vsw-a', 5);
    assert.equal((await cache.get('vsw-a', fetch))?.availableIpCount, 0);
    cache.took('vsw-unknown', 1);
    assert.equal((await cache.get('vsw-unknown', () => Promise.resolve(undefined)))?.availableIpCount, undefined);
    await cache.get('vsw-b', () => Promise.resolve({ ...info, vSwitchId: 'vsw-b' }));
    cache.block('vsw-b');
    cache.took('vsw-b', 1);
    assert.equal(cache.blocked().length, 1);
  });

  it('keeps at most maxEntries vSwitches, dropping the oldest', async () => {
    let fetches = 0;
    const cache = new VSwitchCache({ maxEntries: 2 });
    const fetch = (id: string) => () => {
      fetches += 1;
      return Promise.resolve({ ...info, vSwitchId: id });
    };
    await cache.get('a', fetch('a'));
    await cache.get('b', fetch('b'));
    await cache.get('c', fetch('c'));
    await cache.get('b', fetch('b'));
    assert.equal(fetches, 3);
    await cache.get('a', fetch('a'));
    assert.equal(fetches, 4);
  });
});
