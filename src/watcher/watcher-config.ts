import { hostname } from 'node:os';

import { ConfigError, loadTemporalConnectionConfig, TEMPORAL_ENV } from '../config.js';
import type { TemporalConnectionConfig } from '../config.js';
import { parseDegradationLevel } from '../ipam/index.js';
import type { DegradationLevel } from '../ipam/index.js';
import { DEFAULT_JANITOR_SETTINGS } from '../shared/janitor-settings.js';
import type { JanitorSettings } from '../shared/janitor-settings.js';
import { DEFAULT_NODE_SETTINGS } from '../workflows/messages.js';
import type { NodeIpamSettings, NodeIpamTunables } from '../workflows/messages.js';

/** Everything the watcher process needs, parsed once from the environment. */
export interface WatcherConfig {
  temporal: TemporalConnectionConfig;
  /** Path of a kubeconfig; absent → `~/.kube/config`, then in-cluster. */
  kubeconfigPath?: string;
  lease: {
    namespace: string;
    name: string;
    identity: string;
    durationMs: number;
    renewDeadlineMs: number;
    retryPeriodMs: number;
  };
  /** Changes for one node are merged until it has been quiet this long… */
  coalesceWindowMs: number;
  /** …or its oldest unsent change is this old. */
  coalesceMaxDelayMs: number;
  /** A new leader owes every node one signal; it sends them at this many nodes per second (see StartSweep). */
  startSweepNodesPerSecond: number;
  watch: {
    /** Asked of the server per watch; the informer resumes from its resourceVersion after it. */
    serverTimeoutSeconds: number;
    /** client-node's inactivity timeout: a watch with no event or bookmark for this long is ended and resumed. */
    idleTimeoutMs: number;
    /** Deadline of each informer list; a list without an answer by then is abandoned and retried with backoff. */
    listTimeoutMs: number;
  };
  logLevel: string;
  /** `host:port` of the health and metrics endpoint; absent → none. */
  healthAddress?: string;
  /**
   * Settings recorded in every node workflow this watcher starts: the defaults with `NODE_WORKFLOW_SETTINGS` over
   * them, and the cluster id.
   */
  nodeSettings: NodeIpamSettings;
  /** Settings recorded in the janitor this watcher starts, in full: the cluster id and VPC, `JANITOR_DRY_RUN`. */
  janitorSettings: JanitorSettings;
  /** The leader's IPAM metrics: how many nodes get their own waiting-pod series, and how often states are counted. */
  metrics?: { topNodes?: number; nodeStatePollMs?: number };
  /**
   * The degradation switch (Terway's `l0`/`l1`): `level` from `ENIFLOW_DEGRADATION` applies while the ConfigMap
   * (`ENIFLOW_CONTROL_CONFIGMAP`, key `degradation`) is absent; the ConfigMap, set by `eniflow degradation set`, wins.
   * Absent (tests): `off`, ConfigMap `<lease namespace>/eniflow-control`.
   */
  degradation?: { level: DegradationLevel; configMap: { namespace: string; name: string } };
}

/** The ConfigMap that holds the operator's switches, in the lease's namespace unless configured. */
export const CONTROL_CONFIGMAP_NAME = 'eniflow-control';
/** Its key of the degradation level: `l0`, `l1`, or empty / `off`. */
export const DEGRADATION_KEY = 'degradation';

/** Defaults of {@link WatcherConfig.metrics}. */
export const WATCHER_METRICS_DEFAULTS = { topNodes: 20, nodeStatePollMs: 60_000 } as const;

/**
 * A new leader's signals per second to every node (the start sweep). The sweep is the backstop for changes nobody saw
 * while no replica led; a node with a change or a pod waiting for an IP jumps it. After a restart of the worker too,
 * each sweep signal replays a workflow (about 50 ms of worker CPU on the 2-core benchmark machine): at 20 a second the
 * replays piled up in the worker (tasks held 1.3–1.6 s), at 10 they do not (at most 0.64 s), and 200 nodes still take
 * 20 s, 5000 about 8 min.
 */
export const DEFAULT_START_SWEEP_NODES_PER_SECOND = 10;

