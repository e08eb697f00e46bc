/**
 * What eniflow needs of a Temporal server, named once: the server release, the namespace, the custom search
 * attributes and the dynamic config. temporal/docker-compose.yml and temporal/dynamicconfig/ are checked against it
 * (test/unit/scripts/temporal-compose-drift.test.ts), the dev server's `--dynamic-config-value` flags and the
 * PostgreSQL-backed test server's dynamic config file are built from it.
 */
import { DEFAULT_ECS_BURST, serverMinBurstSize } from '../../src/shared/ecs-budget.js';

/** The Temporal server release of the compose file (`temporalio/server`, `temporalio/admin-tools`). */
export const TEMPORAL_SERVER_VERSION = '1.30.1';

export const TEMPORAL_NAMESPACE = 'default';

/** The namespace's retention as the compose job creates it. */
export const TEMPORAL_NAMESPACE_RETENTION = '72h';

/**
 * Custom search attributes eniflow upserts, by name and CLI type, registered before the first workflow (the dev
 * server's `--search-attribute`, the compose job `temporal-search-attributes`). test/support/temporal-env.ts
 * declares the matching typed keys.
 */
export const TEMPORAL_SEARCH_ATTRIBUTES = {
  NodeName: 'Keyword',
  InstanceId: 'Keyword',
  IpamState: 'Keyword',
  EniflowErrorCode: 'Keyword',
  EniflowErrorSince: 'Datetime',
  EniflowExhaustedVSwitches: 'KeywordList',
} as const;

/** The two databases of a SQL-backed server and the schema directory (under schema/postgresql/v12) of each. */
export const TEMPORAL_SQL_DATABASES = [
  { database: 'temporal', schema: 'temporal' },
  { database: 'temporal_visibility', schema: 'visibility' },
] as const;

/** One dynamic config key with one unconstrained value, and why eniflow sets it. */
export interface DynamicConfigSetting {
  readonly key: string;
  readonly value: boolean | number;
  /** Comment lines of the YAML file. */
  readonly why: readonly string[];
}

/** The settings eniflow depends on, on any server it runs against (docs/deploy.md). */
export function eniflowDynamicConfig(ecsBurst = DEFAULT_ECS_BURST): readonly DynamicConfigSetting[] {
  return [
    {
      key: 'frontend.enableUpdateWorkflowExecution',
      value: true,
      why: ['The `gc` update (README: Operating it).'],
    },
    {
      key: 'limit.maxIDLength',
      value: 1000,
      why: ['Workflow ids are eniflow-node/<node name>, and node names may have up to 253 characters.'],
    },
    {
      key: 'matching.minTaskThrottlingBurstSize',
      value: serverMinBurstSize(ecsBurst),
      why: [
        "The ECS budget's burst (ENIFLOW_ECS_BURST, default 400 calls of one action at once, the smallest budget of an ECS",
        'queue): the limiter of each rate-limited task queue holds this many tokens per partition (4 partitions), refilled',
        "at the workers' budget per second. Only eniflow's ECS queues are rate-limited here; on a shared server, constrain",
        'it to them with `taskQueueName` (docs/deploy.md, "The ECS budget\'s burst").',
      ],
    },
  ];
}

/** Servers on which the search attributes are registered right before the first workflow (compose, tests). */
export const FRESH_SERVER_DYNAMIC_CONFIG: readonly DynamicConfigSetting[] = [
  {
    key: 'system.forceSearchAttributesCacheRefreshOnRead',
    value: true,
    why: [
      'A search attribute registered by the temporal-search-attributes job is usable at once, not after a cache refresh.',
    ],
  },
];

/**
 * Test servers only: no call to temporal.io (no internet here), and the update settings `@temporalio/testing`'s
 * createLocal passes.
 */
export const TEST_SERVER_DYNAMIC_CONFIG: readonly DynamicConfigSetting[] = [
  { key: 'frontend.enableServerVersionCheck', value: false, why: ['No call to temporal.io from a test server.'] },
  { key: 'frontend.enableUpdateWorkflowExecutionAsyncAccepted', value: true, why: ['As `@temporalio/testing`.'] },
];

