/**
 * The cluster's ECS budget as configured (Terway's `rateLimit` map over Terway's defaults) and as routed: every ECS
 * activity on the task queue of the action it calls, with that action's budget as the queue's server-side rate.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

import { createEcsActivities } from '../../../src/activities/ecs-activities.js';
import { ecsApplicationFailure } from '../../../src/activities/ecs/ecs-application-failure.js';
import { classifyEcsError } from '../../../src/activities/ecs/ecs-errors.js';
import type { EcsApi } from '../../../src/activities/ecs/ecs-api.js';
import { VSwitchCache } from '../../../src/activities/ecs/vswitch-cache.js';
import { ConfigError, loadWorkerConfig } from '../../../src/config.js';
import { createLogger } from '../../../src/logger.js';
import {
  DEFAULT_CALLS_PER_MINUTE,
  DEFAULT_ECS_BURST,
  ECS_ACTIVITY_APIS,
  ecsActivityTaskQueue,
  ecsTaskQueue,
  LOCAL_ECS_ACTIVITIES,
  parseCallsPerMinute,
  QUEUED_ECS_APIS,
  UNUSED_TERWAY_APIS,
  queueRatePerSecond,
  serverMinBurstSize,
  worstMinute,
} from '../../../src/shared/ecs-budget.js';
import { ACTIVITY_POLICIES } from '../../../src/workflows/activity-policies.js';
import { routeActivities } from '../../../src/worker/worker-group.js';

describe('parseCallsPerMinute', () => {
  const table: [name: string, text: string, overrides: Record<string, number>, problems: RegExp[]][] = [
    ['an empty map keeps the defaults', '{}', {}, []],
    ['one action overridden', '{"CreateNetworkInterface": 60}', { CreateNetworkInterface: 60 }, []],
    ['fractions are allowed (a call every other minute)', '{"DescribeVSwitches": 0.5}', { DescribeVSwitches: 0.5 }, []],
    ['an unknown action', '{"CreateNetworkInterfaces": 60}', {}, [/unknown action "CreateNetworkInterfaces"/]],
    ['zero', '{"AttachNetworkInterface": 0}', {}, [/AttachNetworkInterface must be a positive number.*got 0/]],
    ['a string', '{"AttachNetworkInterface": "60"}', {}, [/got "60"/]],
    ['not JSON', '{CreateNetworkInterface: 60}', {}, [/is not JSON/]],
    ['not an object', '[60]', {}, [/must be a JSON object/]],
    [
      'every problem at once',
      '{"Nope": 1, "DeleteNetworkInterface": -5, "CreateNetworkInterface": 100}',
      { CreateNetworkInterface: 100 },
      [/unknown action "Nope"/, /DeleteNetworkInterface must be a positive number/],
    ],
  ];
  for (const [name, text, overrides, problems] of table) {
    it(name, () => {
      const parsed = parseCallsPerMinute(text, 'ENIFLOW_ECS_RATE_LIMIT');
      assert.deepEqual(parsed.callsPerMinute, { ...DEFAULT_CALLS_PER_MINUTE, ...overrides });
      assert.equal(parsed.problems.length, problems.length, parsed.problems.join('; '));
      problems.forEach((pattern, i) => {
        assert.match(parsed.problems[i] ?? '', pattern);
      });
    });
  }

  it("accepts Terway's keys for actions eniflow never calls, and says it ignores them", () => {
    const parsed = parseCallsPerMinute('{"DescribeInstanceTypes": 100, "CreateNetworkInterface": 50}', 'x');
    assert.deepEqual(parsed.problems, []);
    assert.deepEqual(parsed.ignored, ['DescribeInstanceTypes']);
    assert.equal(parsed.callsPerMinute.CreateNetworkInterface, 50);
  });

  it("has Terway's defaults", () => {
    // Terway's published controller defaults in calls per minute, grouped as issue 18 lists them (not a copy of
    // the constant): every action eniflow calls has its Terway budget, and each Terway key is either one eniflow
    // calls or one it accepts and ignores (DescribeInstanceTypes).
    const terway: [actions: string[], perMinute: number][] = [
      [['CreateNetworkInterface', 'AttachNetworkInterface', 'DeleteNetworkInterface'], 500],
      [['DetachNetworkInterface'], 400],
      [['AssignPrivateIpAddresses', 'UnassignPrivateIpAddresses', 'AssignIpv6Addresses', 'UnassignIpv6Addresses'], 400],
      [['DescribeNetworkInterfaces'], 800],
      [['DescribeInstanceTypes'], 400],
      [['DescribeVSwitches'], 300],
    ];
    const expected: Record<string, number> = {};
    for (const [actions, perMinute] of terway) {
      for (const action of actions) {
        if (!(UNUSED_TERWAY_APIS as readonly string[]).includes(action)) expected[action] = perMinute;
      }
    }
    // Not in Terway's map (Terway never tags an existing ENI): eniflow's adoption, on the IP actions' budget.
    expected['TagResources'] = 400;
    assert.deepEqual(DEFAULT_CALLS_PER_MINUTE, expected);
  });
});

describe('ENIFLOW_ECS_RATE_LIMIT', () => {
  const env = { ECS_REGION_ID: 'cn-hangzhou' };
  it('defaults to Terway budgets', () => {
    assert.deepEqual(loadWorkerConfig(env).ecs.callsPerMinute, DEFAULT_CALLS_PER_MINUTE);
  });
  it('overrides per action', () => {
    const config = loadWorkerConfig({
      ...env,
      ENIFLOW_ECS_RATE_LIMIT: '{"CreateNetworkInterface": 60}',
      ENIFLOW_ECS_BURST: '20',
    });
    assert.equal(config.ecs.callsPerMinute.CreateNetworkInterface, 60);
    assert.equal(config.ecs.callsPerMinute.AttachNetworkInterface, 500);
    assert.equal(config.ecs.burst, 20);
  });
  it('defaults the burst to the smallest budget of a queued action, what the shipped server settings give', () => {
    assert.equal(loadWorkerConfig(env).ecs.burst, DEFAULT_ECS_BURST);
    assert.equal(DEFAULT_ECS_BURST, 400);
    assert.equal(DEFAULT_ECS_BURST, Math.min(...QUEUED_ECS_APIS.map((api) => DEFAULT_CALLS_PER_MINUTE[api])));
  });
  it("admits at once at least 250 creates and attaches (Terway: 500), and never more than an action's budget", () => {
    for (const api of ['CreateNetworkInterface', 'AttachNetworkInterface'] as const) {
      assert.ok(DEFAULT_ECS_BURST >= 250, `${api}: ${DEFAULT_ECS_BURST} at once`);
    }
    for (const api of QUEUED_ECS_APIS) {
      assert.ok(DEFAULT_ECS_BURST <= DEFAULT_CALLS_PER_MINUTE[api], `${api}: burst within its budget`);
      // Terway's bucket: v at once plus v a minute; ours never holds more in any 60-s window.
      const budget = DEFAULT_CALLS_PER_MINUTE[api];
      assert.ok(worstMinute({ callsPerMinute: budget, burst: DEFAULT_ECS_BURST }) <= 2 * budget, api);
    }
  });
  it('a burst up to the budget is accepted (Terway: exactly one minute)', () => {
    const config = loadWorkerConfig({
      ...env,
      ENIFLOW_ECS_RATE_LIMIT: '{"CreateNetworkInterface": 400}',
      ENIFLOW_ECS_BURST: '400',
    });
    assert.equal(config.ecs.burst, 400);
  });
  it('refuses a burst larger than a budget, naming the actions', () => {
    assert.throws(
      () =>
        loadWorkerConfig({ ...env, ENIFLOW_ECS_RATE_LIMIT: '{"CreateNetworkInterface": 60, "DescribeVSwitches": 1}' }),
      (error: unknown) =>
        error instanceof ConfigError &&
        error.problems.length === 1 &&
        (error.problems[0] ?? '').includes(
          'ENIFLOW_ECS_BURST 400 is more than the budget of CreateNetworkInterface 60 per minute:',
        ),
    );
    assert.throws(
      () =>
        loadWorkerConfig({ ...env, ENIFLOW_ECS_RATE_LIMIT: '{"CreateNetworkInterface": 60}', ENIFLOW_ECS_BURST: '61' }),
      /ENIFLOW_ECS_BURST 61 is more than the budget of CreateNetworkInterface 60/,
    );
    assert.equal(
      loadWorkerConfig({ ...env, ENIFLOW_ECS_RATE_LIMIT: '{"CreateNetworkInterface": 60}', ENIFLOW_ECS_BURST: '60' })
        .ecs.burst,
      60,
    );
    assert.throws(() => loadWorkerConfig({ ...env, ENIFLOW_ECS_BURST: '0' }), /ENIFLOW_ECS_BURST must be a positive/);
  });
  it('reports a bad map with the other problems', () => {
    assert.throws(
      () => loadWorkerConfig({ ENIFLOW_ECS_RATE_LIMIT: '{"Create": 1}' }),
      (error: unknown) =>
        error instanceof ConfigError &&
        error.problems.some((p) => p.includes('ECS_REGION_ID')) &&
        error.problems.some((p) => p.includes('unknown action "Create"')),
    );
  });
});

describe('routing ECS activities to their budget queues', () => {
  const activities = createEcsActivities({
    ecs: {} as EcsApi,
    vSwitches: new VSwitchCache(),
    logger: createLogger({ name: 'test', level: 'silent' }),
  });

  it('every ECS activity has a queue, or is a documented local read', () => {
    for (const name of Object.keys(activities)) {
      assert.ok(name in ECS_ACTIVITY_APIS || name in LOCAL_ECS_ACTIVITIES, `${name} is not routed`);
    }
  });

  it('puts each ECS activity on its action queue at the budget per second; the rest on the workflow queue', () => {
    const kube = { readNodeView: () => Promise.resolve(undefined) };
    const queues = routeActivities({
      taskQueue: 'eniflow',
      activities: { ...activities, ...kube },
      callsPerMinute: { ...DEFAULT_CALLS_PER_MINUTE, CreateNetworkInterface: 60 },
      ecsActivityNames: Object.keys(activities),
    });
    const [main, ...ecs] = queues;
    assert.equal(main?.taskQueue, 'eniflow');
    assert.deepEqual(Object.keys(main?.activities ?? {}).sort(), ['describeVSwitches', 'readNodeView']);
    assert.deepEqual(
      ecs.map((queue) => queue.api),
      QUEUED_ECS_APIS,
    );
    const create = ecs.find((queue) => queue.api === 'CreateNetworkInterface');
    assert.equal(create?.taskQueue, 'eniflow-ecs-CreateNetworkInterface');
    assert.equal(create?.maxTaskQueueActivitiesPerSecond, 1, "the budget per second, Terway's refill");
    assert.equal(create?.minSlots, DEFAULT_ECS_BURST, 'a worker runs a whole burst at once');
    assert.deepEqual(Object.keys(create?.activities ?? {}), ['createEni']);
    const describe = ecs.find((queue) => queue.api === 'DescribeNetworkInterfaces');
    assert.deepEqual(Object.keys(describe?.activities ?? {}).sort(), [
      'describeEnisById',
      'describeNodeEnis',
      'findEnisByIntent',
      'listEniflowEnis',
      'waitEniStatus',
    ]);
    assert.equal(describe?.maxTaskQueueActivitiesPerSecond, 800 / 60);
    assert.equal(main?.minSlots, undefined, "the workflow queue keeps the worker's own limit");
  });

  it('runs the prefix activities on the queues (and budgets) of the address activities: same OpenAPI actions', () => {
    const queues = routeActivities({
      taskQueue: 'eniflow',
      activities,
      callsPerMinute: DEFAULT_CALLS_PER_MINUTE,
      ecsActivityNames: Object.keys(activities),
    });
    const activitiesOn = (api: string) =>
      Object.keys(queues.find((queue) => queue.api === api)?.activities ?? {}).sort();
    assert.deepEqual(activitiesOn('AssignPrivateIpAddresses'), ['assignIpv4', 'assignIpv4Prefixes']);
    assert.deepEqual(activitiesOn('UnassignPrivateIpAddresses'), ['unassignIpv4', 'unassignIpv4Prefixes']);
    assert.deepEqual(activitiesOn('AssignIpv6Addresses'), ['assignIpv6', 'assignIpv6Prefixes']);
    assert.deepEqual(activitiesOn('UnassignIpv6Addresses'), ['unassignIpv6', 'unassignIpv6Prefixes']);
  });

  it('refuses to start with an ECS activity that has no queue', () => {
    assert.throws(
      () =>
        routeActivities({
          taskQueue: 'q',
          activities: {},
          callsPerMinute: DEFAULT_CALLS_PER_MINUTE,
          ecsActivityNames: ['listEnisByIntentTag'],
        }),
      /ECS activities without a budget queue: listEnisByIntentTag/,
    );
  });

  it("refills at the budget per second, Terway's v/60", () => {
    assert.equal(queueRatePerSecond(500), 500 / 60);
    assert.equal(queueRatePerSecond(60), 1);
    assert.equal(queueRatePerSecond(12), 12 / 60);
  });

  it('bounds a 60-s window by the burst plus the budget: twice the budget at most, as Terway', () => {
    assert.equal(worstMinute({ callsPerMinute: 500, burst: 400 }), 900);
    assert.equal(worstMinute({ callsPerMinute: 400, burst: 400 }), 800);
    assert.equal(worstMinute({ callsPerMinute: 60, burst: 60 }), 120);
  });

  it('sets the ECS queues burst per partition, rounded down (never more than declared)', () => {
    assert.equal(serverMinBurstSize(400), 100);
    assert.equal(serverMinBurstSize(100), 25);
    assert.equal(serverMinBurstSize(250), 62);
    assert.equal(serverMinBurstSize(10, 3), 3);
    assert.equal(serverMinBurstSize(1), 1);
  });

  it('ships the compose server with the default burst', () => {
    const yaml = readFileSync(new URL('../../../temporal/dynamicconfig/development-sql.yaml', import.meta.url), 'utf8');
    const value = /^matching\.minTaskThrottlingBurstSize:\n\s+- value: (\d+)/m.exec(yaml)?.[1];
    assert.equal(Number(value), serverMinBurstSize(DEFAULT_ECS_BURST));
    assert.equal(Number(value) * 4, DEFAULT_ECS_BURST, 'the 4 default partitions admit the whole burst');
  });

  it('routes each ECS queue at its budget whatever the burst, with slots for the burst', () => {
    const queues = routeActivities({
      taskQueue: 'q',
      activities: {},
      callsPerMinute: DEFAULT_CALLS_PER_MINUTE,
      burst: 300,
    });
    const create = queues.find((queue) => queue.api === 'CreateNetworkInterface');
    assert.equal(create?.maxTaskQueueActivitiesPerSecond, 500 / 60);
    assert.equal(create?.minSlots, 300);
  });

  it('a throttled call is retried, with jitter, by every activity policy', () => {
    for (const code of ['Throttling', 'Throttling.User', 'Throttling.Api']) {
      const failure = classifyEcsError({
        operation: 'CreateNetworkInterface',
        error: { name: 'ThrottlingError', code },
      });
      assert.equal(failure.type, 'EcsThrottled', code);
      assert.equal(failure.retryable, true, code);
      const retry = ecsApplicationFailure(failure, () => 0.5);
      assert.equal(retry.nonRetryable, false);
      assert.ok(retry.nextRetryDelay !== undefined, `${code}: a jittered delay, not the policy's fixed one`);
    }
    for (const [name, policy] of Object.entries(ACTIVITY_POLICIES)) {
      const retry: { nonRetryableErrorTypes?: string[]; maximumAttempts?: number } = policy.retry;
      assert.ok(!(retry.nonRetryableErrorTypes ?? []).includes('EcsThrottled'), `${name} retries a throttle`);
      assert.ok((retry.maximumAttempts ?? Infinity) >= 2, `${name} tries more than once`);
    }
  });

  it('names the queues after the workflow queue and the action', () => {
    assert.equal(ecsTaskQueue('tq', 'DeleteNetworkInterface'), 'tq-ecs-DeleteNetworkInterface');
    assert.equal(ecsActivityTaskQueue('tq', 'waitEniStatus'), 'tq-ecs-DescribeNetworkInterfaces');
    assert.equal(ecsActivityTaskQueue('tq', 'readNodeView'), undefined);
    assert.equal(ecsActivityTaskQueue('tq', 'describeVSwitches'), undefined);
  });
});

describe('retry delay of a failed ECS call', () => {
  const failure = {
    operation: 'CreateNetworkInterface' as const,
    code: 'Throttling.User',
    message: 'Request was denied due to user flow control.',
  };
  const table: [name: string, input: Parameters<typeof ecsApplicationFailure>[0], delay: number | undefined][] = [
    ['throttled: full jitter from the attempt', { ...failure, type: 'EcsThrottled', retryable: true }, 550],
    ['5xx: full jitter too', { ...failure, code: 'InternalError', type: 'EcsTransient', retryable: true }, 550],
    ["the cloud's hint", { ...failure, type: 'EcsThrottled', retryable: true, retryAfterMs: 3_000 }, 3_000],
    [
      'a busy ENI keeps the policy backoff',
      { ...failure, code: 'InvalidOperation.InvalidEniState', type: 'EcsInvalidState', retryable: true },
      undefined,
    ],
    [
      'a refusal is not retried',
      { ...failure, code: 'InvalidVSwitchId.IpNotEnough', type: 'EcsVSwitchExhausted', retryable: false },
      undefined,
    ],
  ];
  for (const [name, input, delay] of table) {
    it(name, () => {
      const applicationFailure = ecsApplicationFailure(input, () => 0.5);
      assert.equal(applicationFailure.nextRetryDelay, delay);
      assert.equal(applicationFailure.type, input.type);
    });
  }
});
