import { readFileSync } from 'node:fs';

import { DEFAULT_TASK_QUEUE } from './workflows/workflow-ids.js';

/** How to reach Temporal, shared by the worker and the watcher. */
export interface TemporalConnectionConfig {
  address: string;
  namespace: string;
  taskQueue: string;
  tls?: {
    serverRootCaCertificate?: Buffer;
    clientCertPair?: { crt: Buffer; key: Buffer };
    serverNameOverride?: string;
  };
  apiKey?: string;
}

/** The Temporal variables every process reads, with their meaning. */
export const TEMPORAL_ENV = {
  TEMPORAL_ADDRESS: 'Temporal frontend `host:port` (default `127.0.0.1:7233`)',
  TEMPORAL_NAMESPACE: 'Temporal namespace (default `default`)',
  TEMPORAL_TASK_QUEUE: `task queue of the node workflows (default \`${DEFAULT_TASK_QUEUE}\`)`,
  TEMPORAL_TLS_CA: 'PEM file of the CA for the Temporal server certificate (enables TLS)',
  TEMPORAL_TLS_CERT: 'PEM client certificate for mTLS (with `TEMPORAL_TLS_KEY`)',
  TEMPORAL_TLS_KEY: 'PEM client key for mTLS',
  TEMPORAL_TLS_SERVER_NAME: 'server name to verify instead of the address host',
  TEMPORAL_API_KEY: 'API key for Temporal Cloud (enables TLS)',
} as const;

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
  };
  /** Path of a kubeconfig; absent → `KUBECONFIG`, `~/.kube/config`, then in-cluster. */
  kubeconfigPath?: string;
  logLevel: string;
  /** `host:port` for the Prometheus endpoint of the worker; absent → no endpoint. */
  metricsAddress?: string;
  maxConcurrentActivities: number;
}

/** The environment variables the worker reads, with their meaning (the README table is generated from this). */
export const WORKER_ENV = {
  ...TEMPORAL_ENV,
  ECS_REGION_ID: 'Alibaba Cloud region, e.g. `cn-hangzhou` (required)',
  ECS_ENDPOINT: 'ECS endpoint `host[:port]` (default: the SDK regional endpoint)',
  VPC_ENDPOINT: 'VPC endpoint `host[:port]` (default: `ECS_ENDPOINT` if set, else regional)',
  ECS_PROTOCOL: '`https` (default) or `http` (the emulator)',
  ALIBABA_CLOUD_ACCESS_KEY_ID: 'static AccessKey id; absent → the default credential chain (RRSA, ECS RAM role…)',
  ALIBABA_CLOUD_ACCESS_KEY_SECRET: 'static AccessKey secret',
  ENI_POLL_INTERVAL_MS: 'poll interval while waiting for an ENI status (default 3000)',
  KUBECONFIG: 'kubeconfig path; absent → `~/.kube/config`, then in-cluster',
  LOG_LEVEL: 'pino level (default `info`)',
  METRICS_ADDRESS: 'serve Prometheus metrics on this `host:port` (default off)',
  MAX_CONCURRENT_ACTIVITIES: 'activities one worker runs at once (default 100)',
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
    },
    logLevel: env['LOG_LEVEL'] ?? 'info',
    maxConcurrentActivities: positiveInt({ env, name: 'MAX_CONCURRENT_ACTIVITIES', fallback: 100, problems }),
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
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

/** Parses the Temporal connection variables, adding any problem to `problems` (reported with the rest). */
export function loadTemporalConnectionConfig(env: Env, problems: string[]): TemporalConnectionConfig {
  const config: TemporalConnectionConfig = {
    address: env['TEMPORAL_ADDRESS'] ?? '127.0.0.1:7233',
    namespace: env['TEMPORAL_NAMESPACE'] ?? 'default',
    taskQueue: env['TEMPORAL_TASK_QUEUE'] ?? DEFAULT_TASK_QUEUE,
  };
  const ca = env['TEMPORAL_TLS_CA'];
  const cert = env['TEMPORAL_TLS_CERT'];
  const key = env['TEMPORAL_TLS_KEY'];
  const apiKey = env['TEMPORAL_API_KEY'];
  if ((cert === undefined) !== (key === undefined)) problems.push('TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY go together');
  if (ca !== undefined || cert !== undefined || apiKey !== undefined) {
    const tls: NonNullable<TemporalConnectionConfig['tls']> = {};
    if (ca !== undefined) {
      const pem = readPem(ca, 'TEMPORAL_TLS_CA', problems);
      if (pem !== undefined) tls.serverRootCaCertificate = pem;
    }
    if (cert !== undefined && key !== undefined) {
      const crt = readPem(cert, 'TEMPORAL_TLS_CERT', problems);
      const keyPem = readPem(key, 'TEMPORAL_TLS_KEY', problems);
      if (crt !== undefined && keyPem !== undefined) tls.clientCertPair = { crt, key: keyPem };
    }
    if (env['TEMPORAL_TLS_SERVER_NAME'] !== undefined) tls.serverNameOverride = env['TEMPORAL_TLS_SERVER_NAME'];
    config.tls = tls;
  }
  if (apiKey !== undefined) config.apiKey = apiKey;
  return config;
}
