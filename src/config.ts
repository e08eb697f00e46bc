import { readFileSync } from 'node:fs';

import type { TLSConfig } from '@temporalio/client';
import { loadClientConfigProfile } from '@temporalio/envconfig';
import type { ClientConfigProfile, ConfigDataSource } from '@temporalio/envconfig';

import {
  burstProblems,
  DEFAULT_CALLS_PER_MINUTE,
  DEFAULT_ECS_BURST,
  parseCallsPerMinute,
} from './shared/ecs-budget.js';
import type { EcsApiName } from './shared/ecs-budget.js';
import { DEFAULT_TASK_QUEUE } from './shared/workflow-ids.js';

/** How to reach Temporal, shared by the worker and the watcher. */
export interface TemporalConnectionConfig {
  address: string;
  namespace: string;
  taskQueue: string;
  /** TLS settings; `true`: TLS with the system's roots; `false`: off even with an API key (`TEMPORAL_TLS=false`). */
  tls?: TLSConfig | boolean;
  apiKey?: string;
  /** gRPC metadata sent with every call (`TEMPORAL_GRPC_META_<NAME>`, or `grpc_meta` in the profile). */
  metadata?: Record<string, string>;
  /** Deprecated variables this configuration was read from, for {@link warnDeprecatedVariables}. */
  deprecated?: string[];
}

/**
 * The Temporal variables every process reads, with their meaning. Everything but the task queue is Temporal's own
 * environment configuration (as the Temporal CLI and every SDK name it, read by `@temporalio/envconfig`), on top of
 * the selected profile of the TOML config file when there is one.
 */
export const TEMPORAL_ENV = {
  TEMPORAL_ADDRESS: 'Temporal frontend `host:port` (default `127.0.0.1:7233`)',
  TEMPORAL_NAMESPACE: 'Temporal namespace (default `default`)',
  TEMPORAL_TASK_QUEUE: `task queue of the node workflows (default \`${DEFAULT_TASK_QUEUE}\`)`,
  TEMPORAL_API_KEY: 'API key, e.g. for Temporal Cloud (enables TLS)',
  TEMPORAL_TLS: '`true` enables TLS (with the system CAs unless one is given), `false` disables it',
  TEMPORAL_TLS_SERVER_CA_CERT_PATH: 'PEM file of the CA for the server certificate (enables TLS; or `…_DATA`: the PEM)',
  TEMPORAL_TLS_SERVER_CA_CERT_DATA: 'the CA PEM itself',
  TEMPORAL_TLS_CLIENT_CERT_PATH: 'PEM client certificate for mTLS, with the key (or `…_DATA`)',
  TEMPORAL_TLS_CLIENT_CERT_DATA: 'the client certificate PEM itself',
  TEMPORAL_TLS_CLIENT_KEY_PATH: 'PEM client key for mTLS (or `…_DATA`)',
  TEMPORAL_TLS_CLIENT_KEY_DATA: 'the client key PEM itself',
  TEMPORAL_TLS_SERVER_NAME: 'server name to verify instead of the address host',
  TEMPORAL_PROFILE: 'profile of the config file to use (default `default`)',
  TEMPORAL_CONFIG_FILE:
    'TOML config file with profiles (default `$XDG_CONFIG_HOME/temporalio/temporal.toml`, if present)',
  TEMPORAL_TLS_CA: 'deprecated alias of `TEMPORAL_TLS_SERVER_CA_CERT_PATH` (removed in the next release)',
  TEMPORAL_TLS_CERT: 'deprecated alias of `TEMPORAL_TLS_CLIENT_CERT_PATH` (removed in the next release)',
  TEMPORAL_TLS_KEY: 'deprecated alias of `TEMPORAL_TLS_CLIENT_KEY_PATH` (removed in the next release)',
} as const;