/** The header of temporal/dynamicconfig/development-sql.yaml. */
const COMPOSE_HEADER = '# Dynamic config of the local compose server (development only).';

/** temporal/dynamicconfig/development-sql.yaml, as the compose server reads it. */
export function composeDynamicConfig(): readonly DynamicConfigSetting[] {
  // The compose file's order: the fresh-server setting first, then eniflow's.
  return [...FRESH_SERVER_DYNAMIC_CONFIG, ...eniflowDynamicConfig()];
}

/** The PostgreSQL-backed test server: the compose server's settings, its burst, and the test-server ones. */
export function postgresTestServerDynamicConfig(ecsBurst = DEFAULT_ECS_BURST): readonly DynamicConfigSetting[] {
  return [...FRESH_SERVER_DYNAMIC_CONFIG, ...eniflowDynamicConfig(ecsBurst), ...TEST_SERVER_DYNAMIC_CONFIG];
}

/** The dev server's `--dynamic-config-value` settings (`key=value`), in the order it has always passed them. */
export function devServerDynamicConfigValues(ecsBurst = DEFAULT_ECS_BURST): readonly string[] {
  const byKey = new Map(
    [...TEST_SERVER_DYNAMIC_CONFIG, ...eniflowDynamicConfig(ecsBurst)].map((setting) => [setting.key, setting]),
  );
  // limit.maxIDLength is the server's default (1000): the dev server has always run without the flag.
  const order = [
    'frontend.enableServerVersionCheck',
    'frontend.enableUpdateWorkflowExecution',
    'frontend.enableUpdateWorkflowExecutionAsyncAccepted',
    'matching.minTaskThrottlingBurstSize',
  ];
  return order.map((key) => `${key}=${String(byKey.get(key)?.value)}`);
}

/** A dynamic config file (the server's YAML format), each key with its comment. */
export function renderDynamicConfigYaml(settings: readonly DynamicConfigSetting[], header = COMPOSE_HEADER): string {
  const blocks = settings.map((setting) =>
    [
      ...setting.why.map((line) => `# ${line}`),
      `${setting.key}:`,
      `  - value: ${String(setting.value)}`,
      '    constraints: {}',
    ].join('\n'),
  );
  return `${header}\n${blocks.join('\n')}\n`;
}

/**
 * Server limits eniflow stays within without setting them: their defaults in {@link TEMPORAL_SERVER_VERSION}
 * (go.temporal.io/server common/dynamicconfig/constants.go), listed in docs/deploy.md ("The Temporal side") so an
 * operator who lowers one knows what depends on it.
 */
export const TEMPORAL_SERVER_LIMITS: readonly DynamicConfigSetting[] = [
  {
    key: 'frontend.namespaceRPS.visibility',
    value: 10,
    why: [
      "Visibility calls per second per namespace and frontend: the watcher's IpamState gauge (2 to 11 counts a poll,",
      'every NODE_STATE_POLL_SECONDS), the degradation broadcast, the worker wake-ups and the CLI list and count.',
    ],
  },
  {
    key: 'frontend.namespaceBurstRatio.visibility',
    value: 1,
    why: ['The visibility burst, as a ratio of the rate: 10 calls at once by default.'],
  },
  {
    key: 'limit.historyCount.suggestContinueAsNew',
    value: 4096,
    why: ['A node workflow continues as new when the server suggests it (or after 500 passes, or 7 days).'],
  },
  {
    key: 'limit.historySize.suggestContinueAsNew',
    value: 4 * 1024 * 1024,
    why: ['The same in bytes (4 MiB).'],
  },
  {
    key: 'limit.historyCount.error',
    value: 50 * 1024,
    why: ['A run is terminated at this many events; eniflow continues as new long before.'],
  },
  {
    key: 'limit.historySize.error',
    value: 50 * 1024 * 1024,
    why: ['The same in bytes (50 MiB).'],
  },
  {
    key: 'limit.blobSize.error',
    value: 2 * 1024 * 1024,
    why: ["One payload's limit (2 MiB): the largest are a crowded node's carried state and its query answer."],
  },
];