/** The environment variables the watcher reads, with their meaning. */
export const WATCHER_ENV = {
  ENIFLOW_CLUSTER_ID:
    'this cluster’s id (required; the ACK cluster id where there is one): tagged on every ENI eniflow creates, and the only ENIs its clean-ups touch',
  ENIFLOW_VPC_ID: 'the cluster’s VPC id: the janitor then lists only ENIs in this VPC (default: no VPC filter)',
  JANITOR_DRY_RUN:
    '`true`: the janitor reports orphan ENIs and deletes nothing, whatever a `runJanitor` asks (default `false`)',
  JANITOR_INTERVAL_SECONDS:
    'how often the janitor lists the cluster’s ENIs for orphans, recorded when it starts (default 1800)',
  KUBECONFIG: 'kubeconfig path; absent → `~/.kube/config`, then in-cluster',
  ...TEMPORAL_ENV,
  LEASE_NAMESPACE: 'namespace of the leader-election Lease (default `kube-system`)',
  LEASE_NAME: 'name of the Lease (default `eniflow-watcher`)',
  POD_IDENTITY: 'this replica’s holder identity (default `POD_NAME`, then the hostname)',
  LEASE_DURATION_SECONDS: 'how long a lease holds without renewal before another replica takes it (default 15)',
  RENEW_DEADLINE_SECONDS: 'the leader steps down when it could not renew for this long (default 10)',
  RETRY_PERIOD_SECONDS: 'pause between acquire/renew attempts (default 2)',
  COALESCE_WINDOW_MS: 'a node is signalled once its changes have been quiet this long (default 200)',
  COALESCE_MAX_DELAY_MS: 'and at the latest this long after its first unsent change (default 10 × the window)',
  START_SWEEP_NODES_PER_SECOND:
    'a new leader signals every node once, this many nodes per second; changes and nodes with a pod waiting for an IP jump the queue (default 10)',
  WATCH_TIMEOUT_SECONDS: 'server-side timeout of each watch request (default 300)',
  WATCH_IDLE_TIMEOUT_SECONDS: 'resume a watch silent this long, bookmarks included (default 90)',
  LIST_TIMEOUT_SECONDS: 'deadline of each informer list; retried with backoff after it (default 60)',
  LOG_LEVEL: 'pino level (default `info`)',
  HEALTH_ADDRESS: 'serve `/healthz`, `/readyz` and `/metrics` on this `host:port` (default off)',
  METRICS_TOP_NODES: 'nodes with the most pods waiting for an IP that get their own metric series (default 20)',
  NODE_STATE_POLL_SECONDS: 'how often the leader counts node workflows by IPAM state in Temporal (default 60)',
  ENIFLOW_DEGRADATION:
    'degradation level while the control ConfigMap does not set one: `l0` no cloud call, `l1` no releasing call, empty/`off` none (default off)',
  ENIFLOW_CONTROL_CONFIGMAP:
    '`namespace/name` of the ConfigMap whose `degradation` key sets the level cluster-wide (default `<LEASE_NAMESPACE>/eniflow-control`)',
  NODE_WORKFLOW_SETTINGS:
    'JSON object of node-workflow settings (e.g. `{"gcPeriodMs": 10000}`) over the defaults, recorded in workflows started from now on',
} as const;

type Env = Readonly<Record<string, string | undefined>>;
type WatcherEnvName = keyof typeof WATCHER_ENV;

function positiveNumber(input: {
  env: Env;
  name: WatcherEnvName;
  fallback: number;
  problems: string[];
  integer?: boolean;
}): number {
  const { env, name, fallback, problems } = input;
  const text = env[name];
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0 || (input.integer === true && !Number.isInteger(value))) {
    problems.push(`${name} must be a positive ${input.integer === true ? 'integer' : 'number'}, got "${text}"`);
    return fallback;
  }
  return value;
}

/**
 * Parses `NODE_WORKFLOW_SETTINGS`: a JSON object whose keys are settings of {@link NodeIpamSettings} and whose values
 * are positive whole milliseconds or counts. Only workflows started afterwards get them (settings are recorded input).
 */
function nodeSettingsFrom(text: string | undefined, problems: string[]): NodeIpamTunables {
  if (text === undefined || text.trim() === '') return DEFAULT_NODE_SETTINGS;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    problems.push(`NODE_WORKFLOW_SETTINGS must be a JSON object, got "${text}"`);
    return DEFAULT_NODE_SETTINGS;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    problems.push(`NODE_WORKFLOW_SETTINGS must be a JSON object, got "${text}"`);
    return DEFAULT_NODE_SETTINGS;
  }
  const settings: Record<string, number> = { ...DEFAULT_NODE_SETTINGS };
  for (const [key, value] of Object.entries(parsed)) {
    if (!(key in DEFAULT_NODE_SETTINGS)) {
      problems.push(`NODE_WORKFLOW_SETTINGS.${key} is not a node-workflow setting`);
    } else if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0) {
      problems.push(`NODE_WORKFLOW_SETTINGS.${key} must be a positive integer, got ${JSON.stringify(value)}`);
    } else {
      settings[key] = value;
    }
  }
  return settings as unknown as NodeIpamTunables;
}