/** eniflow's earlier names for Temporal's variables; read for one more release, with a warning. */
export const DEPRECATED_TEMPORAL_ENV: Readonly<Record<string, string>> = {
  TEMPORAL_TLS_CA: 'TEMPORAL_TLS_SERVER_CA_CERT_PATH',
  TEMPORAL_TLS_CERT: 'TEMPORAL_TLS_CLIENT_CERT_PATH',
  TEMPORAL_TLS_KEY: 'TEMPORAL_TLS_CLIENT_KEY_PATH',
};

/** Everything the worker process needs, parsed once from the environment. */
export interface WorkerConfig {
  temporal: TemporalConnectionConfig;
  ecs: {
    regionId: string;
    ecsEndpoint?: string;
    vpcEndpoint?: string;
    protocol: 'http' | 'https';
    accessKey?: { accessKeyId: string; accessKeySecret: string };
    eniPollIntervalMs: number;
    /** The cluster's budget per OpenAPI action, calls per minute (Terway's defaults, `ENIFLOW_ECS_RATE_LIMIT` over). */
    callsPerMinute: Record<EcsApiName, number>;
    /**
     * Calls of one action the Temporal server lets through at once on its queue (`ENIFLOW_ECS_BURST`, as the server
     * is configured): at most every queued action's budget, and the ECS queues' slots in each worker.
     */
    burst: number;
    /** Terway `rateLimit` keys of actions eniflow never calls, accepted and ignored (logged at start). */
    ignoredRateLimitKeys?: string[];
    /** How often the vSwitches that stuck nodes wait on are described (the vSwitch wake, vswitch-wake.ts). */
    vSwitchWakePollMs: number;
  };
  /** Path of a kubeconfig; absent → `KUBECONFIG`, `~/.kube/config`, then in-cluster. */
  kubeconfigPath?: string;
  logLevel: string;
  /** `host:port` for the Temporal SDK's Prometheus exporter; absent → none. */
  metricsAddress?: string;
  /** `host:port` for `/healthz`, `/readyz` and eniflow's `/metrics`; absent → none. */
  healthAddress?: string;
  maxConcurrentActivities: number;
  /** Workflow tasks one worker holds at once (the SDK's `maxConcurrentWorkflowTaskExecutions`). */
  maxConcurrentWorkflowTasks: number;
  /** Base URL of the Temporal Web UI; events then link to the node's workflow. */
  temporalUiUrl?: string;
}

/**
 * Workflow tasks one worker holds at once: the SDK's default. The workflow code runs on one thread, so tasks held
 * beyond what it gets through wait inside the process with their run time (and task timeout) running; fewer slots
 * move that wait to the server but cut throughput, since a task keeps its slot while its local activities (reads,
 * status writes) run. Measured at 8 after a restart of 200 nodes: tasks at most 0.4 s, the new pod served after
 * 21.5 s instead of 10.5 s (docs/decisions.md, "Restart, second round").
 */
export const DEFAULT_MAX_CONCURRENT_WORKFLOW_TASKS = 40;

