/** The scale benchmark's command line: its options, their defaults and the presets. */
import { parseArgs } from 'node:util';

import { DEFAULT_JANITOR_SETTINGS } from '../../src/shared/janitor-settings.js';
import { DEFAULT_NODE_SETTINGS } from '../../src/workflows/messages.js';

import { parseTemporalServerKind } from '../../scripts/lib/test-servers.js';
import type { TemporalServerKind } from '../../scripts/lib/test-servers.js';
import type { PoolSize } from './cluster.js';

export interface Options {
  nodes: number;
  pods: number;
  idleSeconds: number;
  eniPollIntervalMs: number;
  timeoutSeconds: number;
  json: boolean;
  /** Keep the run directory (server, worker and watcher logs) after a successful run too. */
  keepLogs: boolean;
  /** Also write the JSON report to this file (the table still goes to stdout). */
  jsonFile?: string;
  /** The watcher's `NODE_WORKFLOW_SETTINGS` (JSON), to measure a setting such as `maxBatchWindowMs`. */
  nodeSettings?: string;
  /** The emulator's attach (and detach, delete) transition time. */
  attachMs: number;
  /** Every node CR's warm pool. */
  pool: PoolSize;
  /** Print the first node's burst timeline in the Markdown report (the JSON report always has it). */
  timeline: boolean;
  /** Worker processes on the task queue; with 2 or more the restart phase also measures a rolling update. */
  workers: number;
  /** Run worker and watcher from `dist/` (`npm run build`), as the image does, instead of from `src/` with tsx. */
  dist: boolean;
  /** NODE_OPTIONS of worker and watcher, e.g. heap flags as a Deployment sets them. */
  nodeOptions?: string;
  /**
   * Each role's NODE_OPTIONS as its Deployment in deploy/ sets it (overlays/single-process's for the one process); --node-options
   * wins over it.
   */
  deployedNodeOptions: boolean;
  /**
   * The whole of eniflow in one process (`--role all`: `node dist/main.js` with --dist, else `npm start`'s
   * `src/main.ts` with tsx) instead of the worker and the watcher apart; needs --workers 1.
   */
  oneProcess: boolean;
  /** More environment for worker and watcher (`--role-env '{"MAX_CONCURRENT_WORKFLOW_TASKS":"8"}'`). */
  roleEnv?: Record<string, string>;
  /**
   * Divides the periods of the workflows' own timers (safety-net pass, OpenAPI resync, GC period, stuck backoff,
   * run age, the janitor's interval) by this, so a short idle window holds as many periodic passes as a long one;
   * the idle figures driven by those timers (history, Temporal cost, ECS calls) are divided by it back to real time.
   */
  periodScale: number;
  /** SIGKILL worker replica 1 as soon as the burst's pods are created, and measure its replacement serving them. */
  restartDuringBurst: boolean;
  /**
   * Last, replace worker and watcher with one `npm start -- --role all` process, SIGKILL it once its start sweep is
   * done, and measure its replacement: a new leader signals every node, so every workflow replays.
   */
  allInOneRestart: boolean;
  /** The Temporal server the bench starts: the CLI's dev server or the compose file's on PostgreSQL (`--temporal`). */
  temporal: TemporalServerKind;
}

export const PRESETS: Readonly<Record<string, Partial<Options>>> = {
  /** What CI can afford as a smoke run: every figure present, no timing asserted. */
  smoke: { nodes: 3, pods: 5, idleSeconds: 10 },
  /**
   * The cold path as Terway was measured against it (issue 20): no warm pool, so every pod waits for a new ENI,
   * with a 2.5 s attach. Use --nodes 40 for the larger run.
   */
  cold: { nodes: 5, pods: 20, idleSeconds: 10, attachMs: 2_500, pool: { min: 0, max: 5 } },
  /**
   * Idle cost with every periodic pass in the window (issue 20): the timers 60 times faster, so the 30-minute window
   * is 30 hours of timers — five safety-net passes (6–7.5 h), one or two OpenAPI resyncs (12–24 h) per node and 60
   * janitor passes — read back per real hour.
   */
  idle: { nodes: 20, pods: 10, idleSeconds: 1_800, periodScale: 60 },
  /**
   * Issue 29's cold target, as Terway v1.17.5 was measured: 40 × 20, no warm pool (every pod waits for a new ENI),
   * 2.5 s attach, the built code, worker and watcher apart with their Deployments' NODE_OPTIONS.
   */
  cold40: {
    nodes: 40,
    pods: 20,
    idleSeconds: 10,
    attachMs: 2_500,
    pool: { min: 0, max: 5 },
    dist: true,
    deployedNodeOptions: true,
  },
  /**
   * Issue 29's burst target: 200 × 25 with the default pool (2–5: 27 IPs per node on 15-IP ENIs, so one create per
   * node beyond warm-up suffices) against the whole stack in one process (`--role all`) on this machine's cores.
   */
  burst200: { nodes: 200, pods: 25, idleSeconds: 10, oneProcess: true },
};