/** An ACK cluster id, or any id a tag value can hold: letters, digits, `.`, `_`, `-`, at most 128. */
const CLUSTER_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const VPC_ID = /^vpc-[A-Za-z0-9]+$/;

/** The cluster identity every workflow this watcher starts records: `ENIFLOW_CLUSTER_ID` and `ENIFLOW_VPC_ID`. */
function clusterIdentityFrom(env: Env, problems: string[]): { clusterId: string; vpcId?: string } {
  const clusterId = env['ENIFLOW_CLUSTER_ID'] ?? '';
  if (clusterId === '') {
    problems.push('ENIFLOW_CLUSTER_ID is required (the ACK cluster id, or any id unique in the account and region)');
  } else if (!CLUSTER_ID.test(clusterId)) {
    problems.push(`ENIFLOW_CLUSTER_ID must be letters, digits, ".", "_" or "-" (at most 128), got "${clusterId}"`);
  }
  const vpcId = env['ENIFLOW_VPC_ID'];
  if (vpcId === undefined || vpcId === '') return { clusterId };
  if (!VPC_ID.test(vpcId)) problems.push(`ENIFLOW_VPC_ID must be a VPC id (vpc-…), got "${vpcId}"`);
  return { clusterId, vpcId };
}

function janitorDryRunFrom(env: Env, problems: string[]): boolean {
  const text = env['JANITOR_DRY_RUN'];
  if (text === undefined || text === '' || text === 'false') return false;
  if (text === 'true') return true;
  problems.push(`JANITOR_DRY_RUN must be true or false, got "${text}"`);
  return false;
}

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

