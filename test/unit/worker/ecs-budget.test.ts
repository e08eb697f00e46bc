/**
 * The cluster's ECS budget as configured (Terway's `rateLimit` map over Terway's defaults) and as routed: every ECS
 * activity on the task queue of the action it calls, with that action's budget as the queue's server-side rate.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

import { createEcsActivities } from '../../../src/activities/ecs-activities.js';
import { ecsApplicationFailure } from '../../../src/activities/ecs/ecs-application-failure.js';
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
} from '../../../src/shared/ecs-budget.js';
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
  it('defaults the burst to what the shipped server settings give, a quarter of the smallest budget', () => {
    assert.equal(loadWorkerConfig(env).ecs.burst, DEFAULT_ECS_BURST);
    assert.equal(DEFAULT_ECS_BURST, Math.min(...QUEUED_ECS_APIS.map((api) => DEFAULT_CALLS_PER_MINUTE[api])) / 4);
  });
  it('refuses a burst larger than half a budget, naming the actions', () => {
    assert.throws(
      () => loadWorkerConfig({ ...env, ENIFLOW_ECS_RATE_LIMIT: '{"CreateNetworkInterface": 60}' }),
      (error: unknown) =>
        error instanceof ConfigError &&
        error.problems.length === 1 &&
        (error.problems[0] ?? '').includes(
          'ENIFLOW_ECS_BURST 100 is more than half the budget of CreateNetworkInterface 60 per minute',
        ),
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
    assert.equal(create?.maxTaskQueueActivitiesPerSecond, 50 / 60, 'the server burst kept inside the minute');
    assert.deepEqual(Object.keys(create?.activities ?? {}), ['createEni']);
    const describe = ecs.find((queue) => queue.api === 'DescribeNetworkInterfaces');
    assert.deepEqual(Object.keys(describe?.activities ?? {}).sort(), [
      'describeEnisById',
      'describeNodeEnis',
      'findEnisByIntent',
      'listEniflowEnis',
      'waitEniStatus',
    ]);
    assert.equal(describe?.maxTaskQueueActivitiesPerSecond, 790 / 60);
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

  it('keeps the server burst inside the minute, and never halves a budget', () => {
    assert.equal(queueRatePerSecond(500), 490 / 60);
    assert.equal(queueRatePerSecond(60), 50 / 60);
    assert.equal(queueRatePerSecond(12), 6 / 60);
    // A configured burst is taken out of the minute; one below the default server's is not trusted.
    assert.equal(queueRatePerSecond(500, 100), 400 / 60);
    assert.equal(queueRatePerSecond(60, 20), 40 / 60);
    assert.equal(queueRatePerSecond(500, 2), 490 / 60);
  });

  it('sets the ECS queues burst per partition, rounded up', () => {
    assert.equal(serverMinBurstSize(100), 25);
    assert.equal(serverMinBurstSize(20), 5);
    assert.equal(serverMinBurstSize(10, 3), 4);
    assert.equal(serverMinBurstSize(1), 1);
  });

  it('ships the compose server with the default burst', () => {
    const yaml = readFileSync(new URL('../../../temporal/dynamicconfig/development-sql.yaml', import.meta.url), 'utf8');
    const value = /^matching\.minTaskThrottlingBurstSize:\n\s+- value: (\d+)/m.exec(yaml)?.[1];
    assert.equal(Number(value), serverMinBurstSize(DEFAULT_ECS_BURST));
  });

  it('routes each ECS queue at its budget less the burst', () => {
    const queues = routeActivities({
      taskQueue: 'q',
      activities: {},
      callsPerMinute: DEFAULT_CALLS_PER_MINUTE,
      burst: 100,
    });
    const create = queues.find((queue) => queue.api === 'CreateNetworkInterface');
    assert.equal(create?.maxTaskQueueActivitiesPerSecond, 400 / 60);
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