/** The node-workflow settings and the janitor interval with their periods divided by `scale` (1: unchanged). */
export function scaledPeriods(
  scale: number,
  nodeSettingsJson: string | undefined,
): { nodeSettings?: string; janitorIntervalSeconds?: number } {
  if (scale === 1) return nodeSettingsJson === undefined ? {} : { nodeSettings: nodeSettingsJson };
  const given = nodeSettingsJson === undefined ? {} : (JSON.parse(nodeSettingsJson) as Record<string, number>);
  const scaled: Record<string, number> = {};
  for (const key of PERIODIC_SETTINGS) scaled[key] = Math.max(1, Math.round(DEFAULT_NODE_SETTINGS[key] / scale));
  return {
    nodeSettings: JSON.stringify({ ...scaled, ...given }),
    janitorIntervalSeconds: Math.max(1, Math.round(DEFAULT_JANITOR_SETTINGS.intervalMs / 1000 / scale)),
  };
}

/** The node workflow's settings that set a period of its own timers. */
const PERIODIC_SETTINGS = ['idleWakeMs', 'openApiSyncPeriodMs', 'gcPeriodMs', 'stuckBackoffMs', 'maxRunAgeMs'] as const;

export function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      preset: { type: 'string' },
      nodes: { type: 'string' },
      pods: { type: 'string' },
      'idle-seconds': { type: 'string' },
      'eni-poll-ms': { type: 'string' },
      'timeout-seconds': { type: 'string' },
      json: { type: 'boolean', default: false },
      'json-file': { type: 'string' },
      'keep-logs': { type: 'boolean', default: false },
      'node-settings': { type: 'string' },
      'attach-ms': { type: 'string' },
      pool: { type: 'string' },
      timeline: { type: 'boolean', default: false },
      workers: { type: 'string' },
      dist: { type: 'boolean', default: false },
      'node-options': { type: 'string' },
      'role-env': { type: 'string' },
      'period-scale': { type: 'string' },
      'restart-during-burst': { type: 'boolean', default: false },
      'all-in-one-restart': { type: 'boolean', default: false },
      'deployed-node-options': { type: 'boolean', default: false },
      'one-process': { type: 'boolean', default: false },
      temporal: { type: 'string' },
    },
    strict: true,
  });
  const preset = values.preset === undefined ? {} : PRESETS[values.preset];
  if (preset === undefined)
    throw new Error(`unknown preset "${values.preset ?? ''}" (known: ${Object.keys(PRESETS).join(', ')})`);
  const int = (text: string | undefined, fallback: number, name: string): number => {
    if (text === undefined) return fallback;
    const value = Number(text);
    if (!Number.isInteger(value) || value <= 0) throw new Error(`--${name} must be a positive integer, got "${text}"`);
    return value;
  };
  const workers = int(values.workers, 1, 'workers');
  const oneProcess = values['one-process'] || preset.oneProcess === true;
  if (oneProcess && workers !== 1) throw new Error('--one-process runs one process: it needs --workers 1');
  return {
    nodes: int(values.nodes, preset.nodes ?? 10, 'nodes'),
    pods: int(values.pods, preset.pods ?? 25, 'pods'),
    idleSeconds: int(values['idle-seconds'], preset.idleSeconds ?? 600, 'idle-seconds'),
    eniPollIntervalMs: int(values['eni-poll-ms'], 3_000, 'eni-poll-ms'),
    timeoutSeconds: int(values['timeout-seconds'], 900, 'timeout-seconds'),
    json: values.json,
    keepLogs: values['keep-logs'],
    ...(values['json-file'] === undefined ? {} : { jsonFile: values['json-file'] }),
    ...(values['node-settings'] === undefined ? {} : { nodeSettings: values['node-settings'] }),
    attachMs: int(values['attach-ms'], preset.attachMs ?? 2_000, 'attach-ms'),
    pool: values.pool === undefined ? (preset.pool ?? { min: 2, max: 5 }) : parsePool(values.pool),
    timeline: values.timeline,
    workers,
    dist: values.dist || preset.dist === true,
    ...(values['node-options'] === undefined ? {} : { nodeOptions: values['node-options'] }),
    ...(values['role-env'] === undefined ? {} : { roleEnv: parseRoleEnv(values['role-env']) }),
    periodScale: int(values['period-scale'], preset.periodScale ?? 1, 'period-scale'),
    restartDuringBurst: values['restart-during-burst'],
    allInOneRestart: values['all-in-one-restart'],
    deployedNodeOptions: values['deployed-node-options'] || preset.deployedNodeOptions === true,
    oneProcess,
    temporal: parseTemporalServerKind(values.temporal),
  };
}

/** `--role-env JSON`: an object of strings. */
function parseRoleEnv(text: string): Record<string, string> {
  const value: unknown = JSON.parse(text);
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new Error(`--role-env must be a JSON object, got "${text}"`);
  const entries = Object.entries(value as Record<string, unknown>);
  const bad = entries.filter(([, v]) => typeof v !== 'string').map(([key]) => key);
  if (bad.length > 0) throw new Error(`--role-env values must be strings: ${bad.join(', ')}`);
  return Object.fromEntries(entries) as Record<string, string>;
}

/** `--pool MIN-MAX`, e.g. `0-5`. */
function parsePool(text: string): PoolSize {
  const match = /^(\d+)-(\d+)$/.exec(text);
  const min = Number(match?.[1]);
  const max = Number(match?.[2]);
  if (match === null || min > max || max === 0)
    throw new Error(`--pool must be MIN-MAX with MIN <= MAX and MAX > 0, got "${text}"`);
  return { min, max };
}