/** The environment variables the worker reads, with their meaning (the README table is generated from this). */
export const WORKER_ENV = {
  ...TEMPORAL_ENV,
  ECS_REGION_ID: 'Alibaba Cloud region, e.g. `cn-hangzhou` (required)',
  ECS_ENDPOINT: 'ECS endpoint `host[:port]` (default: the SDK regional endpoint)',
  VPC_ENDPOINT: 'VPC endpoint `host[:port]` (default: `ECS_ENDPOINT` if set, else regional)',
  ECS_PROTOCOL: '`https` (default) or `http` (the emulator)',
  ALIBABA_CLOUD_ACCESS_KEY_ID: 'static AccessKey id; absent → the default credential chain (RRSA, ECS RAM role…)',
  ALIBABA_CLOUD_ACCESS_KEY_SECRET: 'static AccessKey secret',
  ENI_POLL_INTERVAL_MS:
    'poll interval while waiting for an ENI status (default 3000; an attach is first described at two thirds of it)',
  VSWITCH_WAKE_POLL_MS:
    'how often the vSwitches that stuck nodes wait on are described, to wake those nodes when one has free addresses for what they wait for (default 60000)',
  KUBECONFIG: 'kubeconfig path; absent → `~/.kube/config`, then in-cluster',
  LOG_LEVEL: 'pino level (default `info`)',
  METRICS_ADDRESS: "serve the Temporal SDK's Prometheus metrics (`temporal_*`) on this `host:port` (default off)",
  HEALTH_ADDRESS: "serve `/healthz`, `/readyz` and eniflow's metrics (`/metrics`) on this `host:port` (default off)",
  MAX_CONCURRENT_ACTIVITIES:
    'activities one worker runs at once per task queue (default 100; on each ECS queue at least ENIFLOW_ECS_BURST)',
  MAX_CONCURRENT_WORKFLOW_TASKS: `workflow tasks one worker holds at once; more wait on the server, where no task times out (default ${DEFAULT_MAX_CONCURRENT_WORKFLOW_TASKS})`,
  ENIFLOW_ECS_RATE_LIMIT:
    "the cluster's ECS budget overrides, calls per minute by action as JSON, like Terway's `rateLimit`: `{\"CreateNetworkInterface\": 60}` (default: Terway's per-action defaults)",
  ENIFLOW_ECS_BURST:
    'calls of one ECS action the Temporal server lets through at once: `matching.minTaskThrottlingBurstSize` × read partitions on the ECS queues, as the server is configured (default 400, the smallest budget, what `temporal/dynamicconfig` and the dev server set; at most each budget)',
  TEMPORAL_UI_URL: "Temporal Web UI base URL, e.g. `https://temporal.example.com`; events link to the node's workflow",
} as const;

type Env = Readonly<Record<string, string | undefined>>;

/** A configuration problem; all are reported together. */
export class ConfigError extends Error {
  readonly problems: readonly string[];