/** Parses and checks the watcher's environment; throws a {@link ConfigError} listing every problem at once. */
export function loadWatcherConfig(env: Env = process.env): WatcherConfig {
  const problems: string[] = [];
  const valid = (name: WatcherEnvName): boolean => !problems.some((problem) => problem.startsWith(`${name} `));
  const durationSeconds = positiveNumber({ env, name: 'LEASE_DURATION_SECONDS', fallback: 15, problems });
  const renewSeconds = positiveNumber({ env, name: 'RENEW_DEADLINE_SECONDS', fallback: 10, problems });
  const retrySeconds = positiveNumber({ env, name: 'RETRY_PERIOD_SECONDS', fallback: 2, problems });
  // Relations are checked only between values that parsed, so a typo does not also report a fallback's relation.
  if (valid('LEASE_DURATION_SECONDS') && valid('RENEW_DEADLINE_SECONDS') && renewSeconds >= durationSeconds) {
    problems.push(
      `RENEW_DEADLINE_SECONDS (${renewSeconds}) must be shorter than LEASE_DURATION_SECONDS (${durationSeconds})`,
    );
  }
  if (valid('RENEW_DEADLINE_SECONDS') && valid('RETRY_PERIOD_SECONDS') && retrySeconds >= renewSeconds) {
    problems.push(
      `RETRY_PERIOD_SECONDS (${retrySeconds}) must be shorter than RENEW_DEADLINE_SECONDS (${renewSeconds})`,
    );
  }
  const windowMs = positiveNumber({ env, name: 'COALESCE_WINDOW_MS', fallback: 200, problems, integer: true });
  const maxDelayMs = positiveNumber({
    env,
    name: 'COALESCE_MAX_DELAY_MS',
    fallback: windowMs * 10,
    problems,
    integer: true,
  });
  if (valid('COALESCE_WINDOW_MS') && valid('COALESCE_MAX_DELAY_MS') && maxDelayMs < windowMs) {
    problems.push(`COALESCE_MAX_DELAY_MS (${maxDelayMs}) must not be shorter than COALESCE_WINDOW_MS (${windowMs})`);
  }
  const leaseNamespace = env['LEASE_NAMESPACE'] ?? 'kube-system';
  const leaseName = env['LEASE_NAME'] ?? 'eniflow-watcher';
  for (const [name, value] of [
    ['LEASE_NAMESPACE', leaseNamespace],
    ['LEASE_NAME', leaseName],
  ] as const) {
    if (!DNS_SUBDOMAIN.test(value)) problems.push(`${name} must be a DNS name (lower case), got "${value}"`);
  }
  const identity = env['POD_IDENTITY'] ?? env['POD_NAME'] ?? hostname();
  if (identity === '') problems.push('POD_IDENTITY must not be empty');

  const cluster = clusterIdentityFrom(env, problems);
  const config: WatcherConfig = {
    temporal: loadTemporalConnectionConfig(env, problems),
    lease: {
      namespace: leaseNamespace,
      name: leaseName,
      identity,
      durationMs: durationSeconds * 1000,
      renewDeadlineMs: renewSeconds * 1000,
      retryPeriodMs: retrySeconds * 1000,
    },
    coalesceWindowMs: windowMs,
    coalesceMaxDelayMs: maxDelayMs,
    startSweepNodesPerSecond: positiveNumber({
      env,
      name: 'START_SWEEP_NODES_PER_SECOND',
      fallback: DEFAULT_START_SWEEP_NODES_PER_SECOND,
      problems,
    }),
    watch: {
      serverTimeoutSeconds: positiveNumber({
        env,
        name: 'WATCH_TIMEOUT_SECONDS',
        fallback: 300,
        problems,
        integer: true,
      }),
      idleTimeoutMs: positiveNumber({ env, name: 'WATCH_IDLE_TIMEOUT_SECONDS', fallback: 90, problems }) * 1000,
      listTimeoutMs: positiveNumber({ env, name: 'LIST_TIMEOUT_SECONDS', fallback: 60, problems }) * 1000,
    },
    logLevel: env['LOG_LEVEL'] ?? 'info',
    nodeSettings: { ...nodeSettingsFrom(env['NODE_WORKFLOW_SETTINGS'], problems), clusterId: cluster.clusterId },
    janitorSettings: {
      ...DEFAULT_JANITOR_SETTINGS,
      ...cluster,
      dryRun: janitorDryRunFrom(env, problems),
      intervalMs:
        positiveNumber({
          env,
          name: 'JANITOR_INTERVAL_SECONDS',
          fallback: DEFAULT_JANITOR_SETTINGS.intervalMs / 1000,
          problems,
          integer: true,
        }) * 1000,
    },
    metrics: {
      topNodes: positiveNumber({
        env,
        name: 'METRICS_TOP_NODES',
        fallback: WATCHER_METRICS_DEFAULTS.topNodes,
        problems,
        integer: true,
      }),
      nodeStatePollMs:
        positiveNumber({
          env,
          name: 'NODE_STATE_POLL_SECONDS',
          fallback: WATCHER_METRICS_DEFAULTS.nodeStatePollMs / 1000,
          problems,
        }) * 1000,
    },
  };
  config.degradation = degradationFrom(env, leaseNamespace, problems);
  if (env['KUBECONFIG'] !== undefined && env['KUBECONFIG'] !== '') config.kubeconfigPath = env['KUBECONFIG'];
  const healthAddress = env['HEALTH_ADDRESS'];
  if (healthAddress !== undefined && healthAddress !== '') {
    if (!/^[^:]*:\d+$/.test(healthAddress)) problems.push(`HEALTH_ADDRESS must be host:port, got "${healthAddress}"`);
    config.healthAddress = healthAddress;
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

/** `ENIFLOW_DEGRADATION` and `ENIFLOW_CONTROL_CONFIGMAP`. */
function degradationFrom(
  env: Env,
  leaseNamespace: string,
  problems: string[],
): NonNullable<WatcherConfig['degradation']> {
  const parsed = parseDegradationLevel(env['ENIFLOW_DEGRADATION']);
  if (!parsed.ok) problems.push(`ENIFLOW_DEGRADATION ${parsed.message.replace(/^degradation /, '')}`);
  return { level: parsed.ok ? parsed.level : 'off', configMap: controlConfigMapOf(env, problems, leaseNamespace) };
}

/**
 * `ENIFLOW_CONTROL_CONFIGMAP` (`namespace/name`), by default `eniflow-control` in the lease's namespace: the watcher
 * and the CLI read it alike.
 */
export function controlConfigMapOf(
  env: Env,
  problems: string[],
  leaseNamespace = env['LEASE_NAMESPACE'] ?? 'kube-system',
): { namespace: string; name: string } {
  const text = env['ENIFLOW_CONTROL_CONFIGMAP'] ?? '';
  const [namespace, name, ...rest] = text === '' ? [leaseNamespace, CONTROL_CONFIGMAP_NAME] : text.split('/');
  if (
    namespace === undefined ||
    name === undefined ||
    rest.length > 0 ||
    ![namespace, name].every((part) => DNS_SUBDOMAIN.test(part))
  ) {
    problems.push(`ENIFLOW_CONTROL_CONFIGMAP must be namespace/name (DNS names), got "${text}"`);
  }
  return { namespace: namespace ?? leaseNamespace, name: name ?? CONTROL_CONFIGMAP_NAME };
}