  constructor(problems: readonly string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

function positiveInt(input: { env: Env; name: keyof typeof WORKER_ENV; fallback: number; problems: string[] }): number {
  const { env, name, fallback, problems } = input;
  const text = env[name];
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value <= 0) {
    problems.push(`${name} must be a positive integer, got "${text}"`);
    return fallback;
  }
  return value;
}

function readPem(path: string, name: string, problems: string[]): Buffer | undefined {
  try {
    return readFileSync(path);
  } catch (error) {
    problems.push(`${name}: cannot read ${path} (${error instanceof Error ? error.message : String(error)})`);
    return undefined;
  }
}

/** Parses and checks the worker's environment; throws a {@link ConfigError} listing every problem at once. */
export function loadWorkerConfig(env: Env = process.env): WorkerConfig {
  const problems: string[] = [];
  const regionId = env['ECS_REGION_ID'] ?? '';
  if (regionId === '') problems.push('ECS_REGION_ID is required (e.g. cn-hangzhou)');
  const protocol = env['ECS_PROTOCOL'] ?? 'https';
  if (protocol !== 'http' && protocol !== 'https')
    problems.push(`ECS_PROTOCOL must be http or https, got "${protocol}"`);
  const accessKeyId = env['ALIBABA_CLOUD_ACCESS_KEY_ID'];
  const accessKeySecret = env['ALIBABA_CLOUD_ACCESS_KEY_SECRET'];
  if ((accessKeyId === undefined) !== (accessKeySecret === undefined)) {
    problems.push('ALIBABA_CLOUD_ACCESS_KEY_ID and ALIBABA_CLOUD_ACCESS_KEY_SECRET go together');
  }
  const config: WorkerConfig = {
    temporal: loadTemporalConnectionConfig(env, problems),
    ecs: {
      regionId,
      protocol: protocol === 'http' ? 'http' : 'https',
      eniPollIntervalMs: positiveInt({ env, name: 'ENI_POLL_INTERVAL_MS', fallback: 3_000, problems }),
      callsPerMinute: { ...DEFAULT_CALLS_PER_MINUTE },
      burst: positiveInt({ env, name: 'ENIFLOW_ECS_BURST', fallback: DEFAULT_ECS_BURST, problems }),
      vSwitchWakePollMs: positiveInt({ env, name: 'VSWITCH_WAKE_POLL_MS', fallback: 60_000, problems }),
    },
    logLevel: env['LOG_LEVEL'] ?? 'info',
    maxConcurrentActivities: positiveInt({ env, name: 'MAX_CONCURRENT_ACTIVITIES', fallback: 100, problems }),
    maxConcurrentWorkflowTasks: positiveInt({
      env,
      name: 'MAX_CONCURRENT_WORKFLOW_TASKS',
      fallback: DEFAULT_MAX_CONCURRENT_WORKFLOW_TASKS,
      problems,
    }),
  };
  const ecsEndpoint = env['ECS_ENDPOINT'];
  if (ecsEndpoint !== undefined && ecsEndpoint !== '') {
    if (ecsEndpoint.includes('://')) problems.push(`ECS_ENDPOINT is host[:port], not a URL: "${ecsEndpoint}"`);
    config.ecs.ecsEndpoint = ecsEndpoint;
  }
  const vpcEndpoint = env['VPC_ENDPOINT'] ?? config.ecs.ecsEndpoint;
  if (vpcEndpoint !== undefined && vpcEndpoint !== '') config.ecs.vpcEndpoint = vpcEndpoint;
  if (accessKeyId !== undefined && accessKeySecret !== undefined)
    config.ecs.accessKey = { accessKeyId, accessKeySecret };
  if (env['KUBECONFIG'] !== undefined && env['KUBECONFIG'] !== '') config.kubeconfigPath = env['KUBECONFIG'];
  if (env['METRICS_ADDRESS'] !== undefined && env['METRICS_ADDRESS'] !== '')
    config.metricsAddress = env['METRICS_ADDRESS'];
  if (env['TEMPORAL_UI_URL'] !== undefined && env['TEMPORAL_UI_URL'] !== '')
    config.temporalUiUrl = env['TEMPORAL_UI_URL'];
  const healthAddress = env['HEALTH_ADDRESS'];
  if (healthAddress !== undefined && healthAddress !== '') {
    if (!/^[^:]*:\d+$/.test(healthAddress)) problems.push(`HEALTH_ADDRESS must be host:port, got "${healthAddress}"`);
    config.healthAddress = healthAddress;
  }
  const rateLimit = env['ENIFLOW_ECS_RATE_LIMIT'];
  if (rateLimit !== undefined && rateLimit.trim() !== '') {
    const budget = parseCallsPerMinute(rateLimit, 'ENIFLOW_ECS_RATE_LIMIT');
    problems.push(...budget.problems);
    config.ecs.callsPerMinute = budget.callsPerMinute;
    if (budget.ignored.length > 0) config.ecs.ignoredRateLimitKeys = budget.ignored;
  }
  problems.push(
    ...burstProblems({
      burst: config.ecs.burst,
      callsPerMinute: config.ecs.callsPerMinute,
      source: 'ENIFLOW_ECS_BURST',
    }),
  );
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

/**
 * Parses the Temporal connection settings, adding any problem to `problems` (reported with the rest): Temporal's
 * environment configuration through `@temporalio/envconfig` (the profile named by `TEMPORAL_PROFILE` from
 * `TEMPORAL_CONFIG_FILE` or the default config file, if any, overridden by `TEMPORAL_*` variables), plus the
 * deprecated aliases of {@link DEPRECATED_TEMPORAL_ENV} and eniflow's `TEMPORAL_TASK_QUEUE`.
 */
export function loadTemporalConnectionConfig(env: Env, problems: string[]): TemporalConnectionConfig {
  const envVars: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (value !== undefined) envVars[name] = value;
  const deprecated: string[] = [];
  for (const [alias, name] of Object.entries(DEPRECATED_TEMPORAL_ENV)) {
    const value = envVars[alias];
    if (value === undefined) continue;
    deprecated.push(alias);
    if (envVars[name] === undefined) envVars[name] = value;
    else if (envVars[name] !== value) problems.push(`${alias} (deprecated) and ${name} differ: set only ${name}`);
  }
  let profile: ClientConfigProfile = {};
  try {
    profile = loadClientConfigProfile({ overrideEnvVars: envVars, ...configFileOptions(envVars) });
  } catch (error) {
    problems.push(`Temporal client configuration: ${error instanceof Error ? error.message : String(error)}`);
  }
  const config: TemporalConnectionConfig = {
    address: profile.address ?? '127.0.0.1:7233',
    namespace: profile.namespace ?? 'default',
    taskQueue: env['TEMPORAL_TASK_QUEUE'] ?? DEFAULT_TASK_QUEUE,
  };
  const tls = tlsConfig(profile, problems);
  if (tls !== undefined) config.tls = tls;
  if (profile.apiKey !== undefined) config.apiKey = profile.apiKey;
  if (profile.grpcMeta !== undefined && Object.keys(profile.grpcMeta).length > 0) config.metadata = profile.grpcMeta;
  if (deprecated.length > 0) config.deprecated = deprecated;
  return config;
}

/**
 * The config file is optional: without `TEMPORAL_CONFIG_FILE` the default path is read only when it exists, so a
 * container without a home directory or config file is configured by its environment alone.
 */
function configFileOptions(env: Record<string, string>): { disableFile?: boolean } {
  if (env['TEMPORAL_CONFIG_FILE'] !== undefined) return {};
  const configHome = env['XDG_CONFIG_HOME'] ?? (env['HOME'] === undefined ? undefined : `${env['HOME']}/.config`);
  if (configHome === undefined) return { disableFile: true };
  try {
    readFileSync(`${configHome}/temporalio/temporal.toml`);
    return {};
  } catch {
    return { disableFile: true };
  }
}

const TLS_SOURCES = {
  serverCACert: 'TEMPORAL_TLS_SERVER_CA_CERT',
  clientCert: 'TEMPORAL_TLS_CLIENT_CERT',
  clientKey: 'TEMPORAL_TLS_CLIENT_KEY',
} as const;

/** The profile's TLS settings for the SDK's connection: PEM files read now, every unreadable one reported. */
function tlsConfig(profile: ClientConfigProfile, problems: string[]): TLSConfig | boolean | undefined {
  const settings = profile.tls;
  if (settings === undefined) return profile.apiKey === undefined ? undefined : true;
  if (settings.disabled === true) return false;
  const pem = (key: keyof typeof TLS_SOURCES): Buffer | undefined => {
    const source: ConfigDataSource | undefined = settings[key];
    if (source === undefined) return undefined;
    if ('data' in source) return Buffer.from(source.data);
    return readPem(source.path, `${TLS_SOURCES[key]}_PATH`, problems);
  };
  const tls: TLSConfig = {};
  const ca = pem('serverCACert');
  if (ca !== undefined) tls.serverRootCACertificate = ca;
  if ((settings.clientCert === undefined) !== (settings.clientKey === undefined)) {
    problems.push('the Temporal client certificate and key go together (TEMPORAL_TLS_CLIENT_CERT_* and _KEY_*)');
  }
  const crt = pem('clientCert');
  const key = pem('clientKey');
  if (crt !== undefined && key !== undefined) tls.clientCertPair = { crt, key };
  if (settings.serverName !== undefined) tls.serverNameOverride = settings.serverName;
  return tls;
}

const warnedDeprecated = new Set<string>();

/** Logs, once per process and variable, that a deprecated variable was used and what replaces it. */
export function warnDeprecatedVariables(
  config: TemporalConnectionConfig,
  warn: (fields: { variable: string; use: string }, message: string) => void,
): void {
  for (const variable of config.deprecated ?? []) {
    if (warnedDeprecated.has(variable)) continue;
    warnedDeprecated.add(variable);
    warn(
      { variable, use: DEPRECATED_TEMPORAL_ENV[variable] ?? '' },
      'Deprecated environment variable; it will be removed in the next release',
    );
  }
}
